"""Exact orderings for each relevance feature, on small sites summarized for real."""

import pytest

from search.fixture_site import html_page, summarized_site
from textpile.search.engine import search

FILLER = "Other words fill this paragraph so that the page is of an ordinary length for a page. " * 3


def urls(results):
    return [r.url for r in results.results]


def test_title_match_beats_body_repetition(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/notes": html_page("Pond notes", "<p>" + "axolotl " * 30 + FILLER + "</p>"),
        "https://a.example/axolotl": html_page("Axolotl", f"<h1>Axolotl</h1><p>A pond animal. {FILLER}</p>"),
        "https://a.example/fish": html_page("Fish", f"<p>Fish and one axolotl. {FILLER}</p>"),
    })
    assert urls(search(conn, "axolotl")) == [
        "https://a.example/axolotl", "https://a.example/notes", "https://a.example/fish"]


def test_plural_finds_singular_and_forms_give_one_set(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/tz": html_page("Timezone handling", "<p>Convert every timezone to UTC first.</p>"),
        "https://a.example/idx": html_page("Index", "<p>An index speeds up lookups.</p>"),
        "https://a.example/idx2": html_page("Indexes", "<p>Two indexes on one table.</p>"),
    })
    assert urls(search(conn, "timezones")) == ["https://a.example/tz"]
    # one set for both forms, the exact form in the title first
    assert urls(search(conn, "index")) == ["https://a.example/idx", "https://a.example/idx2"]
    assert urls(search(conn, "indexes")) == ["https://a.example/idx2", "https://a.example/idx"]


API_PAGE = html_page("pkg.module reference", """
<h1>pkg.module</h1>
<dl class="py class"><dt class="sig sig-object py" id="pkg.module.Reader">class pkg.module.<span>Reader</span>(path)</dt>
<dd><p>Reads records from a file.</p>
<dl class="py method"><dt class="sig sig-object py" id="pkg.module.Reader.close"><span>close</span>()</dt>
<dd><p>Close the file and release the buffers.</p></dd></dl></dd></dl>
<dl class="py function"><dt class="sig sig-object py" id="pkg.module.open_reader">pkg.module.open_reader(path)</dt>
<dd><p>Open a reader on a path.</p></dd></dl>
""")


def test_dotted_api_name_finds_its_page_and_anchor_first(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://docs.example/api/module.html": API_PAGE,
        # the general index names everything, with links to the definitions
        "https://docs.example/genindex.html": html_page("Index", """
            <h1>Index</h1><ul>
            <li><a href="api/module.html#pkg.module.Reader.close">close() (pkg.module.Reader method)</a></li>
            <li><a href="api/module.html#pkg.module.open_reader">open_reader() (in module pkg.module)</a></li>
            <li><a href="api/module.html#pkg.module.Reader">Reader (class in pkg.module)</a></li>
            <li><a href="guide.html">pkg module guide: a reader, a close look</a></li></ul>"""),
        "https://docs.example/guide.html": html_page("Guide", f"""
            <h1>Guide</h1><p>The pkg package has a module with a Reader; call close when done. {FILLER}</p>"""),
    })
    r = search(conn, "pkg.module.Reader.close")
    assert urls(r)[0] == "https://docs.example/api/module.html#pkg.module.Reader.close"
    assert r.results[0].page_url == "https://docs.example/api/module.html"
    assert r.results[0].section_title == "close()"
    assert urls(search(conn, "pkg.module.open_reader"))[0] == "https://docs.example/api/module.html#pkg.module.open_reader"
    assert urls(search(conn, "pkg.module.Reader"))[0] == "https://docs.example/api/module.html#pkg.module.Reader"


