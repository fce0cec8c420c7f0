"""Is the process that left something behind still running? (pid, start time, host).

Runs record who they are (:func:`this_process`) in what they leave while they work: the
tags of a Dagster run, the name of a temporary file or folder. A later run asks
:func:`process_alive` whether that process is still at work or died (SIGKILL, power
loss) and its leftovers can be cleaned up or its work be closed. A process id alone can
be reused by an unrelated process after the first one died, so the start time is
compared too where the system tells it (Linux ``/proc``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textpile.folders import remove_folder

#: Two start times within this many seconds are the same process (``/proc`` counts in
#: clock ticks since boot, and the boot time is known to the second).
START_TIME_SLACK_S = 2.0


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """(state letter, start time in unix seconds) of process ``pid`` from Linux ``/proc``;
    None when unknown (no such process, or not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh.read().decode("ascii", "replace").splitlines()
                        if line.startswith("btime "))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    # Fields 3 (state) and 22 (starttime); the command name (field 2) may hold spaces.
    fields = stat[stat.rindex(")") + 2:].split()
    try:
        return fields[0], boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


def process_start_unix(pid: int) -> float | None:
    """When process ``pid`` started, in unix seconds (Linux ``/proc``); None when unknown."""
    stat = _proc_stat(pid)
    return stat[1] if stat is not None else None


@dataclass(frozen=True)
class ProcessId:
    """A process as recorded by the run it works for: host name, pid and start time
    (unix seconds, None when unknown)."""

    host: str
    pid: int
    started_unix: float | None


def this_process() -> ProcessId:
    """The running process as a :class:`ProcessId`."""
    return ProcessId(socket.gethostname(), os.getpid(), process_start_unix(os.getpid()))


def process_alive(pid: int, *, started_unix: float | None = None, host: str | None = None) -> bool | None:
    """Whether process ``pid`` (started at ``started_unix`` when given, on ``host`` when
    given) still runs: True, False, or None when it cannot be told (another host).

    A pid that exists but belongs to a process started at another time (more than
    :data:`START_TIME_SLACK_S` apart) is another process, and a zombie (dead, not yet
    reaped by its parent) is dead: False.
    """
    if host is not None and host != socket.gethostname():
        return None
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    stat = _proc_stat(pid)
    if stat is not None:
        state, actual = stat
        if state in ("Z", "X") or (started_unix is not None and abs(actual - started_unix) > START_TIME_SLACK_S):
            return False
    return True


#: Seconds between two looks of :func:`exit_with_parent` at the parent process.
PARENT_WATCH_INTERVAL_S = 1.0


def exit_with_parent(pid: int, started_unix: float | None, *, interval_s: float = PARENT_WATCH_INTERVAL_S) -> None:
    """In a worker process: end this process (``os._exit(1)``) once process ``pid``
    (started at ``started_unix``) no longer runs, looking every ``interval_s`` seconds
    from a daemon thread. A pool's workers wait for work forever when the process that
    owns the pool is killed (SIGKILL gives it no chance to stop them); with this they
    follow it within a second. Call it from the pool's initializer with the owner's
    :func:`this_process` pid and start time."""
    def watch() -> None:
        while process_alive(pid, started_unix=started_unix) is not False:
            time.sleep(interval_s)
        os._exit(1)

    threading.Thread(target=watch, name="textpile-parent-watch", daemon=True).start()


def leftovers_of_dead(folder: str | Path, prefix: str) -> list[Path]:
    """Entries of ``folder`` named ``<prefix><pid>-<anything>`` whose process ``pid`` no
    longer runs, sorted: what killed processes left behind under such names (temporary
    databases, work folders). An unreadable folder has none."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and process_alive(int(pid)) is False:
            found.append(Path(folder) / name)
    return sorted(found)


def remove_leftovers_of_dead(folder: str | Path, prefix: str) -> list[Path]:
    """Remove :func:`leftovers_of_dead` (files, and folders with their contents); return
    what was removed."""
    removed = []
    for path in leftovers_of_dead(folder, prefix):
        try:
            if path.is_dir() and not path.is_symlink():
                remove_folder(path)
            else:
                path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask on Linux), at least 1: the
    default number of worker processes of a pool."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


#: A control-group memory limit as :func:`usable_memory_bytes` accepts it: a byte count in ASCII digits.
_BYTE_COUNT = re.compile(rb"[0-9]{1,20}")
#: Files that hold the memory limit of this process's control group (cgroup v2, then v1).
CGROUP_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def usable_memory_bytes(cgroup_limits: Sequence[str] = CGROUP_MEMORY_LIMITS) -> int:
    """The memory this process may use, in bytes: the machine's physical memory, or its
    control group's limit when that is lower (a container's ``--memory``). A limit file
    that is missing or unreadable, says ``max``, or holds anything but up to 20 ASCII
    digits (a byte count) sets no limit."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in cgroup_limits:
        try:
            value = Path(path).read_bytes()[:64].strip()
        except OSError:
            continue
        if _BYTE_COUNT.fullmatch(value):
            memory = min(memory, int(value))
    return memory


