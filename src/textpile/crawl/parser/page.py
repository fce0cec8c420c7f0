"""Crawl-time reading of an HTML page: links, ``<base href>``, robots directives,
canonical, meta refresh and feeds.

Sources: unobtanium-documentation.txt, page "Crawl Loop" (links from ``a`` elements,
canonical URLs, meta robots noindex / nofollow); dead-simple-search-how-it-works.txt,
"Deciding what not to index" (``content="none"``, a canonical naming a different page,
a meta refresh with a target); atextcrawler-introduction.md (feeds of a site, found
here from ``<link rel="alternate">``). The directives addressed to ``robots`` or to the
crawler's own user-agent token count; other crawlers' names (googlebot) do not. The
X-Robots-Tag header is read by :mod:`textpile.crawl.parser.headers`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from textpile.crawl.parser.refresh import parse_refresh
from textpile.store.urls import ParsedUrl, UrlError, UrlResolver

#: The longest URL the crawler collects, in characters (8 KiB, a common server limit for
#: the request line; longer links are dropped, never scheduled).
MAX_URL_CHARS = 8192
#: Media types of ``<link rel="alternate">`` that announce a feed (RSS, Atom, RDF Site
#: Summary, JSON Feed).
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml",
                        "application/feed+json"})


@dataclass(frozen=True)
class RobotsDirectives:
    """Indexing directives for one page: ``noindex`` (noindex or none) and ``nofollow``
    (nofollow or none)."""

    noindex: bool = False
    nofollow: bool = False

    def __or__(self, other: "RobotsDirectives") -> "RobotsDirectives":
        return RobotsDirectives(self.noindex or other.noindex, self.nofollow or other.nofollow)


def directives_from_tokens(content: str) -> RobotsDirectives:
    """Directives of a comma- or space-separated list such as ``"noindex, follow"``."""
    tokens = {t.strip().lower() for t in content.replace(",", " ").split()}
    none = "none" in tokens
    return RobotsDirectives(none or "noindex" in tokens, none or "nofollow" in tokens)


@dataclass
class PageInfo:
    """What the crawler reads from an HTML page.

    ``links`` are absolute http(s) URLs without fragment, in document order, deduplicated;
    links marked ``rel=nofollow``, longer than :data:`MAX_URL_CHARS` or with a user name
    or password are left out (see :func:`usable_link`). ``canonical`` is the
    rel=canonical target when it is such a URL (resolved against the base), else None.
    ``feeds`` are the usable targets of ``<link rel="alternate">`` whose type is one of
    :data:`FEED_TYPES`, in document order. ``refresh`` is the first meta refresh as
    ``(delay in seconds, target)``: target None when it reloads the page itself or names
    no usable http(s) URL (resolved against the base); None without a meta refresh.
    """

    base_url: str
    links: list[ParsedUrl] = field(default_factory=list)
    robots: RobotsDirectives = field(default_factory=RobotsDirectives)
    canonical: ParsedUrl | None = None
    feeds: list[ParsedUrl] = field(default_factory=list)
    refresh: tuple[int, ParsedUrl | None] | None = None


def usable_link(url: ParsedUrl) -> bool:
    """True when the crawler may schedule ``url``: http(s), at most
    :data:`MAX_URL_CHARS` characters, and no user name or password in it (the crawler
    never crawls a credentialed copy of a site nor sends credentials)."""
    return (url.scheme in ("http", "https") and len(url.str_url) <= MAX_URL_CHARS
            and url.username is None and url.password is None)


def unusable_reason(url: ParsedUrl) -> str | None:
    """Why the crawler never crawls ``url`` (it carries a user name or password, or is
    longer than :data:`MAX_URL_CHARS`), or None when it may."""
    if url.username is not None or url.password is not None:
        return "carries a user name or password"
    if len(url.str_url) > MAX_URL_CHARS:
        return f"is longer than {MAX_URL_CHARS} characters"
    return None


class _LinkResolver:
    """Resolves a page's hrefs against one base, keeping only usable http(s) URLs,
    without their fragment. Each distinct href without its fragment is resolved once
    (pages repeat their links a lot, often with different fragments: a table of
    contents links every section of every page)."""

    __slots__ = ("resolver", "seen")

    def __init__(self, base: str) -> None:
        self.resolver = UrlResolver(base)
        self.seen: dict[str, ParsedUrl | None] = {}

    def http_url(self, href: str | None) -> ParsedUrl | None:
        if not href or len(href) > MAX_URL_CHARS:
            return None
        # The WHATWG parser reads everything before the first "#" the same whatever follows.
        href = href.partition("#")[0]
        try:
            return self.seen[href]
        except KeyError:
            pass
        try:
            parsed = self.resolver.resolve(href)
        except UrlError:
            parsed = None
        result = self.seen[href] = parsed if parsed is not None and usable_link(parsed) else None
        return result

    def links(self, hrefs: list[str]) -> list[ParsedUrl]:
        """The usable URLs of ``hrefs`` (as :meth:`http_url` gives them), in the order of
        their first href, without duplicates. Each href is cut at its first "#" and the
        distinct rest resolved once: a table of contents has thousands of hrefs that
        differ only in their fragment, and cutting them all before any Python call per
        href saves most of the time (contents.html: 13,948 hrefs, 490 distinct rests)."""
        rests = dict.fromkeys([href.partition("#")[0] for href in hrefs if href and len(href) <= MAX_URL_CHARS])
        found: list[ParsedUrl] = []
        seen: set[str] = set()
        http_url = self.http_url
        for rest in rests:
            # "" (an href of only a fragment) is the page itself: http_url skips "" as no href
            target = http_url(rest) if rest else http_url("#")
            if target is not None and target.str_url not in seen:
                seen.add(target.str_url)
                found.append(target)
        return found


#: The elements read_page looks at, found in one pass over the parsed document.
_ELEMENTS = "base[href], meta[name], meta[http-equiv], link[rel], a[href], area[href]"


def read_page(text: str | bytes, page_url: str, token: str) -> PageInfo:
    """Read links, base, robots meta directives and canonical from the HTML ``text``
    (str, or UTF-8 bytes: invalid sequences are read as U+FFFD) fetched from ``page_url``, for the crawler whose robots token
    is ``token``. The document is parsed as browsers parse it (the HTML standard's
    parser, lexbor through selectolax). Feeds and meta refresh as :class:`PageInfo` says
    (the refresh content read by :func:`textpile.crawl.parser.refresh.parse_refresh`).

    Links come from ``a`` and ``area`` elements without ``rel=nofollow``, resolved
    against the first ``<base href>`` (itself resolved against ``page_url``) wherever it
    stands; the canonical is the first ``<link rel=canonical>``. An empty document gives
    a PageInfo without links or directives.

    Raises:
        UrlError: ``page_url`` is not an absolute URL.
    """
    info = PageInfo(base_url=page_url)
    page = _LinkResolver(page_url)
    names = {"robots", token.lower()}
    base: str | None = None
    canonical: str | None = None
    refresh = None
    feeds: list[str] = []
    hrefs: list[str] = []
    append_href = hrefs.append
    # Bytes go to lexbor as they are (it reads them as UTF-8): no copy of a big page.
    for node in LexborHTMLParser(text).css(_ELEMENTS):
        tag = node.tag
        if tag == "a" or tag == "area":
            # The dict of all attributes costs less than two lookups on their view (a
            # missing rel raises KeyError inside it), and a page's links are most of its
            # elements. Names are unique: the HTML parser keeps the first of duplicates.
            attrs = node.attributes
            rel = attrs.get("rel")
            if rel is None or "nofollow" not in rel.lower().split():
                append_href(attrs.get("href") or "")
            continue
        attributes = node.attributes
        if tag == "meta":
            if (attributes.get("name") or "").strip().lower() in names:
                info.robots = info.robots | directives_from_tokens(attributes.get("content") or "")
            elif refresh is None and (attributes.get("http-equiv") or "").strip().lower() == "refresh":
                refresh = parse_refresh(attributes.get("content") or "")
        elif tag == "link":
            rels = (attributes.get("rel") or "").lower().split()
            if canonical is None and "canonical" in rels:
                canonical = attributes.get("href") or ""
            elif "alternate" in rels and (attributes.get("type") or "").strip().lower() in FEED_TYPES:
                feeds.append(attributes.get("href") or "")
        elif tag == "base" and base is None:
            base = attributes.get("href") or ""
    links = page
    resolved_base = page.http_url(base) if base else None
    if resolved_base is not None:
        info.base_url = resolved_base.str_url
        links = _LinkResolver(info.base_url)
    if canonical is not None:
        info.canonical = links.http_url(canonical)
    if refresh is not None:
        info.refresh = (refresh.delay_s, links.http_url(refresh.target) if refresh.target else None)
    for href in feeds:
        feed = links.http_url(href)
        if feed is not None and feed not in info.feeds:
            info.feeds.append(feed)
    info.links = links.links(hrefs)
    return info
