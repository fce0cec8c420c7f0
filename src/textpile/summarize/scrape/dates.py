"""Page dates: when a document was created and last updated.

Source: dead-simple-search-how-it-works.txt, section "Page dates".

- created (page_published) comes only from the page's own markup, checked in order:
  Schema.org JSON-LD (``datePublished``, also inside ``@graph`` and nested objects),
  Schema.org microdata (``itemprop="datePublished"``), Open Graph
  (``article:published_time``), Dublin Core (``DC.date``, ``DC.date.created``,
  ``DC.date.issued``, ``dcterms.created``, ``dcterms.issued``, ``dcterms.date``).
- updated (page_modified) takes the first source that speaks: the page's own
  ``dateModified`` (JSON-LD, microdata, ``article:modified_time``, ``og:updated_time``,
  ``dcterms.modified``, ``DC.date.modified``), else the file's date
  (``file.last_modified_unix_utc``): the crawler put there a sitemap's ``<lastmod>`` of
  the URL when one dated it, else the answer's Last-Modified (already NULL when it
  equalled the response's Date). Which of the three spoke is kept beside the date
  (``markup``, ``sitemap``, ``last-modified``: page_modified_source).
- Discarded: dates before 1990-01-01T00:00:00Z or more than one day after now, and a
  Last-Modified (the weaker source) that precedes the page's own datePublished. Within a
  source the first candidate that parses and passes these checks wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timezone

from lxml import etree

EARLIEST_UNIX_UTC = 631152000  # 1990-01-01T00:00:00Z
MAX_FUTURE_SECONDS = 86400

PUBLISHED_META = {
    "og": ("article:published_time",),
    "dc": ("dc.date", "dc.date.created", "dc.date.issued", "dcterms.created", "dcterms.issued",
           "dcterms.date"),
}
MODIFIED_META = ("article:modified_time", "og:updated_time", "dcterms.modified", "dc.date.modified")

_DATE_PREFIX = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def parse_date(value: str | None) -> int | None:
    """An ISO 8601 date or date-time (``Z`` or offset; naive means UTC; date only means
    midnight UTC) as unix seconds; None when it is not such a date."""
    if not value:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        match = _DATE_PREFIX.match(text)
        if not match:
            return None
        try:
            parsed = datetime(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return int(parsed.timestamp())
    except (OverflowError, OSError, ValueError):
        return None


def plausible(unix: int | None, now_unix_utc: int) -> int | None:
    """``unix`` unless it is before 1990 or more than a day after ``now_unix_utc``."""
    if unix is None or unix < EARLIEST_UNIX_UTC or unix > now_unix_utc + MAX_FUTURE_SECONDS:
        return None
    return unix


def _json_values(node: object, key: str, depth: int = 0) -> Iterator[str]:
    """Depth-first values of ``key`` in parsed JSON-LD (objects, lists, @graph)."""
    if depth > 50:
        return
    if isinstance(node, dict):
        value = node.get(key)
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, str))
        for child in node.values():
            if isinstance(child, (dict, list)):
                yield from _json_values(child, key, depth + 1)
    elif isinstance(node, list):
        for child in node:
            yield from _json_values(child, key, depth + 1)


#: Every itemprop attribute, in document order (its element is its parent): cheaper than
#: ``//*[@itemprop]``, which tests every element.
_ITEMPROP = etree.XPath("//@itemprop")


class PageDateSources:
    """The date candidates found in one document's markup, collected once.

    ``lowered`` is the UTF-8 source ``root`` was parsed from, ASCII-lower-cased, when known:
    without ``itemprop`` in it (attribute names are ASCII-lower-cased by the parser), the
    microdata search over the whole tree is skipped. ``scripts`` and ``metas``: the
    document's ``script`` and ``meta`` elements in document order, when the caller has
    found them (:func:`textpile.summarize.scrape.description.markup_elements`).
    """

    def __init__(self, root: etree._Element, lowered: bytes | None = None,
                 scripts: list[etree._Element] | None = None, metas: list[etree._Element] | None = None) -> None:
        self.json_ld: list[object] = []
        for script in root.iter("script") if scripts is None else scripts:
            if (script.get("type") or "").strip().lower() != "application/ld+json":
                continue
            try:
                self.json_ld.append(json.loads(script.text or "", strict=False))
            except (ValueError, RecursionError):  # invalid JSON is ignored, as browsers do
                continue
        self.itemprops: dict[str, list[str]] = {"datepublished": [], "datemodified": []}
        self.meta: dict[str, list[str]] = {}
        itemprops = _ITEMPROP(root) if lowered is None or b"itemprop" in lowered else ()
        for el in (value.getparent() for value in itemprops):
            for prop in (el.get("itemprop") or "").lower().split():
                if prop in self.itemprops:
                    value = el.get("content") or el.get("datetime") or el.get("value") or "".join(el.itertext())
                    self.itemprops[prop].append(value)
        for el in root.iter("meta") if metas is None else metas:
            name = (el.get("property") or el.get("name") or "").strip().lower()
            if name:
                self.meta.setdefault(name, []).append(el.get("content") or "")

    def _first(self, candidates: Iterator[str], now_unix_utc: int) -> int | None:
        for value in candidates:
            unix = plausible(parse_date(value), now_unix_utc)
            if unix is not None:
                return unix
        return None

    def _meta(self, names: tuple[str, ...]) -> Iterator[str]:
        for name in names:
            yield from self.meta.get(name, ())

    def published(self, now_unix_utc: int) -> int | None:
        """The page's own publishing date (JSON-LD, microdata, Open Graph, Dublin Core)."""
        for source in (
            (v for doc in self.json_ld for v in _json_values(doc, "datePublished")),
            iter(self.itemprops["datepublished"]),
            self._meta(PUBLISHED_META["og"]),
            self._meta(PUBLISHED_META["dc"]),
        ):
            found = self._first(source, now_unix_utc)
            if found is not None:
                return found
        return None

    def modified(self, now_unix_utc: int) -> int | None:
        """The page's own dateModified (JSON-LD, microdata, meta tags), in that order."""
        for source in (
            (v for doc in self.json_ld for v in _json_values(doc, "dateModified")),
            iter(self.itemprops["datemodified"]),
            self._meta(MODIFIED_META),
        ):
            found = self._first(source, now_unix_utc)
            if found is not None:
                return found
        return None


