"""Exclusive file locks between processes writing the same files (POSIX ``fcntl.flock``).

A lock file lies beside the data it guards (``crawl.db.lock`` for ``crawl.db``) while
the lock is held. The holder writes its process id into it, so that a refused process
can say who holds it, and removes it when done. The lock belongs to the open file, so
the operating system releases it when the holder exits in any way (also SIGKILL); a
stale lock file left behind by a killed holder locks nothing.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path


def _same_file(fd: int, path: Path) -> bool:
    """True when ``path`` names the file open as ``fd`` (not removed nor replaced)."""
    opened = os.fstat(fd)
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


@contextmanager
def exclusive_lock(path: Path | str, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on the file ``path`` (created, with its folder) for the block.

    Yields True while the lock is held; the holder's pid is then the file's content.
    With ``wait`` false and another holder (another process, or another open of the file
    in this process), yields False at once without holding it (use :func:`lock_holder`
    to name the holder). The lock is released when the block ends (also on exceptions
    and KeyboardInterrupt), and by the OS when the process dies.

    The holder removes the lock file when it releases the lock, so a finished run leaves
    none behind; a process that locked the file just before it was removed notices
    (the name no longer leads to its file) and locks the new one instead. A lock file
    left by a killed holder locks nothing and is taken over by the next one.

    Raises:
        OSError: the lock file cannot be created or locked for another reason.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            yield False
            return
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, path):
            break
        os.close(fd)  # its holder removed it as we waited: lock the file now under the name
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield True
    finally:
        try:
            if _same_file(fd, path):
                path.unlink()
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def lock_holder(path: Path | str) -> int | None:
    """The process id written into the lock file ``path`` by its holder, or None when
    the file is missing, empty or holds no number (a holder that has not written yet)."""
    try:
        text = Path(path).read_text("ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def refuse_when_locked(lock: Path | str, database: Path | str, running: str) -> Iterator[None]:
    """Hold the exclusive lock ``lock`` of the file ``database`` for the block, refusing
    at once when another process (or another open in this one) holds it.

    ``running`` says who may hold it, e.g. ``"another crawl is running on this crawler
    database"``.

    Raises:
        DatabaseError: the lock file cannot be created or locked: "<database>: cannot
            create or lock <lock>: <cause>".
        TextpileError: another holds it: "<database>: <running> (lock <lock> held by pid N)"
            (without "held by pid N" when the holder has not written its pid yet).
    """
    from textpile.errors import DatabaseError, TextpileError

    with ExitStack() as stack:
        try:
            held = stack.enter_context(exclusive_lock(lock, wait=False))
        except OSError as exc:
            raise DatabaseError(f"{os.fspath(database)}: cannot create or lock {lock}: "
                                f"{exc.strerror or exc}") from None
        if not held:
            pid = lock_holder(lock)
            holder = f" held by pid {pid}" if pid is not None else ""
            raise TextpileError(f"{os.fspath(database)}: {running} (lock {lock}{holder})")
        yield
