"""Binary encodings of Text Pile Gen2 metadata and segmentation cache, and its digest.

The byte layouts are specified in ``schemas/summary/text_pile_v0_2.md`` (format version 1);
this module implements exactly that document. Source for the concept: unobtanium-
documentation.txt, page "Text Pile Gen2" (postcard-like encoding; the digest covers text and
metadata, not the segmentation cache).

Primitives (as in postcard): unsigned integers are LEB128 varints (7 bits per byte, least
significant group first, high bit = more bytes follow, shortest form only); strings are a
varint byte length followed by UTF-8 bytes.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

METADATA_FORMAT_VERSION = 1
SEGMENTATION_CACHE_FORMAT_VERSION = 1


class MarkerKind(enum.IntEnum):
    """Semantic marker kinds of Text Pile Gen2 metadata (numbers are fixed, never reused)."""

    heading_1 = 1
    heading_2 = 2
    heading_3 = 3
    heading_4 = 4
    heading_5 = 5
    heading_6 = 6
    paragraph = 10
    list_item = 11
    code = 12
    quote = 13
    table_cell = 14
    emphasis = 20
    strong = 21
    link = 22
    main_content = 30  # what the main content decision kept (textpile.summarize.scrape.main_content)
    nav = 31
    aside = 32
    header = 33
    footer = 34
    main = 35  # the HTML main element
    article = 36


class Relevance(enum.IntEnum):
    """Relevance marker of a segment in the segmentation cache."""

    boilerplate = 0
    main_content = 1


class Gen2FormatError(ValueError):
    """A Gen2 blob cannot be decoded; the message names the blob and the problem."""


class Marker(NamedTuple):
    """A semantic marker: ``kind`` over ``text[start:end]`` (code point offsets, end
    exclusive). A named tuple: pages carry thousands of them."""

    start: int
    end: int
    kind: int


@dataclass(frozen=True)
class Gen2Metadata:
    """Decoded metadata: the document language (IANA tag or '') and the markers."""

    language: str
    markers: tuple[Marker, ...]


class Segment(NamedTuple):
    """A segment: ``length`` code points, its relevance, and its sentences' lengths."""

    length: int
    relevance: int
    sentence_lengths: tuple[int, ...]


@dataclass(frozen=True)
class SegmentationCache:
    """Decoded segmentation cache: guessed language ('' when none) and the segments."""

    language: str
    segments: tuple[Segment, ...]


# --- primitives -----------------------------------------------------------------


def encode_varint(value: int) -> bytes:
    """Unsigned LEB128. Raises ValueError for a negative value."""
    out = bytearray()
    _append_varint(out, value)
    return bytes(out)


