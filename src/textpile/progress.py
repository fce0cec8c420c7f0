"""Progress display for long jobs, behind one small interface.

Every long job (staging, scraping, integrating, summarizing) takes ``progress: bool`` and
uses :func:`progress_bar`, which yields a :class:`Progress`: ``advance(n)`` as work is
done, ``update_total(total)`` once the total is known. What it shows depends on stderr:

* a terminal: a rich progress bar (description, bar, done/total, elapsed time);
* anything else (a log file, CI, a pipe): plain lines ``Scraping: 250/1169 (12 s)``
  (``Crawling: 250/400 requests (30 s)`` with a unit), at
  most one every :data:`PLAIN_INTERVAL_S` seconds while work advances, and at least one
  every :data:`PLAIN_INTERVAL_S` seconds while it does not (so a slow step still says
  what it is doing), plus a last line at the end;
* ``enabled`` false: nothing (the Dagster layer reports through metadata instead).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Protocol

#: Seconds between two plain progress lines (see the module docstring).
PLAIN_INTERVAL_S = 5.0


class Progress(Protocol):
    """What a long job reports to."""

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """``amount`` more units done (optionally with a new description)."""

    def update_total(self, total: float | None) -> None:
        """The total number of units (None: unknown)."""


class _NoProgress:
    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """Do nothing."""

    def update_total(self, total: float | None) -> None:
        """Do nothing."""


class _RichProgress:
    def __init__(self, progress, task_id) -> None:
        self._progress = progress
        self._task = task_id

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """Move the bar by ``amount`` and optionally change its description."""
        kwargs = {"description": description} if description else {}
        self._progress.update(self._task, advance=amount, **kwargs)

    def update_total(self, total: float | None) -> None:
        """Change the bar's total (None: unknown, shows a pulsing bar)."""
        self._progress.update(self._task, total=total)


class PlainProgress:
    """Progress as plain lines on ``out`` (see the module docstring); a daemon thread
    prints the heartbeat lines. Use :meth:`start` and :meth:`stop`."""

    def __init__(self, description: str, total: float | None, out=None,
                 interval_s: float = PLAIN_INTERVAL_S, unit: str = "") -> None:
        self.description = description
        self.unit = unit
        self.total = total
        self.completed = 0.0
        self.out = out or sys.stderr
        self.interval_s = interval_s
        self._started = time.monotonic()
        self._last_line = self._started
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._heartbeat, daemon=True, name="textpile-progress")

    def line(self) -> str:
        """The current state: ``description: done/total unit (s)`` (``done/?`` without a
        total; no unit when :attr:`unit` is empty)."""
        total = "?" if self.total is None else f"{self.total:g}"
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.description}: {self.completed:g}/{total}{unit} ({time.monotonic() - self._started:.0f} s)"

    def _say(self) -> None:
        self._last_line = time.monotonic()
        print(self.line(), file=self.out, flush=True)

    def _heartbeat(self) -> None:
        while not self._done.wait(self.interval_s / 5):
            with self._lock:
                if time.monotonic() - self._last_line >= self.interval_s:
                    self._say()

    def say(self, text: str) -> None:
        """Print a line of the job's own (a log line) on :attr:`out`, never inside a
        progress line the heartbeat prints at the same time."""
        with self._lock:
            print(text, file=self.out, flush=True)

    def start(self) -> "PlainProgress":
        """Start the heartbeat."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the heartbeat and print the last line."""
        self._done.set()
        self._thread.join()
        with self._lock:
            self._say()

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """``amount`` more done; prints a line when the last one is :attr:`interval_s` old."""
        with self._lock:
            self.completed += amount
            if description:
                self.description = description
            if time.monotonic() - self._last_line >= self.interval_s:
                self._say()

    def update_total(self, total: float | None) -> None:
        """Set the total."""
        with self._lock:
            self.total = total


@contextlib.contextmanager
def progress_bar(description: str, total: float | None = None, *, enabled: bool = True) -> Iterator[Progress]:
    """Yield a :class:`Progress` for a job named ``description`` with ``total`` units.

    A rich bar when stderr is a terminal, plain lines otherwise, nothing when ``enabled``
    is false (module docstring).
    """
    if not enabled:
        yield _NoProgress()
        return
    if not getattr(sys.stderr, "isatty", lambda: False)():
        plain = PlainProgress(description, total).start()
        try:
            yield plain
        finally:
            plain.stop()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task_id = progress.add_task(description, total=total)
        yield _RichProgress(progress, task_id)
