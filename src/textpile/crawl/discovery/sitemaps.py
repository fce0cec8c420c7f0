"""Sitemaps: reading a sitemap or sitemap index, and judging its ``<lastmod>`` dates.

Source: dead-simple-search-how-it-works.txt, "Sitemap discovery": sitemaps are found
through ``Sitemap:`` lines in robots.txt, falling back to /sitemap.xml and
/sitemap_index.xml (:data:`WELL_KNOWN_SITEMAPS`); ``<sitemapindex>`` files are followed
to a depth of three (:data:`MAX_SITEMAP_DEPTH`); each ``<lastmod>`` is kept only if the
sitemap looks like it tracks real per-page dates: when a single value covers more than
half the dated URLs of one sitemap, that sitemap's dates are discarded. The sitemaps.org
protocol sets the caps: 50,000 URLs and 50 MB (52,428,800 bytes) uncompressed per file,
gzip allowed (recognised here by its magic bytes, whatever the file is called), plain
text files of one URL per line allowed. "Page dates": a date before 1990 or more than a
day ahead is discarded.

Everything here is pure: bytes in, a :class:`Sitemap` out. The crawl resolves the
``<loc>`` texts and keeps those on seed origins (:mod:`textpile.crawl.discovery.meta`).
"""

from __future__ import annotations

import datetime
import io
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field

import lxml.etree

from textpile.crawl.fetcher.fetch import parse_http_date

#: Where a site's sitemap is looked for when robots.txt names none.
WELL_KNOWN_SITEMAPS = ("/sitemap.xml", "/sitemap_index.xml")
#: Sitemap index levels followed: a sitemap listed at a depth beyond this is not read.
MAX_SITEMAP_DEPTH = 3
#: The largest sitemap read, in bytes after gzip decoding (sitemaps.org: 50 MB).
MAX_SITEMAP_BYTES = 52_428_800
#: The most URLs read from one sitemap (sitemaps.org: 50,000).
MAX_SITEMAP_URLS = 50_000
GZIP_MAGIC = b"\x1f\x8b"
EARLIEST_UNIX_UTC = 631152000  # 1990-01-01T00:00:00Z
MAX_FUTURE_S = 86400

_ISO = re.compile(
    r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[Tt ]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?)?)?"
    r"\s*(?:([Zz]|UTC|GMT)|([+-])(\d{2}):?(\d{2})?)?")


class SitemapError(ValueError):
    """A body is not a readable sitemap; the message says why."""


@dataclass
class Sitemap:
    """What one sitemap listed.

    ``kind`` is ``"urlset"`` (pages), ``"sitemapindex"`` (more sitemaps) or ``"text"``
    (a text file of URLs). ``entries`` are ``(loc text, lastmod unix seconds or None)``
    in document order, at most :data:`MAX_SITEMAP_URLS`; the lastmods are None when the
    sitemap's dates were discarded. ``dated`` counts entries with a usable lastmod;
    ``discarded`` says why the dates were discarded (None when kept or when there were
    none); ``notes`` say what else was cut or skipped.
    """

    kind: str
    entries: list[tuple[str, int | None]] = field(default_factory=list)
    dated: int = 0
    discarded: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def lastmod_kept(self) -> bool | None:
        """True when dated entries kept their dates, False when discarded, None without dates."""
        if self.discarded is not None:
            return False
        return True if self.dated else None


def parse_lastmod(text: str | None, now_unix: int) -> int | None:
    """A ``<lastmod>`` (or feed date) as unix seconds, or None when it is unreadable or
    doubtful (before 1990, more than a day after ``now_unix``).

    Reads the W3C Datetime forms the protocol names (``2024``, ``2024-05``,
    ``2024-05-01``, ``2024-05-01T10:00+02:00``, ``2024-05-01T10:00:00.5Z``) and what
    generators write instead: a space for the ``T``, no time zone (UTC), ``+0200``
    without a colon, ``UTC``/``GMT``, and RFC 2822 dates (``Wed, 01 May 2024 10:00:00 GMT``).
    """
    if not text:
        return None
    value = text.strip()
    when = _iso(value)
    if when is None:
        unix = parse_http_date(value)  # RFC 2822, as HTTP dates are written
        if unix is None:
            return None
    else:
        try:
            unix = int(when.timestamp())
        except (OverflowError, OSError, ValueError):
            return None
    if unix < EARLIEST_UNIX_UTC or unix > now_unix + MAX_FUTURE_S:
        return None
    return unix


def _iso(value: str) -> datetime.datetime | None:
    match = _ISO.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, utc, sign, off_h, off_m = match.groups()
    zone = datetime.timezone.utc
    if sign is not None:
        offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m or 0))
        zone = datetime.timezone(offset if sign == "+" else -offset)
    try:
        return datetime.datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                                 int(second or 0), tzinfo=zone)
    except ValueError:
        return None