def _append_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as unsigned LEB128 to ``out``. Raises ValueError when negative."""
    if 0 <= value < 0x80:
        out.append(value)
        return
    if value < 0:
        raise ValueError(f"varint must be non-negative, got {value}")
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def encode_string(text: str) -> bytes:
    """Varint byte length + UTF-8 bytes (lone surrogates are refused by ``str.encode``)."""
    data = text.encode("utf-8")
    return encode_varint(len(data)) + data


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def fail(self, problem: str) -> Gen2FormatError:
        return Gen2FormatError(f"{self.what}: {problem} at byte {self.pos}")

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("unexpected end")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        value = 0
        shift = 0
        start = self.pos
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
            if shift > 63:
                raise self.fail("varint longer than 64 bits")
        if self.pos - start > 1 and byte == 0:
            raise self.fail("varint not in shortest form")
        return value

    def string(self) -> str:
        length = self.varint()
        if self.pos + length > len(self.data):
            raise self.fail("string runs past the end")
        raw = self.data[self.pos:self.pos + length]
        self.pos += length
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"invalid UTF-8 ({exc.reason})") from None

    def done(self) -> None:
        if self.pos != len(self.data):
            raise self.fail("trailing bytes")


# --- metadata -------------------------------------------------------------------


def encode_metadata(language: str, markers: list[Marker] | tuple[Marker, ...]) -> bytes:
    """Encode metadata (format version 1): markers are sorted by (start, -end, kind).

    Raises ValueError for a marker with end < start or negative offsets.
    """
    # sorted as (start, -end, kind) tuples: no key function called per marker
    return encode_ordered_metadata(language, sorted([(start, -end, kind) for start, end, kind in markers]))


def encode_ordered_metadata(language: str, ordered: list[tuple[int, int, int]]) -> bytes:
    """:func:`encode_metadata` of markers given as ``(start, -end, kind)`` tuples, already
    sorted: the scrape makes its markers in that form, with no Marker per span.
    Raises ValueError as encode_metadata."""
    out = bytearray((METADATA_FORMAT_VERSION,))
    out += encode_string(language)
    _append_varint(out, len(ordered))
    previous = 0
    append, add = _append_varint, out.append
    for start, neg_end, kind in ordered:
        length = -neg_end - start
        if start < 0 or length < 0:
            raise ValueError(f"invalid marker {Marker(start, -neg_end, kind)}")
        # most values are below 0x80: one byte, no call
        if 0 <= kind < 0x80:
            add(kind)
        else:
            append(out, kind)
        delta = start - previous
        if delta < 0x80:
            add(delta)
        else:
            append(out, delta)
        if length < 0x80:
            add(length)
        else:
            append(out, length)
        previous = start
    return bytes(out)


def decode_metadata(blob: bytes) -> Gen2Metadata:
    """Decode a metadata blob. Raises Gen2FormatError when malformed or of another version."""
    reader = _Reader(bytes(blob), "text pile Gen2 metadata")
    version = reader.byte()
    if version != METADATA_FORMAT_VERSION:
        raise reader.fail(f"unsupported format version {version}")
    language = reader.string()
    count = reader.varint()
    markers = []
    start = 0
    for _ in range(count):
        kind = reader.varint()
        start += reader.varint()
        length = reader.varint()
        markers.append(Marker(start, start + length, kind))
    reader.done()
    return Gen2Metadata(language, tuple(markers))


# --- segmentation cache ---------------------------------------------------------


def encode_segmentation_cache(language: str, segments: Sequence[Segment | tuple[int, int, tuple[int, ...]]]) -> bytes:
    """Encode a segmentation cache (format version 1). ``segments``: Segments or plain
    (length, relevance, sentence lengths) tuples."""
    out = bytearray((SEGMENTATION_CACHE_FORMAT_VERSION,))
    out += encode_string(language)
    _append_varint(out, len(segments))
    append, add = _append_varint, out.append
    for length, relevance, sentences in segments:
        if relevance != 0 and relevance != 1:
            raise ValueError(f"relevance must be 0 or 1, got {relevance}")
        if 0 <= length < 0x80:  # most values are below 0x80: one byte, no call
            add(length)
        else:
            append(out, length)
        add(relevance)
        append(out, len(sentences))
        for sentence in sentences:
            if 0 <= sentence < 0x80:
                add(sentence)
            else:
                append(out, sentence)
    return bytes(out)


def decode_segmentation_cache(blob: bytes) -> SegmentationCache:
    """Decode a segmentation cache blob. Raises Gen2FormatError when malformed."""
    reader = _Reader(bytes(blob), "text pile Gen2 segmentation cache")
    version = reader.byte()
    if version != SEGMENTATION_CACHE_FORMAT_VERSION:
        raise reader.fail(f"unsupported format version {version}")
    language = reader.string()
    segments = []
    for _ in range(reader.varint()):
        length = reader.varint()
        relevance = reader.byte()
        if relevance not in (0, 1):
            raise reader.fail(f"relevance {relevance} is not 0 or 1")
        sentences = tuple(reader.varint() for _ in range(reader.varint()))
        segments.append(Segment(length, relevance, sentences))
    reader.done()
    return SegmentationCache(language, tuple(segments))


# --- digest ---------------------------------------------------------------------


def gen2_digest(text: str, metadata_blob: bytes) -> bytes:
    """BLAKE2b-512 over ``encode_string(text) + metadata_blob`` (64 bytes).

    The segmentation cache is deliberately not part of the digest (seed page "Text Pile Gen2").
    """
    hasher = hashlib.blake2b(digest_size=64)
    hasher.update(encode_string(text))
    hasher.update(metadata_blob)
    return hasher.digest()
