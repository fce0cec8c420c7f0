"""Facets of a search: how many of its matching pages are on each site, in each language,
under each path prefix of a site (a version or section: ``/docs/3.12/``) and of each
year, each with the query that keeps only those pages.

The counts come from the pages the search already has (issue 32, "Facets and filters"):
every match the candidate scan saw (:data:`textpile.search.engine.PAGE_SCAN` at most, in
prior order) and every reranked candidate, read in one query of those pages' rows. When
the search saw fewer pages than match (a common word, the time budget), the counts are
lower bounds and say so (:attr:`Facets.lower_bound`).

A page's date is its own (:data:`textpile.search.filters.PAGE_DATE_SQL`), as
``after:``, ``before:`` and ``sort:date`` read it.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field

from textpile.search.filters import PAGE_DATE_SQL

#: Values listed per facet, at most (most pages first, then by value).
FACET_VALUES = 10
#: Path prefixes are looked for down to this many directories (``/docs/3.12/`` is 2).
PATH_DEPTH = 3
#: Filter words of the query language that a refinement replaces, per facet.
_REPLACED = {"site": ("site", "host"), "path": ("site", "host"), "language": ("lang",), "year": ("after", "before")}


@dataclass(frozen=True)
class PageFacts:
    """What facets and the date order read of one page: its host, URL path, language
    (lower case) and own date (unix seconds UTC, None when it gives none)."""

    host: str
    path: str
    language: str | None
    date: int | None


@dataclass(frozen=True)
class FacetValue:
    """One value of a facet: what it is, how many pages have it, and the query that keeps
    only those pages (the search's query with the facet's filter in place of its own)."""

    value: str
    count: int
    query: str


@dataclass
class Facets:
    """The facets of one search. ``pages`` is how many pages were counted;
    ``lower_bound`` is true when more pages match than were counted."""

    pages: int = 0
    lower_bound: bool = False
    site: list[FacetValue] = field(default_factory=list)
    language: list[FacetValue] = field(default_factory=list)
    path: list[FacetValue] = field(default_factory=list)
    year: list[FacetValue] = field(default_factory=list)

    def as_json(self) -> dict:
        """``{"pages", "lower_bound", "site"|"language"|"path"|"year": [{"value", "count", "query"}]}``."""
        def values(items: list[FacetValue]) -> list[dict]:
            return [{"value": v.value, "count": v.count, "query": v.query} for v in items]
        return {"pages": self.pages, "lower_bound": self.lower_bound, "site": values(self.site),
                "language": values(self.language), "path": values(self.path), "year": values(self.year)}


def page_facts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, PageFacts]:
    """``{entity_generation_id: PageFacts}`` of those of ``ids`` that exist (500 per query)."""
    out: dict[int, PageFacts] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for eg_id, host, path, language, date in conn.execute(
                "SELECT eg.entity_generation_id, coalesce(o.host, ''), coalesce(u.path, '/'), "
                f"lower(nullif(dd.primary_language, '')), {PAGE_DATE_SQL} "
                "FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id JOIN origin o ON o.origin_id = u.origin_id "
                "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
                f"WHERE eg.entity_generation_id IN ({marks})", chunk):
            out[eg_id] = PageFacts(host, path, language, date)
    return out


def refine(query: str, facet: str, filters: list[str]) -> str:
    """``query`` with ``filters`` (query-language filter words) in place of its own filters
    of the same kinds (:data:`_REPLACED`): a ``site:`` of the query would otherwise be an
    alternative to the facet's, not narrowed by it."""
    kinds = "|".join(_REPLACED[facet])
    kept = re.sub(rf"(?<!\S)(?:{kinds}):\S*", " ", query, flags=re.IGNORECASE)
    return " ".join([*kept.split(), *filters])


def _directory_prefix(path: str, depth: int) -> str | None:
    """The first ``depth`` directories of ``path`` (``/docs/3.12/``), None when it has fewer."""
    parts = path.split("/")[1:-1]  # the directories: what a slash follows
    if len(parts) < depth or not all(parts[:depth]):
        return None
    return "/" + "/".join(parts[:depth]) + "/"


def path_prefixes(paths: list[str]) -> Counter:
    """The path prefixes of one site's ``paths`` worth choosing among: those of the
    shallowest depth (1 to :data:`PATH_DEPTH`) at which the paths fall under two
    prefixes or more (every page under ``/docs/``: its versions ``/docs/3.11/`` and
    ``/docs/3.12/``); empty when they never do."""
    for depth in range(1, PATH_DEPTH + 1):
        counts = Counter(p for p in (_directory_prefix(path, depth) for path in paths) if p is not None)
        if len(counts) >= 2:
            return counts
        if not counts:
            break
    return Counter()


def _top(counts: Counter, query_of) -> list[FacetValue]:
    best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:FACET_VALUES]
    return [FacetValue(value, count, query_of(value)) for value, count in best]


def count_facets(facts: dict[int, PageFacts], query: str, lower_bound: bool) -> Facets:
    """The :class:`Facets` of the pages ``facts`` for the search ``query``;
    ``lower_bound`` says that more pages match than these."""
    pages = list(facts.values())
    out = Facets(pages=len(pages), lower_bound=lower_bound)
    out.site = _top(Counter(p.host for p in pages if p.host),
                    lambda host: refine(query, "site", [f"site:{host}"]))
    out.language = _top(Counter(p.language for p in pages if p.language),
                        lambda language: refine(query, "language", [f"lang:{language}"]))
    by_host: dict[str, list[str]] = {}
    for p in pages:
        by_host.setdefault(p.host, []).append(p.path)
    prefixes = Counter()
    for host, paths in by_host.items():
        for prefix, count in path_prefixes(paths).items():
            prefixes[host + prefix] = count
    out.path = _top(prefixes, lambda where: refine(query, "path", [f"site:{where}"]))
    years = Counter(str(dt.datetime.fromtimestamp(p.date, dt.timezone.utc).year) for p in pages
                    if p.date is not None and _representable(p.date))
    out.year = _top(years, lambda year: refine(query, "year", [f"after:{year}", f"before:{int(year) + 1}"]))
    out.year.sort(key=lambda v: v.value, reverse=True)
    return out


def _representable(unix_utc: int) -> bool:
    """True when ``unix_utc`` is a date of years 1 to 9998 (a stored date is any integer)."""
    return -62135596800 <= unix_utc < 253370764800
