"""Reading one fetched body: its text, and for HTML its links, robots directives,
canonical, feeds and meta refresh.

:func:`read_body` is the work itself, a pure function of its arguments: the crawl runs it
in its page readers (worker processes, :class:`textpile.crawl.workers.readers.PageReader`)
so that decoding and parsing never hold up the event loop; tests may call it directly.

Sources: unobtanium-documentation.txt, page "Crawl Loop" (links, canonical, robots
directives: see :mod:`textpile.crawl.parser.page`); the charset order of
:mod:`textpile.crawl.parser.charset`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textpile.crawl.parser.charset import decode_body
from textpile.crawl.parser.packed import pack_links
from textpile.crawl.parser.page import PageInfo, RobotsDirectives, read_page
from textpile.crawl.policy.traps import strip_session_ids
from textpile.store.mimetypes import HTML_TYPES, TEXT_TYPES
from textpile.store.urls import ParsedUrl


@dataclass
class PageReading:
    """What :func:`read_body` found in one body.

    ``text`` is the decoded text (None unless the media type is one of
    :data:`~textpile.store.mimetypes.TEXT_TYPES`), or None with ``text_is_body`` when the body is its text in
    UTF-8 (valid UTF-8 without a byte order mark): the caller holds those bytes, and a
    big page's text does not cross back from the worker process. For HTML: ``links`` are the usable links (see
    :func:`textpile.crawl.parser.page.read_page`) whose origin is one of the given origins, in
    document order without duplicates, packed (:mod:`textpile.crawl.parser.packed`);
    ``link_count`` counts them and ``other_links`` the usable links left out because
    their origin is not, ``other_origins`` the same links per ``str_origin``; ``robots``
    holds the meta robots directives, ``canonical`` the rel=canonical target (any
    origin), else None; ``feeds`` and ``refresh`` as :class:`textpile.crawl.parser.page.PageInfo`
    has them (any origin).
    """

    text: str | None = None
    text_is_body: bool = False
    links: str = ""
    link_count: int = 0
    other_links: int = 0
    other_origins: dict[str, int] = field(default_factory=dict)
    robots: RobotsDirectives = field(default_factory=RobotsDirectives)
    canonical: ParsedUrl | None = None
    feeds: list[ParsedUrl] = field(default_factory=list)
    refresh: tuple[int, ParsedUrl | None] | None = None


def read_body(body: bytes, essence: str, charset: str | None, url: str, token: str,
              origins: frozenset[str], session: frozenset[str] = frozenset()) -> PageReading:
    """Decode and read one answer's ``body`` fetched from ``url``.

    ``essence`` is the media type without parameters (``text/html``), ``charset`` the
    Content-Type's charset parameter (None when absent), ``token`` the crawler's robots
    token and ``origins`` the ``str_origin`` values whose links are returned. The
    session-ID parameters ``session`` (lower case) are stripped from every URL found
    (:func:`textpile.crawl.policy.traps.strip_session_ids`). Never raises for any body.

    Raises:
        UrlError: ``url`` is not an absolute URL.
    """
    if essence not in TEXT_TYPES:
        return PageReading()
    is_html = essence in HTML_TYPES
    decoded = decode_body(body, charset, is_html=is_html)
    text = decoded.text
    # The body is its text in UTF-8 unless it had a BOM or broken sequences (replaced;
    # a U+FFFD of its own only costs this shortcut).
    is_body = decoded.encoding == "utf-8" and decoded.source != "bom" and "\ufffd" not in text
    reading = PageReading(text=None, text_is_body=True) if is_body else PageReading(text=text)
    if is_html:
        # Such a body goes to the parser as it is: a big page's text is not encoded again.
        info = read_page(body if is_body else text, url, token)
        if session:
            _strip_session_ids(info, session)
        reading.robots = info.robots
        reading.canonical = info.canonical
        reading.feeds = info.feeds
        reading.refresh = info.refresh
        kept = []
        others = reading.other_origins
        for link in info.links:
            origin = link.str_origin
            if origin in origins:
                kept.append(link)
            else:
                others[origin] = others.get(origin, 0) + 1
        reading.links = pack_links(kept)
        reading.link_count = len(kept)
        reading.other_links = len(info.links) - len(kept)
    return reading


def _strip_session_ids(info: PageInfo, session: frozenset[str]) -> None:
    """Strip the session-ID parameters from every URL of ``info`` (links deduplicated
    again: two links may differ only in their session ID)."""
    links, seen = [], set()
    for link in info.links:
        link = strip_session_ids(link, session)
        if link.str_url not in seen:
            seen.add(link.str_url)
            links.append(link)
    info.links = links
    if info.canonical is not None:
        info.canonical = strip_session_ids(info.canonical, session)
    info.feeds = list(dict.fromkeys(strip_session_ids(feed, session) for feed in info.feeds))
    if info.refresh is not None and info.refresh[1] is not None:
        info.refresh = (info.refresh[0], strip_session_ids(info.refresh[1], session))
