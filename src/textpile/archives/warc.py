"""Reading WARC files (ISO 28500; WARC/1.0 and 1.1, and the 0.18 revisit profiles that
real crawlers wrote) with warcio, the maintained reader of the Webrecorder project.

The stream given is plain WARC: :func:`read_warc` takes gzip-compressed files too and
decompresses them itself (record-at-a-time gzip as the standard recommends, or one gzip
member for the whole file, as some tools write), so that a file warcio's own gzip
handling refuses is still read. ``response`` records become :class:`Exchange` with their
decoded payload (chunked transfer coding and Content-Encoding removed, as warcio's
content stream gives it), ``revisit`` records become exchanges without a body naming
the record they revisit; ``request``, ``warcinfo``, ``metadata``, ``resource`` and
``conversion`` records are not crawl answers and are skipped (counted).
"""

from __future__ import annotations

import datetime
import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from textpile.archives.exchange import Exchange, Problem

GZIP_MAGIC = b"\x1f\x8b"
#: WARC-Profile values of revisits (WARC 1.0/1.1 and the 0.18 draft) -> revisit kind.
REVISIT_PROFILES = {
    "identical-payload-digest": "identical-payload",
    "uri-agnostic-identical-payload-digest": "identical-payload",
    "server-not-modified": "not-modified",
}


def head_text(head: bytes) -> bytes:
    """A file's first bytes ``head`` as WARC would start: decompressed (its first 64
    bytes) when they are gzip data, else as they are.

    Raises:
        ValueError: gzip data that cannot be decompressed (the message says so).
    """
    if not head.startswith(GZIP_MAGIC):
        return head
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 64)
    except zlib.error as exc:
        raise ValueError(f"gzip data that cannot be decompressed ({exc})") from None


def recognizes(head: bytes, path: Path) -> bool:
    """True when a file starting with ``head`` is WARC: ``WARC/`` first (ISO 28500), or
    ``filedesc://`` (an ARC file, which warcio reads too), gzip-compressed or not.

    Raises:
        ValueError: gzip data that cannot be decompressed.
    """
    plain = head_text(head)
    return plain.startswith(b"WARC/") or plain.startswith(b"filedesc://")


def read_warc_file(path: Path) -> Iterator[Exchange | Problem]:
    """The exchanges and problems of the WARC file at ``path`` (:func:`read_warc`).

    Raises:
        OSError: it cannot be opened.
    """
    with open(path, "rb") as f:
        yield from read_warc(f)


def warc_time(value: str | None) -> float | None:
    """A WARC-Date (``2014-01-03T03:03:21Z``, fractions allowed) as unix seconds, or None."""
    if not value:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def plain_stream(stream: BinaryIO) -> BinaryIO:
    """``stream`` itself, or a decompressing reader over it when it starts with the gzip
    magic bytes (all members in turn)."""
    head = stream.read(2)
    stream.seek(-len(head), io.SEEK_CUR)
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream


def gzip_problem(stream: BinaryIO, start: int = 0) -> str | None:
    """Why the gzip data of ``stream`` from ``start`` is incomplete or corrupt (every
    member must end with its end-of-stream marker), or None when it is whole or is not
    gzip data. warcio ends quietly at a member cut short; this says so."""
    stream.seek(start)
    if stream.read(2) != GZIP_MAGIC:
        return None
    stream.seek(start)
    decoder, fed = zlib.decompressobj(16 + zlib.MAX_WBITS), False
    while chunk := stream.read(1 << 20):
        while chunk:
            fed = True
            try:
                decoder.decompress(chunk, 1 << 20)
                while decoder.unconsumed_tail:
                    decoder.decompress(decoder.unconsumed_tail, 1 << 20)
            except zlib.error as exc:
                return f"its gzip data is corrupt ({exc})"
            if not decoder.eof:
                break
            chunk = decoder.unused_data
            decoder, fed = zlib.decompressobj(16 + zlib.MAX_WBITS), False
            if chunk and not chunk.startswith(GZIP_MAGIC):
                return None  # something after the last member (padding): warcio's business
    if fed and not decoder.eof:
        return "the file ends in the middle of a gzip member (truncated)"
    return None