def forkserver_context(preload: list[str]) -> multiprocessing.context.BaseContext:
    """The multiprocessing context of textpile's worker processes: a forkserver (no fork
    of a process with threads or an event loop) that imports the modules ``preload``
    once, so that a new worker starts in milliseconds. The forkserver is shared by the
    whole process and started here when it is not running: the list given then is the
    one imported; a module missing from it is imported by each worker on first use.

    The forkserver starts with Ctrl+C blocked: a Ctrl+C while it imports ``preload``
    (about 0.3 s) is this process's to handle, not a KeyboardInterrupt traceback of the
    forkserver's and a dead forkserver. It ignores Ctrl+C once it serves anyway, and so do
    the workers (:func:`init_worker`)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload)
    # A process inherits the signal mask of the thread that starts it. A Ctrl+C while
    # SIGINT is blocked here is taken by another thread of this process, or by this one
    # once it is unblocked: deferred by a few ms, never lost. The resource tracker is
    # started first, as starting it unblocks SIGINT.
    multiprocessing.resource_tracker.ensure_running()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return context


#: The longest process name Linux keeps (``comm``: 16 bytes with the final NUL).
MAX_PROCESS_NAME_CHARS = 15


def name_this_process(name: str) -> bool:
    """Give this process the name ``name`` as ``ps``, ``top`` and psutil's ``name()``
    show it (Linux ``/proc/self/comm``; cut to :data:`MAX_PROCESS_NAME_CHARS`
    characters), so that a pool's workers, which all share the forkserver's command
    line, can be told apart by their role. True when it was set; False where the system
    has no such file (then nothing changes)."""
    try:
        with open("/proc/self/comm", "w", encoding="ascii", errors="replace") as fh:
            fh.write(name[:MAX_PROCESS_NAME_CHARS])
    except OSError:
        return False
    return True


#: glibc mallopt() parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory(mmap_threshold_bytes: int, trim_threshold_bytes: int) -> bool:
    """In a worker process that builds and frees big structures over and over (a parsed
    page's tree, a page's body): have glibc's malloc serve blocks below
    ``mmap_threshold_bytes`` from its heap and keep up to ``trim_threshold_bytes`` of
    freed heap instead of giving it back to the system. By default a block above 128
    KiB (or the size it adapted to, at most 32 MiB) is mapped on its own and unmapped
    when freed, and freed heap beyond 128 KiB is returned, so the next page's tree
    faults its memory in again, page by page (about 30% of the CPU of reading a 2.5 MB
    page, most of it system time). The process then keeps its peak heap, at most
    ``trim_threshold_bytes`` above what it uses. True when set; False where malloc is
    not glibc's (then nothing changes)."""
    import ctypes
    import platform

    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold_bytes)) and bool(mallopt(_M_TRIM_THRESHOLD,
                                                                                    trim_threshold_bytes))


def init_worker(owner_pid: int, owner_started: float | None, name: str | None = None) -> None:
    """Initializer of a pool's worker processes: Ctrl+C is the owner's to handle (it
    stops the workers), and a worker ends by itself when the owning process was killed
    (SIGKILL; :func:`exit_with_parent`). Pass the owner's :func:`this_process` pid and
    start time, and the workers' role as their process ``name`` (see
    :func:`name_this_process`; None: the name is left as it is)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if name is not None:
        name_this_process(name)
    exit_with_parent(owner_pid, owner_started)
