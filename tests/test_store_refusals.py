"""Refused databases stay byte-for-byte unchanged; empty files are not turned into databases.

Every command that opens a crawler or summary database is given files it must refuse
(foreign tables, newer versions, a missing or wrong kind key, and, for commands that
need an existing database, a SQLite file without tables and a 0-byte file). The command
must exit 1 with one ``textpile: error: FILE: ...`` line, and the file (in rollback
journal mode, header bytes 18-19 = 01 01) must keep every byte: no switch to WAL.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from textpile.cli import main
from textpile.errors import DatabaseError
from textpile.store.database import READ_MMAP_BYTES, open_crawler_db, open_summary_db, sqlite_uri

from summarize.summary_fixtures import CrawlerRows, page


def _rollback_mode(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    assert path.read_bytes()[18:20] == b"\x01\x01"


def _textpile_db(path: Path, kind: str, sql: str | None = None, params: tuple = ()) -> Path:
    (open_crawler_db if kind == "crawler" else open_summary_db)(path).close()
    conn = sqlite3.connect(path)
    if sql:
        conn.execute(sql, params)
        conn.commit()
    conn.close()
    _rollback_mode(path)
    return path


def make_refused(tmp: Path, case: str, expected_kind: str) -> Path:
    """A file that a command expecting ``expected_kind`` ('crawler', 'summary', 'any') refuses."""
    path = tmp / f"{case}.db"
    other = {"crawler": "summary", "summary": "crawler", "any": "crawler"}[expected_kind]
    kind = "summary" if expected_kind == "summary" else "crawler"
    if case == "foreign":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE t(x)")
        conn.commit()
        conn.close()
        _rollback_mode(path)
    elif case == "newer_version":
        _textpile_db(path, kind, "UPDATE unobtanium_database_info SET value = '9.0.0' WHERE key = ?",
                     (f"unobtanium_{kind}_schema_version",))
    elif case == "newer_base":
        _textpile_db(path, kind, "UPDATE unobtanium_database_info SET value = '0.2.0'"
                                 " WHERE key = 'unobtanium_base_schema_version'")
    elif case == "missing_kind":
        _textpile_db(path, kind, "DELETE FROM unobtanium_database_info WHERE key = 'unobtanium_database_kind'")
    elif case == "unknown_kind":
        _textpile_db(path, kind, "UPDATE unobtanium_database_info SET value = 'frobnicator'"
                                 " WHERE key = 'unobtanium_database_kind'")
    elif case == "wrong_kind":
        _textpile_db(path, other)
    elif case == "no_tables":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 7")  # a valid SQLite file of one page, no tables
        conn.commit()
        conn.close()
        assert path.stat().st_size > 0
    elif case == "zero_bytes":
        path.write_bytes(b"")
    else:  # pragma: no cover
        raise AssertionError(case)
    return path


def crawler_db(tmp: Path) -> Path:
    path = tmp / "good-crawler.db"
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        rows.crawl(agent, "http://site.test/a.html", 100, html=page("A", "<p>alpha</p>"))
    return path


def crawl_config(tmp: Path) -> Path:
    path = tmp / "crawl.toml"
    path.write_text('name = "t"\ndefault_delay_ms = 0\nmax_commands_per_run = 1\n'
                    'user_agent = "textpile-test (for https://example.invalid/why)"\n'
                    'recrawl_interval = "1 week"\nseeds = ["http://127.0.0.1:9/"]\n'
                    'allow_private_addresses = true\n')
    return path


# command -> (kind it expects, whether it creates a missing/empty database, argv builder)
COMMANDS = {
    "crawl": ("crawler", True, lambda db, tmp: ["crawl", "--config", str(crawl_config(tmp)), "-c", str(db),
                                                 "--no-progress"]),
    "summarize -c": ("crawler", False, lambda db, tmp: ["summarize", "-c", str(db), "-s", str(tmp / "new-s.db"),
                                                        "--no-progress"]),
    "summarize -s": ("summary", True, lambda db, tmp: ["summarize", "-c", str(crawler_db(tmp)), "-s", str(db),
                                                       "--no-progress"]),
    "optimize-db": ("any", False, lambda db, tmp: ["optimize-db", "-c", str(db)]),
    "regenerate-token-index": ("summary", False, lambda db, tmp: ["regenerate-token-index", "-s", str(db)]),
    "delete": ("crawler", False, lambda db, tmp: ["delete", "old-crawl-log-entries", "-c", str(db),
                                                  "--keep-latest", "1", "--apply"]),
    "debug query-crawl-log": ("crawler", False, lambda db, tmp: ["debug", "query-crawl-log", "-c", str(db)]),
    "debug indexiness": ("crawler", False, lambda db, tmp: ["debug", "indexiness", "-c", str(db),
                                                            "-u", "http://site.test/a.html"]),
}
REFUSED_BY_ALL = ["foreign", "newer_version", "newer_base", "missing_kind", "unknown_kind", "wrong_kind"]
REFUSED_WITHOUT_CREATE = ["no_tables", "zero_bytes"]

CASES = [(cmd, case) for cmd, (_kind, creates, _argv) in COMMANDS.items()
         for case in REFUSED_BY_ALL + ([] if creates else REFUSED_WITHOUT_CREATE)
         if not (case == "wrong_kind" and COMMANDS[cmd][0] == "any")]


@pytest.mark.parametrize("command,case", CASES)
def test_refused_database_is_not_changed(tmp_path, capsys, command, case):
    kind, _creates, argv = COMMANDS[command]
    work = tmp_path / "work"
    work.mkdir()
    db = make_refused(tmp_path, case, kind)
    before = db.read_bytes()
    args = argv(db, work)
    siblings = sorted(p.name for p in tmp_path.iterdir())
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"textpile: error: {db}: "), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == siblings  # no -wal, -shm or journal left
    assert not (work / "new-s.db").exists()


def test_refusal_messages(tmp_path, capsys):
    db = make_refused(tmp_path, "unknown_kind", "crawler")
    assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1"]) == 1
    assert capsys.readouterr().err == (
        f"textpile: error: {db}: is a frobnicator database, expected a crawler database\n")
    db = make_refused(tmp_path, "missing_kind", "crawler")
    assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1"]) == 1
    assert capsys.readouterr().err == (
        f"textpile: error: {db}: is an unknown database, expected a crawler database\n")
    db = make_refused(tmp_path, "zero_bytes", "summary")
    assert main(["regenerate-token-index", "-s", str(db)]) == 1
    assert capsys.readouterr().err == f"textpile: error: {db}: empty file, not a summary database\n"
    db = make_refused(tmp_path, "no_tables", "crawler")
    assert main(["optimize-db", "-c", str(db)]) == 1
    assert capsys.readouterr().err == (
        f"textpile: error: {db}: SQLite database without tables, not a crawler or summary database\n")


@pytest.mark.parametrize("case", ["zero_bytes", "no_tables"])
def test_creating_commands_initialize_empty_files(tmp_path, case):
    for opener, kind in ((open_crawler_db, "crawler"), (open_summary_db, "summary")):
        db = make_refused(tmp_path, f"{case}", kind)
        conn = opener(db)
        info = dict(conn.execute("SELECT key, value FROM unobtanium_database_info"))
        conn.close()
        assert info["unobtanium_database_kind"] == kind
        assert db.read_bytes()[18:20] == b"\x02\x02"  # WAL, switched on once accepted
        db.unlink()


def test_accepted_database_switches_to_wal(tmp_path):
    db = _textpile_db(tmp_path / "c.db", "crawler")
    open_crawler_db(db, create=False, read_only=True).close()
    assert db.read_bytes()[18:20] == b"\x01\x01"  # reading changes nothing
    open_crawler_db(db, create=False).close()
    assert db.read_bytes()[18:20] == b"\x02\x02"


@pytest.mark.parametrize("name", ["plain.db", "a b.db", "x#1.db", "what?.db", "100%.db", "ünï cödé.db"])
def test_sqlite_uri_names_the_file(tmp_path, name):
    folder = tmp_path / "dir #?% x"
    folder.mkdir()
    path = folder / name
    open_crawler_db(path).close()
    uri = sqlite_uri(path, mode="ro")
    assert uri.startswith("file:///") and uri.endswith("?mode=ro")
    assert "#" not in uri and uri.count("?") == 1
    conn = sqlite3.connect(uri, uri=True)
    assert conn.execute("SELECT value FROM unobtanium_database_info WHERE key = 'unobtanium_database_kind'"
                        ).fetchone() == ("crawler",)
    conn.close()
    assert sqlite_uri(path, immutable=True).endswith("?immutable=1")
    assert sqlite_uri(path, mode="ro", immutable=True).endswith("?mode=ro&immutable=1")
    # no stray file from a misread URI (a reader of a WAL database may leave -wal and -shm)
    assert {p.name.removesuffix("-wal").removesuffix("-shm") for p in folder.iterdir()} == {name}
    open_crawler_db(path, create=False, read_only=True).close()


def test_sqlite_uri_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert sqlite_uri("a b.db") == "file://" + str(tmp_path / "a%20b.db").replace(" ", "%20")


def test_read_only_open_of_missing_file_is_refused(tmp_path):
    with pytest.raises(DatabaseError, match="no such crawler database"):
        open_crawler_db(tmp_path / "missing.db", read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_read_only_connections_map_the_file_and_writers_do_not(tmp_path):
    db = _textpile_db(tmp_path / "s.db", "summary")
    probe = sqlite3.connect(tmp_path / "probe.db")
    granted = probe.execute(f"PRAGMA mmap_size={READ_MMAP_BYTES}").fetchone()[0]  # this build's cap
    probe.close()
    if not granted:
        pytest.skip("this SQLite build cannot map files into memory")
    reader = open_summary_db(db, create=False, read_only=True)
    writer = open_summary_db(db, create=False)
    try:
        assert reader.execute("PRAGMA mmap_size").fetchone()[0] == granted
        assert writer.execute("PRAGMA mmap_size").fetchone()[0] == 0
    finally:
        reader.close()
        writer.close()


def _damaged_crawler_db(tmp: Path) -> tuple[Path, str]:
    """:func:`crawler_db` with its crawl_log table's page overwritten (as a bad disk does)
    and the error summarize gives for it; the file still opens (its header is intact)."""
    path = crawler_db(tmp)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        (page,) = conn.execute("SELECT pageno FROM dbstat WHERE name = 'crawl_log'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    data = bytearray(path.read_bytes())
    data[(page - 1) * size:page * size] = b"\xa5" * size
    path.write_bytes(bytes(data))
    return path, f"textpile: error: {path}: database disk image is malformed (not a usable SQLite database)\n"


def test_summarize_refused_for_a_damaged_crawler_database_leaves_no_summary_database(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    damaged, error = _damaged_crawler_db(tmp_path)
    summary = work / "summary.db"
    assert main(["summarize", "-c", str(damaged), "-s", str(summary), "--no-progress", "--no-embeddings"]) == 1
    assert capsys.readouterr().err == error
    assert sorted(p.name for p in work.iterdir()) == []  # no empty summary.db, -wal, -shm or lock file


def test_summarize_refused_for_a_damaged_crawler_database_keeps_an_existing_summary_database(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    summary = work / "summary.db"
    assert main(["summarize", "-c", str(crawler_db(work)), "-s", str(summary), "--no-progress",
                 "--no-embeddings"]) == 0
    capsys.readouterr()
    damaged, error = _damaged_crawler_db(tmp_path)
    assert main(["summarize", "-c", str(damaged), "-s", str(summary), "--no-progress", "--no-embeddings"]) == 1
    assert capsys.readouterr().err == error
    with closing(sqlite3.connect(f"file:{summary}?mode=ro", uri=True)) as conn:
        assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone() == (1,)
    # an existing summary database that holds nothing is kept as well
    empty = work / "empty.db"
    open_summary_db(empty).close()
    assert main(["summarize", "-c", str(damaged), "-s", str(empty), "--no-progress", "--no-embeddings"]) == 1
    assert capsys.readouterr().err == error
    with closing(sqlite3.connect(f"file:{empty}?mode=ro", uri=True)) as conn:
        assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone() == (0,)
