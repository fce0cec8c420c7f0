"""Running ``textpile`` as a process that file permissions apply to.

Read-only files and folders mean nothing to root: root bypasses permission checks
through two capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH). When the tests run as
root, :func:`run_unprivileged` runs textpile as root without those two (setpriv drops
them from the bounding and inheritable sets), so root's files keep their owner bits:
this works wherever the checkout lies, also in a folder only root can enter (a
``mktemp -d`` clone, ``/root``). When that is impossible it tries user nobody (65534),
which works when nobody can read the checkout and its virtual environment. A probe
decides once per session; when neither works the tests that need it are skipped with
the reason.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

NOBODY = 65534
#: The capabilities that let root read and write whatever the permission bits say.
BYPASS_CAPABILITIES = ("dac_override", "dac_read_search")

_PROBE = """
import os, sys
import textpile.cli  # the interpreter and the package are reachable
path = sys.argv[1]
try:
    open(path, "a").close()
except PermissionError:
    print("permissions apply")
"""


def _prefixes() -> list[list[str]]:
    if os.geteuid() != 0:
        return [[]]
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return []
    caps = ",".join(f"-{cap}" for cap in BYPASS_CAPABILITIES)
    return [[setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"],
            [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]]


@functools.cache
def unprivileged_prefix() -> tuple[tuple[str, ...] | None, str]:
    """The command prefix that runs a process file permissions apply to (``()`` when we
    are not root), or None and why none works here."""
    folder = Path(tempfile.mkdtemp(prefix="textpile-probe-"))
    reasons = []
    try:
        folder.chmod(0o755)
        target = folder / "read-only.txt"
        target.write_text("x")
        target.chmod(0o444)
        for prefix in _prefixes():
            proc = subprocess.run([*prefix, sys.executable, "-c", _PROBE, str(target)], capture_output=True,
                                  text=True, timeout=120, cwd=folder)
            if proc.returncode == 0 and proc.stdout == "permissions apply\n":
                return tuple(prefix), ""
            reasons.append(f"{' '.join(prefix) or 'as is'}: exit {proc.returncode} {proc.stderr.strip()[-300:]}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return None, "; ".join(reasons) or "running as root without setpriv"


def run_unprivileged(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``textpile ARGS`` in ``cwd`` as a process that file permissions apply to (see
    the module docstring); skip the test when there is no such way here."""
    prefix, reason = unprivileged_prefix()
    if prefix is None:  # pragma: no cover - depends on the machine
        pytest.skip(f"cannot run textpile as a process that file permissions apply to: {reason}")
    env = {**os.environ, "HOME": str(cwd)}
    return subprocess.run([*prefix, sys.executable, "-m", "textpile.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
