"""Bringing a copy of a SQLite database up to date by the pages that differ, atomically.

The approach of SQLite's ``sqlite3_rsync``: the source's pages are read in one read
transaction (a consistent snapshot), each is hashed (xxHash XXH3, 64 bits) and compared
with the hash the copy's page has, and only the pages that differ are written into the
copy, in one write transaction through SQLite's ``sqlite_dbpage`` table (shrinking the
copy first when the source has fewer pages, and writing page 1, the header, last). The copy is in WAL mode: its readers keep
reading the state they started from until the transaction commits, then see the new one
whole, and are never blocked. A kill leaves the copy as it was (the transaction is rolled
back), and the written pages are read back and compared before the copy counts as done.

The copy's page hashes are kept beside it in a manifest (``<copy>-pages``: the hashes,
the copy's file identity after the last update and the token of that publish), so the
copy is not read again; a copy changed by anything else (its identity differs) is hashed
anew. Bytes written follow the pages that changed. The source is read only where it may
have changed since the publish of the manifest's token: the pages its record names
(:mod:`textpile.store.changed_pages`: kept by the summarize runs since) and those in its
WAL; without such a record (the first update, a write the record could not see) it is
read whole, and a new record starts.

``sqlite_dbpage`` is compiled into SQLite only on request: this runs on sqlean.py's SQLite
(the Python sqlite3 module with a bundled SQLite that has it), in a process of its own
(``python -m textpile.store.page_copy``), so that no connection of Python's own SQLite
library to the same files shares its process (two SQLite libraries in one process would
drop each other's POSIX locks). :func:`copy_changed_pages` runs that process.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from array import array
from pathlib import Path

from textpile.errors import DatabaseError
from textpile.store import changed_pages
from textpile.store.changed_pages import ChangeRecord, file_identity, new_token

#: The manifest beside a copy: ``<copy>-pages``.
MANIFEST_SUFFIX = "-pages"
_MAGIC = b"textpile-pages 2\n"
_HEADER = struct.Struct("<II")  # page size, page count


def manifest_path(copy: str | Path) -> Path:
    """The manifest of ``copy``: ``<copy>-pages`` beside it."""
    return Path(f"{os.fspath(copy)}{MANIFEST_SUFFIX}")


def _identity(copy: Path) -> list:
    """What changes when anything writes the copy: its and its -wal file's inode, size and
    mtime (an empty -wal, which a reader opening the copy makes, counts as none: a write
    makes it longer, or reaches the copy itself)."""
    out = []
    for path in (copy, Path(f"{copy}-wal")):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            out.append(None)
            continue
        out.append([st.st_ino, st.st_size, st.st_mtime_ns] if st.st_size or path == copy else None)
    return out


def _read_manifest(copy: Path) -> tuple[int, array, str | None] | None:
    """The page size, the page hashes of the manifest of ``copy`` and the token of the
    publish that wrote it (None: not known), or None when it is missing, of another
    version, or made for another state of the copy."""
    try:
        data = manifest_path(copy).read_bytes()
    except FileNotFoundError:
        return None
    if not data.startswith(_MAGIC):
        return None
    rest = data[len(_MAGIC):]
    line, _, rest = rest.partition(b"\n")
    try:
        header = json.loads(line)
        identity, token = header["identity"], header["token"]
    except (ValueError, KeyError, TypeError):
        return None
    if identity != _identity(copy) or len(rest) < _HEADER.size:
        return None
    size, count = _HEADER.unpack_from(rest)
    hashes = array("Q")
    hashes.frombytes(rest[_HEADER.size:])
    return (size, hashes, token) if len(hashes) == count else None


def _write_manifest(copy: Path, page_size: int, hashes: array, token: str | None) -> None:
    """Write the manifest of ``copy`` (its identity as it is now, the publish ``token``),
    atomically. One writer at a time (the caller holds the publish lock), so the file being
    written has one name, and a run killed while writing it leaves nothing the next run
    does not overwrite."""
    path = manifest_path(copy)
    tmp = path.with_name(path.name + ".writing")
    tmp.write_bytes(_MAGIC + json.dumps({"identity": _identity(copy), "token": token}).encode() + b"\n"
                    + _HEADER.pack(page_size, len(hashes)) + hashes.tobytes())
    os.replace(tmp, path)


#: The bytes of the database header (page 1) that the library writing a transaction sets
#: itself: the file change counter (24-27), and the version-valid-for number and SQLite
#: version number (92-99). They differ between two SQLite versions writing the same
#: content, so a page 1 that differs only there is the same page.
_OWN_HEADER_BYTES = ((24, 28), (92, 100))


def page_hash(pgno: int, data: bytes) -> int:
    """The XXH3 (64 bits) of page ``pgno`` with content ``data``, the header bytes each
    writer sets itself (:data:`_OWN_HEADER_BYTES`) left out of page 1."""
    import xxhash

    if pgno == 1:
        data = bytearray(data)
        for start, end in _OWN_HEADER_BYTES:
            data[start:end] = bytes(end - start)
    return xxhash.xxh3_64_intdigest(data)


def _pages(conn):
    """``(pgno, data)`` of every page of ``conn``'s main database, in page order, as
    sqlite_dbpage yields them (an ORDER BY would sort every page's bytes first).

    Raises:
        DatabaseError: a page came out of order.
    """
    expected = 1
    for pgno, data in conn.execute("SELECT pgno, data FROM sqlite_dbpage"):
        if pgno != expected:
            raise DatabaseError(f"sqlite_dbpage gave page {pgno} where page {expected} was expected")
        expected += 1
        yield pgno, data


def _page_hashes(conn) -> array:
    """The :func:`page_hash` of every page of ``conn``'s main database, in page order."""
    hashes = array("Q")
    for pgno, data in _pages(conn):
        hashes.append(page_hash(pgno, data))
    return hashes


def _hashes_of_changes(conn, old: array, count: int, pages: set[int]) -> array:
    """The page hashes of ``conn``'s main database (``count`` pages) when only ``pages``
    (and those past ``old``'s end, and page 1) may differ from the hashes ``old``."""
    new = array("Q", old[:count])
    new.extend([0] * (count - len(new)))
    for pgno in sorted({1, *pages, *range(len(old) + 1, count + 1)}):
        if pgno <= count:
            (data,) = conn.execute("SELECT data FROM sqlite_dbpage WHERE pgno = ?", (pgno,)).fetchone()
            new[pgno - 1] = page_hash(pgno, data)
    return new


def _update(source: Path, copy: Path) -> dict:
    """The body of the child process (module docstring); returns its report."""
    import sqlean

    started = time.monotonic()
    # before any connection to the copy: opening it makes its -wal file, which is part of its identity
    manifest = _read_manifest(copy)
    src = sqlean.connect(f"file:{source}?mode=ro", uri=True, isolation_level=None)
    dst = sqlean.connect(str(copy), isolation_level=None, timeout=60)
    try:
        if dst.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            return {"whole_copy_needed": f"{copy} is not in WAL mode"}
        src.execute("BEGIN")
        page_size = src.execute("PRAGMA page_size").fetchone()[0]
        if dst.execute("PRAGMA page_size").fetchone()[0] != page_size:
            return {"whole_copy_needed": f"{copy} has another page size"}
        if manifest is not None and manifest[0] != page_size:
            manifest = None
        hashed_copy = manifest is None
        old, token = manifest[1:] if manifest is not None else (_page_hashes(dst), None)
        count = src.execute("PRAGMA page_count").fetchone()[0]  # the read transaction's snapshot starts
        source_identity = file_identity(source)
        maybe = changed_pages.pages_to_read(source, token)
        new = None
        if maybe is not None:
            new = _hashes_of_changes(src, old, count, maybe)
            if file_identity(source) != source_identity:  # checkpointed meanwhile: its WAL may have restarted
                new = None
        pages_read = count if new is None else len({1, *(p for p in maybe if p <= count)})
        if new is None:
            new = _page_hashes(src)
        changed = [pgno for pgno in range(1, len(new) + 1) if pgno > len(old) or old[pgno - 1] != new[pgno - 1]]
        dst.execute("BEGIN IMMEDIATE")
        try:
            if len(new) < dst.execute("PRAGMA page_count").fetchone()[0]:
                dst.execute("INSERT INTO sqlite_dbpage(pgno, data, schema) VALUES (?, NULL, 'main')", (len(new),))
            # page 1 (the header: page count, free list, schema cookie) last: a header that
            # does not match the pages around it yet makes SQLite call the next write corrupt
            for pgno in sorted(changed, key=lambda pgno: (pgno == 1, pgno)):
                (data,) = src.execute("SELECT data FROM sqlite_dbpage WHERE pgno = ?", (pgno,)).fetchone()
                dst.execute("INSERT INTO sqlite_dbpage(pgno, data, schema) VALUES (?, ?, 'main')", (pgno, data))
            dst.execute("COMMIT")
        except BaseException:
            dst.execute("ROLLBACK")
            raise
        src.execute("COMMIT")
        # read back through a new connection, as the copy's readers see it: the writing one
        # called its own committed pages malformed after a shrink (a working database
        # written anew, e.g. summary_db's rebuild, then vacuumed smaller than the copy)
        dst.close()
        dst = sqlean.connect(str(copy), isolation_level=None, timeout=60)
        unchanged_source = file_identity(source) == source_identity
        wrong = [pgno for pgno in changed
                 if page_hash(pgno, dst.execute("SELECT data FROM sqlite_dbpage WHERE pgno = ?", (pgno,)).fetchone()[0])
                 != new[pgno - 1]]
        if wrong or dst.execute("PRAGMA page_count").fetchone()[0] != len(new):
            raise DatabaseError(f"{copy}: {len(wrong)} pages did not read back as written")
        dst.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        dst.close()
        src.close()
    token = new_token()
    _write_manifest(copy, page_size, new, token)
    start_record(source, token, source_identity if unchanged_source else None)
    return {"pages": len(new), "pages_written": len(changed), "page_size": page_size, "hashed_copy": hashed_copy,
            "pages_read": pages_read, "seconds": time.monotonic() - started}


def start_record(source: str | Path, token: str, identity: list[int] | None) -> None:
    """Start the record of the pages of ``source`` changed after the publish ``token``,
    which read it while its file had ``identity`` throughout (None: the file changed
    during the publish, so no record is started and the next publish reads it whole)."""
    if identity is None:
        changed_pages.forget(source)
    else:
        changed_pages.write_record(source, ChangeRecord(token, identity))


def write_manifest(copy: str | Path, token: str) -> None:
    """Hash every page of ``copy`` into its manifest (a copy just made whole by the
    publish ``token``). Runs in a process of its own (module docstring).

    Raises:
        DatabaseError: the process failed (the message says why).
    """
    _run(["--manifest", os.fspath(copy), token])


def copy_changed_pages(source: str | Path, copy: str | Path) -> dict:
    """Bring ``copy`` (a SQLite database in WAL mode that was a page copy of ``source``,
    or any older state of it) up to date with ``source`` by the pages that differ (module
    docstring). Returns the report: ``pages``, ``pages_written``, ``page_size``,
    ``hashed_copy`` (whether the copy had to be read because its manifest did not match
    it), ``seconds``; or ``whole_copy_needed`` (why nothing was written: the copy is not
    in WAL mode, or has another page size).

    Raises:
        DatabaseError: the copy could not be written or did not read back (it is left as
            it was), or the process failed.
    """
    return _run([os.fspath(source), os.fspath(copy)])


def _run(args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "textpile.store.page_copy", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        raise DatabaseError(f"copying the changed pages failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    if argv[0] == "--manifest":
        import sqlean

        copy, token = Path(argv[1]), argv[2]
        conn = sqlean.connect(str(copy), isolation_level=None)
        try:
            conn.execute("BEGIN")
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            hashes = _page_hashes(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        _write_manifest(copy, page_size, hashes, token)
        print(json.dumps({"pages": len(hashes)}))
        return 0
    source, copy = argv
    print(json.dumps(_update(Path(source), Path(copy))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
