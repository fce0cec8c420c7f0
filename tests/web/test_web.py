"""The Datasette plugin through Datasette(...).client: search page, JSON API, SQL views."""

import os
import shutil
import sqlite3
from contextlib import closing

import pytest

from search.builder import SummaryBuilder, sample_site
from textpile.errors import ConfigError, DatabaseError
from textpile.web.app import build_datasette
from textpile.web.metadata import CANNED_QUERIES
from web.client import get

# The SearxNG engine of unobtanium-documentation.txt, "Configuring SearxNG to use Unobtanium".
SEARXNG = {
    "search_url": "/search?format=json&search={query}&page={pageno}",
    "first_page_num": 0,
    "results_query": "list",
    "title_query": "title",
    "url_query": "url",
    "content_query": "description",
}


def test_search_form_at_root_and_search(ds):
    for path in ("/", "/search"):
        r = get(ds, path)
        assert r.status_code == 200
        assert '<form class="tp-form" action="/search" method="get"' in r.text
        assert 'name="search"' in r.text and "Query syntax" in r.text
        assert '<link rel="search" type="application/opensearchdescription+xml"' in r.text
        assert 'href="/summary"' in r.text  # Datasette's own views stay reachable


def test_html_results_escaped(ds):
    r = get(ds, "/search?search=marmalade")
    assert r.status_code == 200
    assert "<script>alert" not in r.text
    assert ('<a href="https://evil.example.com/page#section-2" rel="noopener">'
            "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt; Marmalade recipe</a>") in r.text
    assert ('<p class="tp-snippet">Orange <mark>marmalade</mark> &lt;b&gt;bold&lt;/b&gt; &amp; '
            "&lt;img src=x onerror=alert(1)&gt; tasty <mark>marmalade</mark>.</p>") in r.text
    assert "1 result, page 1 of 1" in r.text


def test_q_parameter_and_messages(ds):
    r = get(ds, "/search?q=%22unbalanced")
    assert r.status_code == 200 and "No results." in r.text
    r = get(ds, "/search?q=quokka+unicornword")
    assert "Few pages hold all the words; pages holding most of them follow." in r.text and "Quokka facts" in r.text


def test_table_pages_suggest_no_facets(ds):
    # suggested facets query every column: a view such as link_summary took seconds to open
    assert ds.setting("suggest_facets") is False
    r = get(ds, "/summary/link_summary.json?_size=1&_extra=suggested_facets")
    assert r.status_code == 200 and r.json().get("suggested_facets", []) == []


def test_json_api_fits_searxng_mapping(ds):
    url = SEARXNG["search_url"].format(query="cats", pageno=SEARXNG["first_page_num"])
    r = get(ds, url)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    data = r.json()
    results = data[SEARXNG["results_query"]]
    assert [(x[SEARXNG["title_query"]], x[SEARXNG["url_query"]], x[SEARXNG["content_query"]]) for x in results] == [
        ("Why cats sleep all day", "https://blog.example.org/2024/cats",
         "Cats sleep for sixteen hours a day. A sleeping cat saves energy for hunting."),
        ("Warum Katzen schlafen", "https://de.example.net/katzen",
         "Katzen schlafen sechzehn Stunden am Tag. Cats sleep too, sagt man."),
    ]
    assert data["query"] == "cats" and data["page"] == 0 and data["total"] == 2 and data["message"] is None
    assert results[0]["snippet"] == "<mark>Cats</mark> sleep for sixteen hours a day. A sleeping <mark>cat</mark> saves energy for hunting."
    assert results[0]["language"] == "en" and results[0]["time_created"] == "2023-07-22T04:26:40Z"


def test_json_escaping_and_paging(ds):
    data = get(ds, "/search?format=json&search=marmalade").json()
    [item] = data["list"]
    assert item["title"] == "<script>alert('xss')</script> Marmalade recipe"  # JSON is data, not HTML
    assert "<script" not in item["snippet"] and "&lt;img" in item["snippet"]
    data = get(ds, "/search?format=json&search=sqlite&page=1&per_page=1").json()
    assert data["page"] == 1 and data["per_page"] == 1 and data["total"] == 2
    assert [x["url"] for x in data["list"]] == ["https://docs.example.org/json1.html"]
    data = get(ds, "/search?format=json&search=sqlite&page=x&per_page=100000").json()
    assert data["page"] == 0 and data["per_page"] == 100


