"""Entry point of scraping: one HTML (or text) file to a :class:`ScrapeResult`.

The HTML is parsed once with lxml (``lxml.etree``'s HTML parser: no Python element
classes); the same tree goes to the text walk (text piles, spans, links, h1s, sections,
containers) and to the markup readers (title, description, dates, language, robots). The
main content decision works on what the walk collected
(:mod:`textpile.summarize.scrape.main_content`).
"""

from __future__ import annotations

import re
import time

from lxml import etree

from textpile.gc_pause import collections_paused
from textpile.store.mimetypes import HTML_TYPES, parse_media_type
from textpile.store.urls import parse_url
from textpile.summarize.scrape import description as desc
from textpile.summarize.scrape.dates import page_dates
from textpile.summarize.scrape.fingerprint import simhash
from textpile.summarize.scrape.indexiness import indexiness
from textpile.summarize.scrape.language import guess_language, language_tag, primary_subtag
from textpile.summarize.scrape.links import resolve_links
from textpile.summarize.scrape.main_content import mark_main_content
from textpile.summarize.scrape.piles import build_gen1, build_gen2
from textpile.summarize.scrape.result import DocumentDescription, ScrapeResult
from textpile.summarize.scrape.walk import Line, WalkResult, walk_document

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_body(body: str | bytes) -> str:
    """``body`` as text lxml can take: bytes decoded as UTF-8 (invalid sequences become
    U+FFFD), lone surrogates replaced by U+FFFD, NUL characters removed."""
    return _clean_source(body)[0]


