"""The pages of a database written since it was last published, kept so that a publish
reads only those.

A publish (:mod:`textpile.store.page_copy`) compares the working database's pages with
its copy's by their hashes. Without knowing which pages changed it must read and hash
every page. The working database is in WAL mode, so every write lands first as a frame
of its ``-wal`` file, which names the page it holds, and reaches the database file only
when the WAL is checkpointed. The record ``<database>-changed`` (:class:`ChangeRecord`)
holds:

* the token of the publish it counts from (written into the copy's manifest too);
* the pages moved from the WAL into the database file since, by checkpoints a summarize
  run made itself after reading the WAL's page numbers (:func:`checkpoint_recorded`);
* the identity of the database file after the last of them (inode, size, mtime).

A publish then reads the recorded pages and those of the frames in the WAL now
(:func:`pages_to_read`). Any other checkpoint writes the database file, its identity
differs from the record's, and the next publish reads every page (and starts a new
record), as it does when the record is missing or counts from another publish. A
summarize run holds back SQLite's automatic checkpoints while it writes
(:func:`hold_checkpoints`: up to a quarter of the file's pages in the WAL).

What this cannot see: a writer other than textpile that commits between the moment a
summarize run reads the WAL and its checkpoint (a few milliseconds at its end, while it
holds the summary writers' lock) has its frames moved unrecorded unless it made the WAL
longer than what was read (that is checked); and a write of the database file within
the file system's timestamp granularity (a few ms) of the record's identity. Source:
the WAL file format of SQLite (https://sqlite.org/fileformat2.html#walformat).
"""

from __future__ import annotations

import json
import os
import secrets
import struct
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the publish process reads records with sqlean's SQLite loaded, never Python's own
    import sqlite3

#: The record beside a database: ``<database>-changed``.
RECORD_SUFFIX = "-changed"
_MAGIC = b"textpile-changed-pages 1\n"
_WAL_MAGICS = (0x377F0682, 0x377F0683)
_WAL_HEADER = struct.Struct(">IIIIIIII")  # magic, version, page size, checkpoint seq, salt-1, salt-2, checksums
_FRAME_HEADER = struct.Struct(">IIII")  # page number, size after commit (0: not a commit), salt-1, salt-2
_FRAME_HEADER_BYTES = 24
#: Frames read from the WAL at a time.
_FRAMES_PER_READ = 256
#: The share of the file's pages a summarize run lets the WAL grow to before SQLite
#: checkpoints it unrecorded (:func:`hold_checkpoints`); at least 1000 (SQLite's default).
HELD_WAL_SHARE = 0.25


def record_path(database: str | Path) -> Path:
    """The record of ``database``: ``<database>-changed`` beside it."""
    return Path(f"{os.fspath(database)}{RECORD_SUFFIX}")


def file_identity(database: str | Path) -> list[int] | None:
    """What changes when the database file itself is written: its inode, size and mtime
    (ns); None when it is missing."""
    try:
        st = os.stat(database)
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


@dataclass
class ChangeRecord:
    """The pages of a database written into its file since the publish ``token`` (the
    database file's identity then being ``identity``)."""

    token: str
    identity: list[int] | None
    pages: set[int] = field(default_factory=set)


def new_token() -> str:
    """A token naming one publish (random, 128 bits)."""
    return secrets.token_hex(16)


def read_record(database: str | Path) -> ChangeRecord | None:
    """The record of ``database``, or None when it is missing or unreadable (a record
    half written by a killed run is never there: it is renamed into place)."""
    try:
        data = record_path(database).read_bytes()
    except FileNotFoundError:
        return None
    if not data.startswith(_MAGIC):
        return None
    line, _, rest = data[len(_MAGIC):].partition(b"\n")
    try:
        header = json.loads(line)
        token, identity = header["token"], header["identity"]
    except (ValueError, KeyError, TypeError):
        return None
    pages = array("I")
    if len(rest) % pages.itemsize:
        return None
    pages.frombytes(rest)
    return ChangeRecord(token, identity, set(pages))


def write_record(database: str | Path, record: ChangeRecord) -> None:
    """Write the record of ``database`` atomically (one writer at a time: a summarize run
    holds the summary writers' lock, a publish its target's lock and reads no record
    another run is writing)."""
    path = record_path(database)
    tmp = path.with_name(path.name + ".writing")
    tmp.write_bytes(_MAGIC + json.dumps({"token": record.token, "identity": record.identity}).encode() + b"\n"
                    + array("I", sorted(record.pages)).tobytes())
    os.replace(tmp, path)


def forget(database: str | Path) -> None:
    """Remove the record of ``database`` (the next publish reads every page), and one a
    killed run left half written."""
    path = record_path(database)
    path.unlink(missing_ok=True)
    path.with_name(path.name + ".writing").unlink(missing_ok=True)


