"""`textpile pipeline` as a program: the pipeline runs in a child process that this one
supervises, so that a stop ends every process in time, with one message and the exit
status of the signal.

A pipeline is Dagster's run in one process (its own signal handling: SIGTERM taken for
SIGINT, interrupts noted instead of raised between steps and while a step waits for a
concurrency slot) plus the processes it starts (the forkserver and its workers, Dagster's
log helpers). A Ctrl+C reached all of them at once, and a second one the cleanup of the
first. Here the pipeline runs in its own process group under this process, which:

* on the first SIGINT, SIGTERM or SIGHUP sends one SIGINT to the pipeline's process
  (the clean stop every step knows: what was done is kept, the next pipeline resumes);
  later signals are noted, not sent on;
* waits up to :data:`STOP_GRACE_S` seconds for it and every process of its group to
  end, then ends what is left with SIGKILL (saying so when the pipeline's own process did
  not stop);
* exits with 130 after Ctrl+C (SIGINT), 143 after SIGTERM, 129 after SIGHUP, and prints
  the one ``textpile: ...`` line; the pipeline's own line says where it stopped.

The pipeline's process dies with this one (``PR_SET_PDEATHSIG``: a SIGKILL of
``textpile pipeline`` is one of the whole pipeline, as before), and its Dagster runs name
this process (pid and start time), the one users see, so that the next pipeline tells a
dead run (:func:`textpile_dagster.sensors.runs.fail_dead_runs`) as before. Only the
program is supervised: ``textpile.cli.main([...])`` called in a Python process runs the
pipeline in that process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

from textpile.processes import ProcessId, this_process

#: Seconds the pipeline has, after the first signal, to stop cleanly before its processes
#: are ended (with the time to end them, within the 10 s a stop may take).
STOP_GRACE_S = 7.0
#: Seconds the pipeline's other processes have to end after its main process did.
DRAIN_S = 2.0
#: The hidden option that marks the supervised child, with the supervisor's pid and start time.
SUPERVISED_OPTION = "--supervised-by"
#: Exit statuses after each stopping signal (128 + the signal's number).
STOP_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
#: The line said when the pipeline's own process did not stop within STOP_GRACE_S.
NOT_STOPPED = ("textpile pipeline: did not stop within {grace_s:.0f} s of the signal; its processes were ended "
               "(SIGKILL); the next textpile pipeline resumes from there")
_PR_SET_PDEATHSIG = 1


def supervisor_argument(process: ProcessId) -> str:
    """The value of :data:`SUPERVISED_OPTION` naming ``process``: ``PID:START``."""
    started = "" if process.started_unix is None else f"{process.started_unix:.2f}"
    return f"{process.pid}:{started}"


def parse_supervisor(value: str) -> ProcessId:
    """The :class:`ProcessId` of :func:`supervisor_argument`'s ``value`` (this host).

    Raises:
        ValueError: not ``PID:START``.
    """
    pid, _sep, started = value.partition(":")
    return ProcessId(this_process().host, int(pid), float(started) if started else None)


def _die_with_parent(parent: int) -> None:
    """In the child, before it runs the pipeline: SIGKILL when ``parent`` dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


class _Stopping(Exception):
    """The first stopping signal, ending the supervisor's blocking wait for its child."""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _end_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def supervise(argv: list[str]) -> int:
    """Run ``textpile`` with ``argv`` (a ``pipeline`` command line) as a supervised child
    (module docstring); return the exit status."""
    me = this_process()
    child_argv = [sys.executable, "-m", "textpile.cli", *argv, SUPERVISED_OPTION, supervisor_argument(me)]
    # (no thread runs yet in this process: preexec_fn is safe)
    child = subprocess.Popen(child_argv, stdin=subprocess.DEVNULL, process_group=0,
                             preexec_fn=lambda: _die_with_parent(me.pid))
    received: list[int] = []
    first_at: list[float] = []
    blocked = [False]  # in the blocking wait for the child, which the first signal ends

    def on_signal(signum, frame) -> None:
        received.append(signum)
        if len(received) == 1:
            first_at.append(time.monotonic())
            try:
                os.kill(child.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            if blocked[0]:
                raise _Stopping

    previous = {}
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # ignored by whoever started us: stays so
            previous[signum] = signal.signal(signum, on_signal)
    ended_at = None  # when the pipeline's main process ended
    try:
        blocked[0] = True
        try:
            child.wait()  # no CPU until it ends or a signal comes
        except _Stopping:
            pass
        finally:
            blocked[0] = False
        while True:
            status = child.poll()
            now = time.monotonic()
            if status is not None and ended_at is None:
                ended_at = now
            if status is not None and not _group_alive(child.pid):
                break
            if first_at and now - first_at[0] > STOP_GRACE_S:
                if status is None:
                    print(NOT_STOPPED.format(grace_s=STOP_GRACE_S), file=sys.stderr, flush=True)
                _end_group(child.pid)
                status = child.wait()
                break
            if ended_at is not None and not first_at and now - ended_at > DRAIN_S:
                _end_group(child.pid)  # what it left running (workers follow it within a second)
                break
            time.sleep(0.05)
        gone_by = time.monotonic() + DRAIN_S
        while _group_alive(child.pid) and time.monotonic() < gone_by:
            time.sleep(0.05)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if received:
        stop = signal.SIGTERM if signal.SIGTERM in received else received[0]
        print("textpile: stopped by SIGTERM" if stop == signal.SIGTERM else
              "textpile: stopped by SIGHUP" if stop == signal.SIGHUP else "textpile: interrupted",
              file=sys.stderr, flush=True)
        return STOP_SIGNALS[stop]
    return status if status >= 0 else 128 - status
