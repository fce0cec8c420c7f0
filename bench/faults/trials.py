"""Running a command, watching its progress lines and files, and SIGKILLing it at a
chosen moment.

A :class:`Trigger` says when to kill: as soon as a file matching a pattern appears (a
database being created), as soon as a file grows past its size at the start (a WAL being
written), a delay after the n-th stderr line starting with a prefix ("[4/7] summary_db
...", "Summarizing page 3 "), a delay after a ``label`` function first names a stage or a
file first appears, or a delay after the start. :func:`run` returns the stderr
lines with the second each came, so a reference run's timeline gives the stage windows;
a ``label`` function names what the process was doing the moment the kill came, and the
same function sampled at every look (``sample``) gives a reference run's stages when its
stderr does not say them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TEXTPILE = str(Path(sys.executable).with_name("textpile"))
#: Seconds between two looks for a trigger file.
POLL_S = 0.002


@dataclass(frozen=True)
class Trigger:
    """Kill when ``pattern`` (a glob under the run's folder) matches, when the file
    ``grows`` (a path under the run's folder) is larger than at the start, or ``delay_s``
    after the ``occurrence``-th stderr line starting with ``line``, or after the
    ``event`` (:data:`LABEL`, :data:`FILE`), or after the start when none is given."""

    stage: str
    pattern: str | None = None
    line: str | None = None
    delay_s: float = 0.0
    occurrence: int = 1
    grows: str | None = None
    event: str | None = None

    def later(self, factor: float) -> "Trigger":
        """The same trigger with its delay times ``factor``."""
        return Trigger(self.stage, self.pattern, self.line, self.delay_s * factor, self.occurrence, self.grows,
                       self.event)


#: Events a trigger counts from: ``label:NAME``, the first look at which the run's
#: ``label`` function says NAME; ``file:GLOB``, the first look at which GLOB (under the
#: run's folder) matches.
LABEL, FILE = "label:", "file:"


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc/PID/task/PID/children)."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


@dataclass
class Outcome:
    """A run: exit status (negative: killed by that signal), stderr lines with their
    seconds since the start, stdout, whether the kill came, seconds taken, what the
    ``label`` function said at the kill, the labels sampled at every look (seconds,
    label) and when each watched file first appeared (path -> seconds)."""

    returncode: int
    lines: list[tuple[float, str]] = field(default_factory=list)
    stdout: str = ""
    killed: bool = False
    seconds: float = 0.0
    label: str | None = None
    samples: list[tuple[float, str]] = field(default_factory=list)
    appeared: dict[str, float] = field(default_factory=dict)

    def first(self, prefix: str) -> float | None:
        """Seconds of the first line starting with ``prefix``, or None."""
        return next((t for t, line in self.lines if line.startswith(prefix)), None)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def run(argv: list[str], folder: Path, *, trigger: Trigger | None = None, env: dict | None = None,
        timeout_s: float = 900, group: bool = False, label: Callable[[int], str] | None = None,
        sample: bool = False, watch: str | None = None) -> Outcome:
    """Run ``argv`` in ``folder``; SIGKILL it when ``trigger`` fires (its whole process
    group with ``group``: the process starts a session of its own). ``label(pid)`` is
    called just before the kill (and at every look with ``sample``); ``watch`` is a glob
    under ``folder`` whose matches' first appearance is recorded."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})}, start_new_session=group,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    outcome = Outcome(returncode=0)
    fire = threading.Event()
    out: list[str] = []
    seen = 0
    grows_at = _size(folder / trigger.grows) if trigger is not None and trigger.grows else 0

    def arm() -> None:
        """Fire ``delay_s`` from now (at once for none)."""
        if trigger.delay_s > 0:
            threading.Timer(trigger.delay_s, fire.set).start()
        else:
            fire.set()

    def read_stderr() -> None:
        nonlocal seen
        for line in proc.stderr:
            outcome.lines.append((time.monotonic() - started, line.rstrip("\n")))
            if trigger is not None and trigger.line is not None and line.startswith(trigger.line):
                seen += 1
                if seen == trigger.occurrence:
                    arm()

    readers = [threading.Thread(target=read_stderr, daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)]
    for reader in readers:
        reader.start()
    if trigger is not None and not (trigger.line or trigger.pattern or trigger.grows or trigger.event):
        arm()
    event = trigger.event if trigger is not None else None
    deadline = started + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if label is not None and (sample or (event is not None and event.startswith(LABEL))):
            now = label(proc.pid)
            if sample:
                outcome.samples.append((time.monotonic() - started, now))
            if event == LABEL + now:
                event = None
                arm()
        if event is not None and event.startswith(FILE) and any(folder.glob(event[len(FILE):])):
            event = None
            arm()
        if watch is not None:
            for path in folder.glob(watch):
                outcome.appeared.setdefault(str(path.relative_to(folder)), time.monotonic() - started)
        if trigger is not None and (fire.is_set() or (trigger.pattern and any(folder.glob(trigger.pattern)))
                                    or (trigger.grows and _size(folder / trigger.grows) > grows_at)):
            if label is not None:
                outcome.label = label(proc.pid)
            if group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.send_signal(signal.SIGKILL)
            outcome.killed = True
            break
        time.sleep(POLL_S)
    if proc.poll() is None and not outcome.killed:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    proc.wait()
    for reader in readers:
        reader.join(timeout=60)
    outcome.returncode = proc.returncode
    outcome.stdout = "".join(out)
    outcome.seconds = time.monotonic() - started
    return outcome


def textpile(command: list[str]) -> list[str]:
    """The argv of ``textpile COMMAND``."""
    return [TEXTPILE, *command]