#: The sources of a page's modified date, in the order they are consulted.
UPDATED_SOURCES = ("markup", "sitemap", "last-modified")


def page_dates(root: etree._Element | None, last_modified_unix_utc: int | None,
               now_unix_utc: int, lowered: bytes | None = None, scripts: list[etree._Element] | None = None,
               metas: list[etree._Element] | None = None,
               last_modified_source: str = "last-modified") -> tuple[int | None, int | None, str | None]:
    """(time_created, time_updated, time_updated_source): the dates in unix seconds per
    the module docstring, and which source gave time_updated (one of
    :data:`UPDATED_SOURCES`; None without a time_updated).

    ``root`` None (plain text) has no markup: created is None, updated the file's date.
    ``last_modified_source`` says where the file's date ``last_modified_unix_utc`` came
    from: ``"sitemap"`` or ``"last-modified"``. ``lowered``, ``scripts``, ``metas``:
    what the caller knows of ``root`` already (see PageDateSources).

    Raises:
        ValueError: ``last_modified_source`` is neither ``"sitemap"`` nor ``"last-modified"``.
    """
    if last_modified_source not in UPDATED_SOURCES[1:]:
        raise ValueError(f"last_modified_source: {last_modified_source!r} is neither 'sitemap' nor 'last-modified'")
    published = modified = source = None
    if root is not None:
        sources = PageDateSources(root, lowered, scripts, metas)
        published = sources.published(now_unix_utc)
        modified = sources.modified(now_unix_utc)
        if modified is not None:
            source = "markup"
    if modified is None:
        weaker = plausible(last_modified_unix_utc, now_unix_utc)
        if weaker is not None and (published is None or weaker >= published):
            modified, source = weaker, last_modified_source
    return published, modified, source
