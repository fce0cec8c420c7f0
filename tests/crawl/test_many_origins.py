"""Many seed origins at once: requests queue for a connection slot before their deadline
starts, and a crowd of dead origins ends in a bounded number of log entries."""

from __future__ import annotations

import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor

from sites import Response, SiteServer
from textpile.crawl.fetcher.fetch import FetchLimits
from textpile.crawl.loop.origin import INITIAL_PATIENCE
from textpile.crawl.loop.run import run_crawl

from .crawlsite import config


def closed_ports(count: int) -> list[int]:
    """``count`` distinct 127.0.0.1 ports nobody listens on, below Linux's ephemeral range
    (32768-60999), so that neither a test server nor one of the crawl's own outgoing
    connections (a TCP self-connect) can take one of them during the test."""
    ports = []
    for port in range(20000, 32768):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == count:
            return ports
    raise AssertionError(f"fewer than {count} free ports below 32768")


def test_300_closed_origins_end_with_their_robots_entries(tmp_path):
    ports = closed_ports(300)
    seeds = [f"http://127.0.0.1:{p}/" for p in ports]
    cfg = config(tmp_path, seeds, max_commands=100_000)
    db = tmp_path / "crawl.db"
    report = run_crawl(cfg, db, progress=False, max_connections=20)
    assert not report.interrupted
    assert sorted(report.out_of_patience_origins) == sorted(f"http://127.0.0.1:{p}" for p in ports)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT o.str_origin, l.crawl_type, l.exit_code, COUNT(*) FROM crawl_log l"
                        " JOIN url u USING(url_id) JOIN origin o USING(origin_id)"
                        " GROUP BY o.str_origin, l.crawl_type, l.exit_code").fetchall()
    conn.close()
    # robots.txt only (crawl_type 1), connection_failed (100), patience 5 tries per origin
    assert {(origin, t, e) for origin, t, e, _ in rows} == {(f"http://127.0.0.1:{p}", 1, 100) for p in ports}
    assert {n for *_, n in rows} == {INITIAL_PATIENCE}
    assert report.exit_code_counts == {"connection_failed": 300 * INITIAL_PATIENCE}


def test_slow_origins_beyond_the_pool_get_no_false_timeouts(tmp_path):
    """30 origins answering in 0.3 s each through 2 connections: the robots.txt requests
    alone queue for 4.5 s, the pages as long again, but each request's 3 s deadline only
    counts its own 0.3 s (ten times that, so a loaded machine gives no false timeouts)."""
    routes = {"/robots.txt": Response(200, "User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"}, 0.3),
              "/": Response(200, "<p>slow page</p>", delay_s=0.3)}
    sites = [SiteServer(routes) for _ in range(30)]
    for site in sites:
        site.__enter__()
    try:
        cfg = config(tmp_path, [s.base_url + "/" for s in sites])
        report = run_crawl(cfg, tmp_path / "crawl.db", progress=False, max_connections=2,
                           limits=FetchLimits(deadline_s=3.0))
    finally:
        with ThreadPoolExecutor(len(sites)) as pool:  # each shutdown waits up to 0.5 s
            list(pool.map(lambda site: site.__exit__(None, None, None), sites))
    assert report.exit_code_counts == {"file_ingested": 60}
    assert report.total_requests == 60
    assert all([r.path for r in s.log] == ["/robots.txt", "/"] for s in sites)