def ungzip(body: bytes, limit: int = MAX_SITEMAP_BYTES) -> tuple[bytes, str | None]:
    """``body`` gzip-decoded when it starts with the gzip magic bytes (else as it is),
    at most ``limit`` bytes, and a note when not all of it could be read: cut at
    ``limit``, or gzip data that ends early (what was decoded is returned, to be read
    as far as it goes).

    Raises:
        SitemapError: corrupt gzip data, or gzip data that ends before any byte decoded.
    """
    if not body.startswith(GZIP_MAGIC):
        if len(body) > limit:
            return (body[:limit], f"larger than {limit} bytes: only its start was read")
        return (body, None)
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = decoder.decompress(body, limit + 1)
    except zlib.error as exc:
        raise SitemapError(f"corrupt gzip data: {exc}") from None
    if len(data) > limit:
        return (data[:limit], f"larger than {limit} bytes: only its start was read")
    if not decoder.eof:
        if not data:
            raise SitemapError(f"corrupt gzip data: it ends after {len(body)} bytes, before any content")
        return (data, f"truncated gzip data: only the {len(data)} bytes decoded were read")
    return (data, None)


def sitemap_root(data: bytes) -> str | None:
    """The local name of the root element of XML ``data`` (``urlset``, ``rss`` ...),
    read from its first 64 KiB, or None when it does not start like XML."""
    head = data[:65536]
    try:
        for _event, element in lxml.etree.iterparse(io.BytesIO(head), events=("start",), resolve_entities=False,
                                                    no_network=True, load_dtd=False, huge_tree=False,
                                                    recover=True):
            return lxml.etree.QName(element).localname
    except lxml.etree.LxmlError:
        return None
    return None


def parse_sitemap(body: bytes, now_unix: int, *, text_allowed: bool = False) -> Sitemap:
    """Read the sitemap ``body`` (gzip-compressed or not, see :func:`ungzip`).

    An XML ``<urlset>`` gives ``<url><loc>`` entries, a ``<sitemapindex>`` its
    ``<sitemap><loc>`` entries, each with its ``<lastmod>`` (:func:`parse_lastmod`), in
    any namespace. With ``text_allowed`` a body that is not XML is read as a text
    sitemap: each line an absolute http(s) URL. Caps: :data:`MAX_SITEMAP_BYTES` decoded
    bytes (the rest is not read), :data:`MAX_SITEMAP_URLS` entries. Then the build-stamp
    rule: when one lastmod value covers more than half of the dated entries, every
    lastmod is discarded. Entities are never expanded and nothing is fetched (no DTD).

    Raises:
        SitemapError: corrupt gzip data, or XML whose root is neither urlset nor
            sitemapindex (and not a text sitemap).
    """
    data, note = ungzip(body)
    root = sitemap_root(data)
    if root in ("urlset", "sitemapindex"):
        sitemap = _read_xml(data, root, now_unix)
    elif text_allowed and not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        sitemap = _read_text(data)
    elif root is None:
        raise SitemapError("not XML")
    else:
        raise SitemapError(f"the root element is <{root}>, not <urlset> or <sitemapindex>")
    if note is not None:
        sitemap.notes.append(note)
    _judge_dates(sitemap)
    return sitemap


def _read_xml(data: bytes, root: str, now_unix: int) -> Sitemap:
    sitemap = Sitemap(root)
    item = "url" if root == "urlset" else "sitemap"
    more = 0
    try:
        for _event, element in lxml.etree.iterparse(io.BytesIO(data), events=("end",), resolve_entities=False,
                                                    no_network=True, load_dtd=False, huge_tree=False,
                                                    recover=True, remove_comments=True):
            if lxml.etree.QName(element).localname != item:
                continue
            loc = lastmod = None
            for child in element:
                if not isinstance(child.tag, str):
                    continue
                name = lxml.etree.QName(child).localname
                if name == "loc" and loc is None:
                    loc = (child.text or "").strip()
                elif name == "lastmod" and lastmod is None:
                    lastmod = child.text
            element.clear()
            if not loc:
                continue
            if len(sitemap.entries) >= MAX_SITEMAP_URLS:
                more += 1
                continue
            modified = parse_lastmod(lastmod, now_unix)
            if modified is not None:
                sitemap.dated += 1
            sitemap.entries.append((loc, modified))
    except lxml.etree.LxmlError as exc:
        sitemap.notes.append(f"XML error after {len(sitemap.entries)} entries: {exc}")
    if more:
        sitemap.notes.append(f"{more} entries beyond the first {MAX_SITEMAP_URLS} not read")
    return sitemap


def _read_text(data: bytes) -> Sitemap:
    sitemap = Sitemap("text")
    more = 0
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip().lstrip("\ufeff")
        if not line.lower().startswith(("http://", "https://")):
            continue
        if len(sitemap.entries) >= MAX_SITEMAP_URLS:
            more += 1
            continue
        sitemap.entries.append((line, None))
    if more:
        sitemap.notes.append(f"{more} entries beyond the first {MAX_SITEMAP_URLS} not read")
    return sitemap


def _judge_dates(sitemap: Sitemap) -> None:
    """The build-stamp rule of the module docstring, applied in place."""
    if not sitemap.dated:
        return
    value, count = Counter(m for _, m in sitemap.entries if m is not None).most_common(1)[0]
    if 2 * count > sitemap.dated:
        stamp = datetime.datetime.fromtimestamp(value, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        sitemap.discarded = (f"{count} of {sitemap.dated} dated entries share the lastmod {stamp}, "
                             "a build stamp: dates discarded")
        sitemap.entries = [(loc, None) for loc, _ in sitemap.entries]
