"""The archive formats textpile imports: telling an archive's kind from its bytes, never
from its name, and the reader of each kind.

* WARC: starts with ``WARC/`` (ISO 28500), or is gzip data whose content does; an ARC
  file (the Internet Archive's older format, ``filedesc://`` first) is read as WARC by
  warcio too (:mod:`textpile.archives.warc`).
* WACZ: a ZIP file (``PK\\x03\\x04``) holding ``datapackage.json`` or WARC files under
  ``archive/`` (WACZ 1.1.1; :mod:`textpile.archives.wacz`).
* zshot: a SQLite database (``SQLite format 3\\0``) whose ``application_id`` (the
  big-endian 32-bit number at byte 68 of the header) is zshot's, 2054383727 (seed
  zshot-sqlite-archive-schema.sql.txt: ``PRAGMA application_id``;
  :mod:`textpile.archives.zshot`).

Every reader yields the same records (:class:`~textpile.archives.exchange.Exchange` and
:class:`~textpile.archives.exchange.Problem`), which the importer hands to the crawler's
interpreter (:class:`textpile.crawl.interpret.Interpreter`), the one that reads the
answers the crawler fetches. A new archive format is a reader module (a recognizer of its
first bytes and a reader) and one line in :data:`FORMATS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from textpile.archives import wacz, warc, zshot
from textpile.archives.exchange import Exchange, Problem
from textpile.errors import TextpileError

#: How many of a file's first bytes the recognizers look at.
HEAD_BYTES = 4096


class ArchiveKindError(TextpileError):
    """A file is not an archive textpile can import; the message names the file and what it is."""


def _not_recorded(path: Path) -> bool:
    """An archive that does not record whether its capture obeyed robots.txt."""
    return False


@dataclass(frozen=True)
class ArchiveFormat:
    """One archive format textpile imports.

    ``kind`` names it in ``textpile_archive_import.kind`` and ``name`` for people.
    ``recognizes(head, path)`` is True for the file at ``path`` starting with ``head``
    (its first :data:`HEAD_BYTES` bytes) when it is of this format, False when it is
    not, and raises ValueError (saying what the file is) when it starts like one but is
    not readable as one. ``read(path)`` yields the archive's exchanges and problems in
    archive order. ``robots_checked(path)`` says whether the capture obeyed robots.txt
    as the archive records it (False when it does not record it), raising ValueError
    when that record cannot be read (the archive is not readable then).
    """

    kind: str
    name: str
    recognizes: Callable[[bytes, Path], bool]
    read: Callable[[Path], Iterator[Exchange | Problem]]
    robots_checked: Callable[[Path], bool] = _not_recorded


#: The formats textpile imports. Their first bytes differ (WARC text or gzip data, a ZIP
#: file, a SQLite database), so at most one recognizes a file.
FORMATS = (
    ArchiveFormat("warc", "WARC", warc.recognizes, warc.read_warc_file),
    ArchiveFormat("wacz", "WACZ", wacz.recognizes, wacz.read_wacz),
    ArchiveFormat("zshot", "zshot", zshot.recognizes, zshot.read_zshot_file, zshot.robots_checked),
)
#: The formats by kind.
FORMAT_OF_KIND = {f.kind: f for f in FORMATS}


def archive_kind(path: Path) -> str:
    """The kind of the archive at ``path`` (``"warc"``, ``"wacz"`` or ``"zshot"``: one
    of :data:`FORMATS`), from its bytes.

    Raises:
        ArchiveKindError: the file is none of them (the message says what it is, or what
            it starts with: decompressed when it is gzip data).
        OSError: it cannot be read.
    """
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    try:
        for archive_format in FORMATS:
            if archive_format.recognizes(head, path):
                return archive_format.kind
        shown = warc.head_text(head)[:16]
    except ValueError as exc:
        raise ArchiveKindError(f"{path}: {exc}") from None
    names = [f.name for f in FORMATS]
    raise ArchiveKindError(f"{path}: not a {', '.join(names[:-1])} or {names[-1]} archive (it starts with {shown!r})")
