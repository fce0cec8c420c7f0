"""Publishing a finished copy of the summary database, swapped in atomically.

The working summary database keeps changing while the pipeline integrates crawls; a
frontend (Datasette, ``textpile search``) reads a *published* copy instead. Publishing
copies the database with SQLite's online backup API (a consistent snapshot even while
another connection writes) into a temporary file in the target's folder (named with the
publisher's pid, so the next publisher removes what a killed one left), makes the
copy self-contained (rollback journal instead of WAL, so readers never need a ``-wal``
file), checks it, flushes it to disk, and then ``os.replace``-s it onto the target path.
A reader that opens the path afterwards sees the whole new copy; a reader that still has
the old file open keeps reading the old one, never a half-written file.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from textpile.errors import DatabaseError
from textpile.processes import remove_leftovers_of_dead
from textpile.store.database import open_summary_db
from textpile.index.fulltext import fts_row_count


#: Permissions of a newly published file (an existing target's permissions are kept).
PUBLISHED_MODE = 0o644
#: The temporary copy's name: ``.<target name>.publishing-<pid>-<random>``.
PUBLISHING = ".publishing-"


@dataclass
class PublishReport:
    """What :func:`publish` did. ``bytes`` is the size of the published file."""

    path: Path
    bytes: int
    generations: int
    fts_rows: int
    seconds: float


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(summary_db: str | Path, published_path: str | Path) -> PublishReport:
    """Copy the summary database at ``summary_db`` onto ``published_path`` atomically.

    The target's folder is created when missing; a new target gets mode 0644, a
    replaced one keeps its mode. The copy is checked before it replaces
    the target: it must pass ``PRAGMA quick_check`` and open as a summary database.
    Stale ``-wal``/``-shm`` files beside the target are removed before the swap so that
    they can never be applied to the new file.

    Raises:
        DatabaseError: ``summary_db`` is missing or not a summary database, the copy fails
            its check, ``published_path`` is the working database itself or a folder, or its
            folder cannot be created (a file in the way). The previously
            published file is left untouched in every failure.
    """
    started = time.monotonic()
    source_path = Path(summary_db)
    target = Path(published_path)
    if not source_path.is_file():
        raise DatabaseError(f"{source_path}: no such summary database to publish")
    if target.exists() and target.resolve() == source_path.resolve():
        raise DatabaseError(f"{target}: the published path is the working summary database itself")
    if target.is_dir():
        raise DatabaseError(f"{target}: the published path is a folder, expected a file")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise DatabaseError(f"{target}: cannot publish there, {parent} is a file, expected a folder")
            break
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(f"{target.parent}: cannot create the published folder: {exc.strerror or exc}") from exc
    # A publisher killed mid-copy leaves its temporary file; the next one removes those of
    # publishers that are gone (named by pid).
    remove_leftovers_of_dead(target.parent, f".{target.name}{PUBLISHING}")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}{PUBLISHING}{os.getpid()}-", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        # mkstemp makes 0600 files; readers such as Datasette may run as another user.
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode) if target.exists() else PUBLISHED_MODE)
        with closing(open_summary_db(source_path, create=False, read_only=True)) as source, \
                closing(sqlite3.connect(str(tmp))) as copy:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            (check,) = copy.execute("PRAGMA quick_check").fetchone()
            if check != "ok":
                raise DatabaseError(f"{source_path}: the copy failed PRAGMA quick_check: {check}")
            copy.commit()
        with closing(open_summary_db(tmp, create=False, read_only=True)) as conn:
            generations = int(conn.execute("SELECT count(*) FROM entity_generation").fetchone()[0])
            fts_rows = fts_row_count(conn)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    except BaseException:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        raise
    return PublishReport(
        path=target,
        bytes=target.stat().st_size,
        generations=generations,
        fts_rows=fts_rows,
        seconds=time.monotonic() - started,
    )
