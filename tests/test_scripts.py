"""scripts/setup on a fresh checkout: it says what it does while pip works, in a few lines,
keeps pip's whole output in .venv/pip-install.log and shows its end when pip fails.

pip itself is played by a stand-in ``.venv/bin/python`` that prints a recorded pip
output for ``-m pip`` (and runs the real Python for anything else), so no package is
installed; the venv already exists, so setup does not create one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: A shortened real pip output of `pip install -e '.[test]'` on a fresh venv.
PIP_OUTPUT = """\
Looking in indexes: https://pypi.org/simple
Obtaining file:///home/me/textpile
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
Processing /opt/pypi/files/httpx-0.28.1-py3-none-any.whl (from textpile==0.1.0)
Collecting protego>=0.3 (from textpile==0.1.0)
  Downloading protego-0.7.0-py3-none-any.whl (13 kB)
Collecting trafilatura>=2.0 (from textpile==0.1.0)
  Downloading trafilatura-2.3.1-py3-none-any.whl (158 kB)
Requirement already satisfied: setuptools in ./.venv/lib/python3.11/site-packages
Building wheels for collected packages: textpile
  Building editable for textpile (pyproject.toml): started
  Building editable for textpile (pyproject.toml): finished with status 'done'
Installing collected packages: httpx, protego, trafilatura, textpile
Successfully installed httpx-0.28.1 protego-0.7.0 trafilatura-2.3.1 textpile-0.1.0
"""
FAILING_PIP_OUTPUT = """\
Collecting protego>=0.3 (from textpile==0.1.0)
ERROR: Could not find a version that satisfies the requirement protego>=0.3 (from textpile) (from versions: none)
ERROR: No matching distribution found for protego>=0.3
"""


def _checkout(tmp_path: Path, pip_output: str, pip_status: int) -> Path:
    """scripts/ and pyproject.toml in ``tmp_path`` with a .venv whose python plays pip."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "scripts", root / "scripts")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "pip-output.txt").write_text(pip_output)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  cat "{root / 'pip-output.txt'}"
  exit {pip_status}
fi
exec "{sys.executable}" "$@"
""")
    python.chmod(0o755)
    return root


def _setup(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return subprocess.run([str(root / "scripts" / "setup")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def _without_seconds(text: str) -> str:
    return re.sub(r"\(\d+ s\)", "(N s)", text)


def test_setup_says_what_pip_does_in_a_few_lines_and_keeps_its_output(tmp_path):
    root = _checkout(tmp_path, PIP_OUTPUT, 0)
    done = _setup(root)
    assert done.returncode == 0, done.stderr
    assert _without_seconds(done.stdout) == (
        "== upgrading pip in .venv (pip's output: .venv/pip-install.log)\n"
        "   pip: building wheels for textpile (N s)\n"
        "   pip: installing 4 packages (N s)\n"
        "   pip: installed 4 packages (N s)\n"
        "== installing textpile and its dependencies into .venv (a few minutes on a fresh machine)\n"
        "   pip: building wheels for textpile (N s)\n"
        "   pip: installing 4 packages (N s)\n"
        "   pip: installed 4 packages (N s)\n"
        "== set up: .venv/bin/textpile\n")
    assert done.stderr == ""
    assert (root / ".venv" / "pip-install.log").read_text() == PIP_OUTPUT * 2  # both pip runs, every line
    again = _setup(root)  # nothing changed: quiet
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


def test_setup_shows_pips_errors_and_the_end_of_its_output_when_it_fails(tmp_path):
    root = _checkout(tmp_path, FAILING_PIP_OUTPUT, 1)
    failed = _setup(root)
    assert failed.returncode == 1
    errors = FAILING_PIP_OUTPUT.splitlines()[1:]
    assert failed.stdout == ("== upgrading pip in .venv (pip's output: .venv/pip-install.log)\n"
                             + "".join(f"   pip: {line}\n" for line in errors))
    assert failed.stderr == ("== pip failed (exit status 1); the end of its output (all of it: "
                             ".venv/pip-install.log):\n" + FAILING_PIP_OUTPUT)
    assert not (root / ".venv" / ".textpile-installed").exists()
