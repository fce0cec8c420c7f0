"""What a page or its answer says about itself, beyond links: meta refresh and Refresh
headers as redirects, a canonical given only in the ``Link`` header, X-Robots-Tag
directives for this crawler among others', and the If-Modified-Since a recrawl sends.
Sites on 127.0.0.1; exact crawler database rows."""

from __future__ import annotations

import json

from sites import Response, SiteServer
from textpile.cli import main
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.parser.headers import header_canonical, parse_link_header, x_robots_tag
from textpile.crawl.parser.refresh import Refresh, parse_refresh
from textpile.enums import InformationSource

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}
LAST_MODIFIED = "Wed, 01 Jan 2020 10:00:00 GMT"


def page(body: str, head: str = "", headers: dict | None = None) -> Response:
    return Response(200, f"<html><head><title>t</title>{head}</head><body>{body}</body></html>",
                    {**HTML, **(headers or {})})


def test_parse_refresh_as_browsers_read_it():
    assert parse_refresh("0; url=/real") == Refresh(0, "/real")
    assert parse_refresh("5;URL='/x y'") == Refresh(5, "/x y")
    assert parse_refresh(' 3 ,  "/q"') == Refresh(3, "/q")
    assert parse_refresh("0 url = /z") == Refresh(0, "/z")
    assert parse_refresh("1.5; url=/f") == Refresh(1, "/f")
    assert parse_refresh(".5; url=/g") == Refresh(0, "/g")
    assert parse_refresh("30") == Refresh(30, None)
    assert parse_refresh("10; url=") == Refresh(10, None)
    assert parse_refresh("; url=/x") is None
    assert parse_refresh("soon") is None
    assert parse_refresh("5x; url=/x") is None


def test_x_robots_tag_per_user_agent_prefix():
    assert x_robots_tag(["otherbot: noindex, examplebot: nofollow"], "examplebot").nofollow
    assert not x_robots_tag(["otherbot: noindex, examplebot: nofollow"], "examplebot").noindex
    assert x_robots_tag(["otherbot: noindex, examplebot: nofollow"], "otherbot").noindex
    assert not x_robots_tag(["otherbot: noindex, examplebot: nofollow"], "otherbot").nofollow
    both = x_robots_tag(["ExampleBot: noindex, nofollow"], "examplebot")
    assert both.noindex and both.nofollow
    mixed = x_robots_tag(["nofollow, otherbot: noindex"], "examplebot")
    assert mixed.nofollow and not mixed.noindex
    assert not x_robots_tag(["unavailable_after: Friday, 25-Jun-2010 15:00:00 PST"], "examplebot").noindex
    assert x_robots_tag(["max-snippet: 20, noindex"], "examplebot").noindex
    assert x_robots_tag(["otherbot: nofollow", "noindex"], "examplebot").noindex


def test_link_header_parsing():
    links = parse_link_header(['</style.css>; rel=preload; as=style, <https://h/a,b>; rel="canonical"',
                               '<feed.xml>; rel="alternate"; type="application/atom+xml"; title="x, y"'])
    assert [(link.target, sorted(link.rels), link.media_type) for link in links] == [
        ("/style.css", ["preload"], None), ("https://h/a,b", ["canonical"], None),
        ("feed.xml", ["alternate"], "application/atom+xml")]
    assert header_canonical(links, "https://h/page").str_url == "https://h/a,b"
    assert header_canonical(parse_link_header(['<mailto:x@h>; rel=canonical']), "https://h/") is None


