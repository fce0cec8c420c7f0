"""Noticing that a database file was deleted or replaced while a run writes it.

SQLite keeps writing into the file it opened: when someone deletes the database (or
moves another file onto its name) mid-run, every later write goes into a file that no
longer has that name, and the run would end "successfully" having kept nothing. A run
takes a :class:`FileWatch` when it opens its database and asks :meth:`FileWatch.problem`
now and then (the crawl every second, summarize after each batch).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textpile.errors import DatabaseError

#: Seconds between two looks of a crawl at its database file.
WATCH_INTERVAL_S = 1.0


@dataclass(frozen=True)
class FileWatch:
    """The identity (device, inode) of the file ``path`` named when the watch began."""

    path: Path
    device: int
    inode: int

    @classmethod
    def of(cls, path: str | Path) -> "FileWatch":
        """Watch the file ``path`` names now.

        Raises:
            DatabaseError: ``path`` names no file.
        """
        path = Path(path)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise DatabaseError(f"{path}: cannot be watched ({exc.strerror or exc})") from exc
        return cls(path, st.st_dev, st.st_ino)

    def problem(self, run: str) -> str | None:
        """None while ``path`` still names the watched file; otherwise what happened,
        for a message about ``run`` (e.g. "crawl"): "<path>: deleted while the crawl
        ran (...)" or "<path>: replaced by another file while the crawl ran (...)"."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return (f"{self.path}: deleted while the {run} ran; what it wrote since went with the file, "
                    f"so the {run} was stopped")
        except OSError as exc:
            return f"{self.path}: cannot be checked while the {run} ran ({exc.strerror or exc})"
        if (st.st_dev, st.st_ino) != (self.device, self.inode):
            return (f"{self.path}: replaced by another file while the {run} ran; what it wrote since went "
                    f"into the old file, which has no name any more, so the {run} was stopped")
        return None