def _clean_source(body: str | bytes) -> tuple[str, bytes]:
    """:func:`clean_body`'s text and that text encoded as UTF-8: a page is encoded once."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        text = bytes(body).decode("utf-8", "replace")
    else:
        text = body
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
        data = text.encode("utf-8")
    if b"\x00" in data:
        text = text.replace("\x00", "")
        data = data.replace(b"\x00", b"")
    return text, data


def parse_html(text: str, data: bytes | None = None) -> etree._Element | None:
    """Parse HTML text into an lxml document (root ``html`` element); None when
    there is no document at all (empty or whitespace-only input, nothing parseable).
    ``data``: ``text`` already encoded as UTF-8, when the caller has it.

    libxml2 stops descending at its nesting limit (256 levels): content nested deeper is
    not in the tree (it is dropped, not an error)."""
    if not text.strip():
        return None
    if data is None:
        data = text.encode("utf-8")
    # A parser per call: lxml parsers must not be shared between threads.
    parser = etree.HTMLParser(encoding="utf-8", remove_blank_text=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError):  # nothing but comments or the like
        return None
    return root if root is not None and isinstance(root.tag, str) else None


def _description(root, h1s, last_modified: int | None, now: int, links, guessed: str | None,
                 lowered: bytes | None = None, elements: desc.MarkupElements | None = None,
                 last_modified_source: str = "last-modified") -> DocumentDescription:
    if root is None:
        created, updated, source = page_dates(None, last_modified, now, last_modified_source=last_modified_source)
        return DocumentDescription(None, None, None, guessed, created, updated,
                                   indexiness(links, created is not None), source)
    if elements is None:
        elements = desc.markup_elements(root)
    tag = language_tag(desc.html_lang(root, elements))
    language = primary_subtag(tag) or guessed
    created, updated, source = page_dates(root, last_modified, now, lowered, elements.scripts, elements.metas,
                                          last_modified_source)
    return DocumentDescription(
        title=desc.title(elements),
        primary_headline=desc.primary_headline(h1s, desc.site_name(elements)),
        description=desc.description(elements),
        primary_language=language,
        time_created_unix_utc=created,
        time_updated_unix_utc=updated,
        indexiness=indexiness(links, created is not None),
        time_updated_source=source,
    )


def _plain_text_walk(text: str) -> WalkResult:
    walk = WalkResult()
    offset = 0
    for raw in text.splitlines():
        line = " ".join(raw.split())  # stripped, whitespace runs collapsed
        if not line:
            continue
        walk.lines.append(Line(line, offset, 0, False, False, 0, main=True))
        offset += len(line) + 1
    return walk


def scrape_document(
    body: str,
    url: str,
    *,
    mime_type: str = "text/html",
    last_modified_unix_utc: int | None = None,
    now_unix_utc: int | None = None,
    last_modified_source: str = "last-modified",
) -> ScrapeResult:
    """Scrape ``body`` (UTF-8 text as stored in file_text; bytes are accepted too)
    fetched from ``url``.

    ``mime_type`` is a media type (parameters allowed): HTML for ``text/html`` and
    ``application/xhtml+xml``, plain text for any other ``text/*`` (text pile with the
    text as ``text``, every other field empty, no title, no links).
    ``last_modified_unix_utc`` is file.last_modified_unix_utc (already cleaned of a
    Last-Modified equal to Date by the crawler), ``last_modified_source`` where it came
    from (``"sitemap"``: a sitemap's lastmod; ``"last-modified"``: the header);
    ``now_unix_utc`` bounds future dates (dates more than a day ahead are discarded);
    now when None.

    Any body (empty, broken markup, odd characters) scrapes without raising.

    Raises:
        textpile.store.urls.UrlError: ``url`` is not an absolute URL.
        ValueError: ``mime_type`` is neither HTML nor text.
    """
    # The scrape makes some 100,000 short-lived objects per documentation page and frees
    # them without cycles when it returns: the cyclic garbage collector found nothing to
    # free and took 5-10% of the CPU. It is paused for the page.
    with collections_paused():
        return _scrape_document(body, url, mime_type, last_modified_unix_utc, now_unix_utc, last_modified_source)


def _scrape_document(body: str, url: str, mime_type: str, last_modified_unix_utc: int | None,
                     now_unix_utc: int | None, last_modified_source: str = "last-modified") -> ScrapeResult:
    now = int(time.time()) if now_unix_utc is None else int(now_unix_utc)
    page = parse_url(url)
    media = parse_media_type(mime_type)
    if media.essence not in HTML_TYPES and media.mime_type != "text":
        raise ValueError(f"cannot scrape media type {mime_type!r} of {url}: only HTML and text/*")
    text, data = _clean_source(body)

    if media.essence not in HTML_TYPES:
        walk = _plain_text_walk(text)
        language = guess_language(walk.text)
        description = _description(None, [], last_modified_unix_utc, now, [], language,
                                   last_modified_source=last_modified_source)
        pile = build_gen1(walk)
        return ScrapeResult(
            text_pile=pile,
            text_pile_v0_2=build_gen2(walk.lines, [], "", language or ""),
            description=description,
            links=[],
            noindex=False,
            fingerprint=simhash(pile.text),
        )

    root = parse_html(text, data)
    if root is None:
        walk = WalkResult()
        return ScrapeResult(
            text_pile=build_gen1(walk),
            text_pile_v0_2=build_gen2([], [], "", ""),
            description=_description(None, [], last_modified_unix_utc, now, [], None,
                                     last_modified_source=last_modified_source),
            links=[],
            noindex=False,
        )
    # the source with ASCII lower-cased, as the parser lower-cases names: lets the walk and
    # the dates skip searches for attributes the page cannot hold
    lowered = data.lower()
    walk = walk_document(root, lowered)
    mark_main_content(walk.lines, walk.containers)

    elements = desc.markup_elements(root)
    base = page.str_url
    declared_base = desc.base_href(elements)
    if declared_base is not None:
        try:
            base = parse_url(declared_base, page.str_url).str_url
        except ValueError:  # an unusable <base href> is ignored, as browsers do
            base = page.str_url
    links = resolve_links(walk.links, page, base)

    lang_tag = language_tag(desc.html_lang(root, elements))
    joined = walk.text
    guessed = guess_language(joined)
    pile = build_gen1(walk)
    return ScrapeResult(
        text_pile=pile,
        text_pile_v0_2=build_gen2(walk.lines, walk.spans, lang_tag or "", guessed or "", joined),
        description=_description(root, walk.h1s, last_modified_unix_utc, now, links, guessed, lowered, elements,
                                 last_modified_source),
        links=links,
        noindex=desc.robots_noindex(elements),
        sections=walk.sections,
        fingerprint=simhash(pile.text),
    )
