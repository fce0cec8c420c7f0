"""Meta resources (atextcrawler's term): a fetched body that is a sitemap or a feed, read
for the URLs it lists rather than for its text.

:func:`maybe_meta` is the event loop's cheap test of whether a body could be one;
:func:`read_meta` (run in a page reader worker, like :func:`textpile.crawl.parser.body.read_body`)
reads it with :mod:`textpile.crawl.discovery.sitemaps` or :mod:`textpile.crawl.discovery.feeds` and resolves
what it lists. Sources: dead-simple-search-how-it-works.txt, "Sitemap discovery" (the
URLs of sitemaps seed the crawl; only the seed origins are crawled, as
unobtanium-documentation.txt's "Crawl Loop" says for every found link: relative
``<loc>`` resolved against the sitemap's URL, a ``<loc>`` on another seed origin kept
for that origin's crawler, one elsewhere dropped); atextcrawler-introduction.md (feeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textpile.crawl.discovery.feeds import FEED_ROOTS, FeedError, is_json_feed, parse_feed
from textpile.crawl.discovery.sitemaps import GZIP_MAGIC, SitemapError, parse_sitemap, sitemap_root, ungzip
from textpile.crawl.parser.packed import pack_links
from textpile.crawl.parser.page import usable_link
from textpile.crawl.policy.traps import strip_session_ids
from textpile.store.urls import ParsedUrl, UrlError, UrlResolver

#: Media types that may hold a sitemap or feed whatever the crawler knew of the URL.
META_TYPES = frozenset({"application/xml", "text/xml", "application/rss+xml", "application/atom+xml",
                        "application/rdf+xml", "application/feed+json", "application/json", "application/gzip",
                        "application/x-gzip", "application/octet-stream"})
#: How an XML sitemap or feed may start (after a byte order mark and white space).
_XML_STARTS = (b"<?xml", b"<urlset", b"<sitemapindex", b"<rss", b"<feed", b"<rdf:rdf")


def maybe_meta(body: bytes, essence: str, hint: str | None) -> bool:
    """True when ``body`` (served as media type ``essence``) could be a sitemap or feed:
    it was found as one (``hint``), is gzip data, has a type of :data:`META_TYPES`, or
    starts like an XML sitemap or feed (an RSS file served as ``text/plain``)."""
    if hint is not None or essence in META_TYPES or body.startswith(GZIP_MAGIC):
        return True
    return body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower().startswith(_XML_STARTS)


@dataclass
class MetaReading:
    """A body read as a sitemap or feed.

    ``kind`` is ``"sitemap"`` (pages), ``"sitemapindex"`` (more sitemaps) or ``"feed"``.
    ``links`` are the listed URLs on the given origins (resolved against the body's URL,
    session-ID parameters stripped, deduplicated), packed (:mod:`textpile.crawl.parser.packed`),
    and ``modified`` their dates in the same order (unix seconds or None). ``listed``
    counts the entries read, ``off_seed`` those on other origins, ``unusable`` those that
    are no usable http(s) URL. ``lastmod_kept`` as :attr:`textpile.crawl.discovery.sitemaps.Sitemap.lastmod_kept`
    (feeds: True with dates, None without). ``notes`` say what was cut, skipped or discarded.
    """

    kind: str
    links: str = ""
    modified: list[int | None] = field(default_factory=list)
    listed: int = 0
    off_seed: int = 0
    unusable: int = 0
    lastmod_kept: bool | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def link_count(self) -> int:
        """How many URLs :attr:`links` holds."""
        return len(self.modified)


def read_meta(body: bytes, url: str, hint: str | None, origins: frozenset[str], session: frozenset[str],
              now_unix: int) -> MetaReading | None:
    """Read ``body`` fetched from ``url`` as a sitemap or feed, or return None when it is
    neither (the caller reads it as an ordinary file then).

    The kind comes from the content: a ``<urlset>`` or ``<sitemapindex>`` root, an RSS,
    Atom or RDF root or a JSON Feed; when ``hint`` is ``"sitemap"`` (found as one), a
    body that is not XML is read as a text sitemap. gzip data is recognised by its magic
    bytes. A sitemap or feed that cannot be read although it looks like one (corrupt
    gzip, broken feed) gives a reading without links whose notes say why.

    Raises:
        UrlError: ``url`` is not an absolute URL.
    """
    resolver = UrlResolver(url)
    try:
        data, note = ungzip(body)
    except SitemapError as exc:
        return MetaReading("sitemap", notes=[f"not readable: {exc}"])
    root = None if is_json_feed(data) else sitemap_root(data)
    looks_xml = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")
    if is_json_feed(data) or root in FEED_ROOTS:
        try:
            feed = parse_feed(data, now_unix)
        except FeedError as exc:
            return MetaReading("feed", notes=[f"not readable as a feed: {exc}"])
        reading = MetaReading("feed", notes=list(feed.notes))
        entries = feed.entries
    elif root in ("urlset", "sitemapindex") or (hint == "sitemap" and not looks_xml and root is None):
        try:
            sitemap = parse_sitemap(data, now_unix, text_allowed=hint == "sitemap")
        except SitemapError as exc:
            return MetaReading("sitemap", notes=[f"not readable as a sitemap: {exc}"])
        reading = MetaReading("sitemapindex" if sitemap.kind == "sitemapindex" else "sitemap",
                              lastmod_kept=sitemap.lastmod_kept, notes=list(sitemap.notes))
        if sitemap.discarded:
            reading.notes.append(sitemap.discarded)
        entries = sitemap.entries
    else:
        return None
    if note is not None:
        reading.notes.append(note)
    kept: dict[str, tuple[ParsedUrl, int | None]] = {}
    for text, modified in entries:
        reading.listed += 1
        try:
            target = resolver.resolve(text.partition("#")[0])
        except UrlError:
            reading.unusable += 1
            continue
        if not usable_link(target):
            reading.unusable += 1
            continue
        target = strip_session_ids(target, session)
        if target.str_origin not in origins:
            reading.off_seed += 1
            continue
        previous = kept.get(target.str_url)
        if previous is None or (modified is not None and (previous[1] is None or modified > previous[1])):
            kept[target.str_url] = (target, modified)
    if reading.kind == "feed":
        reading.lastmod_kept = True if any(m is not None for _, m in kept.values()) else None
    reading.links = pack_links(target for target, _ in kept.values())
    reading.modified = [modified for _, modified in kept.values()]
    return reading
