"""Creating a SQLite database atomically: a finished database appears under its name, or
nothing does.

The new database is built in a temporary file beside its target
(``.<name>.creating-<pid>-<random>``), with its whole schema, switched to WAL and closed
(so no ``-wal`` or ``-journal`` file is left), synced to disk, and only then given its
name: linked when the name is free (so two creators never overwrite each other), renamed
over a 0-byte or table-less file that was there (whose ``-journal``, ``-wal`` and
``-shm`` files belong to nothing any more and are removed first). A process killed while
it creates leaves only its temporary files; the next creation removes those of creators
that no longer run (:func:`remove_leftovers`).
"""

from __future__ import annotations

import errno
import os
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

from textpile.processes import leftovers_of_dead, remove_leftovers_of_dead

#: What a temporary database's name holds between the target's name and the creator's pid.
CREATING = ".creating-"
#: The files SQLite keeps beside a database.
SIDE_SUFFIXES = ("-journal", "-wal", "-shm")


class NameTaken(Exception):
    """Another process gave a database the target's name while this one was building it."""


def temp_path(path: Path) -> Path:
    """A fresh temporary name for building ``path``: ``.<name>.creating-<pid>-<8 hex>``."""
    return path.with_name(f".{path.name}{CREATING}{os.getpid()}-{secrets.token_hex(4)}")


def leftovers(path: Path) -> list[Path]:
    """Temporary files of creations of ``path`` whose creator no longer runs (the
    temporary database and its side files), sorted."""
    return leftovers_of_dead(path.absolute().parent, f".{path.name}{CREATING}")


def remove_leftovers(path: Path) -> list[Path]:
    """Remove :func:`leftovers` of ``path``; return what was removed."""
    return remove_leftovers_of_dead(path.absolute().parent, f".{path.name}{CREATING}")


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _install(tmp: Path, path: Path) -> None:
    """Give ``tmp`` the name ``path``: a link when the name is free (NameTaken when another
    creator was first), else a rename over the empty file there, whose side files go first."""
    if not path.exists():
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise NameTaken(str(path)) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            os.replace(tmp, path)  # a file system without hard links
        return
    for suffix in SIDE_SUFFIXES:
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    os.replace(tmp, path)


def create_atomically(path: str | Path, build: Callable[[sqlite3.Connection], None], *,
                      timeout_s: float) -> list[Path]:
    """Build a database with ``build(conn)`` (which must commit) in a temporary file beside
    ``path`` and give it the name ``path`` once complete (see the module docstring).
    Leftovers of earlier creations whose creator died are removed first; returns them.

    Raises:
        NameTaken: another process created ``path`` meanwhile (its database stays; open it).
        sqlite3.Error: building failed (nothing was created under ``path``).
        OSError: the temporary file cannot be written, synced or renamed.
    """
    path = Path(path)
    removed = remove_leftovers(path)
    tmp = temp_path(path)
    try:
        conn = sqlite3.connect(tmp, timeout=timeout_s)
        try:
            build(conn)
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()  # the last connection: its -wal is checkpointed and removed
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _install(tmp, path)
        _fsync_folder(path.absolute().parent)
    finally:
        for leftover in (tmp, *(tmp.with_name(tmp.name + s) for s in SIDE_SUFFIXES)):
            leftover.unlink(missing_ok=True)
    return removed
