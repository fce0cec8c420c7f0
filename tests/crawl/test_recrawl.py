"""Adaptive recrawl (textpile.crawl.policy.recrawl, issue 33): each page's recrawl interval
comes from its own history. A site on 127.0.0.1 with a page that answers 304 to the
conditional request and one that changes on every visit, crawled six times: the first
page's interval grows by 40% per unchanged answer, the second's shrinks by 20% per
change, and at the configuration's recrawl_interval after the last crawl only the
changing page is due."""

from __future__ import annotations

import sqlite3

import pytest

from sites import Response, SiteServer
from textpile.crawl.crawldb.writer import CrawlerDb
from textpile.crawl.loop.report import format_report
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.recrawl import RecrawlState, next_state, verdict
from textpile.errors import ConfigError

from .crawlsite import config

HTML = {"Content-Type": "text/html; charset=utf-8"}
DAY = 86400


def test_a_page_answering_304_is_visited_less_often_than_one_changing_each_time(tmp_path):
    visits = {"moving": 0}

    def still(req):
        if req.headers.get("If-None-Match") == '"s1"':
            return Response(304, b"", {"ETag": '"s1"'})
        return Response(200, "<p>the same page, always</p>", {**HTML, "ETag": '"s1"'})

    def moving(req):
        visits["moving"] += 1
        return Response(200, f"<p>news, edition {visits['moving']}</p>", HTML)

    routes = {"/robots.txt": Response(404, "", {}), "/": Response(200, '<a href="/still">s</a> <a href="/moving">m</a>',
                                                                   HTML),
              "/still": still, "/moving": moving}
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], recrawl="1 day")
        db = tmp_path / "crawl.db"
        for run in range(6):  # the first crawl, then five recrawls
            report = run_crawl(cfg, db, progress=False, force_recrawl=run > 0)
    assert visits["moving"] == 6
    conn = sqlite3.connect(db)
    rows = {url[len(site.base_url):]: row for url, *row in conn.execute(
        "SELECT u.str_url, r.interval_s, r.unchanged_answers FROM textpile_recrawl r JOIN url u USING (url_id)")}
    codes = [c for (c,) in conn.execute("SELECT l.exit_code FROM crawl_log l JOIN url u USING (url_id)"
                                        " WHERE u.str_url LIKE '%/still' ORDER BY l.crawl_log_id")]
    last = conn.execute("SELECT max(time_started_unix_utc) FROM crawl_log").fetchone()[0]
    conn.close()
    assert codes == [20] + [34] * 5
    # 1 day * 1.4 ** n (rounded at each step) and 1 day * 0.8 ** n; the home page's text
    # stayed the same, so it is unchanged too
    assert rows == {"/still": [464681, 5], "/moving": [28312, 0], "/": [464681, 5]}
    # the crawl report shows the spread
    assert report.recrawl_intervals == {"pages": 3, "shortest_s": 28312, "median_s": 464681, "longest_s": 464681}
    assert format_report(report).split("[Crawl_Statistics_Report.recrawl_intervals]\n")[1] == (
        "pages = 3\nshortest_s = 28312\nmedian_s = 464681\nlongest_s = 464681\n")
    # one recrawl_interval after the last crawl: only the changing page is due again
    conn = sqlite3.connect(db)
    db_ = CrawlerDb(conn)
    due = db_.store.due_candidates(site.base_url, DAY, False, 10, now_unix=last + DAY, bounds_s=cfg.recrawl_bounds_s)
    assert [c.str_url[len(site.base_url):] for c in due] == ["/moving"]
    assert (due[0].recrawl_interval_s, due[0].unchanged_answers) == (28312, 0)
    # and the page that answered 304 five times after 464,681 s
    later = db_.store.due_candidates(site.base_url, DAY, False, 10, now_unix=last + 464681,
                                     bounds_s=cfg.recrawl_bounds_s)
    assert sorted(c.str_url[len(site.base_url):] for c in later) == ["/", "/still"]
    conn.close()


def test_bounds_and_verdicts():
    bounds = (100, 1000)
    state = RecrawlState()
    for _ in range(10):
        state = next_state(state, True, None, 400, bounds)
    assert (state.interval_s, state.unchanged_answers) == (1000, 10)  # the maximum
    for _ in range(12):
        state = next_state(state, False, 7, 400, bounds)
    assert state == RecrawlState(100, 7, 0)  # the minimum, the new text's digest
    assert next_state(state, True, None, 0, bounds) == RecrawlState(100, 7, 1)  # --force-recrawl: interval kept
    assert next_state(RecrawlState(), None, 5, 400, bounds) == RecrawlState(None, 5, 0)  # a first text
    assert [verdict(None, True, None), verdict(3, False, 3), verdict(3, False, 4), verdict(None, False, 4),
            verdict(3, False, None)] == [True, True, False, None, None]


def test_recrawl_bounds_default_and_configured(tmp_path):
    assert config(tmp_path, ["http://h.example/"], recrawl="1 day").recrawl_bounds_s == (DAY // 4, 8 * DAY)
    cfg = config(tmp_path, ["http://h.example/"], recrawl="1 day",
                 extra='min_recrawl_interval = "1 hour"\nmax_recrawl_interval = "30 days"')
    assert cfg.recrawl_bounds_s == (3600, 30 * DAY)
    with pytest.raises(ConfigError, match="max_recrawl_interval"):
        config(tmp_path, ["http://h.example/"], extra='max_recrawl_interval = "soon"')
