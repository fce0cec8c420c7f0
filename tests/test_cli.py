"""The `textpile` command line as a whole: version, usage errors, a closed output pipe."""

import subprocess
import sys

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
