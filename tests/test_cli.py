"""The `textpile` command line as a whole: version, usage errors, a closed output pipe."""

import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from textpile import __version__
from textpile.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"textpile {__version__}\n"


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "required: COMMAND" in capsys.readouterr().err


def test_closed_pipe_ends_quietly(tmp_path):
    from search.builder import SummaryBuilder

    builder = SummaryBuilder(tmp_path / "s.db")
    for n in range(100):
        builder.add_page(f"https://example.org/{n}", title=f"Page {n} about cats",
                         text="cats " * 2000, lang="en", indexiness=-10)
    builder.build_fts()
    proc = subprocess.Popen(
        [sys.executable, "-m", "textpile.cli", "search", "-s", str(tmp_path / "s.db"),
         "--per-page", "100", "--format", "json", "cats"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(10) == b'{\n  "query'
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in stderr


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    from search.builder import sample_site

    path = tmp_path_factory.mktemp("cli") / "summary.db"
    sample_site(path)  # nine searchable pages in en, one in de
    return path


@pytest.mark.parametrize(("query", "message"), [
    ("lang:zz", "No page is in language zz: the index has pages in en (9), de (1)."),
    ("sqlite lang:zz lang:xx", "No page is in language zz or xx: the index has pages in en (9), de (1)."),
    ("lang:en-gb", "No page is in language en-gb: the index has pages in en (9), de (1)."),
    # a language of the index: then the words matched nothing
    ("sqlite lang:de", "No results."),
])
def test_search_in_a_language_no_page_has_says_which_languages_there_are(sample_db, capsys, query, message):
    assert main(["search", "-s", str(sample_db), query]) == 0
    assert capsys.readouterr().out == message + "\n"


def _damaged_copy(sample_db, path):
    """``sample_db`` with the page of a table no search reads (search_heading, kept for the
    index updates) overwritten; return ``path`` and SQLite's finding: it is no b-tree page
    any more."""
    with closing(sqlite3.connect(f"file:{sample_db}?mode=ro", uri=True)) as conn:
        (page,) = conn.execute("SELECT pageno FROM dbstat WHERE name = 'search_heading'").fetchone()
    data = bytearray(sample_db.read_bytes())
    data[(page - 1) * 4096:page * 4096] = b"\xa5" * 4096  # 4096-byte pages, numbered from 1
    path.write_bytes(bytes(data))
    return path, f"in database main Page {page}: btreeInitPage() returns error code 11"


def test_search_on_a_damaged_database_warns_naming_the_file(sample_db, tmp_path, capsys):
    damaged, finding = _damaged_copy(sample_db, tmp_path / "damaged.db")
    assert main(["search", "-s", str(damaged), "sqlite"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (f"textpile: warning: {damaged}: the database is damaged ({finding}); results may be "
                            f"missing or wrong: summarize or publish it again, or try: sqlite3 {damaged} .recover\n")
    assert captured.out.startswith("2 results, showing 1-2\n")  # still searched
    assert main(["search", "-s", str(sample_db), "sqlite"]) == 0
    assert capsys.readouterr().err == ""


def test_a_database_version_that_passed_the_check_is_not_checked_again(sample_db, tmp_path, capsys, monkeypatch):
    import os
    import shutil

    import textpile.store.database as database

    checks = []
    real = database.quick_check_problem
    monkeypatch.setattr(database, "quick_check_problem", lambda conn: checks.append(1) or real(conn))
    copy = tmp_path / "copy.db"
    shutil.copyfile(sample_db, copy)
    for _ in range(3):
        assert main(["search", "-s", str(copy), "sqlite"]) == 0
    assert len(checks) == 1  # before: every search read every page (2.2 s at 1.6 GB)
    stat = os.stat(copy)
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a new version (a publish)
    assert main(["search", "-s", str(copy), "sqlite"]) == 0
    assert len(checks) == 2
    damaged, _ = _damaged_copy(sample_db, tmp_path / "damaged.db")
    for _ in range(2):  # a damaged file is never remembered: named every time
        assert main(["search", "-s", str(damaged), "sqlite"]) == 0
        assert "the database is damaged" in capsys.readouterr().err
    assert len(checks) == 4


def test_serve_of_a_damaged_database_warns_naming_the_file_before_serving(sample_db, tmp_path):
    damaged, finding = _damaged_copy(sample_db, tmp_path / "damaged.db")
    proc = subprocess.Popen([sys.executable, "-m", "textpile.cli", "serve", "-s", str(damaged), "-l", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first, second = proc.stderr.readline(), proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert first == (f"textpile: warning: {damaged}: the database is damaged ({finding}); results may be missing or "
                     f"wrong: summarize or publish it again, or try: sqlite3 {damaged} .recover\n")
    assert second.startswith(f"textpile: serving {damaged} on http://127.0.0.1:")
