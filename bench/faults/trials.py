"""Running a textpile command, watching its progress lines and files, and SIGKILLing it
at a chosen moment.

A :class:`Trigger` says when to kill: as soon as a file matching a pattern appears (a
database being created), or a delay after the first stderr line starting with a prefix
("[4/7] summary_db ...", "Summarizing page 3 "). :func:`run` returns the stderr lines
with the second each came, so a reference run's timeline gives the stage windows.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TEXTPILE = str(Path(sys.executable).with_name("textpile"))
#: Seconds between two looks for a trigger file.
POLL_S = 0.002


@dataclass(frozen=True)
class Trigger:
    """Kill when ``pattern`` (a glob under the run's folder) matches, or ``delay_s``
    after the first stderr line starting with ``line``."""

    stage: str
    pattern: str | None = None
    line: str | None = None
    delay_s: float = 0.0


@dataclass
class Outcome:
    """A run: exit status (negative: killed by that signal), stderr lines with their
    seconds since the start, stdout, whether the kill came, seconds taken."""

    returncode: int
    lines: list[tuple[float, str]] = field(default_factory=list)
    stdout: str = ""
    killed: bool = False
    seconds: float = 0.0

    def first(self, prefix: str) -> float | None:
        """Seconds of the first line starting with ``prefix``, or None."""
        return next((t for t, line in self.lines if line.startswith(prefix)), None)


def run(command: list[str], folder: Path, *, trigger: Trigger | None = None, env: dict | None = None,
        timeout_s: float = 900) -> Outcome:
    """Run ``textpile COMMAND`` in ``folder``; SIGKILL it when ``trigger`` fires."""
    started = time.monotonic()
    proc = subprocess.Popen([TEXTPILE, *command], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    outcome = Outcome(returncode=0)
    fire = threading.Event()
    out: list[str] = []

    def read_stderr() -> None:
        for line in proc.stderr:
            outcome.lines.append((time.monotonic() - started, line.rstrip("\n")))
            if trigger is not None and trigger.line is not None and line.startswith(trigger.line):
                threading.Timer(trigger.delay_s, fire.set).start()

    readers = [threading.Thread(target=read_stderr, daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)]
    for reader in readers:
        reader.start()
    deadline = started + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if trigger is not None and (fire.is_set() or (trigger.pattern and any(folder.glob(trigger.pattern)))):
            proc.send_signal(signal.SIGKILL)
            outcome.killed = True
            break
        time.sleep(POLL_S)
    if proc.poll() is None and not outcome.killed:
        proc.kill()
    proc.wait()
    for reader in readers:
        reader.join(timeout=60)
    outcome.returncode = proc.returncode
    outcome.stdout = "".join(out)
    outcome.seconds = time.monotonic() - started
    return outcome
