"""Rebuilding a summary database from staged crawl runs, then swapping it in.

Used when the summary must reflect scrape results written by another extraction version
than the ones it was integrated from (integration skips crawls already summarized, so
re-integrating into the existing database would change nothing). The new database is
built beside the old one and replaces it atomically: a failure leaves the old one as it
was. Source: unobtanium-documentation.txt, page "Summarizing" (summarizing is repeatable
from the crawl logs).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from textpile.summarize.integrate import IntegrationReport
from textpile.summarize.pipeline import integrate_staged

#: Suffix of the database being rebuilt, beside the summary database.
REBUILD_SUFFIX = ".rebuild"
_SIDE_FILES = ("-wal", "-shm", "-journal")


def _remove_with_side_files(path: Path) -> None:
    for suffix in ("", *_SIDE_FILES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def rebuild_summary(summary_db: str | Path, staging_dirs: Sequence[str | Path], *,
                    progress: bool = False) -> list[IntegrationReport]:
    """Integrate ``staging_dirs`` (each a staged and scraped crawl-run folder), in the order
    given, into a new summary database ``<summary_db>.rebuild``, then replace ``summary_db``
    with it; return one report per folder, in that order.

    The caller holds the writers' lock of ``summary_db``. The new file is checkpointed
    (no ``-wal`` left) and flushed to disk before ``os.replace``; the old file is
    checkpointed and its ``-wal``/``-shm`` removed first, so that SQLite never applies
    them to the new one.

    Raises:
        DatabaseError, TextpileError: as :func:`integrate_staged` (the old database is
            left unchanged and the partial new one removed).
    """
    target = Path(summary_db)
    new = Path(f"{target}{REBUILD_SUFFIX}")
    _remove_with_side_files(new)
    reports: list[IntegrationReport] = []
    try:
        for folder in staging_dirs:
            reports.append(integrate_staged(new, folder, progress=progress))
    except BaseException:
        _remove_with_side_files(new)
        raise
    replace_summary_file(new, target)
    return reports


def replace_summary_file(new: str | Path, summary_db: str | Path) -> None:
    """Replace the summary database ``summary_db`` with the finished database ``new``
    (built beside it; the caller holds the writers' lock): ``new`` is checkpointed (no
    ``-wal`` left) and flushed to disk, the old file checkpointed and its ``-wal``/``-shm``
    removed, so that SQLite never applies them to the new one; then ``os.replace``.
    On a failure before the replace, ``new`` is removed and the old file stays."""
    new, target = Path(new), Path(summary_db)
    try:
        with closing(sqlite3.connect(new)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        fd = os.open(new, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _remove_with_side_files(new)
        raise
    if target.exists():  # the old file's committed transactions into it, then its side files away
        with closing(sqlite3.connect(target)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in _SIDE_FILES:
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    for suffix in _SIDE_FILES:
        Path(f"{new}{suffix}").unlink(missing_ok=True)
    os.replace(new, target)