@pytest.mark.parametrize("q", ["C%2B%2B", "hello-world", "AND", "NOT", "%22unbalanced", "*", "site%3A",
                               "%00", "%ED%A0%80", "x" * 2000, "%F0%9F%99%82", "-%22", "%C2%BB%C2%AB"])
def test_adversarial_queries_through_http(ds, q):
    for fmt in ("", "&format=json"):
        r = get(ds, f"/search?search={q}{fmt}")
        assert r.status_code == 200, (q, r.text[:300])


def test_security_headers(ds):
    r = get(ds, "/search?search=cats")
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "strict-origin"
    assert r.headers["permissions-policy"] == "interest-cohort=()"
    assert r.headers["x-frame-options"] == "DENY"
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    # one script of the same origin (search as you type), no inline script
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp
    r = get(ds, "/summary")
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_opensearch_and_static(ds):
    r = get(ds, "/opensearch.xml")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/opensearchdescription+xml")
    assert 'template="http://localhost/search?search={searchTerms}"' in r.text
    r = get(ds, "/-/textpile/static/textpile.css")
    assert r.status_code == 200 and ".tp-result" in r.text
    assert get(ds, "/-/textpile/static/../metadata.py").status_code == 404


def test_sql_exploration_read_only_with_descriptions_and_canned_queries(ds):
    r = get(ds, "/summary/entity_generation")
    assert r.status_code == 200
    assert "Entity generations: the space/time coordinates of one version of a document." in r.text
    r = get(ds, "/summary/full_text_entity_index")
    assert r.status_code == 200
    assert 'always the string &#34;any&#34;' in r.text  # the column's description from the schema comments
    assert get(ds, "/summary/count_active_entity_generations.json?_shape=array").json() == [{"count(*)": 7}]
    assert get(ds, "/summary/count_unused_tokens.json?_shape=array").json() == [{"count(*)": 0}]
    assert set(CANNED_QUERIES) == {"count_active_entity_generations", "count_unused_tokens"}
    r = get(ds, "/summary.json?sql=delete+from+url")
    assert r.status_code == 400
    assert ds.setting("sql_time_limit_ms") == 3000
    with closing(ds.databases["summary"].connect()) as conn:  # mode=ro: a publish writes it in place
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM url")


def test_template_location_overrides(summary_path, tmp_path):
    (tmp_path / "_textpile_help.html").write_text("<p>Custom help here</p>")
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "textpile.css").write_text("body { color: red }")
    ds = build_datasette(summary_path, template_dir=tmp_path)
    r = get(ds, "/search?search=cats")
    assert "Custom help here" in r.text and "Query syntax" not in r.text
    assert "Why cats sleep all day" in r.text
    assert get(ds, "/-/textpile/static/textpile.css").text == "body { color: red }"


def test_hot_swap_of_published_file(tmp_path):
    served = tmp_path / "published.db"
    a = SummaryBuilder(tmp_path / "a.db")
    a.add_page("https://a.example/", title="Alpha page", text="alpha words")
    a.build_fts()
    a.close()
    shutil.copy(tmp_path / "a.db", served)
    ds = build_datasette(served)
    assert [x["title"] for x in get(ds, "/search?format=json&search=alpha").json()["list"]] == ["Alpha page"]
    assert get(ds, "/published.json?sql=select+count(*)+as+n+from+url&_shape=array").json() == [{"n": 1}]
    b = SummaryBuilder(tmp_path / "b.db")
    b.add_page("https://b.example/", title="Beta page", text="beta words")
    b.add_page("https://b.example/2", title="Beta two", text="beta more")
    b.build_fts()
    b.close()
    tmp_copy = tmp_path / "published.db.tmp"
    shutil.copy(tmp_path / "b.db", tmp_copy)
    os.replace(tmp_copy, served)  # the way the publisher swaps the file
    assert get(ds, "/search?format=json&search=alpha").json()["list"] == []
    assert get(ds, "/search?format=json&search=beta").json()["total"] == 2
    assert get(ds, "/published.json?sql=select+count(*)+as+n+from+url&_shape=array").json() == [{"n": 2}]


