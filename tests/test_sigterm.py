"""SIGTERM is handled like Ctrl+C (issue 12): the crawl prints its report, closes its
crawl run and releases (and removes) its lock; summarize rolls back its current batch;
exit status 143. A SIGTERM ignored by the caller stays ignored."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kills import crawl_log_entries
from sites import Response, SiteServer

from crawl.crawlsite import write_config
from summarize.test_interrupt import build_crawler_db, check_consistent

TEXTPILE = str(Path(sys.executable).with_name("textpile"))


def _site(hold: threading.Event):
    pages = [f"/p{i}.html" for i in range(8)]
    served = []

    def leaf(request):
        served.append(request.path)
        if len(served) > 3:
            hold.wait(120)
        return Response(200, f"<p>{request.path} on quolls</p>")

    return pages, {"/robots.txt": Response(404),
                   "/": Response(200, "".join(f'<a href="{p}">{p}</a>' for p in pages)),
                   **{p: leaf for p in pages}}


@pytest.mark.parametrize("to", ["crawl", "its process group"])
def test_sigterm_stops_a_crawl_like_ctrl_c(tmp_path, to):
    """SIGTERM to the crawl, or to its whole process group as a service manager's stop sends
    it: its page readers and crawler database process leave it to the crawl (they died of
    it, and a crawl writing entries just then ended with exit 1, a traceback and entries
    of exit code -3, database error; the worker itself: tests/crawl/test_workers.py)."""
    hold = threading.Event()
    pages, routes = _site(hold)
    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        proc = subprocess.Popen([TEXTPILE, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 300
        while crawl_log_entries(db) < 5 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        if to == "crawl":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:  # a crawl that hung is not left behind
                os.killpg(proc.pid, signal.SIGKILL)
        hold.set()
        assert proc.returncode == 143, err
        assert out.startswith("[Crawl_Statistics_Report]\n") and "interrupted = true\n" in out
        assert "Traceback" not in err
        assert not Path(f"{db}.lock").exists()
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM agent WHERE time_finished_unix_utc IS NULL").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM crawl_log WHERE exit_code < 0").fetchone() == (0,)
        again = subprocess.run([TEXTPILE, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                               capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "closed crawl run" not in again.stderr  # nothing was left unfinished
    with sqlite3.connect(db) as conn:
        crawled = sorted(r[0] for r in conn.execute(
            "SELECT u.str_url FROM crawl_log l JOIN url u USING(url_id) WHERE crawl_type = 0 AND exit_code = 20"))
    assert crawled == sorted([site.base_url + "/", *(site.base_url + p for p in pages)])


def test_sigterm_stops_summarize_like_ctrl_c(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db", 80)
    summary = tmp_path / "s.db"
    proc = subprocess.Popen([TEXTPILE, "summarize", "-c", str(crawler), "-s", str(summary), "--batch-size", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("Summarizing page 3 "):
            proc.send_signal(signal.SIGTERM)
            break
    out, rest = proc.communicate(timeout=120)
    err = "".join(lines) + rest
    # SIGTERM came in batch 3 of 33: a summarize that ignored it would end with 0.
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert out.startswith("[Summary_Report]\n") and "interrupted = true" in out
    assert "Interrupted: the current page was rolled back; the next run continues from here." in err
    done = check_consistent(summary)
    assert 0 < done < 162
    again = subprocess.run([TEXTPILE, "summarize", "-c", str(crawler), "-s", str(summary), "--no-progress"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert check_consistent(summary) >= done


def test_an_ignored_sigterm_stays_ignored(tmp_path):
    hold = threading.Event()
    _pages, routes = _site(hold)
    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        proc = subprocess.Popen([TEXTPILE, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
        deadline = time.monotonic() + 300
        while crawl_log_entries(db) < 5 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        hold.set()  # let the crawl finish: SIGTERM changed nothing
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "interrupted = false\n" in out