def test_meta_refresh_stubs_are_redirects_not_pages(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": page('<a href="/stub">s</a> <a href="/later">l</a> <a href="/dashboard">d</a>'
                  ' <a href="/reload">r</a> <a href="/header">h</a>'),
        "/stub": page("<p>stubword moved</p>", '<meta http-equiv="Refresh" content="0; URL=/real">'),
        "/later": page("<p>moved soon</p>", '<meta http-equiv="refresh" content="10;url=\'/real-two\'">'),
        "/dashboard": page("<p>dashboardword figures</p>", '<meta http-equiv="refresh" content="11; url=/other">'),
        "/reload": page("<p>reloadword every five seconds</p>", '<meta http-equiv="refresh" content="5">'),
        "/header": page("<p>headerstub</p>", headers={"Refresh": "2; url=/real-three"}),
        "/real": page("<p>realword content</p>"),
        "/real-two": page("<p>second real page</p>"),
        "/real-three": page("<p>third real page</p>"),
        "/other": page("<p>other</p>"),
    }
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        run_crawl(cfg, db, progress=False)
    rows = Rows(db, {site.base_url: "S"})
    log = {url: entries for url, entries in rows.log_by_url().items()}
    assert log["S/stub"] == [(0, 31, "meta refresh after 0 s to S/real: a client-side redirect, not indexed")]
    assert log["S/later"] == [(0, 32, "meta refresh after 10 s to S/real-two: a client-side redirect, not indexed")]
    assert log["S/header"] == [(0, 32, "Refresh header after 2 s to S/real-three: a client-side redirect, not indexed")]
    assert log["S/dashboard"] == [(0, 20, None)] and log["S/reload"] == [(0, 20, None)]
    assert log["S/real"] == log["S/real-two"] == log["S/real-three"] == [(0, 20, None)]
    assert "S/other" not in log  # a dashboard's refresh target is no redirect, and no link
    assert rows.redirects() == [
        ("S/stub", "S/real", int(InformationSource.file_body), 1, 0, 31),
        ("S/later", "S/real-two", int(InformationSource.file_body), 0, 0, 32),
        ("S/header", "S/real-three", int(InformationSource.response_header), 0, 0, 32),
    ]
    files = rows.files()
    assert "S/stub" not in files and "S/later" not in files and "S/header" not in files
    assert "dashboardword" in files["S/dashboard"][2]

    summary = tmp_path / "summary.db"
    assert main(["summarize", "-c", str(db), "-s", str(summary), "--no-progress"]) == 0
    assert _search(summary, "stubword") == []
    assert _search(summary, "headerstub") == []
    assert _search(summary, "realword") == [site.base_url + "/real"]
    assert _search(summary, "dashboardword") == [site.base_url + "/dashboard"]


def _search(summary, word: str) -> list[str]:
    from io import StringIO
    from contextlib import redirect_stdout

    out = StringIO()
    with redirect_stdout(out):
        assert main(["search", "-s", str(summary), "--format", "json", word]) == 0
    return [item["url"] for item in json.loads(out.getvalue())["list"]]


def test_link_header_canonical_and_x_robots_tag_for_this_crawler(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": page('<a href="/variant?sort=up">v</a> <a href="/notes.txt">n</a> <a href="/mixed">m</a>'
                  ' <a href="/ours">o</a> <a href="/theirs">t</a>'),
        "/variant?sort=up": page("<p>variant</p>", headers={"Link": '</canonical>; rel="canonical"'}),
        "/notes.txt": Response(200, "plain notes", {"Content-Type": "text/plain",
                                                    "Link": "<https://elsewhere.example/notes>; rel=canonical"}),
        "/canonical": page("<p>canonical</p>"),
        "/mixed": page('<a href="/never">n</a>', headers={"X-Robots-Tag": "otherbot: noindex, textpile-test: nofollow"}),
        "/ours": page('<a href="/from-ours">f</a>', headers={"X-Robots-Tag": "textpile-test: noindex"}),
        "/theirs": page('<a href="/from-theirs">f</a>', headers={"X-Robots-Tag": "otherbot: noindex, nofollow"}),
        "/never": page("<p>never</p>"),
        "/from-ours": page("<p>from ours</p>"),
        "/from-theirs": page("<p>from theirs</p>"),
    }
    policy = '[[url_query_paramters]]\nif.url.path.equals = "/variant"\nallow = ["sort"]\n'
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], extra=policy)
        db = tmp_path / "crawl.db"
        run_crawl(cfg, db, progress=False)
    rows = Rows(db, {site.base_url: "S"})
    assert rows.log() == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/", 0, 20, None),
        ("S/variant?sort=up", 0, 180, "canonical URL is S/canonical"),
        ("S/notes.txt", 0, 180, "canonical URL is https://elsewhere.example/notes"),
        ("S/mixed", 0, 20, None),
        ("S/ours", 0, 171, "the page asked not to be indexed (noindex)"),
        ("S/theirs", 0, 20, None),
        ("S/canonical", 0, 20, None),
        ("S/from-ours", 0, 20, None),
        ("S/from-theirs", 0, 20, None),
    ]
    assert "S/never" not in rows.candidates()


def test_if_modified_since_is_the_stored_last_modified(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": page('<a href="/dated">d</a> <a href="/undated">u</a>'),
        "/dated": page("<p>dated</p>", headers={"Last-Modified": LAST_MODIFIED, "ETag": '"d1"'}),
        "/undated": page("<p>undated</p>"),
    }
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        run_crawl(cfg, db, progress=False)
        run_crawl(cfg, db, progress=False, force_recrawl=True)
    dated = site.requests_for("/dated")
    assert [r.headers.get("If-Modified-Since") for r in dated] == [None, LAST_MODIFIED]
    assert [r.headers.get("If-None-Match") for r in dated] == [None, '"d1"']
    assert [r.headers.get("If-Modified-Since") for r in site.requests_for("/undated")] == [None, None]