def test_identifiers_whole_and_by_parts(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/redirects": html_page(
            "Redirects", "<p>Return an <code>HttpResponsePermanentRedirect</code> for moved pages.</p>"),
        "https://a.example/style": html_page("Style", "<p>Names use <code>snake_case</code>, never CamelCase.</p>"),
        "https://a.example/backup": html_page("Backups", "<p>Run <code>pg_dump</code> every night.</p>"),
        "https://a.example/other": html_page("Other", "<p>A snake in the case. A dump. A permanent marker.</p>"),
    })
    assert urls(search(conn, "HttpResponsePermanentRedirect")) == ["https://a.example/redirects"]
    assert urls(search(conn, "permanent redirect"))[0] == "https://a.example/redirects"
    # the identifier whole first; a page holding its parts apart follows as a partial match
    r = search(conn, "snake_case")
    assert urls(r) == ["https://a.example/style", "https://a.example/other"] and r.partial_matches
    assert urls(search(conn, "camelcase")) == ["https://a.example/style"]
    assert urls(search(conn, "pg_dump")) == ["https://a.example/backup", "https://a.example/other"]


def test_cjk_word_inside_a_run_is_found(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://ja.example/a": html_page("日記", "<p>朝の運用フローを試した</p>", lang="ja"),
        "https://ja.example/b": html_page("料理", "<p>夕方に料理を作った</p>", lang="ja"),
    })
    assert urls(search(conn, "運用")) == ["https://ja.example/a"]
    assert urls(search(conn, "朝の運用")) == ["https://ja.example/a"]
    r = search(conn, "運用")
    assert "<mark>運用</mark>" in r.results[0].snippet_html


