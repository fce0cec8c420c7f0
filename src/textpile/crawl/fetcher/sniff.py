"""Is a body what its label says? Content sniffing after the WHATWG MIME Sniffing Standard.

Pure functions over bytes (no I/O, no state), so the fetcher, the page readers and their
worker processes can all call them. Source: WHATWG MIME Sniffing Standard
(https://mimesniff.spec.whatwg.org/), sections 3 ("binary data byte"), 5.1 (resource
header: the first 1445 bytes), 6.1-6.3 (image, audio/video and archive type patterns),
7.1 (rules for identifying an unknown MIME type, sniff-scriptable flag unset) and 7.2
(rules for distinguishing if a resource is text or binary). textpile applies 7.2 to
every body labelled as text (HTML, XHTML, plain text), not only to ``text/plain``: a
search engine must not index gzip or image bytes as page text, whatever the label. The
font patterns of section 6.4 are matched too, so a mislabelled font is named as one.
"""

from __future__ import annotations

import codecs

#: The resource header: how many leading bytes sniffing looks at (section 5.1).
RESOURCE_HEADER_BYTES = 1445

#: Section 3: 0x00-0x08, 0x0B, 0x0E-0x1A, 0x1C-0x1F.
BINARY_DATA_BYTES = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_BINARY_TABLE = bytes(b for b in range(256) if b not in BINARY_DATA_BYTES)

#: The type a binary body gets when no pattern names it (section 7.1, last step).
OCTET_STREAM = "application/octet-stream"

# (pattern, mask, type); a mask byte 0x00 means "any byte". Sections 6.1-6.4 and 7.1.
_PATTERNS: tuple[tuple[bytes, bytes | None, str], ...] = (
    (b"%PDF-", None, "application/pdf"),
    (b"%!PS-Adobe-", None, "application/postscript"),
    # 6.1 images
    (b"\x00\x00\x01\x00", None, "image/x-icon"),
    (b"\x00\x00\x02\x00", None, "image/x-icon"),
    (b"BM", None, "image/bmp"),
    (b"GIF87a", None, "image/gif"),
    (b"GIF89a", None, "image/gif"),
    (b"RIFF\x00\x00\x00\x00WEBPVP", b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff", "image/webp"),
    (b"\x89PNG\r\n\x1a\n", None, "image/png"),
    (b"\xff\xd8\xff", None, "image/jpeg"),
    # 6.2 audio and video
    (b"FORM\x00\x00\x00\x00AIFF", b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff", "audio/aiff"),
    (b"ID3", None, "audio/mpeg"),
    (b"OggS\x00", None, "application/ogg"),
    (b"MThd\x00\x00\x00\x06", None, "audio/midi"),
    (b"RIFF\x00\x00\x00\x00AVI ", b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff", "video/avi"),
    (b"RIFF\x00\x00\x00\x00WAVE", b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff", "audio/wave"),
    # 6.4 fonts
    (b"\x00\x01\x00\x00", None, "font/ttf"),
    (b"OTTO", None, "font/otf"),
    (b"ttcf", None, "font/collection"),
    (b"wOFF", None, "font/woff"),
    (b"wOF2", None, "font/woff2"),
    # 6.3 archives
    (b"\x1f\x8b\x08", None, "application/x-gzip"),
    (b"PK\x03\x04", None, "application/zip"),
    (b"Rar \x1a\x07\x00", None, "application/x-rar-compressed"),
)

_TEXT_BOMS = (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF8)


def has_binary_data_bytes(data: bytes) -> bool:
    """True when ``data`` holds a binary data byte (section 3); text, even in a legacy
    encoding, never does."""
    return len(data.translate(None, _BINARY_TABLE)) > 0


def _matches(header: bytes, pattern: bytes, mask: bytes | None) -> bool:
    if len(header) < len(pattern):
        return False
    if mask is None:
        return header.startswith(pattern)
    return all(h & m == p & m for h, p, m in zip(header, pattern, mask))


def _is_mp4(header: bytes) -> bool:
    """Section 6.2.1, "matches the signature for MP4"."""
    if len(header) < 12:
        return False
    box_size = int.from_bytes(header[:4], "big")
    if len(header) < box_size or box_size % 4 != 0 or header[4:8] != b"ftyp":
        return False
    if header[8:11] == b"mp4":
        return True
    return any(header[i:i + 3] == b"mp4" for i in range(16, box_size, 4))


def _is_webm(header: bytes) -> bool:
    """Section 6.2.2, "matches the signature for WebM", for the usual one-byte size: an
    EBML header whose DocType element (ID 42 82) within its first 38 bytes says ``webm``."""
    if not header.startswith(b"\x1a\x45\xdf\xa3"):
        return False
    at = header.find(b"\x42\x82", 4, 38)
    return at >= 0 and header[at + 3:at + 7] == b"webm"


def pattern_type(data: bytes) -> str | None:
    """The media type whose signature ``data`` starts with (PDF, PostScript, images,
    audio, video, fonts, archives; sections 6 and 7.1), or None."""
    header = data[:RESOURCE_HEADER_BYTES]
    for pattern, mask, media_type in _PATTERNS:
        if _matches(header, pattern, mask):
            return media_type
    if _is_mp4(header):
        return "video/mp4"
    if _is_webm(header):
        return "video/webm"
    return None


def mislabeled_text_type(body: bytes, *, utf16_declared: bool = False) -> str | None:
    """The real media type of a body labelled as text that is binary, or None when it
    can be text (section 7.2, "rules for distinguishing if a resource is text or binary").

    A byte order mark (UTF-8, UTF-16) or a resource header without binary data bytes
    means text (None). Otherwise the body is binary and its type is the first matching
    signature (:func:`pattern_type`) or ``application/octet-stream``.
    ``utf16_declared`` (the label's charset is UTF-16, whose text is full of NUL bytes):
    only a matching signature makes it binary.
    """
    header = body[:RESOURCE_HEADER_BYTES]
    if header.startswith(_TEXT_BOMS):
        return None
    if utf16_declared:
        return pattern_type(header)
    if not has_binary_data_bytes(header):
        return None
    return pattern_type(header) or OCTET_STREAM


def is_coded(data: bytes, coding: str) -> bool:
    """True when ``data`` starts as a stream of content coding ``coding`` does: the gzip
    magic bytes 1F 8B (RFC 1952) for gzip and x-gzip; a zlib header (RFC 1950: method 8,
    window at most 32 KiB, check bits) for deflate. Raw deflate has no signature, so a
    deflate body without a zlib header counts as coded only when it is not text."""
    if coding in ("gzip", "x-gzip"):
        return data[:2] == b"\x1f\x8b"
    if coding == "deflate":
        if len(data) >= 2 and data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and (data[0] << 8 | data[1]) % 31 == 0:
            return True
        return has_binary_data_bytes(data)
    return False


def looks_plain(data: bytes) -> bool:
    """True when ``data`` (a whole body) has no binary data byte anywhere: what a plain
    text or HTML body sent with a false Content-Encoding looks like."""
    return not has_binary_data_bytes(data)


__all__ = ["BINARY_DATA_BYTES", "OCTET_STREAM", "RESOURCE_HEADER_BYTES", "has_binary_data_bytes", "is_coded",
           "looks_plain", "mislabeled_text_type", "pattern_type"]
