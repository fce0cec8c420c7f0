"""Atomic database creation and hot journals (issue 12).

A kill while a database is being created leaves nothing under its name (only
temporary files, removed by the next creation); a hot journal left by an interrupted
write is rolled back before the file is used, or, where this process cannot write, the
error says that and how to recover, not "read-only".
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from textpile.cli import main
from textpile.store.creation import CREATING, leftovers
from textpile.store.database import hot_journal_message, open_crawler_db, open_summary_db

from summarize.summary_fixtures import CrawlerRows, page
from unprivileged import run_unprivileged

BUILD_AND_HANG = """
import sys, time
from textpile.store import creation
def build(conn):
    conn.execute("CREATE TABLE half(x)")
    conn.execute("INSERT INTO half VALUES (1)")
    print("building", flush=True)
    time.sleep(600)
creation.create_atomically(sys.argv[1], build, timeout_s=5)
"""


def _kill_while_creating(target: Path) -> int:
    proc = subprocess.Popen([sys.executable, "-c", BUILD_AND_HANG, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "building\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return proc.pid


def test_a_kill_during_creation_leaves_nothing_under_the_name(tmp_path):
    target = tmp_path / "crawl.db"
    pid = _kill_while_creating(target)
    assert not target.exists()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0].startswith(f".crawl.db{CREATING}{pid}-") and left[1] == left[0] + "-journal"
    assert [p.name for p in leftovers(target)] == left
    conn = open_crawler_db(target)  # the next creation cleans up after the dead creator
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crawl.db"]
    with sqlite3.connect(target) as check:
        assert check.execute("SELECT value FROM unobtanium_database_info WHERE key = 'unobtanium_database_kind'"
                             ).fetchone() == ("crawler",)
        assert check.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_creation_leaves_a_live_creators_files_alone(tmp_path):
    target = tmp_path / "s.db"
    mine = tmp_path / f".s.db{CREATING}{__import__('os').getpid()}-0123abcd"
    mine.write_bytes(b"")
    open_summary_db(target).close()
    assert mine.exists() and leftovers(target) == []


def test_crawl_and_summarize_create_after_a_killed_creation(tmp_path, capsys):
    crawler = tmp_path / "c.db"
    with CrawlerRows(crawler) as rows:
        agent = rows.agent()
        rows.crawl(agent, "http://site.test/a.html", 100, html=page("A", "<p>aardvark</p>"))
    summary = tmp_path / "s.db"
    _kill_while_creating(summary)
    assert main(["summarize", "-c", str(crawler), "-s", str(summary), "--no-progress"]) == 0
    assert "pages_processed = 1" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".s.db", "s.db"))) == ["s.db"]


def _rollback_crawler(path: Path, pages: int = 30) -> Path:
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        for i in range(pages):
            rows.crawl(agent, f"http://site.test/{i}.html", 100 + i, html=page(f"P{i}", "<p>" + "x " * 500 + "</p>"))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return path


INTERRUPTED_WRITE = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")
conn.execute("BEGIN")
conn.execute("UPDATE file_text SET text = text || text")
conn.execute("DELETE FROM crawl_log")
print("writing", flush=True)
time.sleep(600)
"""


def _hot_journal(path: Path) -> Path:
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_WRITE, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "writing\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    journal = path.with_name(path.name + "-journal")
    assert journal.stat().st_size > 0
    return journal


def test_a_hot_journal_is_rolled_back_before_use(tmp_path, capsys):
    db = _rollback_crawler(tmp_path / "c.db")
    journal = _hot_journal(db)
    assert main(["debug", "query-crawl-log", "-c", str(db)]) == 0
    assert capsys.readouterr().out.endswith("30 crawl log entries.\n")  # the last committed state
    assert not journal.exists()
    # The same for a command that writes.
    journal = _hot_journal(db)
    assert main(["optimize-db", "-c", str(db)]) == 0
    assert not journal.exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM crawl_log").fetchone() == (30,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.fixture
def shared_dir():
    path = Path(tempfile.mkdtemp(prefix="textpile-hj-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(path)


def test_a_hot_journal_that_cannot_be_rolled_back_is_explained(shared_dir):
    folder = shared_dir / "ro"
    folder.mkdir()
    db = _rollback_crawler(folder / "c.db")
    journal = _hot_journal(db)
    before = db.read_bytes()
    folder.chmod(0o555)
    for args in (["debug", "query-crawl-log", "-c", str(db)], ["search", "-s", str(db), "x"],
                 ["optimize-db", "-c", str(db)]):
        proc = run_unprivileged(args, shared_dir)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == f"textpile: error: {hot_journal_message(db)}\n", proc.stderr
    assert hot_journal_message(db) == (
        f"{db}: has a hot journal c.db-journal (a write to it was interrupted by a crash or kill); SQLite must "
        f"roll that back before anyone can read it, which needs write access to c.db and its folder {folder}: "
        f"run a textpile command that writes it (textpile optimize-db -c {db}) as a user who may, or make both "
        "writable for a moment")
    assert db.read_bytes() == before and journal.exists()


def test_a_zero_byte_database_with_a_stale_journal_is_created_cleanly(tmp_path):
    db = tmp_path / "s.db"
    db.write_bytes(b"")
    (tmp_path / "s.db-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\x00" * 504)
    open_summary_db(db).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT value FROM unobtanium_database_info WHERE key = 'unobtanium_database_kind'"
                            ).fetchone() == ("summary",)


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_a_wal_without_its_database_is_not_dropped(tmp_path, capsys, state):
    db = tmp_path / "c.db"
    _rollback_crawler(db, pages=3)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("DELETE FROM crawl_log")
    conn.commit()
    wal = (tmp_path / "c.db-wal").read_bytes()  # the committed delete sits in the WAL ...
    assert len(wal) > 0
    keep = tmp_path / "kept-wal"
    keep.write_bytes(wal)
    conn.close()  # ... which closing would checkpoint and remove: keep a copy, as if the process died
    db.unlink()
    (tmp_path / "c.db-shm").unlink(missing_ok=True)
    keep.rename(tmp_path / "c.db-wal")
    if state == "empty":
        db.write_bytes(b"")
    cfg = tmp_path / "crawl.toml"
    cfg.write_text('default_delay_ms = 0\nmax_commands_per_run = 1\nrecrawl_interval = "1 day"\n'
                   'seeds = ["http://127.0.0.1:9/"]\n')
    assert main(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress"]) == 1
    assert capsys.readouterr().err == (
        f"textpile: error: {db}: is {state}, but c.db-wal ({len(wal)} bytes) lies beside it: it holds the last "
        "writes of a database that was deleted or moved; put that database back under this name, or move c.db-wal "
        "away to start a new one\n")
    assert (tmp_path / "c.db-wal").read_bytes() == wal