def test_section_result_links_to_its_anchor_and_groups_sections(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://db.example/sql-createindex.html": html_page("CREATE INDEX", f"""
            <h1>CREATE INDEX</h1><p>Define a new index. {FILLER}</p>
            <section id="storage"><h2>Index Storage Parameters</h2><p>Fill factor and more. {FILLER}</p></section>
            <section id="concurrently"><h2>Building Indexes Concurrently</h2>
            <p>Creating an index can interfere with regular operation; build it without locking writes. {FILLER}</p>
            </section>"""),
        "https://db.example/release-15.html": html_page("Release 15", f"""
            <h1>Release 15</h1><p>Allow create index concurrently on partitioned tables. {FILLER}</p>"""),
    })
    r = search(conn, "building indexes concurrently")
    first = r.results[0]
    assert first.url == "https://db.example/sql-createindex.html#concurrently"
    assert first.section_title == "Building Indexes Concurrently"
    assert "without locking writes" in first.snippet_text
    # one result per page: the page's other sections are not results of their own
    assert [x.page_url for x in r.results].count("https://db.example/sql-createindex.html") == 1
    assert urls(search(conn, "create index"))[0] == "https://db.example/sql-createindex.html"


def test_a_query_the_page_title_holds_opens_the_page_at_its_top_not_at_a_section(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://db.example/lang_vacuum.html": html_page("VACUUM", f"""
            <p>The VACUUM command rebuilds the database file, repacking it into a minimal amount of disk
            space. {FILLER}</p>
            <section id="intro"><h2>1. Syntax</h2><p>The statement takes an optional schema name. {FILLER}</p></section>
            <section id="how_vacuum_works"><h2>3. How VACUUM works</h2>
            <p>VACUUM copies the database into a temporary file and back. {FILLER}</p></section>"""),
        "https://db.example/json1.html": html_page("JSON Functions And Operators", f"""
            <p>Functions for JSON values. {FILLER}</p>
            <section id="json_arguments"><h2>3.1. JSON arguments</h2><p>Arguments are JSON text. {FILLER}</p>
            </section>"""),
    })
    # before: "vacuum" opened "3. How VACUUM works" (#how_vacuum_works), "json" "3.1. JSON arguments"
    for query, url in (("vacuum", "https://db.example/lang_vacuum.html"),
                       ("json", "https://db.example/json1.html")):
        first = search(conn, query).results[0]
        assert (first.url, first.section_title) == (url, None)
    # a query the page's title holds only in part still opens the section that holds it all
    first = search(conn, "json arguments").results[0]
    assert (first.url, first.section_title) == ("https://db.example/json1.html#json_arguments", "3.1. JSON arguments")
    first = search(conn, "how vacuum works").results[0]
    assert first.url == "https://db.example/lang_vacuum.html#how_vacuum_works"


def test_a_query_no_page_matches_gives_the_results_of_its_correction(tmp_path):
    from textpile.search.results import results_json

    pages = {f"https://a.example/t{i}": html_page(f"Page {i}", f"<p>Each transaction commits in step {i}. {FILLER}</p>")
             for i in range(3)}
    pages["https://a.example/other"] = html_page("Other", f"<p>Nothing of that here. {FILLER}</p>")
    conn = summarized_site(tmp_path, pages)
    # with typo tolerance the close word's pages are found as they are, the fix offered
    typo = search(conn, "transacton")
    assert (typo.corrected, typo.suggestion, typo.total) == (False, "transaction", 3)
    assert sorted(urls(typo)) == [f"https://a.example/t{i}" for i in range(3)]
    r = search(conn, "transacton", typos=False)
    assert (r.corrected, r.suggestion, r.query, r.total) == (True, "transaction", "transacton", 3)
    assert sorted(urls(r)) == [f"https://a.example/t{i}" for i in range(3)]
    assert r.message == "No page holds every word of “transacton”: these are the results for “transaction”."
    assert results_json(r)["corrected"] is True
    plain = search(conn, "transacton", correct=False, typos=False)
    assert (plain.corrected, plain.total, plain.suggestion, plain.message) == (False, 0, "transaction", "No results.")
    assert search(conn, "transaction").corrected is False


def test_the_correction_keeps_the_query_s_phrases_filters_and_exclusions(tmp_path):
    """"Did you mean" corrects the query's words and keeps the rest as written: the
    corrected search still holds the phrase, the filter and the exclusion."""
    pages = {f"https://a.example/t{i}": html_page(f"Page {i}", f"<p>Each transaction commits in step {i}. {FILLER}</p>")
             for i in range(3)}
    pages["https://a.example/log"] = html_page("Log", f"<p>The write-ahead log: each transaction commits. {FILLER}</p>")
    pages["https://b.example/t"] = html_page("Elsewhere", f"<p>A transaction commits here too. {FILLER}</p>")
    conn = summarized_site(tmp_path, pages)
    r = search(conn, '"write-ahead log" transacton', typos=False)  # the phrase's page holds part of it
    assert (r.corrected, r.suggestion) == (False, '"write-ahead log" transaction')
    assert urls(search(conn, r.suggestion))[0] == "https://a.example/log"
    cases = {
        "transacton site:b.example": ("transaction site:b.example", ["https://b.example/t"]),
        'transacton -"write-ahead log" -site:b.example': (
            'transaction -"write-ahead log" -site:b.example', [f"https://a.example/t{i}" for i in range(3)]),
    }
    for query, (fixed, expected) in cases.items():
        r = search(conn, query, typos=False)
        assert (r.corrected, r.suggestion, r.query) == (True, fixed, query), query
        assert sorted(urls(r)) == expected, query
        assert r.message == f"No page holds every word of “{query}”: these are the results for “{fixed}”."


def test_a_typo_a_page_or_two_hold_gets_a_suggestion_of_the_far_commoner_word(tmp_path):
    pages = {f"https://a.example/v{i}": html_page(f"Page {i}", f"<p>Run vacuum often, on day {i}. {FILLER}</p>")
             for i in range(21)}
    pages["https://a.example/typo"] = html_page("Notes", f"<p>Run vaccum once. {FILLER}</p>")
    conn = summarized_site(tmp_path, pages)
    r = search(conn, "vaccum", typos=False)
    # the page holding the typo is still the result; the common word is offered
    assert (urls(r), r.suggestion, r.corrected) == (["https://a.example/typo"], "vacuum", False)
    # with typo tolerance, the close word's pages follow it
    r = search(conn, "vaccum", per_page=30)
    assert (urls(r)[0], sorted(urls(r)[1:]), r.suggestion) == (
        "https://a.example/typo", sorted(f"https://a.example/v{i}" for i in range(21)), "vacuum")
    assert search(conn, "vacuum").suggestion is None


def test_an_identifier_found_by_its_parts_says_so(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/json1": html_page("JSON", f"<p>Call json_extract() on a value. {FILLER}</p>"),
        "https://a.example/parts": html_page("Parts", f"<p>Extract fields from JSON text. {FILLER}</p>"),
    })
    r = search(conn, "json_extract")
    assert urls(r) == ["https://a.example/json1", "https://a.example/parts"]
    assert r.message == "Few pages hold the query's names as written; pages holding their parts follow."


def test_site_and_host_with_a_path_keep_only_urls_under_it(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/c3ref/open.html": html_page("Open", f"<p>Open a database handle. {FILLER}</p>"),
        "https://a.example/c3ref/close.html": html_page("Close", f"<p>Close a database handle. {FILLER}</p>"),
        "https://a.example/lang.html": html_page("Language", f"<p>The database language. {FILLER}</p>"),
        "https://b.example/c3ref/x.html": html_page("Other", f"<p>Another database here. {FILLER}</p>"),
    })
    # before: the path was dropped without a word and all four pages came
    assert sorted(urls(search(conn, "database site:a.example/c3ref"))) == [
        "https://a.example/c3ref/close.html", "https://a.example/c3ref/open.html"]
    assert sorted(urls(search(conn, "database host:a.example/c3ref/open"))) == ["https://a.example/c3ref/open.html"]
    assert sorted(urls(search(conn, "database -site:a.example/c3ref"))) == [
        "https://a.example/lang.html", "https://b.example/c3ref/x.html"]
    assert len(search(conn, "database site:a.example/").results) == 3  # "/" is the whole site
    # a query of filters only lists the pages under the path
    assert sorted(urls(search(conn, "site:https://a.example/c3ref/?q=1"))) == [
        "https://a.example/c3ref/close.html", "https://a.example/c3ref/open.html"]


def test_partial_matches_rank_by_words_held(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://a.example/two": html_page("Two", "<p>Alpha and beta live here.</p>"),
        "https://a.example/one": html_page("One", "<p>Only alpha here.</p>"),
        "https://a.example/three": html_page("Three", "<p>Alpha, beta and gamma.</p>"),
        "https://a.example/none": html_page("None", "<p>Nothing relevant.</p>"),
    })
    r = search(conn, "alpha beta gamma delta")
    assert r.partial_matches
    assert urls(r) == ["https://a.example/three", "https://a.example/two", "https://a.example/one"]


def test_did_you_mean_from_the_index_vocabulary(tmp_path):
    conn = summarized_site(tmp_path, {
        f"https://a.example/{i}": html_page(f"Page {i}", f"<p>The replication of database {i}.</p>") for i in range(3)
    })
    r = search(conn, "replicaton", correct=False, typos=False)
    assert r.total == 0 and r.suggestion == "replication" and r.message == "No results."
    assert search(conn, "replicaton", typos=False).corrected and search(conn, "replicaton", typos=False).total == 3
    assert search(conn, "replication").suggestion is None
    # a mistyped word beside words the pages hold: the pages holding most words, and the fix
    r = search(conn, "database replicaton", typos=False)
    assert r.partial_matches and r.total == 3 and r.suggestion == "database replication"
    assert search(conn, "database replication").suggestion is None


def test_time_budget_stops_a_slow_query(tmp_path):
    pages = {f"https://a.example/{i}": html_page(f"Page {i}", f"<p>common words and more common words {i}</p>")
             for i in range(400)}
    conn = summarized_site(tmp_path, pages)
    slow = search(conn, "common words", budget_ms=0)
    assert slow.timed_out and "time limit (0 ms)" in slow.message
    full = search(conn, "common words")
    # 400 pages match; the scan stops after PAGE_SCAN of them, so the total is a lower bound
    assert not full.timed_out and full.total == 300 and full.total_is_lower_bound and len(full.results) == 20
    assert full.total_label == "300+"
    deep = search(conn, "common words", page=19)  # results 381-400: the scan goes as deep as the page
    assert deep.total == 400 and not deep.total_is_lower_bound and len(deep.results) == 20


_ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT count(*) FROM (SELECT x FROM c LIMIT 10000000000)")


def test_a_budget_spent_while_candidate_pages_are_read_gives_them_in_bm25_order(tmp_path, monkeypatch):
    import textpile.search.rerank as rerank

    pages = {f"https://a.example/{i}": html_page(f"Page {i}", f"<p>common words and more common words {i}</p>")
             for i in range(40)}
    conn = summarized_site(tmp_path, pages)
    real = rerank.page_infos
    calls = []

    def slow_first(c, ids):  # the rerank's read of its candidates outlasts the budget
        calls.append(len(ids))
        if len(calls) == 1:
            c.execute(_ENDLESS).fetchone()
        return real(c, ids)

    monkeypatch.setattr(rerank, "page_infos", slow_first)
    r = search(conn, "common words", budget_ms=300)
    # before: the interrupted statement escaped as "search failed: interrupted"
    assert r.timed_out and "time limit (300 ms)" in r.message
    assert len(calls) == 2 and calls[0] == calls[1] == 30  # RERANK_DEPTH candidates, read again unbudgeted
    assert len(r.results) == 20


def test_a_budget_spent_while_a_query_without_words_lists_pages_says_so(tmp_path):
    import sqlite3

    pages = {f"https://a.example/{i}": html_page(f"Page {i}", f"<p>common words {i}</p>") for i in range(5)}
    summarized_site(tmp_path, pages).close()

    class SlowCount(sqlite3.Connection):
        def execute(self, sql, *args):
            if sql.startswith("SELECT count(*) FROM full_text_entity_index"):
                super().execute(_ENDLESS).fetchone()
            return super().execute(sql, *args)

    conn = sqlite3.connect(tmp_path / "summary.db", factory=SlowCount)
    r = search(conn, "-\"missing\" site:a.example", budget_ms=300)
    assert r.timed_out and r.results == [] and "time limit (300 ms)" in r.message
    fast = search(sqlite3.connect(tmp_path / "summary.db"), "-\"missing\" site:a.example")
    assert not fast.timed_out and fast.total == 5 and len(fast.results) == 5


def test_json_and_text_outputs_carry_sections(tmp_path):
    from textpile.cli.search import format_text
    from textpile.search.results import results_json

    conn = summarized_site(tmp_path, {"https://docs.example/api/module.html": API_PAGE})
    results = search(conn, "pkg.module.open_reader")
    data = results_json(results)
    [item] = [x for x in data["list"] if x["page_url"] == "https://docs.example/api/module.html"]
    assert item["url"] == "https://docs.example/api/module.html#pkg.module.open_reader"
    assert item["section_title"] == "pkg.module.open_reader(path)"
    assert {"title", "url", "description", "snippet"} <= set(item)  # the SearxNG json_engine fields
    assert data["partial_matches"] is False and data["suggestion"] is None and data["timed_out"] is False
    text = format_text(results)
    assert "1. pkg.module reference › pkg.module.open_reader(path)" in text


def test_a_database_summarized_by_an_older_textpile_says_how_to_build_its_index(tmp_path):
    import sqlite3

    from textpile.errors import DatabaseError

    conn = summarized_site(tmp_path, {"https://a.example/": html_page("A", "<p>Words.</p>")})
    conn.close()
    rw = sqlite3.connect(tmp_path / "summary.db")
    rw.execute("DROP TABLE search_language")
    rw.close()
    conn = sqlite3.connect(tmp_path / "summary.db")
    with pytest.raises(DatabaseError, match=r"run `textpile summarize` on it once"):
        search(conn, "words")


def test_the_time_limit_is_an_option_of_search_and_serve(tmp_path):
    import asyncio
    import subprocess
    import sys

    from textpile.web.app import build_datasette

    pages = {f"https://a.example/{i}": html_page(f"Page {i}", f"<p>common words and more common words {i}</p>")
             for i in range(400)}
    summarized_site(tmp_path, pages).close()
    db = str(tmp_path / "summary.db")
    run = subprocess.run([sys.executable, "-m", "textpile.cli", "search", "-s", db, "--time-limit-ms", "1",
                          "--format", "json", "common", "words"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert '"timed_out": true' in run.stdout and "time limit (1 ms)" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "textpile.cli", "search", "-s", db, "--time-limit-ms", "0", "x"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--time-limit-ms" in bad.stderr
    ds = build_datasette(db, search_time_limit_ms=1)
    data = asyncio.run(ds.client.get("/search?format=json&search=common+words")).json()
    assert data["timed_out"] is True
    assert asyncio.run(build_datasette(db).client.get("/search?format=json&search=common+words")).json()["timed_out"] is False


def test_words_most_pages_hold_are_left_out_of_scoring_without_changing_it(tmp_path):
    from textpile.index.analysis import Analyzer
    from textpile.search.candidates import page_candidates
    from textpile.search.engine import _common_terms
    from textpile.search.plan import index_languages, plan_query
    from textpile.search.query import parse_query
    from textpile.search.rank import DEFAULT_RANKING

    birds = ["coot", "teal", "wigeon", "pintail", "shoveler", "gadwall", "smew", "eider", "scaup", "merganser",
             "pochard", "garganey"]
    pages = {f"https://a.example/{bird}": html_page(
        bird.title(), f"<p>The {bird} on the lake. {f'The {bird} waits by the reeds. ' * (i % 3)}"
                      f"{'A grebe swims past. ' * (i // 4 + 1 if i % 4 == 0 else 0)}Seen on day {i} of "
                      f"the {bird} count, when every {bird} was ringed.</p>")
        for i, bird in enumerate(birds)}
    pages["https://a.example/few"] = html_page("Few", "<p>Only a grebe here.</p>")
    conn = summarized_site(tmp_path, pages)
    plan = plan_query(parse_query("the grebe"), Analyzer(), index_languages(conn))
    common = _common_terms(conn, plan)
    assert common == {"the"}
    assert plan.scoring_terms(common) == '"grebe"'
    assert plan_query(parse_query("the lake"), Analyzer(), index_languages(conn)).scoring_terms(
        _common_terms(conn, plan_query(parse_query("the lake"), Analyzer(), index_languages(conn)))) is None
    full, seen, complete = page_candidates(conn, plan.all_terms, DEFAULT_RANKING.page_columns, 50, 300)
    short, seen_short, complete_short = page_candidates(conn, plan.all_terms, DEFAULT_RANKING.page_columns, 50, 300,
                                                        score_match='"grebe"')
    assert complete and complete_short and seen == seen_short == 3
    assert [eg for eg, _ in short] == [eg for eg, _ in full] and len(full) == 3
    # "the" is a stop word: not required ("Few" holds no "the") and no credit, as "grebe" alone
    assert urls(search(conn, "the grebe")) == urls(search(conn, "grebe"))
    assert set(urls(search(conn, "the grebe"))) == {"https://a.example/few", "https://a.example/scaup",
                                                    "https://a.example/coot", "https://a.example/shoveler"}
    assert all(abs(a - b) <= 1e-4 * abs(a) for (_, a), (_, b) in zip(full, short))
