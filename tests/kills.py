"""Helpers of the tests that kill textpile processes on purpose (issue 12)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from textpile.store.gen2_piles import register_functions
from contextlib import closing
from pathlib import Path


def crawl_log_entries(db: Path) -> int:
    """Crawl log entries written to crawler database ``db`` so far (0 while it does not
    exist or has no tables yet). Read-only: usable while a crawl writes it."""
    if not Path(db).exists():
        return 0
    try:
        with closing(register_functions(sqlite3.connect(f"file:{db}?mode=ro", uri=True))) as conn:
            return conn.execute("SELECT count(*) FROM crawl_log").fetchone()[0]
    except sqlite3.Error:
        return 0


def dead_pid() -> int:
    """The process id of a process that has ended (and was reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def killable_env(tmp_path: Path) -> dict[str, str]:
    """The environment for a textpile process a test kills with SIGKILL: this one's, without
    DAGSTER_HOME, and with TMPDIR in ``tmp_path``, so that the folder its forkserver made
    (``pymp-*``, left behind after any SIGKILL) goes with the test's own files."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["TMPDIR"] = str(tmp_path)
    return env


def processes_of(tmp_path: Path) -> list[tuple[int, str]]:
    """(pid, command line) of the running processes started with :func:`killable_env` of
    ``tmp_path`` (its TMPDIR is in their environment: a pipeline and everything it started,
    forkserver and workers included, whichever process group they are in)."""
    marker = f"TMPDIR={tmp_path}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        if marker in environ and state not in (b"Z", b"X"):
            found.append((int(entry), cmdline))
    return found
