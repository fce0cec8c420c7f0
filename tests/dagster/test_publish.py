"""textpile.publish: an atomic, self-contained copy of the summary database."""

import os
import sqlite3
import stat
from contextlib import closing

import pytest

from textpile.errors import DatabaseError
from textpile.publish import publish
from textpile.store.database import open_crawler_db, open_summary_db
from textpile.store.gen2_piles import register_functions


def _summary_with_origins(path, hosts):
    with closing(open_summary_db(path)) as conn, conn:
        conn.executemany("INSERT INTO origin(port, scheme, host, str_origin) VALUES (80, 'http', ?, ?)",
                         [(h, f"http://{h}:80") for h in hosts])
    return path


def _origins(path):
    with closing(register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))) as conn:
        return [r[0] for r in conn.execute("SELECT host FROM origin ORDER BY host")]


def test_publish_copies_and_swaps_atomically(tmp_path):
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    report = publish(source, target)
    assert report.path == target
    assert report.bytes == target.stat().st_size > 0
    assert (report.generations, report.fts_rows) == (0, 0)
    assert _origins(target) == ["a.example"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    os.chmod(target, 0o640)
    with closing(register_functions(sqlite3.connect(str(target)))) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    # A reader that holds the old file keeps reading it; a new reader sees the new copy.
    reader = register_functions(sqlite3.connect(f"file:{target}?mode=ro", uri=True))
    reader.execute("BEGIN")
    assert [r[0] for r in reader.execute("SELECT host FROM origin")] == ["a.example"]
    old_inode = target.stat().st_ino
    _summary_with_origins(source, ["b.example"])
    publish(source, target)
    assert target.stat().st_ino != old_inode
    assert [r[0] for r in reader.execute("SELECT host FROM origin ORDER BY host")] == ["a.example"]
    reader.close()
    assert _origins(target) == ["a.example", "b.example"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(target.parent)) == ["summary.db"]  # no temporary file left


def test_publish_refuses_what_is_not_a_summary_database(tmp_path):
    good = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "out" / "summary.db"
    publish(good, target)
    before = target.read_bytes()
    open_crawler_db(tmp_path / "crawler.db").close()
    with pytest.raises(DatabaseError, match="expected a summary database"):
        publish(tmp_path / "crawler.db", target)
    with pytest.raises(DatabaseError, match="no such summary database"):
        publish(tmp_path / "missing.db", target)
    with pytest.raises(DatabaseError, match="is the working summary database itself"):
        publish(good, good)
    assert target.read_bytes() == before
    assert sorted(os.listdir(target.parent)) == ["summary.db"]


def test_publish_removes_what_a_killed_publisher_left(tmp_path):
    from kills import dead_pid

    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    target.parent.mkdir()
    gone = target.parent / f".summary.db.publishing-{dead_pid()}-abcd1234"
    live = target.parent / f".summary.db.publishing-{os.getpid()}-efgh5678"
    for leftover in (gone, live):
        leftover.write_bytes(b"half a copy")
    publish(source, target)
    assert sorted(p.name for p in target.parent.iterdir()) == sorted(["summary.db", live.name])
