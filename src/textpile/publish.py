"""Publishing a finished copy of the summary database, brought up to date by what changed.

The working summary database keeps changing while the pipeline integrates crawls; a
frontend (Datasette, ``textpile search``) reads a *published* copy instead, which changes
only when a finished, checked state is published. The published copy is a page copy of
the working database in WAL mode:

* the first publish (or one onto a copy an older textpile made) copies the database whole
  with SQLite's online backup API (a consistent snapshot even while another connection
  writes) into a temporary file beside the target (named with the publisher's pid, so the
  next publisher removes what a killed one left), which must pass ``PRAGMA quick_check``
  and is then ``os.replace``-d onto the target path;
* every later publish writes only the pages that differ, in one transaction on the copy
  (:mod:`textpile.store.page_copy`, the approach of SQLite's ``sqlite3_rsync``): its
  readers go on reading the state they started from and see the new one whole once it
  commits, never a mix; the written pages are read back and compared. Bytes written and
  time follow what changed: the working database is read only where it changed since the
  last publish, as the record beside it says (``<summary_db>-changed``, kept by the
  summarize runs: :mod:`textpile.store.changed_pages`), else whole.

A kill at any moment leaves the previous published state (the transaction is rolled
back, or the temporary file was never renamed). One publisher per target at a time
(``<target>.lock``).
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
from textpile.index.fulltext import fts_row_count
from textpile.processes import remove_leftovers_of_dead
from textpile.store.checked import file_version, passed_before, remember_passed
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import register_functions
from textpile.store.locks import exclusive_lock
from textpile.store.changed_pages import file_identity, new_token
from textpile.store.page_copy import copy_changed_pages, manifest_path, start_record, write_manifest


#: Permissions of a newly published file (an existing target's permissions are kept).
PUBLISHED_MODE = 0o644
#: The temporary copy's name: ``.<target name>.publishing-<pid>-<random>``.
PUBLISHING = ".publishing-"


@dataclass
class PublishReport:
    """What :func:`publish` did. ``bytes`` is the size of the published database,
    ``pages_copied`` the pages written into it (all of them for a whole copy) of its
    ``pages``, ``pages_read`` the pages of the working database read (all of them unless
    its record of changed pages was used), ``whole`` whether it was copied whole."""

    path: Path
    bytes: int
    generations: int
    fts_rows: int
    seconds: float
    pages: int = 0
    pages_copied: int = 0
    pages_read: int = 0
    whole: bool = False


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(summary_db: str | Path, published_path: str | Path) -> PublishReport:
    """Bring the published copy at ``published_path`` up to date with the summary database
    at ``summary_db``, atomically for its readers (module docstring).

    The target's folder is created when missing; a new target gets mode 0644, a
    replaced one keeps its mode. A whole copy must pass ``PRAGMA quick_check`` before it
    replaces the target; an update's written pages must read back as written. Either way
    the result must open as a summary database.

    Raises:
        DatabaseError: ``summary_db`` is missing or not a summary database, the copy fails
            its check, ``published_path`` is the working database itself or a folder, its
            folder cannot be created (a file in the way), or the published copy (in WAL
            mode) has another page size than the working database. The previously
            published state is left as it was in every failure.
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
    open_summary_db(source_path, create=False, read_only=True).close()  # refuses what is not a summary database
    with exclusive_lock(Path(f"{target}.lock")):
        if _in_wal_mode(target):
            checked = _checked(target)
            copied = copy_changed_pages(source_path, target)
            if "whole_copy_needed" in copied:
                raise DatabaseError(f"{target}: cannot be brought up to date ({copied['whole_copy_needed']}); stop "
                                    "the servers reading it, delete it and publish again")
            pages, pages_copied, pages_read, whole = copied["pages"], copied["pages_written"], copied["pages_read"], False
        else:
            pages = _copy_whole(source_path, target)
            pages_copied, pages_read, whole, checked = pages, pages, True, True  # it passed PRAGMA quick_check
        # a writable connection: the last one to close removes the -wal and -shm files
        with closing(register_functions(sqlite3.connect(str(target)))) as conn:
            generations = int(conn.execute("SELECT count(*) FROM entity_generation").fetchone()[0])
            fts_rows = fts_row_count(conn)
        if checked:  # a checked copy with checked pages written into it: searches need not read it all again
            remember_passed(file_version(target))
    return PublishReport(path=target, bytes=target.stat().st_size, generations=generations, fts_rows=fts_rows,
                         seconds=time.monotonic() - started, pages=pages, pages_copied=pages_copied, pages_read=pages_read,
                         whole=whole)


def _checked(path: Path) -> bool:
    """Whether this version of ``path`` passed ``PRAGMA quick_check`` (textpile.store.checked)."""
    try:
        return passed_before(file_version(path))
    except OSError:
        return False


def _in_wal_mode(path: Path) -> bool:
    """True when ``path`` is a SQLite file in WAL mode (its header's format bytes say 2)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except FileNotFoundError:
        return False
    return header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"


def _copy_whole(source_path: Path, target: Path) -> int:
    """A whole new copy of ``source_path`` in WAL mode, checked, renamed onto ``target``
    (which has no WAL readers: it is missing or in rollback mode), with its manifest;
    returns its pages."""
    # A publisher killed mid-copy leaves its temporary file; the next one removes those of
    # publishers that are gone (named by pid).
    remove_leftovers_of_dead(target.parent, f".{target.name}{PUBLISHING}")
    token = new_token()
    identity = file_identity(source_path)  # the working file read unchanged throughout starts a record
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}{PUBLISHING}{os.getpid()}-", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        # mkstemp makes 0600 files; readers such as Datasette may run as another user.
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode) if target.exists() else PUBLISHED_MODE)
        with closing(open_summary_db(source_path, create=False, read_only=True)) as source, \
                closing(sqlite3.connect(str(tmp))) as copy:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=WAL")
            (check,) = copy.execute("PRAGMA quick_check").fetchone()
            if check != "ok":
                raise DatabaseError(f"{source_path}: the copy failed PRAGMA quick_check: {check}")
            pages = copy.execute("PRAGMA page_count").fetchone()[0]
            copy.commit()
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        manifest_path(target).unlink(missing_ok=True)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    except BaseException:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        raise
    write_manifest(target, token)
    start_record(source_path, token, identity if file_identity(source_path) == identity else None)
    return pages
