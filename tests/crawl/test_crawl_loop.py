"""The crawl loop against scripted sites on 127.0.0.1: two seed origins (A, B) and one
outside the seeds (C). Asserts exact crawl_log / request / redirect / crawl_candidate /
file rows."""

from __future__ import annotations

import gzip
import sqlite3

import pytest

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}
LAST_MODIFIED = "Wed, 01 Jan 2020 10:00:00 GMT"
LAST_MODIFIED_UNIX = 1577872800
CP1252_TEXT = "Caf\u00e9 cr\u00e8me \u2013 \u201cquoted\u201d \u20ac 5"

ROBOTS_A = (
    "\ufeffUser-agent: textpile-test\n"
    "Disallow: /secret\n"
    "Disallow: /*.pdf$\n"
    "Disallow: /a*/deep\n"
    "\n"
    "User-agent: *\n"
    "Disallow: /\n"
)

POLICIES = """
[[do_not_crawl]]
reason = "no login pages"
if.url.path.has_prefix = "/login"

[[url_query_paramters]]
reason = "used for pagination"
if.url.path.equals = "/list"
allow = ["page"]
"""


def page(body: str, head: str = "", headers: dict | None = None, status: int = 200) -> Response:
    return Response(status, f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>",
                    headers or dict(HTML))


def links(*hrefs: str) -> str:
    return "".join(f'<a href="{h}">{h}</a>' for h in hrefs)


def make_sites(b_base: str, c_base: str) -> dict:
    busy_calls = []

    def busy(req):
        busy_calls.append(req)
        if len(busy_calls) == 1:
            return Response(429, "slow down", {"Content-Type": "text/plain", "Retry-After": "0"})
        return page("finally")

    def etag(req):
        if req.headers.get("If-None-Match") == '"v1"':
            return Response(304, b"", {"ETag": '"v1"'})
        return page("versioned", headers={**HTML, "ETag": '"v1"', "Last-Modified": LAST_MODIFIED})

    index_links = links(
        "/private/page.html", "/secret/x.html", "/doc.pdf", "/doc.pdf.html", "/abc/deep.html",
        "/noindex.html", "/xrobots.html", "/xrobots-google.html", "/meta-ours.html", "/meta-google.html",
        "/nofollow.html", "/canonical.html", "/canonical-mailto.html", "/moved", "/temp", "/see-other",
        "/missing", "/gone", "/forbidden", "/busy", "/broken", "/login/form.html", "/list?page=2",
        "/list?page=2&sort=asc", "/cp1252.html", "/cp1252-meta.html", "/data.json", "/etag.html",
        "/based.html", "/gzip.html", f"{b_base}/from-a.html", f"{c_base}/outside-link.html",
        "mailto:someone@example.invalid", "/#top", "javascript:void(0)",
    )
    cp_bytes = f"<html><head><title>cp</title></head><body><p>{CP1252_TEXT}</p></body></html>".encode("cp1252")
    cp_meta = ('<html><head><meta charset="windows-1252"><title>cp</title></head>'
               f"<body><p>{CP1252_TEXT}</p></body></html>").encode("cp1252")
    gz_html = "<html><body><p>compressed with x-gzip</p></body></html>"
    return {
        "/robots.txt": Response(200, ROBOTS_A.encode("utf-8"), {"Content-Type": "text/plain"}),
        "/": page(index_links),
        "/private/page.html": page("private but allowed for us"),
        "/doc.pdf.html": page("not a pdf"),
        "/noindex.html": page(links("/via-noindex.html"), '<meta name="robots" content="noindex, follow">'),
        "/xrobots.html": page("x", headers={**HTML, "X-Robots-Tag": "noindex"}),
        "/xrobots-google.html": page("x", headers={**HTML, "X-Robots-Tag": "googlebot: noindex"}),
        "/meta-ours.html": page("x", '<meta name="textpile-test" content="none">'),
        "/meta-google.html": page("x", '<meta name="googlebot" content="noindex">'),
        "/nofollow.html": page(links("/only-via-nofollow.html"), '<meta name="robots" content="nofollow">'),
        "/canonical.html": page("copy", '<link rel="canonical" href="/canonical-target.html#main">'),
        "/canonical-target.html": page("original", '<link rel="canonical" href="canonical-target.html">'),
        "/canonical-mailto.html": page("x", '<link rel="canonical" href="mailto:x@example.invalid">'),
        "/moved": Response(301, b"", {"Location": "/new-home.html"}),
        "/new-home.html": page("new home"),
        "/temp": Response(302, b"", {"Location": f"{c_base}/outside.html"}),
        "/see-other": Response(307, b"", {"Location": f"{b_base}/from-redirect.html#frag"}),
        "/gone": Response(410, "gone", {"Content-Type": "text/plain"}),
        "/forbidden": Response(403, "no", {"Content-Type": "text/plain"}),
        "/busy": busy,
        "/broken": Response(500, "oops", {"Content-Type": "text/plain"}),
        "/list?page=2": page("page 2"),
        "/cp1252.html": Response(200, cp_bytes, {"Content-Type": "text/html; charset=windows-1252"}),
        "/cp1252-meta.html": Response(200, cp_meta, {"Content-Type": "text/html"}),
        "/data.json": Response(200, '{"a": 1}', {"Content-Type": "application/json"}),
        "/etag.html": etag,
        "/based.html": page('<a href="target.html">t</a>', '<base href="/basedir/">'),
        "/gzip.html": Response(200, gzip.compress(gz_html.encode()),
                               {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "x-gzip"}),
    }


