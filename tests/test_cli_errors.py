"""No tracebacks: corrupt, truncated, read-only, locked databases, bad folders and huge numbers.

Each failure is one ``textpile: ...`` line on stderr naming the file, exit 1 for a
run-time failure and 2 for a bad option. Read-only cases need a process that permissions
apply to: when the tests run as root, those commands run without the capabilities that
bypass them (see ``tests/unprivileged.py``).
"""

from __future__ import annotations

import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from textpile.cli import describe_os_error, main
from textpile.store import database
from textpile.summarize.pipeline import summarize

from summarize.summary_fixtures import CrawlerRows, page
from unprivileged import run_unprivileged

BASE = "http://site.test"


def make_crawler(path: Path, pages: int = 40) -> Path:
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        for i in range(pages):
            rows.crawl(agent, f"{BASE}/{i}.html", 100 + i,
                       html=page(f"Page {i}", "<p>" + f"quokka{i} " * 200 + "</p>"))
        rows.crawl(agent, f"{BASE}/0.html", 500, html=page("Page 0", "<p>quokka0 again</p>"))
    return path


def rollback_mode(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


def truncated(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[:len(data) // 2])
    return dst


def scribbled(src: Path, dst: Path) -> Path:
    """A copy with garbage in every other page after the third, the schema's pages (page 1
    and those it grew into, which may lie anywhere in the file) left intact."""
    conn = sqlite3.connect(src)
    try:
        schema = {n for (n,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")}
    finally:
        conn.close()
    data = bytearray(src.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    for offset in range(size * 3, len(data) - size, size * 2):
        if offset // size + 1 in schema:
            continue
        data[offset + 100:offset + 600] = b"\xa5" * 500
    dst.write_bytes(bytes(data))
    return dst


@pytest.fixture(scope="module")
def databases(tmp_path_factory):
    """Good crawler and summary databases (rollback journal mode), and corrupt copies."""
    tmp = tmp_path_factory.mktemp("corrupt")
    crawler = make_crawler(tmp / "c.db")
    summarize(crawler, tmp / "s.db", progress=False)
    for name in ("c.db", "s.db"):
        rollback_mode(tmp / name)
        truncated(tmp / name, tmp / f"trunc-{name}")
        scribbled(tmp / name, tmp / f"bad-{name}")
    return tmp


def one_error_line(err: str, path: Path, *fragments: str) -> None:
    assert "Traceback" not in err, err
    assert err.startswith(f"textpile: error: {path}: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, err


CORRUPT_COMMANDS = {
    "optimize-db": lambda db, tmp: ["optimize-db", "-c", str(db)],
    "delete": lambda db, tmp: ["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1", "--apply"],
    "summarize -c": lambda db, tmp: ["summarize", "-c", str(db), "-s", str(tmp / "new-s.db"), "--no-progress"],
    "debug indexiness": lambda db, tmp: ["debug", "indexiness", "-c", str(db), "-u", f"{BASE}/39.html"],
}


@pytest.mark.parametrize("command", CORRUPT_COMMANDS)
@pytest.mark.parametrize("damage", ["trunc", "bad"])
def test_corrupt_crawler_database(databases, tmp_path, capsys, command, damage):
    db = shutil.copy(databases / f"{damage}-c.db", tmp_path / "corrupt.db")
    before = Path(db).read_bytes()
    code = main(CORRUPT_COMMANDS[command](db, tmp_path))
    err = capsys.readouterr().err
    if command in ("debug indexiness", "summarize -c") and damage == "bad" and code == 0:
        # Read-only use of the crawler database: the damaged pages may hold only text that
        # SQLite cannot tell from garbage. Nothing was written to it.
        assert Path(db).read_bytes() == before
        return
    assert code == 1
    one_error_line(err, Path(db), "database disk image is malformed")
    assert Path(db).read_bytes() == before
    assert not (tmp_path / "new-s.db").exists()


@pytest.mark.parametrize("damage", ["trunc", "bad"])
def test_corrupt_summary_database_is_not_written(databases, tmp_path, capsys, damage):
    db = Path(shutil.copy(databases / f"{damage}-s.db", tmp_path / "corrupt-s.db"))
    before = db.read_bytes()
    # SQLite reports the damage as "database disk image is malformed" or, when it meets it
    # while reading the schema's tables (a summary database has many), "malformed database
    # schema (...)": both are SQLITE_CORRUPT.
    # A damaged table page (the schema read) is found by the check, which says how to recover.
    told = {"trunc": "not a usable SQLite database", "bad": f"not writing to it (try: sqlite3 {db} .recover)"}[damage]
    assert main(["summarize", "-c", str(databases / "c.db"), "-s", str(db), "--no-progress"]) == 1
    one_error_line(capsys.readouterr().err, db, "malformed", told)
    assert db.read_bytes() == before
    assert main(["regenerate-token-index", "-s", str(db)]) == 1
    one_error_line(capsys.readouterr().err, db, "malformed", told)
    assert db.read_bytes() == before


def test_quick_check_message_is_one_line(databases, tmp_path):
    db = shutil.copy(databases / "bad-c.db", tmp_path / "x.db")
    with pytest.raises(database.DatabaseError) as exc:
        database.open_crawler_db(db, create=False)
    assert "\n" not in str(exc.value)
    assert str(exc.value).startswith(f"{db}: database disk image is malformed")
    assert str(exc.value).endswith(f"not writing to it (try: sqlite3 {db} .recover)")


def test_locked_database(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.2)
    db = make_crawler(tmp_path / "c.db", pages=3)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("DELETE FROM crawl_candidate")
    try:
        assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1", "--apply"]) == 1
        one_error_line(capsys.readouterr().err, db, "locked by another process for more than 0.2 s")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # A rollback-journal database under an exclusive lock blocks even the check.
    rollback_mode(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM crawl_candidate")
    try:
        assert main(["debug", "query-crawl-log", "-c", str(db)]) == 1
        one_error_line(capsys.readouterr().err, db, "locked by another process for more than 0.2 s")
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_huge_numbers_are_usage_errors(tmp_path, capsys):
    db = make_crawler(tmp_path / "c.db", pages=2)
    huge = "99999999999999999999"
    assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", huge]) == 2
    assert capsys.readouterr().err == (
        f"textpile delete old-crawl-log-entries: --keep-latest must be at most 9223372036854775807, got {huge}\n")
    assert main(["summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--batch-size", huge]) == 2
    assert capsys.readouterr().err == f"textpile summarize: --batch-size must be at most 1000000, got {huge}\n"
    assert not (tmp_path / "s.db").exists()


def test_work_dir_must_be_a_folder(tmp_path, capsys):
    db = make_crawler(tmp_path / "c.db", pages=2)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert main(["summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--work-dir", str(notes)]) == 2
    assert capsys.readouterr().err == f"textpile summarize: --work-dir {notes}: not a folder\n"
    assert notes.read_text() == "hello" and not (tmp_path / "s.db").exists()
    below = notes / "sub"
    assert main(["summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--work-dir", str(below),
                 "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"textpile: error: {below}") and err.endswith(": Not a directory\n"), err


def test_main_maps_os_and_sqlite_errors(monkeypatch, capsys):
    from textpile.cli import maintenance

    def raise_(exc):
        def run(args):
            raise exc
        return run

    monkeypatch.setattr(maintenance, "run_optimize",
                        raise_(PermissionError(13, "Permission denied", "/srv/x.db")))
    assert main(["optimize-db", "-c", "x.db"]) == 1
    assert capsys.readouterr().err == "textpile: error: /srv/x.db: Permission denied\n"
    monkeypatch.setattr(maintenance, "run_optimize", raise_(sqlite3.OperationalError("disk I/O error")))
    assert main(["optimize-db", "-c", "x.db"]) == 1
    assert capsys.readouterr().err == "textpile: error: SQLite: disk I/O error\n"
    monkeypatch.setattr(maintenance, "run_optimize", raise_(OverflowError("int too big to convert")))
    assert main(["optimize-db", "-c", "x.db"]) == 2
    assert capsys.readouterr().err == "textpile: error: a number given is too large (int too big to convert)\n"
    assert describe_os_error(OSError(28, "No space left on device")) == "No space left on device"
    assert describe_os_error(OSError(18, "Invalid cross-device link", "a", None, "b")) == \
        "a -> b: Invalid cross-device link"


def test_ctrl_c_while_the_subcommands_are_imported_is_an_interruption(monkeypatch, capsys):
    """A Ctrl+C in the first 0.3 s, while build_parser imports every subcommand's modules,
    was a KeyboardInterrupt traceback."""
    import textpile.cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(textpile.cli, "build_parser", interrupted)
    assert main(["summarize", "-c", "x.db", "-s", "y.db"]) == 130
    assert capsys.readouterr() == ("", "textpile: interrupted\n")


# ---- read-only files and folders -------------------------------------------------------------

@pytest.fixture
def shared_dir():
    """A folder every user can enter (pytest's own tmp folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="textpile-ro-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(path)


def settle(path: Path) -> None:
    """Checkpoint a WAL database and let its -wal and -shm files go (as a last writer does)."""
    conn = sqlite3.connect(path)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    conn.close()


def test_read_only_file_in_writable_folder(shared_dir):
    folder = shared_dir / "rw"
    folder.mkdir()
    folder.chmod(0o777)
    db = make_crawler(folder / "c.db", pages=3)
    rollback_mode(db)
    db.chmod(0o444)
    before = db.read_bytes()
    proc = run_unprivileged(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1", "--apply"],
                            shared_dir)
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, db, "read-only (cannot write a database there)")
    assert db.read_bytes() == before
    proc = run_unprivileged(["debug", "query-crawl-log", "-c", str(db)], shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("4 crawl log entries.\n")


def test_wal_databases_in_read_only_folder(shared_dir):
    folder = shared_dir / "ro"
    folder.mkdir()
    crawler = make_crawler(folder / "c.db", pages=3)
    summarize(crawler, folder / "s.db", progress=False)
    for name in ("c.db", "s.db"):
        settle(folder / name)
        assert (folder / name).read_bytes()[18:20] == b"\x02\x02"  # WAL
        (folder / name).chmod(0o666)
    assert sorted(p.name for p in folder.iterdir()) == ["c.db", "s.db"]
    folder.chmod(0o555)
    before = crawler.read_bytes()
    # reading works (immutable: nobody can write in a read-only folder)
    proc = run_unprivileged(["debug", "query-crawl-log", "-c", str(crawler)], shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("4 crawl log entries.\n")
    proc = run_unprivileged(["search", "-s", str(folder / "s.db"), "--format", "json", "quokka1"], shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert f"{BASE}/1.html" in proc.stdout
    # writing is refused with the reason
    proc = run_unprivileged(["delete", "old-crawl-log-entries", "-c", str(crawler), "--keep-latest", "1",
                             "--apply"], shared_dir)
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, crawler, f"its folder {folder} is read-only")
    proc = run_unprivileged(["crawl", "-c", str(folder / "new.db"), "-u", "x (for https://example.invalid/)",
                             "--schedule", "http://127.0.0.1:9/", "-d", "0", "-m", "1", "--force-recrawl",
                             "--no-progress"], shared_dir)
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, folder / "new.db", "read-only")
    proc = run_unprivileged(["summarize", "-c", str(crawler), "-s", str(folder / "new-s.db"), "--no-progress"],
                            shared_dir)
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, folder / "new-s.db", f"cannot create a summary database there, folder {folder}"
                   " is read-only")
    writable = shared_dir / "rw"
    writable.mkdir()
    writable.chmod(0o777)
    proc = run_unprivileged(["summarize", "-c", str(crawler), "-s", str(writable / "s2.db"),
                             "--work-dir", str(folder / "work"), "--no-progress"], shared_dir)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("textpile: error: ") and "Permission denied" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert crawler.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["c.db", "s.db"]


def test_wal_database_with_leftover_wal_in_read_only_folder(shared_dir):
    folder = shared_dir / "ro"
    folder.mkdir()
    db = make_crawler(folder / "c.db", pages=2)
    db.chmod(0o666)
    (folder / "c.db-wal").write_bytes(b"")
    (folder / "c.db-wal").chmod(0o666)
    folder.chmod(0o555)
    proc = run_unprivileged(["debug", "query-crawl-log", "-c", str(db)], shared_dir)
    if proc.returncode == 0:  # SQLite managed to read it (it could open the leftover files)
        return
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, db, "is in WAL mode and its folder", "is read-only",
                   "publish a copy (textpile pipeline / textpile.publish) or make the folder writable")


def test_unreadable_database_file(shared_dir):
    db = make_crawler(shared_dir / "c.db", pages=2)
    db.chmod(0)
    proc = run_unprivileged(["debug", "query-crawl-log", "-c", str(db)], shared_dir)
    assert proc.returncode == 1, proc.stderr
    one_error_line(proc.stderr, db, "cannot be read (Permission denied)")
    assert stat.S_IMODE(db.stat().st_mode) == 0
