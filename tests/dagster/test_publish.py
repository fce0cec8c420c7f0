"""textpile.publish: a copy of the summary database, whole at first, then by the pages that changed, atomically."""

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


def test_publish_copies_whole_then_writes_only_the_changed_pages_atomically(tmp_path):
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    report = publish(source, target)
    assert report.path == target and report.whole and report.pages_copied == report.pages > 0
    assert report.bytes == target.stat().st_size > 0
    assert (report.generations, report.fts_rows) == (0, 0)
    assert _origins(target) == ["a.example"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    os.chmod(target, 0o640)
    with closing(register_functions(sqlite3.connect(str(target)))) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # A reader in a transaction keeps reading the state it began with; a new one sees the new copy.
    reader = register_functions(sqlite3.connect(f"file:{target}?mode=ro", uri=True))
    reader.execute("BEGIN")
    assert [r[0] for r in reader.execute("SELECT host FROM origin")] == ["a.example"]
    old_inode = target.stat().st_ino
    _summary_with_origins(source, ["b.example"])
    again = publish(source, target)
    assert target.stat().st_ino == old_inode and not again.whole
    assert 0 < again.pages_copied < again.pages / 4  # the origin table's page and the header, not the file
    assert [r[0] for r in reader.execute("SELECT host FROM origin ORDER BY host")] == ["a.example"]
    reader.execute("COMMIT")
    assert [r[0] for r in reader.execute("SELECT host FROM origin ORDER BY host")] == ["a.example", "b.example"]
    reader.close()
    assert _origins(target) == ["a.example", "b.example"]
    with closing(sqlite3.connect(str(target))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert publish(source, target).pages_copied == 0  # nothing changed: nothing written
    # no temporary file left; beside it the page manifest (and WAL files a reader may leave)
    assert set(os.listdir(target.parent)) - {"summary.db-wal", "summary.db-shm"} == {"summary.db", "summary.db-pages"}


def test_a_copy_changed_by_something_else_is_compared_page_by_page_again(tmp_path):
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    publish(source, target)
    with closing(sqlite3.connect(str(target))) as conn, conn:  # not the publisher: its manifest is stale now
        conn.execute("DELETE FROM origin")
    report = publish(source, target)
    assert report.pages_copied > 0 and _origins(target) == ["a.example"]


def test_a_copy_made_by_an_older_textpile_is_replaced_whole(tmp_path):
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    target.parent.mkdir()
    with closing(open_summary_db(source, read_only=True)) as conn, closing(sqlite3.connect(str(target))) as copy:
        conn.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")  # as textpile published before
    old_inode = target.stat().st_ino
    report = publish(source, target)
    assert report.whole and target.stat().st_ino != old_inode and _origins(target) == ["a.example"]


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
    assert sorted(os.listdir(target.parent)) == ["summary.db", "summary.db-pages"]


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
    assert sorted(p.name for p in target.parent.iterdir()) == sorted(["summary.db", "summary.db-pages", live.name])


def test_a_manifest_half_written_by_a_killed_publisher_is_overwritten(tmp_path):
    """bench/faults found a killed page copy's manifest (then named by its process id) left
    beside the copy for good; it now has one name, which the next publish writes again."""
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    publish(source, target)
    (target.parent / "summary.db-pages.writing").write_bytes(b"half a manifest")
    with closing(open_summary_db(source)) as conn, conn:
        conn.execute("INSERT INTO origin(port, scheme, host, str_origin) VALUES (80, 'http', 'b.example', 'http://b.example:80')")
    assert not publish(source, target).whole
    assert sorted(os.listdir(target.parent)) == ["summary.db", "summary.db-pages"]


def test_a_working_database_that_shrank_is_published_by_difference(tmp_path):
    """tidy gave free pages back (incremental vacuum) and tables came and went: the copy
    shrinks first and gets its header (page 1) last, or SQLite calls it malformed halfway
    (seen at 5,000 pages; here 'malformed database schema' before the fix)."""
    from textpile.store.database import tidy

    source = tmp_path / "summary.db"
    with closing(open_summary_db(source)) as conn, conn:
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.execute("CREATE TABLE other (y TEXT)")
        conn.executemany("INSERT INTO filler VALUES (randomblob(3000))", [()] * 3000)
        conn.executemany("INSERT INTO other VALUES (hex(randomblob(200)))", [()] * 3000)
    target = tmp_path / "published" / "summary.db"
    assert publish(source, target).whole
    with closing(open_summary_db(source)) as conn:
        with conn:
            conn.execute("DELETE FROM filler WHERE rowid % 4 <> 0")
            conn.execute("UPDATE filler SET x = randomblob(3000) WHERE rowid % 8 = 0")
            conn.execute("CREATE TABLE third (z BLOB)")
            conn.executemany("INSERT INTO third VALUES (randomblob(500))", [()] * 500)
            conn.execute("DELETE FROM other WHERE rowid % 3 = 0")
        assert tidy(conn).pages_freed > 2000
    report = publish(source, target)
    assert not report.whole and 0 < report.pages_copied < report.pages
    with closing(sqlite3.connect(str(target))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with closing(sqlite3.connect(str(source))) as a, closing(sqlite3.connect(str(target))) as b:
        for table in ("filler", "other", "third"):
            assert a.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() == \
                b.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        assert a.execute("PRAGMA page_count").fetchone() == b.execute("PRAGMA page_count").fetchone()


def test_a_working_database_written_anew_smaller_is_published_by_difference(tmp_path):
    """A working database replaced by one written anew (summary_db's rebuild, a shard
    move's summary of the source) and vacuumed to fewer pages than the copy: publishing by
    difference failed with 'database disk image is malformed' when its writing connection
    read its own pages back."""
    source = tmp_path / "summary.db"
    with closing(open_summary_db(source)) as conn, conn:
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (randomblob(3000))", [()] * 50)
    target = tmp_path / "published" / "summary.db"
    assert publish(source, target).whole
    with closing(sqlite3.connect(source)) as conn:
        conn.execute("DELETE FROM filler WHERE rowid <= 5")
        conn.commit()
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode=WAL")
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
    report = publish(source, target)
    assert not report.whole and report.pages == pages
    with closing(sqlite3.connect(str(target))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM filler").fetchone() == (45,)
        assert conn.execute("PRAGMA page_count").fetchone() == (pages,)


def _recorded_write(source, statements, *, tidy_after=False):
    """Write ``source`` as a summarize run does: SQLite's checkpoints held back, then the
    WAL's pages recorded and checkpointed (textpile.store.changed_pages)."""
    from textpile.store.changed_pages import checkpoint_recorded, hold_checkpoints
    from textpile.store.database import tidy

    with closing(open_summary_db(source)) as conn:
        hold_checkpoints(conn, source)
        with conn:
            for sql in statements:
                conn.execute(sql)
        if tidy_after:
            tidy(conn)
        return checkpoint_recorded(conn, source)


def _same_pages(source, target):
    """Both databases hold the same pages (the header's writer-set bytes aside), as SQLite
    reads them (the copy's WAL included): compared in a process of its own, which reads
    them with sqlean.py's sqlite_dbpage as the publisher does."""
    import json
    import subprocess
    import sys

    script = ("import json, sys, sqlean; from textpile.store.page_copy import _page_hashes\n"
              "out = []\n"
              "for path in sys.argv[1:]:\n"
              "    conn = sqlean.connect(f'file:{path}?mode=ro', uri=True, isolation_level=None)\n"
              "    out.append(list(_page_hashes(conn)))\n"
              "    conn.close()\n"
              "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", script, str(source), str(target)], capture_output=True, text=True,
                          check=True)
    a, b = json.loads(done.stdout)
    return len(a) > 0 and a == b


def test_a_publish_after_a_recorded_run_reads_only_the_pages_it_wrote(tmp_path):
    source = tmp_path / "summary.db"
    with closing(open_summary_db(source)) as conn, conn:
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (randomblob(3000))", [()] * 3000)
    target = tmp_path / "published" / "summary.db"
    first = publish(source, target)
    assert first.whole and first.pages_read == first.pages > 3000
    assert (tmp_path / "summary.db-changed").exists()  # the record of what changes from here
    # two runs, then a publish: it reads the pages both wrote, header included
    assert _recorded_write(source, ["UPDATE filler SET x = randomblob(3000) WHERE rowid = 10"])
    assert _recorded_write(source, ["INSERT INTO origin(port, scheme, host, str_origin) "
                                    "VALUES (80, 'http', 'b.example', 'http://b.example:80')"])
    report = publish(source, target)
    assert not report.whole and 0 < report.pages_copied <= report.pages_read < 20
    assert _origins(target) == ["b.example"] and _same_pages(source, target)
    # rows deleted and the free pages given back: the file shrinks, and the copy with it
    assert _recorded_write(source, ["DELETE FROM filler WHERE rowid > 2500"], tidy_after=True)
    report = publish(source, target)
    assert not report.whole and report.pages_read < report.pages < first.pages
    assert _same_pages(source, target)
    with closing(sqlite3.connect(str(target))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert publish(source, target).pages_read == 1  # nothing changed: the header alone


def test_pages_still_in_the_wal_are_read_and_an_unrecorded_write_reads_all(tmp_path):
    source = _summary_with_origins(tmp_path / "summary.db", ["a.example"])
    target = tmp_path / "published" / "summary.db"
    publish(source, target)
    # a writer that keeps its connection open: its pages are in the WAL, not in the file yet
    writer = open_summary_db(source)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    with writer:
        writer.execute("INSERT INTO origin(port, scheme, host, str_origin) VALUES (80, 'http', 'b.example', 'x')")
    report = publish(source, target)
    assert report.pages_read < report.pages / 4 and _origins(target) == ["a.example", "b.example"]
    # a writer that checkpoints without recording: the file changed, so every page is read
    with writer:
        writer.execute("DELETE FROM origin WHERE host = 'a.example'")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.close()
    report = publish(source, target)
    assert report.pages_read == report.pages and _origins(target) == ["b.example"]
    assert _same_pages(source, target)
    # that publish started a new record, so the next one reads only what changed again
    assert _recorded_write(source, ["DELETE FROM origin"])
    report = publish(source, target)
    assert report.pages_read < report.pages / 4 and _origins(target) == []
