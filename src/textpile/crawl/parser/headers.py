"""What the crawler reads from response headers besides the HTTP basics: X-Robots-Tag
directives for this crawler, ``Link`` header targets (a canonical, feeds) and a
``Refresh`` header.

Sources: dead-simple-search-how-it-works.txt, "Deciding what not to index" (noindex from
an X-Robots-Tag response header; non-canonical URLs); RFC 8288 (the ``Link`` header:
``<target>; rel="canonical"``, several links separated by commas); RFC 6596 (a canonical
link relation given as a header, as for non-HTML files); Google's documented
X-Robots-Tag syntax, where a directive list may name the crawler it is for
(``X-Robots-Tag: otherbot: noindex, examplebot: nofollow``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from textpile.crawl.parser.page import FEED_TYPES, RobotsDirectives, directives_from_tokens, usable_link
from textpile.crawl.parser.refresh import parse_refresh
from textpile.store.urls import ParsedUrl, UrlError, parse_url

#: X-Robots-Tag directives that carry a value after a colon (so "name:" is no crawler name).
VALUED_DIRECTIVES = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_AGENT_PREFIX = re.compile(r"\s*([A-Za-z0-9_.\-]+)\s*:(.*)", re.DOTALL)


def x_robots_tag(values: list[str], token: str) -> RobotsDirectives:
    """The directives of X-Robots-Tag header ``values`` that apply to the crawler whose
    robots token is ``token``.

    Each value is a comma-separated list of directives. A directive written
    ``name: directive`` (a user-agent prefix) starts the part of the list meant for the
    crawler ``name``; the directives after it, up to the next prefix, belong to that
    crawler too. Directives before any prefix apply to every crawler. A prefix applies
    when ``name`` equals ``token`` case-insensitively. ``unavailable_after: ...`` and
    the ``max-*:`` directives are values, not prefixes. Examples for token
    ``examplebot``: ``"otherbot: noindex, examplebot: nofollow"`` gives nofollow only;
    ``"examplebot: noindex, nofollow"`` gives both; ``"noindex"`` gives noindex.
    """
    result = RobotsDirectives()
    token = token.lower()
    for value in values:
        applies = True  # directives before the first prefix are for every crawler
        for part in value.split(","):
            match = _AGENT_PREFIX.match(part)
            if match is not None and match.group(1).lower() not in VALUED_DIRECTIVES:
                applies = match.group(1).lower() == token
                part = match.group(2)
            if applies:
                result = result | directives_from_tokens(part)
    return result


@dataclass(frozen=True)
class HeaderLink:
    """One link of a ``Link`` header: its target (as written, relative or absolute),
    its relation types (lower case) and its ``type`` parameter (lower case, None when absent)."""

    target: str
    rels: frozenset[str]
    media_type: str | None


def parse_link_header(values: list[str]) -> list[HeaderLink]:
    """The links of ``Link`` header ``values`` in order (RFC 8288 section 3).

    Each link is ``<target>`` followed by ``;``-separated parameters; a value may hold
    several links separated by commas (commas inside ``<...>`` or quoted strings do not
    separate). Links without a ``rel`` parameter, and text that is not a link, are
    skipped; a parameter given twice counts the first time (RFC 8288 3.3).
    """
    links = []
    for value in values:
        pos = 0
        while True:
            start = value.find("<", pos)
            if start < 0:
                break
            end = value.find(">", start + 1)
            if end < 0:
                break
            target = value[start + 1:end].strip()
            params, pos = _parameters(value, end + 1)
            rel = params.get("rel")
            if rel:
                links.append(HeaderLink(target, frozenset(rel.lower().split()),
                                        (params.get("type") or "").strip().lower() or None))
    return links


def _parameters(value: str, pos: int) -> tuple[dict[str, str], int]:
    """The ``;name=value`` parameters of one link starting at ``pos``, and the position
    after the comma that ends the link (or the end of ``value``)."""
    params: dict[str, str] = {}
    length = len(value)
    while pos < length:
        char = value[pos]
        if char == ",":
            return params, pos + 1
        if char != ";":
            pos += 1
            continue
        pos += 1
        name_end = pos
        while name_end < length and value[name_end] not in "=;,":
            name_end += 1
        name = value[pos:name_end].strip().lower()
        pos = name_end
        text = ""
        if pos < length and value[pos] == "=":
            pos += 1
            while pos < length and value[pos] in " \t":
                pos += 1
            if pos < length and value[pos] == '"':
                pos += 1
                chars = []
                while pos < length and value[pos] != '"':
                    if value[pos] == "\\" and pos + 1 < length:
                        pos += 1
                    chars.append(value[pos])
                    pos += 1
                pos += 1
                text = "".join(chars)
            else:
                text_end = pos
                while text_end < length and value[text_end] not in ";,":
                    text_end += 1
                text = value[pos:text_end].strip()
                pos = text_end
        if name and name not in params:
            params[name] = text
    return params, pos


def header_canonical(links: list[HeaderLink], base: str) -> ParsedUrl | None:
    """The first ``rel=canonical`` target of ``links`` (see :func:`parse_link_header`)
    resolved against ``base`` (the request URL), when it is a usable http(s) URL
    (:func:`textpile.crawl.parser.page.usable_link`); else None."""
    for link in links:
        if "canonical" in link.rels:
            return _usable(link.target, base)
    return None


def header_feeds(links: list[HeaderLink], base: str) -> list[ParsedUrl]:
    """The usable targets of ``rel=alternate`` links of a feed type
    (:data:`textpile.crawl.parser.page.FEED_TYPES`) among ``links``, resolved against ``base``."""
    feeds = []
    for link in links:
        if "alternate" in link.rels and link.media_type in FEED_TYPES:
            target = _usable(link.target, base)
            if target is not None and target not in feeds:
                feeds.append(target)
    return feeds


def header_refresh(value: str | None, base: str) -> tuple[int, ParsedUrl | None] | None:
    """A ``Refresh`` response header (which browsers obey like a meta refresh) as
    ``(delay in seconds, target)`` (target resolved against ``base``; None when it
    reloads the page or names no usable http(s) URL), or None without a readable one."""
    if not value:
        return None
    refresh = parse_refresh(value)
    if refresh is None:
        return None
    return refresh.delay_s, _usable(refresh.target, base) if refresh.target else None


def _usable(target: str, base: str) -> ParsedUrl | None:
    try:
        url = parse_url(target.partition("#")[0], base)
    except UrlError:
        return None
    return url if usable_link(url) else None
