"""Runs notice what happens to their files (issue 12): a database deleted or replaced
under a crawl or summarize stops it (exit 1, a message naming the file); a full disk
and a read-only file name the file and the cause, and the report of what was kept is
still printed."""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from kills import crawl_log_entries
from sites import Response, SiteServer
from textpile.cli import main
from textpile.store import database

from crawl.crawlsite import write_config
from summarize.test_interrupt import build_crawler_db, check_consistent
from unprivileged import run_unprivileged

TEXTPILE = str(Path(sys.executable).with_name("textpile"))


def _routes(pages: int, hold: threading.Event | None = None, after: int = 3):
    paths = [f"/p{i}.html" for i in range(pages)]
    served = []

    def leaf(request):
        served.append(request.path)
        if hold is not None and len(served) > after:
            hold.wait(120)
        return Response(200, f"<title>{request.path}</title><p>" + " ".join(
            f"{request.path[2:-5]}word{i}" for i in range(400)) + "</p>")

    return paths, {"/robots.txt": Response(404),
                   "/": Response(200, "".join(f'<a href="{p}">{p}</a>' for p in paths)),
                   **{p: leaf for p in paths}}


@pytest.mark.parametrize("change", ["deleted", "replaced"])
def test_a_crawler_database_deleted_or_replaced_under_the_crawl_stops_it(tmp_path, change):
    hold = threading.Event()
    _paths, routes = _routes(10, hold)
    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        proc = subprocess.Popen([TEXTPILE, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while crawl_log_entries(db) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        if change == "deleted":
            for name in ("crawl.db", "crawl.db-wal", "crawl.db-shm"):
                (tmp_path / name).unlink(missing_ok=True)
        else:
            other = tmp_path / "other.db"
            sqlite3.connect(other).close()
            os.replace(other, db)
        out, err = proc.communicate(timeout=120)
        hold.set()
    assert proc.returncode == 1, err
    assert out.startswith("[Crawl_Statistics_Report]\n") and "interrupted = false\n" in out
    if change == "deleted":
        expected = (f"textpile: error: {db}: deleted while the crawl ran; what it wrote since went with the file, "
                    "so the crawl was stopped\n")
    else:
        expected = (f"textpile: error: {db}: replaced by another file while the crawl ran; what it wrote since "
                    "went into the old file, which has no name any more, so the crawl was stopped\n")
    assert err.endswith(expected), err
    assert "Traceback" not in err


def test_a_summary_database_deleted_under_summarize_stops_it(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db", 80)
    summary = tmp_path / "s.db"
    proc = subprocess.Popen([TEXTPILE, "summarize", "-c", str(crawler), "-s", str(summary), "--batch-size", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("Summarizing page 2 "):
            for name in ("s.db", "s.db-wal", "s.db-shm"):
                (tmp_path / name).unlink(missing_ok=True)
            break
    out, rest = proc.communicate(timeout=120)
    err = "".join(lines) + rest
    assert proc.returncode == 1, err
    assert out.startswith("[Summary_Report]\n")
    assert err.endswith(f"textpile: error: {summary}: deleted while the summarize ran; what it wrote since went "
                        "with the file, so the summarize was stopped\n"), err
    assert not summary.exists()


def _full_after(monkeypatch, pages: int) -> None:
    """Make every database textpile opens for writing 'full' beyond ``pages`` pages
    (SQLite's max_page_count gives the same SQLITE_FULL as a full disk)."""
    real = database.connect

    def connect(path, **kwargs):
        conn = real(path, **kwargs)
        if not kwargs.get("read_only"):
            conn.execute(f"PRAGMA max_page_count = {int(pages)}")
        return conn

    monkeypatch.setattr(database, "connect", connect)


def test_a_failing_disk_under_a_crawl_names_the_file_and_keeps_the_report(tmp_path):
    """Writes that the operating system refuses (a file size limit: EFBIG, which SQLite
    reports as a disk I/O error; a full disk is SQLITE_FULL, handled the same way) stop
    the crawl with its report and one line naming the file and the cause. The crawl's
    database process inherits the limit."""
    _paths, routes = _routes(60)
    limit = 600_000

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        proc = subprocess.run([TEXTPILE, "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"],
                              capture_output=True, text=True, timeout=300, preexec_fn=small_files)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout.startswith("[Crawl_Statistics_Report]\n")
        kept = crawl_log_entries(db)
        assert 2 < kept < 62
        assert proc.stderr.endswith(f"textpile: error: {db}: disk I/O error; the crawl stopped: this run kept {kept} "
                                    "crawl log entries, and the next run goes on from there\n"), proc.stderr
        # Room again: the next run goes on and crawls the rest.
        assert main(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress"]) == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        pages = conn.execute("SELECT count(DISTINCT url_id) FROM crawl_log WHERE crawl_type = 0 AND exit_code = 20")
        assert pages.fetchone() == (61,)


def test_a_full_disk_under_summarize_names_the_file_and_keeps_the_report(tmp_path, monkeypatch, capsys):
    crawler = build_crawler_db(tmp_path / "c.db", 120)
    summary = tmp_path / "s.db"
    _full_after(monkeypatch, 90)
    status = main(["summarize", "-c", str(crawler), "-s", str(summary), "--batch-size", "10", "--no-progress"])
    out, err = capsys.readouterr()
    assert status == 1
    processed = int(next(line for line in out.splitlines() if line.startswith("pages_processed = ")).split()[-1])
    assert 0 < processed < 250
    assert err == (f"textpile: error: {summary}: database or disk is full (free some disk space); summarizing "
                   f"stopped: the {processed} crawl log entries integrated before are kept, and the next run "
                   "continues from there\n")
    with sqlite3.connect(summary) as conn:
        assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone() == (processed,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    monkeypatch.undo()
    assert main(["summarize", "-c", str(crawler), "-s", str(summary), "--no-progress"]) == 0
    check_consistent(summary)


@pytest.fixture
def shared_dir():
    path = Path(tempfile.mkdtemp(prefix="textpile-files-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def test_a_read_only_crawler_database_is_named_before_the_crawl(shared_dir):
    db = shared_dir / "c.db"
    build_crawler_db(db, 3)
    db.chmod(0o444)
    before = db.read_bytes()
    cfg = write_config(shared_dir, ["http://127.0.0.1:9/"])
    proc = run_unprivileged(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress"], shared_dir)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"textpile: error: {db}: read-only (cannot write a database there)\n"
    assert db.read_bytes() == before