B_ROUTES = {
    # An HTML error page served with 200 for /robots.txt, as Python's pydoc server does.
    "/robots.txt": page("<h1>Error</h1><p>no such page</p>"),
    "/": page(links("/b2.html")),
    "/b2.html": page("b2"),
    "/from-a.html": page("linked from A"),
    "/from-redirect.html": page("redirected to from A"),
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("crawl")
    with SiteServer(B_ROUTES) as b, SiteServer({"/outside.html": page("outside")}) as c:
        with SiteServer(make_sites(b.base_url, c.base_url)) as a:
            cfg = config(tmp_path, [a.base_url + "/", b.base_url + "/"], extra=POLICIES)
            db = tmp_path / "crawl.db"
            report = run_crawl(cfg, db, progress=False)
            rows = Rows(db, {a.base_url: "A", b.base_url: "B", c.base_url: "C"})
            yield report, rows, db, cfg, a, b, c


ROBOTS_BLOCK = (0, 170, "disallowed by A/robots.txt for textpile-test")
NOINDEX = (0, 171, "the page asked not to be indexed (noindex)")


def test_crawl_log_rows(crawled):
    report, rows, *_ = crawled
    assert rows.log_by_url() == {
        "A/robots.txt": [(1, 20, None)],
        "B/robots.txt": [(1, 29, "robots.txt answered with an HTML page: no rules, everything allowed")],
        "A/": [(0, 20, None)],
        "A/private/page.html": [(0, 20, None)],
        "A/secret/x.html": [ROBOTS_BLOCK],
        "A/doc.pdf": [ROBOTS_BLOCK],
        "A/doc.pdf.html": [(0, 20, None)],
        "A/abc/deep.html": [ROBOTS_BLOCK],
        "A/noindex.html": [NOINDEX],
        "A/via-noindex.html": [(0, 44, None)],
        "A/xrobots.html": [NOINDEX],
        "A/xrobots-google.html": [(0, 20, None)],
        "A/meta-ours.html": [NOINDEX],
        "A/meta-google.html": [(0, 20, None)],
        "A/nofollow.html": [(0, 20, None)],
        "A/canonical.html": [(0, 180, "canonical URL is A/canonical-target.html")],
        "A/canonical-target.html": [(0, 20, None)],
        "A/canonical-mailto.html": [(0, 20, None)],
        "A/moved": [(0, 31, None)],
        "A/new-home.html": [(0, 20, None)],
        "A/temp": [(0, 32, None)],
        "A/see-other": [(0, 32, None)],
        "A/missing": [(0, 44, None)],
        "A/gone": [(0, 41, None)],
        "A/forbidden": [(0, 40, None)],
        "A/busy": [(0, 49, None), (0, 20, None)],
        "A/broken": [(0, 50, None)],
        "A/login/form.html": [(0, 173, "blocked by do_not_crawl[0]: no login pages")],
        "A/list?page=2": [(0, 20, None)],
        "A/list?page=2&sort=asc": [(0, 173, "query parameters page, sort not allowed by any single policy: "
                                           "url_query_paramters[0] allows page (used for pagination)")],
        "A/cp1252.html": [(0, 20, None)],
        "A/cp1252-meta.html": [(0, 20, None)],
        "A/data.json": [(0, 29, None)],
        "A/etag.html": [(0, 20, None)],
        "A/based.html": [(0, 20, None)],
        "A/basedir/target.html": [(0, 44, None)],
        "A/gzip.html": [(0, 20, None)],
        "B/": [(0, 20, None)],
        "B/b2.html": [(0, 20, None)],
        "B/from-a.html": [(0, 20, None)],
        "B/from-redirect.html": [(0, 20, None)],
    }
    assert report.out_of_patience_origins == []
    assert report.ingested_files == 20
    assert report.total_requests == 37
    assert report.exit_code_counts == {
        "file_ingested": 21, "file_of_unknown_type": 2, "permanent_redirect": 1, "redirect": 2,
        "server_blamed_client": 1, "file_gone": 1, "file_not_found": 3, "rate_limited": 1,
        "server_internal_error": 1, "blocked_by_robots_txt": 3, "blocked_at_request_of_remote": 3,
        "blocked_url_by_local_policy": 2, "not_canonical": 1,
    }
    agent = rows.conn.execute("SELECT name, http_user_agent, time_finished_unix_utc IS NOT NULL,"
                              " length(agent_uuid) FROM agent").fetchall()
    assert agent == [("ant", "textpile-test (for https://example.invalid/why)", 1, 16)]
    assert rows.conn.execute("SELECT COUNT(DISTINCT agent_id) FROM crawl_log").fetchone() == (1,)


def test_request_rows(crawled):
    _, rows, *_ = crawled
    assert rows.requests("A/busy") == [("A/busy", 49, 429, None, 1, None), ("A/busy", 20, 200, None, 1, None)]
    assert rows.requests("A/etag.html") == [("A/etag.html", 20, 200, '"v1"', 1, LAST_MODIFIED_UNIX)]
    assert rows.requests("A/moved") == [("A/moved", 31, 301, None, 1, None)]
    assert rows.requests("A/broken") == [("A/broken", 50, 500, None, 1, None)]
    assert rows.requests("A/robots.txt") == [("A/robots.txt", 20, 200, None, 1, None)]
    assert rows.requests("A/noindex.html") == [("A/noindex.html", 171, 200, None, 1, None)]
    # blocked crawls send no request
    assert rows.requests("A/secret/x.html") == []
    assert rows.requests("A/login/form.html") == []
    assert rows.conn.execute("SELECT COUNT(*) FROM request").fetchone() == (37,)


def test_redirect_rows(crawled):
    _, rows, *_ = crawled
    assert rows.redirects() == [
        ("A/moved", "A/new-home.html", 1, 1, 0, 31),
        ("A/temp", "C/outside.html", 1, 0, 0, 32),
        ("A/see-other", "B/from-redirect.html", 1, 0, 0, 32),
    ]


def test_crawl_candidate_rows(crawled):
    _, rows, *_ = crawled
    cands = rows.candidates()
    crawled_ok = (20, True, True, None)
    assert cands == {
        "A/": crawled_ok, "B/": crawled_ok,
        "A/private/page.html": crawled_ok,
        "A/secret/x.html": (170, True, False, None),
        "A/doc.pdf": (170, True, False, None),
        "A/doc.pdf.html": crawled_ok,
        "A/abc/deep.html": (170, True, False, None),
        "A/noindex.html": (171, True, False, None),
        "A/via-noindex.html": (44, True, True, None),
        "A/xrobots.html": (171, True, False, None),
        "A/xrobots-google.html": crawled_ok,
        "A/meta-ours.html": (171, True, False, None),
        "A/meta-google.html": crawled_ok,
        "A/nofollow.html": crawled_ok,
        "A/canonical.html": (180, True, True, None),
        "A/canonical-target.html": crawled_ok,
        "A/canonical-mailto.html": crawled_ok,
        "A/moved": (31, True, True, None),
        "A/new-home.html": crawled_ok,
        "A/temp": (32, True, True, None),
        "A/see-other": (32, True, True, None),
        "A/missing": (44, True, True, None),
        "A/gone": (41, True, True, None),
        "A/forbidden": (40, True, False, None),
        "A/busy": crawled_ok,
        "A/broken": (50, True, False, None),
        "A/login/form.html": (173, True, False, None),
        "A/list?page=2": crawled_ok,
        "A/list?page=2&sort=asc": (173, True, False, None),
        "A/cp1252.html": crawled_ok,
        "A/cp1252-meta.html": crawled_ok,
        "A/data.json": (29, True, True, None),
        "A/etag.html": (20, True, True, '"v1"'),
        "A/based.html": crawled_ok,
        "A/basedir/target.html": (44, True, True, None),
        "A/gzip.html": crawled_ok,
        "B/b2.html": crawled_ok,
        "B/from-a.html": crawled_ok,
        "B/from-redirect.html": crawled_ok,
    }
    # not candidates: the outside origin, links of a nofollow page, robots.txt
    assert "A/only-via-nofollow.html" not in cands
    assert not any(u.startswith("C/") for u in cands)


def test_file_rows(crawled):
    _, rows, *_ = crawled
    files = rows.files()
    # a page canonical to another keeps a file row without text: its media type and canonical (issue 33)
    assert set(files) == {u for u, entries in rows.log_by_url().items()
                          if entries[-1][1] in (20, 29, 180) and not u.endswith("robots.txt")}
    assert files["A/canonical.html"][2:4] == (None, "A/canonical-target.html")
    mt, size, text, canonical, lm = files["A/cp1252.html"]
    assert (mt, canonical, lm) == ("text/html; charset=windows-1252", None, None)
    assert f"<p>{CP1252_TEXT}</p>" in text
    assert size == len(CP1252_TEXT.encode("cp1252")) + len("<html><head><title>cp</title></head><body><p></p></body></html>")
    mt, _, text, _, _ = files["A/cp1252-meta.html"]
    assert mt == "text/html" and f"<p>{CP1252_TEXT}</p>" in text
    assert files["A/data.json"] == ("application/json", 8, None, None, None)
    assert files["A/gzip.html"][2] == "<html><body><p>compressed with x-gzip</p></body></html>"
    assert files["A/gzip.html"][1] == len(files["A/gzip.html"][2])
    assert files["A/canonical-target.html"][3] == "A/canonical-target.html"
    assert files["A/canonical-mailto.html"][3] is None
    assert files["A/etag.html"][4] == LAST_MODIFIED_UNIX
    # stored as UTF-8 text
    raw = rows.conn.execute("SELECT CAST(t.text AS BLOB) FROM file_text t JOIN file f USING(file_id)"
                            " JOIN url u ON u.url_id = f.url_id WHERE u.str_url LIKE '%/cp1252.html'").fetchone()[0]
    assert CP1252_TEXT.encode("utf-8") in raw


def test_recrawl_etag_gives_304_and_no_recrawl_before_interval(crawled):
    # runs last: it adds two runs to the module's database
    report, rows, db, cfg, a, b, c = crawled
    entries_before = rows.conn.execute("SELECT COUNT(*) FROM crawl_log").fetchone()[0]
    # not due yet: only robots.txt fetches happen
    second = run_crawl(cfg, db, progress=False)
    assert second.exit_code_counts == {"file_ingested": 1, "file_of_unknown_type": 1}
    rows.conn.close()
    rows.conn = sqlite3.connect(db)
    assert rows.conn.execute("SELECT COUNT(*) FROM crawl_log").fetchone()[0] == entries_before + 2
    # forced: everything again, the ETag page answers 304
    third = run_crawl(cfg, db, progress=False, force_recrawl=True)
    assert third.exit_code_counts["file_did_not_change"] == 1
    etag_requests = a.requests_for("/etag.html")
    assert etag_requests[-1].headers.get("If-None-Match") == '"v1"'
    assert "If-Modified-Since" in etag_requests[-1].headers
    rows.conn.close()
    rows.conn = sqlite3.connect(db)
    assert rows.log_by_url()["A/etag.html"] == [(0, 20, None), (0, 34, None)]
    assert rows.requests("A/etag.html")[-1] == ("A/etag.html", 34, 304, '"v1"', 1, None)
    assert rows.candidates()["A/etag.html"] == (34, True, True, '"v1"')
    assert rows.conn.execute("SELECT COUNT(*) FROM agent WHERE time_finished_unix_utc IS NOT NULL").fetchone() == (3,)
