"""Patience and flukes (unobtanium-documentation.txt, page "Crawl Loop"): a URL whose
connection fails even on its immediate retry is tried again later in the run and costs
no patience while the origin answers otherwise; an origin that stopped answering still
runs out of patience after a few URLs. Sites on 127.0.0.1 that hang up on some URLs."""

from __future__ import annotations

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}
HUNG_UP = "RemoteProtocolError: Server disconnected without sending a response."


def ok(body: str = "<p>ok</p>") -> Response:
    return Response(200, body, HTML)


def test_two_failing_urls_do_not_end_the_origins_run(tmp_path):
    pages = " ".join(f'<a href="/p{i}">p{i}</a>' for i in range(1, 5))
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": ok(f'<a href="/bad1">b</a> <a href="/bad2">b</a> {pages}'),
        "/bad1": Response(hang_up=True),
        "/bad2": Response(hang_up=True),
        **{f"/p{i}": ok() for i in range(1, 4)},
        "/p4": ok('<a href="/late1">l</a> <a href="/late2">l</a>'),
        "/late1": ok(), "/late2": ok(),
    }
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        report = run_crawl(cfg, db, progress=False)
    rows = Rows(db, {site.base_url: "S"})
    failed = (0, 102, HUNG_UP)
    assert report.out_of_patience_origins == []
    assert [(url, code) for url, _, code, _ in rows.log()] == [
        ("S/robots.txt", 44), ("S/", 20), ("S/bad1", 102), ("S/bad2", 102),
        ("S/p1", 20), ("S/p2", 20), ("S/p3", 20), ("S/p4", 20),
        # requeued at the end of the todo list, twice each
        ("S/bad1", 102), ("S/bad2", 102), ("S/bad1", 102), ("S/bad2", 102),
        # found after the failures: still crawled
        ("S/late1", 20), ("S/late2", 20),
    ]
    log = rows.log_by_url()
    assert log["S/bad1"] == log["S/bad2"] == [failed] * 3
    # each failure is the request and its immediate retry
    assert [r[:3] for r in rows.requests("S/bad1")] == [("S/bad1", 102, None)] * 6
    assert report.total_requests == 1 + 1 + 6 * 2 + 4 + 2
    assert rows.candidates()["S/bad1"] == (102, True, False, None)


def test_an_origin_that_stopped_answering_runs_out_of_patience(tmp_path):
    links = " ".join(f'<a href="/gone{i}">g</a>' for i in range(1, 11))
    routes = {"/robots.txt": Response(404, "", {}), "/": ok(links),
              **{f"/gone{i}": Response(hang_up=True) for i in range(1, 11)}}
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        report = run_crawl(cfg, db, progress=False)
    rows = Rows(db, {site.base_url: "S"})
    # the first failure may be a fluke of that URL; each one after it without an answer
    # in between costs one patience: 5 more and the origin gives up
    assert [(url, code) for url, _, code, _ in rows.log()] == (
        [("S/robots.txt", 44), ("S/", 20)] + [(f"S/gone{i}", 102) for i in range(1, 7)])
    assert report.out_of_patience_origins == [site.base_url]
