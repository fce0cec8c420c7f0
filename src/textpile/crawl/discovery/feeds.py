"""Feeds: reading an RSS, Atom, RDF Site Summary or JSON Feed document for the pages it lists.

Source: atextcrawler-introduction.md ("discard non-text content, but handle feeds and
sitemaps"; a feed's paths are added to the site's paths; feed crawls fetch only the paths
a feed lists, at their own, shorter interval). Parsing is fastfeedparser's (Kagi's
maintained parser for RSS 0.9x-2.0, Atom 0.3/1.0, RDF and JSON Feed on lxml), given bytes
only, so it never fetches anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import fastfeedparser

from textpile.crawl.discovery.sitemaps import MAX_SITEMAP_URLS, parse_lastmod

#: Root elements of XML feeds (local names): RSS, Atom, RDF Site Summary.
FEED_ROOTS = frozenset({"rss", "feed", "RDF"})
#: What starts a JSON Feed's ``version`` (jsonfeed.org).
JSON_FEED_MARK = b"jsonfeed.org/version/"


class FeedError(ValueError):
    """A body is not a readable feed; the message says why."""


@dataclass
class Feed:
    """The entries of one feed: ``(link text as written, its updated or else published
    date in unix seconds or None)`` in feed order, at most
    :data:`~textpile.crawl.discovery.sitemaps.MAX_SITEMAP_URLS`; ``title`` the feed's title
    ("" when none); ``notes`` what was skipped."""

    title: str = ""
    entries: list[tuple[str, int | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def is_json_feed(data: bytes) -> bool:
    """True when ``data`` starts like a JSON Feed (an object naming a jsonfeed.org version
    in its first 4 KiB)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and JSON_FEED_MARK in head


def parse_feed(data: bytes, now_unix: int) -> Feed:
    """Read the feed ``data`` (XML or JSON, already gzip-decoded).

    An entry's link is its ``link`` (RSS ``<link>``, or a ``<guid>`` that is a
    permalink; Atom's ``rel="alternate"`` link; JSON Feed's ``url``); entries without
    one are skipped. Its date is ``updated`` or else ``published``, read by
    :func:`textpile.crawl.discovery.sitemaps.parse_lastmod` (doubtful dates are None).

    Raises:
        FeedError: fastfeedparser cannot read ``data`` as a feed (its reason in the message).
    """
    try:
        parsed = fastfeedparser.parse(bytes(data), include_content=False, include_tags=False,
                                      include_media=False, include_enclosures=False)
    except ValueError as exc:
        raise FeedError(str(exc)) from None
    feed = Feed(title=str(parsed.feed.get("title") or "") if parsed.get("feed") else "")
    skipped = more = 0
    for entry in parsed.entries:
        link = (entry.get("link") or "").strip()
        if not link:
            skipped += 1
            continue
        if len(feed.entries) >= MAX_SITEMAP_URLS:
            more += 1
            continue
        feed.entries.append((link, parse_lastmod(entry.get("updated") or entry.get("published"), now_unix)))
    if skipped:
        feed.notes.append(f"{skipped} {'entry' if skipped == 1 else 'entries'} without a link")
    if more:
        feed.notes.append(f"{more} entries beyond the first {MAX_SITEMAP_URLS} not read")
    return feed