def read_warc(stream: BinaryIO, label: str = "") -> Iterator[Exchange | Problem]:
    """The exchanges of the WARC ``stream`` (seekable, gzip or not) in record order,
    and a :class:`Problem` for each record that cannot be read (``label`` starts its
    ``where``; offsets are of the file as stored, or of its decompressed data when the
    whole file is one gzip member). A file cut short, or whose compressed data is
    corrupt, ends with one fatal Problem: what came before it is kept.

    warcio reads record-at-a-time gzip itself (and resynchronises at each member); a
    file that is one gzip member for all records is refused by it, and then read again
    through a decompressing reader, skipping the records already given.
    """
    prefix = f"{label} " if label else ""
    given = 0
    start = stream.tell()
    for attempt in ("as stored", "decompressed"):
        plain = stream if attempt == "as stored" else plain_stream(stream)
        records = ArchiveIterator(plain, arc2warc=True)
        seen = 0
        offset = 0
        try:
            for record in records:
                seen += 1
                try:
                    item = _exchange(record)
                except (ValueError, OSError, EOFError, zlib.error, ArchiveLoadFailed) as exc:
                    item = Problem("", f"unreadable record: {exc}")
                offset = records.get_record_offset()  # after the body: it reads the record to its end
                if seen <= given:
                    continue
                given = seen
                if item is not None:
                    item.where = f"{prefix}record at offset {offset}"
                    yield item
            if attempt == "as stored":
                problem = gzip_problem(stream, start)
                if problem is not None:
                    yield Problem(f"{prefix}after offset {offset}", f"{problem}: the records before were imported",
                                  fatal=True)
            return
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            yield Problem(f"{prefix}after offset {offset}", f"the file ends early or its gzip data is corrupt "
                          f"({exc}): the records before were imported", fatal=True)
            return
        except ArchiveLoadFailed as exc:
            stream.seek(start)
            if attempt == "as stored" and stream.read(2) == GZIP_MAGIC:
                stream.seek(start)
                continue
            message = " ".join(str(exc).split())
            yield Problem(f"{prefix}after offset {offset}", f"not readable as WARC from here on: {message}", fatal=True)
            return


def _exchange(record) -> Exchange | Problem | None:
    """One WARC record as an Exchange (response, revisit), a Problem, or None (other types)."""
    kind = record.rec_type
    if kind not in ("response", "revisit"):
        return None
    headers = record.rec_headers
    url = (headers.get_header("WARC-Target-URI") or "").strip().strip("<>")
    when = warc_time(headers.get_header("WARC-Date"))
    if not url or when is None:
        return Problem("", f"{kind} record without a usable WARC-Target-URI or WARC-Date")
    http = record.http_headers
    if http is None:
        # a response record of a non-HTTP URL (dns:, whois:) or without an HTTP message
        return None
    try:
        status = int(http.get_statuscode())
    except (TypeError, ValueError):
        return Problem("", f"{kind} record of {url} without a readable HTTP status line")
    exchange = Exchange(url=url, time_unix=when, status=status, headers=list(http.headers),
                        payload_digest=headers.get_header("WARC-Payload-Digest"), 
                        truncated=bool(headers.get_header("WARC-Truncated")))
    if kind == "revisit":
        profile = (headers.get_header("WARC-Profile") or "").rstrip("/").rpartition("/")[2]
        exchange.revisit = REVISIT_PROFILES.get(profile, "identical-payload")
        exchange.refers_to_url = headers.get_header("WARC-Refers-To-Target-URI") or None
        return exchange
    exchange.body = record.content_stream().read()
    return exchange
