"""Exclusive file locks between Dagster runs (separate processes) writing the same files.

A run-level guard that does not depend on the Dagster instance's configuration (pools,
run coordinator limits): ``fcntl.flock`` on a lock file beside the data. POSIX only.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(path: Path | str, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on the file ``path`` (created, with its folder) for the block.

    Yields True while the lock is held. With ``wait`` false and another holder (another
    process or another open of the file), yields False at once without holding it.
    The lock is released when the block ends, and by the OS when the process dies.

    Raises:
        OSError: the lock file cannot be created or locked for another reason.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        held = True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            held = False
        try:
            yield held
        finally:
            if held:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
