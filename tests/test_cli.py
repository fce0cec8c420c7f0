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
