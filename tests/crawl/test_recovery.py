"""A crawl run whose process was killed is closed by the next start, and every crawl log
entry it wrote is summarized (issue 12)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from kills import crawl_log_entries, killable_env
from sites import Response, SiteServer
from textpile.crawl.crawldb.recovery import ClosedRun, close_unfinished_runs
from textpile.store.database import open_crawler_db
from textpile.store.urls import intern_url, parse_url

from .crawlsite import write_config


def test_close_unfinished_runs_gives_each_the_end_of_its_last_entry(tmp_path):
    conn = open_crawler_db(tmp_path / "c.db")
    ids = [uuid.UUID(int=n) for n in (1, 2, 3, 4)]
    for agent_uuid, finished in zip(ids, (None, None, 1_700_000_500, None)):
        conn.execute("INSERT INTO agent(time_started_unix_utc, time_finished_unix_utc, agent_uuid, name)"
                     " VALUES (1700000000, ?, ?, 'ant')", (finished, agent_uuid.bytes))
    url_id = intern_url(conn, parse_url("http://x.example/"))
    for agent_id, started, taken_ms in ((1, 1_700_000_010, 2500), (1, 1_700_000_040, 0), (3, 1_700_000_100, 10)):
        conn.execute("INSERT INTO crawl_log(agent_id, url_id, crawl_type, crawl_uuid, time_started_unix_utc,"
                     " time_taken_ms, exit_code) VALUES (?, ?, 0, randomblob(16), ?, ?, 20)",
                     (agent_id, url_id, started, taken_ms))
    conn.commit()
    closed = close_unfinished_runs(conn, keep=ids[3])
    assert closed == [ClosedRun(ids[0], 1_700_000_000, 1_700_000_040, 2),
                      ClosedRun(ids[1], 1_700_000_000, 1_700_000_000, 0)]
    assert conn.execute("SELECT agent_id, time_finished_unix_utc FROM agent ORDER BY agent_id").fetchall() == [
        (1, 1_700_000_040), (2, 1_700_000_000), (3, 1_700_000_500), (4, None)]
    assert closed[0].describe() == (f"closed crawl run {ids[0].hex}: its process ended without finishing it; "
                                    "its 2 crawl log entries are kept")
    assert close_unfinished_runs(conn, keep=ids[3]) == []
    conn.close()


def test_killed_crawl_is_closed_by_the_next_and_summarized(tmp_path):
    """SIGKILL a ``textpile crawl`` once four pages are written and the others are held;
    the next crawl closes the killed run (stderr says so), crawls the rest, and
    ``textpile summarize`` takes every entry of both."""
    pages = [f"/p{i}.html" for i in range(8)]
    hold = threading.Event()
    served = []

    def leaf(request):
        served.append(request.path)
        if len(served) > 4:
            hold.wait(120)  # the kill comes while these are being served
        return Response(200, f"<p>page {request.path} about wombats</p>")

    routes = {"/robots.txt": Response(404),
              "/": Response(200, "".join(f'<a href="{p}">{p}</a>' for p in pages)),
              **{p: leaf for p in pages}}
    textpile = str(Path(sys.executable).with_name("textpile"))
    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        first = subprocess.Popen([textpile, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=killable_env(tmp_path))
        deadline = time.monotonic() + 300
        while crawl_log_entries(db) < 6 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        out, err = first.communicate(timeout=60)
        hold.set()
        assert crawl_log_entries(db) == 6, err  # robots.txt, /, four pages
        conn = sqlite3.connect(db)
        ((killed_uuid, finished),) = conn.execute("SELECT agent_uuid, time_finished_unix_utc FROM agent").fetchall()
        kept = conn.execute("SELECT count(*), max(time_started_unix_utc + (time_taken_ms + 999) / 1000)"
                            " FROM crawl_log").fetchone()
        conn.close()
        assert finished is None and kept[0] == 6
        second = subprocess.run([textpile, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                                capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    killed = uuid.UUID(bytes=killed_uuid)
    assert second.stderr.startswith(f"closed crawl run {killed.hex}: its process ended without finishing it; "
                                    "its 6 crawl log entries are kept\n")
    conn = sqlite3.connect(db)
    agents = conn.execute("SELECT agent_uuid, time_finished_unix_utc FROM agent ORDER BY agent_id").fetchall()
    assert agents[0] == (killed_uuid, kept[1]) and agents[1][1] is not None
    crawled = sorted(r[0] for r in conn.execute(
        "SELECT u.str_url FROM crawl_log l JOIN url u USING(url_id) WHERE crawl_type = 0 AND exit_code = 20"))
    total = conn.execute("SELECT count(*) FROM crawl_log").fetchone()[0]
    conn.close()
    assert crawled == sorted([site.base_url + "/", *(site.base_url + p for p in pages)])  # each page once
    summary = subprocess.run([textpile, "summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--no-progress"],
                             capture_output=True, text=True, timeout=300)
    assert summary.returncode == 0, summary.stderr
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("SELECT count(*), count(DISTINCT agent_uuid) FROM crawl_summary").fetchone() == (total, 2)
    conn.close()