def wal_pages(database: str | Path) -> tuple[set[int], int] | None:
    """The page numbers of the frames in the WAL of ``database`` now, and the number of
    frames read: those with the salts of the WAL's header, up to the first that has
    others (left from before the WAL last restarted) or is cut short. Frames of a
    transaction not committed are included too (a page read for nothing). ``(set(), 0)``
    without a WAL; None when the WAL's header is not one SQLite writes."""
    try:
        fh = open(f"{os.fspath(database)}-wal", "rb")
    except FileNotFoundError:
        return set(), 0
    with fh:
        header = fh.read(_WAL_HEADER.size)
        if not header:
            return set(), 0
        if len(header) < _WAL_HEADER.size:
            return None
        magic, _version, page_size, _seq, salt1, salt2, _c1, _c2 = _WAL_HEADER.unpack(header)
        if magic not in _WAL_MAGICS or page_size < 512 or page_size & (page_size - 1):
            return None
        frame = _FRAME_HEADER_BYTES + page_size
        pages: set[int] = set()
        frames = 0
        offset = _WAL_HEADER.size
        while True:
            fh.seek(offset)
            chunk = fh.read(frame * _FRAMES_PER_READ)
            whole = len(chunk) // frame
            for n in range(whole):
                pgno, _commit, s1, s2 = _FRAME_HEADER.unpack_from(chunk, n * frame)
                if (s1, s2) != (salt1, salt2) or pgno == 0:
                    return pages, frames
                pages.add(pgno)
                frames += 1
            if whole < _FRAMES_PER_READ:
                return pages, frames
            offset += len(chunk)


def hold_checkpoints(conn: sqlite3.Connection, database: str | Path) -> None:
    """Let the WAL of ``conn`` grow to :data:`HELD_WAL_SHARE` of the file's pages before
    SQLite checkpoints it by itself, when ``database`` has a record to keep (a run then
    writes its pages into the WAL, and :func:`checkpoint_recorded` moves them into the
    file and the record at its end)."""
    if read_record(database) is None:
        return
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA wal_autocheckpoint={max(1000, int(pages * HELD_WAL_SHARE))}")


def checkpoint_recorded(conn: sqlite3.Connection, database: str | Path) -> bool:
    """Checkpoint the WAL of ``conn`` (on ``database``; no transaction open) into the
    file, adding the pages of its frames to the record of ``database`` first (module
    docstring). The record is removed instead when the file was written since it was
    made (by a checkpoint not recorded), or when the WAL was longer at the checkpoint
    than when it was read. Returns whether the record was kept (False also without one).

    Raises:
        sqlite3.Error: the checkpoint failed (the record is removed first).
        OSError: the record could not be written or removed.
    """
    record = read_record(database)
    if record is None:
        forget(database)  # what a killed run left half written
        return False
    found = wal_pages(database)
    if record.identity != file_identity(database) or found is None:
        forget(database)
        return False
    pages, frames = found
    forget(database)  # until the record names the file as the checkpoint leaves it
    # PASSIVE: it never waits for readers; frames a reader still needs stay in the WAL (recorded
    # already), and whoever moves them later writes the file, which ends the record
    _busy, log_frames, _moved = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    if log_frames > frames:
        return False
    record.pages |= pages
    record.identity = file_identity(database)
    write_record(database, record)
    return True


@contextmanager
def recorded_writes(conn: sqlite3.Connection, database: str | Path) -> Iterator[None]:
    """While inside, the writes of ``conn`` (on ``database``) stay in the WAL
    (:func:`hold_checkpoints`); on leaving without an exception and outside a transaction,
    their pages are recorded and checkpointed (:func:`checkpoint_recorded`). Used by every
    textpile writer of a summary database that holds its writers' lock (summarize, and
    the Dagster steps: integration, embedding, the index update).

    Raises:
        sqlite3.Error, OSError: as :func:`checkpoint_recorded`.
    """
    hold_checkpoints(conn, database)
    yield
    if not conn.in_transaction:
        checkpoint_recorded(conn, database)


def pages_to_read(database: str | Path, token: str | None) -> set[int] | None:
    """The pages of ``database`` that may differ from the state the publish ``token``
    read: those of its record and of the frames in its WAL now. None when that is not
    known (no record, a record of another publish, the file written unrecorded, a WAL
    SQLite did not write): every page must be read. Call it inside the read transaction
    the pages are then read in (module docstring), and check :func:`file_identity`
    against the record's again after the read."""
    record = read_record(database)
    if record is None or token is None or record.token != token or record.identity != file_identity(database):
        return None
    found = wal_pages(database)
    if found is None:
        return None
    return record.pages | found[0]
