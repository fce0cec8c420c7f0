"""No whole-file rewrite per run: databases are in incremental auto-vacuum mode, a run ends
with textpile.store.database.tidy (free pages given back only past a share of the file),
an older database moves over on its next write-open, and optimize-db still VACUUMs."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing

import pytest

from textpile.cli import main
from textpile.errors import DatabaseError
from textpile.store.database import FREE_PAGE_SHARE, open_crawler_db, open_summary_db, tidy


def _fill(conn: sqlite3.Connection, rows: int) -> None:
    with conn:
        conn.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (zeroblob(3000))", [()] * rows)


def test_new_databases_are_in_incremental_auto_vacuum_mode(tmp_path):
    for opener in (open_crawler_db, open_summary_db):
        with closing(opener(tmp_path / f"{opener.__name__}.db")) as conn:
            assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # INCREMENTAL


def test_tidy_keeps_a_few_free_pages_and_gives_back_many_without_rewriting_the_file(tmp_path):
    path = tmp_path / "summary.db"
    with closing(open_summary_db(path)) as conn:
        _fill(conn, 1000)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        with conn:  # a few deleted rows: their pages stay free for the next writes
            conn.execute("DELETE FROM filler WHERE rowid <= 20")
        report = tidy(conn)
        assert 0 < report.free_pages <= pages * FREE_PAGE_SHARE and report.pages_freed == 0
        assert conn.execute("PRAGMA page_count").fetchone()[0] == pages
        with conn:  # most of them: given back
            conn.execute("DELETE FROM filler WHERE rowid <= 700")
        report = tidy(conn)
        assert report.pages_freed == report.free_pages > pages * FREE_PAGE_SHARE
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
        assert conn.execute("PRAGMA page_count").fetchone()[0] <= pages - report.pages_freed  # and pointer-map pages
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM filler").fetchone() == (300,)


def test_an_older_database_moves_to_incremental_vacuum_once(tmp_path, caplog):
    path = tmp_path / "crawler.db"
    open_crawler_db(path).close()
    with closing(sqlite3.connect(path)) as conn:  # as an older textpile made it
        conn.execute("PRAGMA auto_vacuum=NONE")
        conn.execute("VACUUM")
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (0,)
        _fill(conn, 10)
    with caplog.at_level(logging.WARNING), closing(open_crawler_db(path, read_only=True)) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (0,)  # a reader changes nothing
    assert caplog.records == []
    with caplog.at_level(logging.WARNING), closing(open_crawler_db(path)) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)
        assert conn.execute("SELECT count(*) FROM filler").fetchone() == (10,)
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: switching to incremental vacuum, which rewrites the file once"]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        open_crawler_db(path).close()
    assert caplog.records == []  # once


def test_optimize_db_still_rewrites_the_whole_file(tmp_path, capsys):
    path = tmp_path / "summary.db"
    with closing(open_summary_db(path)) as conn:
        _fill(conn, 200)
        with conn:
            conn.execute("DELETE FROM filler WHERE rowid <= 10")
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    assert main(["optimize-db", "-c", str(path)]) == 0
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)


def test_a_write_open_reads_every_page_only_after_something_else_changed_the_file(tmp_path, monkeypatch):
    """PRAGMA quick_check reads the whole file (about 1 s per GB): a run pays it only when
    the file was not left so by a textpile writer that opened a checked version of it."""
    import textpile.store.database as database

    checks = []
    real = database.quick_check_problem
    monkeypatch.setattr(database, "quick_check_problem", lambda conn: checks.append(1) or real(conn))
    path = tmp_path / "crawler.db"
    open_crawler_db(path).close()  # made by textpile
    with closing(open_crawler_db(path)) as conn:
        _fill(conn, 5)
    open_crawler_db(path).close()
    assert checks == []
    with closing(sqlite3.connect(path)) as conn, conn:  # another program writes it
        conn.execute("DELETE FROM filler WHERE rowid = 1")
    open_crawler_db(path).close()
    assert checks == [1]
    open_crawler_db(path).close()  # that version passed: not again
    assert checks == [1]
    with closing(sqlite3.connect(path)) as conn:
        page = conn.execute("SELECT max(pageno) FROM dbstat WHERE name = 'filler'").fetchone()[0]
    damaged = bytearray(path.read_bytes())
    damaged[(page - 1) * 4096:page * 4096] = b"\xa5" * 4096  # a page only the check reads
    path.write_bytes(bytes(damaged))
    with pytest.raises(DatabaseError, match="malformed"):
        open_crawler_db(path)
    assert checks == [1, 1]
