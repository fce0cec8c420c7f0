"""Telling an archive's kind from its bytes, never from its name.

* WARC: starts with ``WARC/`` (ISO 28500), or is gzip data whose content does; an ARC
  file (the Internet Archive's older format, ``filedesc://`` first) is read as WARC by
  warcio too.
* WACZ: a ZIP file (``PK\\x03\\x04``) holding ``datapackage.json`` or WARC files under
  ``archive/`` (WACZ 1.1.1).
* zshot: a SQLite database (``SQLite format 3\\0``) whose ``application_id`` (the
  big-endian 32-bit number at byte 68 of the header) is zshot's, 2054383727 (seed
  zshot-sqlite-archive-schema.sql.txt: ``PRAGMA application_id``).
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from textpile.errors import TextpileError

GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
ZIP_MAGIC = b"PK\x03\x04"
ZSHOT_APPLICATION_ID = 2054383727
KINDS = ("warc", "wacz", "zshot")


class ArchiveKindError(TextpileError):
    """A file is not an archive textpile can import; the message names the file and what it is."""


def archive_kind(path: Path) -> str:
    """``"warc"``, ``"wacz"`` or ``"zshot"``: the kind of the archive at ``path``, from its bytes.

    Raises:
        ArchiveKindError: the file is none of them (the message says what it starts like).
        OSError: it cannot be read.
    """
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(SQLITE_MAGIC):
        app_id = int.from_bytes(head[68:72], "big") if len(head) >= 72 else 0
        if app_id != ZSHOT_APPLICATION_ID:
            raise ArchiveKindError(f"{path}: a SQLite database, but not a zshot archive (application_id {app_id}, "
                                   f"zshot's is {ZSHOT_APPLICATION_ID})")
        return "zshot"
    if head.startswith(ZIP_MAGIC):
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except zipfile.BadZipFile as exc:
            raise ArchiveKindError(f"{path}: starts like a ZIP file but is not readable as one ({exc})") from None
        if "datapackage.json" in names or any(_is_warc_member(n) for n in names):
            return "wacz"
        raise ArchiveKindError(f"{path}: a ZIP file without datapackage.json or archive/*.warc(.gz): not a WACZ")
    plain = head
    if head.startswith(GZIP_MAGIC):
        try:
            plain = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 64)
        except zlib.error as exc:
            raise ArchiveKindError(f"{path}: gzip data that cannot be decompressed ({exc})") from None
    if plain.startswith(b"WARC/") or plain.startswith(b"filedesc://"):
        return "warc"
    shown = plain[:16]
    raise ArchiveKindError(f"{path}: not a WARC, WACZ or zshot archive (it starts with {shown!r})")


def _is_warc_member(name: str) -> bool:
    return name.startswith("archive/") and name.endswith((".warc", ".warc.gz"))
