"""Turning a fetched text body into a Python string (stored as UTF-8).

Order (issue 2, after the HTML standard's encoding sniffing): a byte order mark, then
the Content-Type charset, then ``<meta charset>`` / ``<meta http-equiv=Content-Type>``
in the first 4096 bytes (HTML only), then detection with charset_normalizer, then
windows-1252 (the HTML standard's fallback for unlabelled Western pages).
Labels are mapped the way browsers map them: ``iso-8859-1``, ``latin1`` and ``us-ascii``
mean windows-1252 (bytes 0x80-0x9F are its printable characters, not C1 controls).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# WHATWG Encoding: labels whose browser meaning differs from Python's codec of that name.
_LABEL_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
    "l1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252", "iso_8859-1": "cp1252",
    "windows-1252": "cp1252", "x-cp1252": "cp1252", "cp819": "cp1252",
    "iso-8859-9": "cp1254", "latin5": "cp1254",
    "tis-620": "cp874", "iso-8859-11": "cp874",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
    "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
}

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.()+-]+)""", re.IGNORECASE
)

#: How many leading bytes are searched for a meta charset (HTML standard: 1024; many real
#: pages put it later, so a little more).
META_PRESCAN_BYTES = 4096


@dataclass(frozen=True)
class DecodedText:
    """A decoded body: the text and the codec name it was decoded with, and where that
    choice came from (``bom``, ``header``, ``meta``, ``detected``, ``default``)."""

    text: str
    encoding: str
    source: str


def codec_for_label(label: str | None) -> str | None:
    """The Python codec for a charset label as a browser reads it, or None when unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _LABEL_ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # UTF-16 labels in a header or meta without a BOM are unreliable; the HTML standard
    # treats a meta utf-16 as utf-8.
    return name


def meta_charset(body: bytes) -> str | None:
    """The charset label named by a ``<meta charset>`` or ``<meta http-equiv>`` tag in the
    first :data:`META_PRESCAN_BYTES` bytes, or None."""
    match = _META_CHARSET.search(body[:META_PRESCAN_BYTES])
    return match.group(1).decode("ascii", errors="replace") if match else None


def decode_body(body: bytes, header_charset: str | None, *, is_html: bool) -> DecodedText:
    """Decode ``body`` to text (see the module docstring for the order of sources).

    Bytes not valid in the chosen encoding are replaced with U+FFFD, never dropped
    silently; the BOM itself is not part of the text.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return DecodedText(body[len(bom):].decode(name, errors="replace"), name, "bom")
    codec = codec_for_label(header_charset)
    if codec is not None:
        return DecodedText(body.decode(codec, errors="replace"), codec, "header")
    if is_html:
        codec = codec_for_label(meta_charset(body))
        if codec is not None:
            if codec.startswith("utf_16") or codec.startswith("utf-16"):
                codec = "utf-8"
            return DecodedText(body.decode(codec, errors="replace"), codec, "meta")
    try:
        return DecodedText(body.decode("utf-8"), "utf-8", "detected")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(body[:200_000]).best()
    if best is not None:
        codec = codec_for_label(best.encoding)
        if codec is not None:
            return DecodedText(body.decode(codec, errors="replace"), codec, "detected")
    return DecodedText(body.decode("cp1252", errors="replace"), "cp1252", "default")
