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


def read_wacz(path: Path) -> Iterator[Exchange | Problem]:
    """The exchanges of every WARC in the WACZ at ``path``; problems name the WARC member
    (``archive/data.warc.gz record at offset 123``). A member that cannot be read is
    one Problem and the next member is read.

    Raises:
        zipfile.BadZipFile: ``path`` is not a readable ZIP file.
    """
    with zipfile.ZipFile(path) as z:
        members = sorted(n for n in z.namelist() if n.startswith("archive/") and n.endswith((".warc", ".warc.gz")))
        if not members:
            yield Problem(str(path), "a WACZ without WARC files under archive/: nothing to import", fatal=True)
            return
        for name in members:
            try:
                with z.open(name) as member:
                    yield from read_warc(member, name)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                yield Problem(name, f"the WARC member cannot be read ({exc}): the next member is read")
