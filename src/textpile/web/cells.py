"""How Datasette's table pages show a BLOB in a row of a view.

Datasette (0.65) shows a BLOB cell as a download link that names the row by its rowid or
primary key; a view has neither, so the HTML page of any view with a BLOB column (the
documented ``text_pile_v0_2``, ``text_pile`` and ``link_summary`` views: their BLAKE2b
digests, Gen2 metadata and segmentation caches) failed with a 500 ("No item with that
key"). For a view's BLOB the cell shows its size and, for a short one, its bytes in hex
(a digest reads as Datasette's ``hex()`` would give it); the JSON and CSV renderings
are Datasette's own and unchanged.
"""

from __future__ import annotations

import markupsafe

#: BLOBs up to this many bytes are shown in hex (a BLAKE2b-512 digest is 64).
HEX_BYTES = 64


def view_blob_cell(value: bytes) -> markupsafe.Markup:
    """The table-page cell of ``value``, a BLOB in a row of a view: ``<Binary: N bytes>``,
    followed by its hex when it is at most :data:`HEX_BYTES` long."""
    size = f"{len(value):,} byte{'' if len(value) == 1 else 's'}"
    hex_part = f" {value.hex()}" if len(value) <= HEX_BYTES else ""
    return markupsafe.Markup('<span class="tp-blob">&lt;Binary:&nbsp;{}&gt;{}</span>').format(size, hex_part)
