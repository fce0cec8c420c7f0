"""SIGTERM handled like Ctrl+C: a service manager's stop, ``kill PID`` and ``timeout``
stop a run as cleanly as Ctrl+C does (the crawl prints its report and releases its lock,
summarize rolls back the current batch), and the exit status says which signal it was.

A signal left ignored by whoever started textpile (SIG_IGN inherited) stays ignored, as
for any well-behaved program. Only the main thread can install handlers; elsewhere
nothing changes.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: Exit status after SIGTERM (128 + 15, what a shell reports for a process it ended).
EXIT_TERMINATED = 143


class TerminateAsInterrupt:
    """While active: SIGTERM raises KeyboardInterrupt, as Python's Ctrl+C handler does,
    and :attr:`terminated` records that it came. Use as a context manager."""

    def __init__(self) -> None:
        self.terminated = False
        self._previous = None
        self._installed = False

    def _handler(self, signum, frame) -> None:
        self.terminated = True
        raise KeyboardInterrupt

    def __enter__(self) -> "TerminateAsInterrupt":
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGTERM, self._handler)
            self._installed = True
        return self

    def __exit__(self, *exc) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous if self._previous is not None else signal.SIG_DFL)
            self._installed = False


@contextmanager
def handlers_replaced(signums: tuple[int, ...], handler_for: Callable[[Any], Any], *,
                      python_handlers_only: bool = False) -> Iterator[None]:
    """While active (main thread only, where Python's handlers live; elsewhere nothing
    changes): each of ``signums`` is handled by ``handler_for(previous)``, ``previous``
    being the handler in place on entry, which is given back afterwards. Signals ignored on
    entry stay ignored; with ``python_handlers_only``, so do those whose handler is not a
    Python function (the default action, or one installed outside Python)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    try:
        for signum in signums:
            handler = signal.getsignal(signum)
            if handler is not signal.SIG_IGN and (callable(handler) or not python_handlers_only):
                previous[signum] = signal.signal(signum, handler_for(handler))
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def _raise_keyboard_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@contextmanager
def keyboard_interrupt_on(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """While active (main thread only): each of ``signums`` raises KeyboardInterrupt,
    whatever handler a framework had installed, which comes back afterwards. Dagster, for
    one, turns SIGINT and SIGTERM into its own interruption error during a step, which
    the library's clean stops (report, end of the crawl run, lock released) do not catch.
    Signals ignored on entry stay ignored."""
    with handlers_replaced(signums, lambda previous: _raise_keyboard_interrupt):
        yield


@contextmanager
def interruptions_deferred(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """While active (main thread only): each of ``signums`` that comes is noted instead of
    handled, and raised again as the block ends, for the handlers in place before it (so
    Ctrl+C's KeyboardInterrupt comes right after the block, not inside it). For a short
    step that an exception must not cut in two: a worker process started, its parent
    interrupted before it kept the process's id, loses track of it (the worker then dies
    with a traceback of its own once the parent's objects are gone). Signals ignored on
    entry stay ignored; elsewhere than the main thread nothing changes."""
    noted: list[int] = []
    try:
        with handlers_replaced(signums, lambda previous: lambda signum, frame: noted.append(signum)):
            yield
    finally:
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)
