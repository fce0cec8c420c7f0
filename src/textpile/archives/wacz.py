"""Reading WACZ files (Web Archive Collection Zipped, WACZ 1.1.1): a ZIP holding WARC
files under ``archive/``, with ``datapackage.json``, ``pages/pages.jsonl`` and
``indexes/`` beside them. Every WARC under ``archive/`` is read in name order with
:func:`textpile.archives.warc.read_warc`; the indexes are not needed (the WARCs are read
whole) and the page list is not needed either (every response is imported)."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

from textpile.archives.exchange import Exchange, Problem
from textpile.archives.warc import read_warc


#: The first bytes of a ZIP file (its first local file header).
ZIP_MAGIC = b"PK\x03\x04"


def is_warc_member(name: str) -> bool:
    """True for a WACZ member holding a WARC file: ``archive/*.warc`` or ``archive/*.warc.gz``."""
    return name.startswith("archive/") and name.endswith((".warc", ".warc.gz"))


def recognizes(head: bytes, path: Path) -> bool:
    """True when the file at ``path``, starting with ``head``, is a WACZ: a ZIP file
    holding ``datapackage.json`` or WARC files under ``archive/``.

    Raises:
        ValueError: a ZIP file that cannot be read, or one that is not a WACZ.
    """
    if not head.startswith(ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except zipfile.BadZipFile as exc:
        raise ValueError(f"starts like a ZIP file but is not readable as one ({exc})") from None
    if "datapackage.json" in names or any(is_warc_member(n) for n in names):
        return True
    raise ValueError("a ZIP file without datapackage.json or archive/*.warc(.gz): not a WACZ")


def read_wacz(path: Path) -> Iterator[Exchange | Problem]:
    """The exchanges of every WARC in the WACZ at ``path``; problems name the WARC member
    (``archive/data.warc.gz record at offset 123``). A member that cannot be read is
    one Problem and the next member is read.

    Raises:
        zipfile.BadZipFile: ``path`` is not a readable ZIP file.
    """
    with zipfile.ZipFile(path) as z:
        members = sorted(n for n in z.namelist() if is_warc_member(n))
        if not members:
            yield Problem(str(path), "a WACZ without WARC files under archive/: nothing to import", fatal=True)
            return
        for name in members:
            try:
                with z.open(name) as member:
                    yield from read_warc(member, name)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                yield Problem(name, f"the WARC member cannot be read ({exc}): the next member is read")
