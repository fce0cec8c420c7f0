"""Pruning (textpile.crawl.crawldb.prune, issue 33): a page the site no longer links to,
still served, leaves the index after a complete and healthy crawl of its origin + summarize,
and stays after a crawl that failed part way (server errors), ran out of its budget or
was killed. Sites on 127.0.0.1; the home page drops its link to /removed between runs."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from kills import crawl_log_entries, killable_env
from sites import Response, SiteServer
from textpile.crawl.crawldb.prune import unpack_outlinks
from textpile.crawl.loop.report import format_report
from textpile.crawl.loop.run import run_crawl
from textpile.search.engine import search
from textpile.store.gen2_piles import register_functions
from textpile.summarize.pipeline import summarize

from .crawlsite import config, write_config

HTML = {"Content-Type": "text/html; charset=utf-8"}
BOTH = '<a href="/kept">kept</a> <a href="/removed">removed</a>'
KEPT_ONLY = '<a href="/kept">kept</a>'


def page(word: str) -> Response:
    return Response(200, f"<html><head><title>{word}</title></head><body><p>A page about {word} and "
                         f"nothing else.</p></body></html>", HTML)


def routes() -> dict:
    return {"/robots.txt": Response(404, "", {}), "/": Response(200, BOTH, HTML),
            "/kept": page("aardvarks"), "/removed": page("zanzibar")}


def found(summary_db: Path, word: str) -> list[str]:
    conn = register_functions(sqlite3.connect(summary_db))
    try:
        return [r.url for r in search(conn, word).results]
    finally:
        conn.close()


def log(db: Path, base: str) -> list[tuple[str, int]]:
    """(path, exit code) of every file crawl entry, in order."""
    conn = sqlite3.connect(db)
    try:
        return [(url[len(base):], code) for url, code in conn.execute(
            "SELECT u.str_url, l.exit_code FROM crawl_log l JOIN url u USING (url_id) WHERE l.crawl_type = 0"
            " ORDER BY l.crawl_log_id")]
    finally:
        conn.close()


def test_a_page_no_longer_linked_leaves_after_a_complete_crawl(tmp_path):
    db, summary_db = tmp_path / "crawl.db", tmp_path / "summary.db"
    with SiteServer(routes()) as site:
        base = site.base_url
        cfg = config(tmp_path, [base + "/"])
        first = run_crawl(cfg, db, progress=False)
        assert first.pruned == {base: []} and first.not_pruned == {}
        summarize(db, summary_db, progress=False)
        assert found(summary_db, "zanzibar") == [base + "/removed"]
        # the kept links: the home page leads to both, the leaves to nothing
        conn = sqlite3.connect(db)
        kept = {url[len(base):]: unpack_outlinks(blob) for url, blob in conn.execute(
            "SELECT u.str_url, p.links FROM textpile_page_links p JOIN url u USING (url_id)")}
        conn.close()
        assert kept == {"/": [base + "/kept", base + "/removed"], "/kept": [], "/removed": []}

        site.routes["/"] = Response(200, KEPT_ONLY, HTML)  # /removed is still served
        second = run_crawl(cfg, db, progress=False, force_recrawl=True)
        assert second.pruned == {base: [base + "/removed"]} and second.not_pruned == {}
        assert second.exit_code_counts["pruned"] == 1
        assert format_report(second).split("[Crawl_Statistics_Report.pruning]\n")[1].startswith(
            f'"{base}" = "1 URL(s) pruned"\n')
        third = run_crawl(cfg, db, progress=False, force_recrawl=True)
        removed_requests = len(site.requests_for("/removed"))
    # the second run fetched /removed (force) before pruning it; the third did not ask for it
    assert log(db, base) == [("/", 20), ("/kept", 20), ("/removed", 20),
                             ("/", 20), ("/kept", 20), ("/removed", 20), ("/removed", 182),
                             ("/", 20), ("/kept", 20)]
    assert removed_requests == 2 and third.pruned == {base: []}
    conn = sqlite3.connect(db)
    (message,) = conn.execute("SELECT message FROM crawl_log WHERE exit_code = 182").fetchone()
    candidates = sorted(u[len(base):] for (u,) in conn.execute(
        "SELECT u.str_url FROM crawl_candidate JOIN url u USING (url_id)"))
    conn.close()
    assert message == (f"pruned: no link, sitemap or feed reached it in the complete and healthy crawl run "
                       f"{second.agent_uuid.hex} of {base}")
    assert candidates == ["/", "/kept"]
    report = summarize(db, summary_db, progress=False)
    assert report.integration.generations_closed == 2  # the home page's first text, and /removed
    assert found(summary_db, "zanzibar") == []
    assert found(summary_db, "aardvarks") == [base + "/kept"]
    conn = sqlite3.connect(summary_db)
    generations = [(url[len(base):], end is not None) for url, end in conn.execute(
        "SELECT u.str_url, eg.confirmed_end_unix_utc FROM entity_generation eg JOIN url u USING (url_id)"
        " ORDER BY eg.entity_generation_id")]
    closed_by = conn.execute("SELECT cs.exit_code FROM crawl_summary cs JOIN entity_generation eg USING"
                             " (entity_generation_id) JOIN url u USING (url_id) WHERE u.str_url = ?"
                             " ORDER BY cs.time_started_unix_utc, cs.crawl_summary_id", (base + "/removed",)).fetchall()
    conn.close()
    assert [g for g in generations if g[0] != "/robots.txt"] == [("/", True), ("/kept", False), ("/removed", True),
                                                              ("/", False)]
    assert closed_by == [(20,), (20,), (182,)]


def test_linked_again_it_comes_back(tmp_path):
    db, summary_db = tmp_path / "crawl.db", tmp_path / "summary.db"
    with SiteServer(routes()) as site:
        base = site.base_url
        cfg = config(tmp_path, [base + "/"])
        run_crawl(cfg, db, progress=False)
        site.routes["/"] = Response(200, KEPT_ONLY, HTML)
        assert run_crawl(cfg, db, progress=False, force_recrawl=True).pruned == {base: [base + "/removed"]}
        site.routes["/"] = Response(200, BOTH, HTML)
        assert run_crawl(cfg, db, progress=False, force_recrawl=True).pruned == {base: []}
    assert log(db, base)[-3:] == [("/", 20), ("/kept", 20), ("/removed", 20)]
    summarize(db, summary_db, progress=False)
    assert found(summary_db, "zanzibar") == [base + "/removed"]


def test_a_crawl_with_server_errors_or_out_of_budget_prunes_nothing(tmp_path):
    db, summary_db = tmp_path / "crawl.db", tmp_path / "summary.db"
    with SiteServer(routes()) as site:
        base = site.base_url
        run_crawl(config(tmp_path, [base + "/"]), db, progress=False)
        site.routes["/"] = Response(200, KEPT_ONLY, HTML)
        site.routes["/kept"] = Response(500, "down for maintenance", HTML)
        failed = run_crawl(config(tmp_path, [base + "/"]), db, progress=False, force_recrawl=True)
        assert failed.pruned == {}
        assert failed.not_pruned == {base: "1 of its 4 crawls failed (more than 1%)"}
        assert format_report(failed).split("[Crawl_Statistics_Report.pruning]\n")[1].startswith(
            f'"{base}" = "not pruned: 1 of its 4 crawls failed (more than 1%)"\n')
        site.routes["/kept"] = page("aardvarks")
        # a budget cut: robots.txt and the home page only
        cut = run_crawl(config(tmp_path, [base + "/"], max_commands=2), db, progress=False, force_recrawl=True)
        assert cut.pruned == {}
        assert cut.not_pruned == {base: "the crawl ran out of crawl commands (max_commands_per_run)"}
    assert [code for path, code in log(db, base) if path == "/removed"] == [20, 20]
    summarize(db, summary_db, progress=False)
    assert found(summary_db, "zanzibar") == [base + "/removed"]


def test_a_killed_crawl_prunes_nothing_and_the_next_complete_one_does(tmp_path):
    hold = threading.Event()

    def slow_kept(request):
        hold.wait(120)  # the kill comes while this is being served
        return page("aardvarks")

    db, summary_db = tmp_path / "crawl.db", tmp_path / "summary.db"
    textpile = str(Path(sys.executable).with_name("textpile"))
    with SiteServer(routes()) as site:
        base = site.base_url
        cfg = write_config(tmp_path, [base + "/"])
        run_crawl(config(tmp_path, [base + "/"]), db, progress=False)
        entries = crawl_log_entries(db)
        site.routes["/"] = Response(200, KEPT_ONLY, HTML)
        site.routes["/kept"] = slow_kept
        crawl = subprocess.Popen([textpile, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress",
                                  "--force-recrawl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=killable_env(tmp_path))
        deadline = time.monotonic() + 300
        while crawl_log_entries(db) < entries + 2 and time.monotonic() < deadline and crawl.poll() is None:
            time.sleep(0.05)  # robots.txt and the home page written, /kept held
        crawl.send_signal(signal.SIGKILL)
        crawl.communicate(timeout=60)
        hold.set()
        assert crawl_log_entries(db) == entries + 2
        assert [code for path, code in log(db, base) if path == "/removed"] == [20]
        summarize(db, summary_db, progress=False)
        assert found(summary_db, "zanzibar") == [base + "/removed"]
        site.routes["/kept"] = page("aardvarks")
        after = run_crawl(config(tmp_path, [base + "/"]), db, progress=False, force_recrawl=True)
    assert after.pruned == {base: [base + "/removed"]}
    summarize(db, summary_db, progress=False)
    assert found(summary_db, "zanzibar") == []