def _open_on_deleted(folder) -> list[str]:
    """The files under ``folder`` that this process holds open although they were deleted."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)) and target.endswith(" (deleted)"):
            found.append(target)
    return sorted(found)


def _replace_with_new_page(tmp_path, served, title):
    b = SummaryBuilder(tmp_path / f"{title}.db")
    b.add_page(f"https://{title}.example/", title=title, text=f"{title} words")
    b.build_fts()
    b.close()
    shutil.copy(tmp_path / f"{title}.db", tmp_path / "next.db")
    os.replace(tmp_path / "next.db", served)  # the way the publisher swaps the file


def test_a_replaced_file_is_closed_when_its_last_request_ends(tmp_path):
    """The served object of a replaced file closes its connections as soon as no request
    or search runs on it any more, not 30 s later (issue 31: descriptors on deleted index
    files and their mapped pages were held until then)."""
    from textpile.web.state import find_target

    served = tmp_path / "published.db"
    _replace_with_new_page(tmp_path, served, "alpha")
    ds = build_datasette(served)
    sql = "/published.json?sql=select+count(*)+as+n+from+url&_shape=array"
    assert get(ds, "/search?format=json&search=alpha").json()["total"] == 1
    assert get(ds, sql).json() == [{"n": 1}]
    first = find_target(ds)
    _replace_with_new_page(tmp_path, served, "beta")
    assert get(ds, "/search?format=json&search=beta").json()["total"] == 1  # swapped
    assert _open_on_deleted(tmp_path) == []  # the first file's connections are closed already
    second = find_target(ds)
    assert second is not first
    with second.serving():  # a request still at work on the second file
        assert get(ds, sql).json() == [{"n": 1}]
        _replace_with_new_page(tmp_path, served, "gamma")
        assert get(ds, "/search?format=json&search=gamma").json()["total"] == 1
        assert find_target(ds) is not second
        held = _open_on_deleted(tmp_path)
        assert held and set(held) == {f"{served} (deleted)"}, held
    assert _open_on_deleted(tmp_path) == []  # closed when that request ended
    assert get(ds, sql).json() == [{"n": 1}] and get(ds, "/search?format=json&search=alpha").json()["total"] == 0


def test_build_refuses_bad_files(tmp_path):
    with pytest.raises(DatabaseError, match="no such summary database"):
        build_datasette(tmp_path / "missing.db")
    (tmp_path / "junk.db").write_text("not sqlite")
    with pytest.raises(DatabaseError, match="junk.db"):
        build_datasette(tmp_path / "junk.db")
    sample_site(tmp_path / "ok.db")
    with pytest.raises(ConfigError, match="template location"):
        build_datasette(tmp_path / "ok.db", template_dir=tmp_path / "nope")


def textpile_records(caplog):
    return [rec for rec in caplog.records if rec.name.startswith("textpile")]


def test_client_errors_are_quiet(ds, capsys, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    capsys.readouterr()
    cases = [
        ("/summary/no_such_table", 404, "Table not found"),
        ("/no_such_database.json", 404, "Database not found"),
        ("/summary.json?sql=delete+from+url", 400, "Statement must be a SELECT"),
    ]
    for path, status, message in cases:
        caplog.clear()
        r = get(ds, path)
        assert r.status_code == status
        if path.endswith((".json", "url")):
            assert r.json()["error"] == message and r.json()["status"] == status
        else:
            assert message in r.text and "<html" in r.text.lower()
        out, err = capsys.readouterr()
        assert (out, err) == ("", ""), path
        assert [(rec.name, rec.levelname, rec.getMessage()) for rec in textpile_records(caplog)] == [
            ("textpile.web", "INFO", f"{status} GET {r.url.path}: {message}")]  # (Datasette 1.0 redirects ?sql=)


def test_sql_time_limit_is_a_quiet_400(summary_path, capsys, caplog):
    import logging
    from urllib.parse import quote

    caplog.set_level(logging.DEBUG)
    slow = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000000) select count(*) from c"
    quick = build_datasette(summary_path, sql_time_limit_ms=200)  # far below the query, far above introspection at load 10
    capsys.readouterr()
    r = get(quick, "/summary.json?sql=" + quote(slow))
    assert r.status_code == 400 and r.json()["title"] == "SQL Interrupted"
    assert capsys.readouterr() == ("", "")
    assert [(rec.levelname, rec.getMessage()) for rec in textpile_records(caplog)] == [
        ("INFO", f"400 GET {r.url.path}: SQL query took too long (the time limit is the sql_time_limit_ms setting).")]


def test_server_errors_are_logged_briefly(ds, capsys, caplog, monkeypatch):
    import logging

    import textpile.web.views as views

    def boom(*args, **options):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(views, "run_search", boom)
    caplog.set_level(logging.DEBUG)
    capsys.readouterr()
    r = get(ds, "/search?search=cats")
    assert r.status_code == 500 and "disk on fire" in r.text
    assert capsys.readouterr() == ("", "")
    [rec] = textpile_records(caplog)
    assert (rec.levelname, rec.getMessage()) == ("ERROR", "500 GET /search: RuntimeError")
    assert rec.exc_info[1].args == ("disk on fire",)


def test_robots_and_favicon(ds):
    r = get(ds, "/robots.txt")
    assert r.status_code == 200 and r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.text.splitlines()[1:] == ["User-agent: *", "Disallow: /?", "Disallow: /search", "Disallow: /suggest", "Disallow: /cached", "Disallow: /analytics", "Disallow: /-/",
                                       "Disallow: /opensearch.xml", "Disallow: /summary"]
    assert get(ds, "/favicon.ico").status_code == 200


def test_page_past_the_last_one(ds):
    r = get(ds, "/search?search=cats&page=99999999999999999999")
    assert r.status_code == 200
    assert "No results on page 1001; there are 2 results on 1 page." in r.text
    assert "page 1001 of 1" not in r.text and "Page 1001 of 1" not in r.text
    assert '<a rel="prev" href="/search?search=cats">' in r.text  # back to the last page with results
    data = get(ds, "/search?format=json&search=cats&page=99999999999999999999").json()
    assert (data["page"], data["total"], data["list"]) == (1000, 2, [])
    assert data["message"] == "No results on page 1001; there are 2 results on 1 page."
    r = get(ds, "/search?search=marmalade")
    assert "1 result, page 1 of 1" in r.text


def test_table_pages_of_the_documented_views_show_their_blobs(ds, summary_path):
    import sqlite3

    from textpile.store.gen2_piles import register_functions

    db = register_functions(sqlite3.connect(f"file:{summary_path}?mode=ro", uri=True))
    digest = db.execute("SELECT blake2b512_digest FROM text_pile ORDER BY text_pile_id LIMIT 1").fetchone()[0]
    db.close()
    for view in ("text_pile_v0_2", "text_pile", "link_summary"):
        r = get(ds, f"/summary/{view}?_size=5")
        assert r.status_code == 200, view
    r = get(ds, "/summary/text_pile?_size=5")
    assert f"&lt;Binary:&nbsp;64 bytes&gt; {digest.hex()}" in r.text  # a view's row has no rowid to link to
    r = get(ds, "/summary/text_pile_gen1?_size=5")
    assert r.status_code == 200 and 'class="blob-download"' in r.text  # a table's BLOB keeps Datasette's link


def test_paging_values_that_are_not_numbers_are_refused(ds):
    for name, value in (("page", "abc"), ("page", "1.5"), ("per_page", "abc"), ("per_page", "1e3")):
        r = get(ds, f"/search?q=cats&format=json&{name}={value}")
        assert r.status_code == 400, (name, value)
        assert r.json()["message"] == f"{name}: expected a whole number, got '{value}'"
        assert r.json()["list"] == []
    r = get(ds, "/search?q=cats&format=json&page=-1&per_page=0")  # whole numbers: clamped to their range
    assert r.status_code == 200 and (r.json()["page"], r.json()["per_page"]) == (0, 1)


def test_bad_paging_is_a_400_naming_the_first_bad_parameter(ds):
    r = get(ds, "/search?q=cats&format=json&page=two&per_page=also")
    assert r.status_code == 400 and r.json()["message"] == "page: expected a whole number, got 'two'"
    assert (r.json()["page"], r.json()["per_page"], r.json()["list"]) == (0, 20, [])  # the defaults, nothing searched
    r = get(ds, "/search?q=cats&page=1&per_page=ten")
    assert r.status_code == 400 and "per_page: expected a whole number, got &#39;ten&#39;" in r.text
    r = get(ds, "/search?q=cats&format=json&mode=vector&page=x")  # a bad mode is named first
    assert r.status_code == 400 and r.json()["message"].startswith("unknown search mode 'vector'")
