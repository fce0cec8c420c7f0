"""Boilerplate headings: the same anchorless heading on most pages of a site.

A heading without an anchor that more than :data:`BOILERPLATE_SHARE` of an origin's
indexed pages have, under the same title, and at least :data:`BOILERPLATE_MIN_PAGES` of
them, is boilerplate (a sidebar's "Navigation", "Next topic", "This Page"): neither a
section of the search index nor a heading of its page. On python3.11-doc: Navigation,
This Page, Previous topic, Next topic, Table of Contents, 23% of its sections; leaving
them out keeps the relevance benchmark's table as it was and makes the summary database
smaller by 0.5% of the raw HTML.

The counts are kept per origin (``search_origin``: its indexed pages; ``search_heading``:
per anchorless title, the pages having it), so an update knows the boilerplate titles
before and after its changes without reading every page of the origin; only when a
title becomes boilerplate or stops being it are the origin's pages with that heading
read, to be indexed again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

BOILERPLATE_SHARE = 0.5
BOILERPLATE_MIN_PAGES = 20

_FREQUENT_SQL = "SELECT title, pages FROM search_heading WHERE origin_id = ? AND pages >= ?"
_PAGES_WITH_SQL = """
SELECT DISTINCT sp.entity_generation_id FROM search_page sp
JOIN section_summary s ON s.entity_generation_id = sp.entity_generation_id
WHERE sp.origin_id = ? AND s.anchor IS NULL AND s.title IN (SELECT value FROM json_each(?))
"""
_HEADINGS_SQL = """
SELECT eg.entity_generation_id, u.origin_id, s.title FROM entity_generation eg
JOIN url u ON u.url_id = eg.url_id
LEFT JOIN section_summary s ON s.entity_generation_id = eg.entity_generation_id AND s.anchor IS NULL
WHERE eg.entity_generation_id IN (SELECT value FROM json_each(?))
"""
_COUNT_ALL_SQL = """
INSERT INTO search_heading(origin_id, title, pages)
SELECT u.origin_id, s.title, count(DISTINCT s.entity_generation_id)
FROM temp.index_members m JOIN entity_generation eg ON eg.entity_generation_id = m.eg_id
JOIN url u ON u.url_id = eg.url_id JOIN section_summary s ON s.entity_generation_id = m.eg_id
WHERE s.anchor IS NULL GROUP BY u.origin_id, s.title
"""
_ORIGINS_ALL_SQL = """
INSERT INTO search_origin(origin_id, pages)
SELECT u.origin_id, count(*) FROM temp.index_members m
JOIN entity_generation eg ON eg.entity_generation_id = m.eg_id JOIN url u ON u.url_id = eg.url_id
GROUP BY u.origin_id
"""


@dataclass(frozen=True)
class PageHeadings:
    """What the counts need of a page: its origin and the titles of its headings without
    an anchor (:class:`textpile.index.pages.PageSource` has both too)."""

    origin_id: int
    anchorless_titles: frozenset[str]


def page_headings(conn: sqlite3.Connection, ids: list[int]) -> list[PageHeadings]:
    """The :class:`PageHeadings` of the generations ``ids``."""
    by_page: dict[int, tuple[int, set[str]]] = {}
    for start in range(0, len(ids), 5000):
        for eg_id, origin, title in conn.execute(_HEADINGS_SQL, (json.dumps(ids[start:start + 5000]),)):
            entry = by_page.setdefault(eg_id, (origin, set()))
            if title is not None:
                entry[1].add(title)
    return [PageHeadings(origin, frozenset(titles)) for origin, titles in by_page.values()]


def is_boilerplate(pages: int, origin_pages: int) -> bool:
    """True when a title on ``pages`` of an origin's ``origin_pages`` indexed pages is
    boilerplate (module docstring)."""
    return pages > origin_pages * BOILERPLATE_SHARE and pages >= BOILERPLATE_MIN_PAGES


def count_all(conn: sqlite3.Connection) -> None:
    """Fill the (empty) search_origin and search_heading from the pages of
    temp.index_members(eg_id)."""
    conn.execute(_ORIGINS_ALL_SQL)
    conn.execute(_COUNT_ALL_SQL)


def boilerplate_of(conn: sqlite3.Connection, origin_id: int) -> frozenset[str]:
    """The boilerplate titles of ``origin_id`` as the counts hold them now."""
    row = conn.execute("SELECT pages FROM search_origin WHERE origin_id = ?", (origin_id,)).fetchone()
    if row is None:
        return frozenset()
    return frozenset(title for title, pages in conn.execute(_FREQUENT_SQL, (origin_id, BOILERPLATE_MIN_PAGES))
                     if is_boilerplate(pages, row[0]))


class HeadingChanges:
    """What pages leaving and entering the index change in the boilerplate counts:
    computed first (:meth:`of`), giving each origin's boilerplate titles before and after
    (:meth:`before`, :meth:`after`) and the titles that changed side (:meth:`flipped`),
    written with :meth:`apply`."""

    def __init__(self, conn: sqlite3.Connection, origins: dict[int, int], titles: dict[int, dict[str, int]]) -> None:
        self.origins = origins  # origin_id -> change of its pages
        self.titles = titles  # origin_id -> title -> change of its pages
        self._before: dict[int, frozenset[str]] = {}
        self._after: dict[int, frozenset[str]] = {}
        for origin in origins:
            self._before[origin], self._after[origin] = self._sets(conn, origin)

    @classmethod
    def of(cls, conn: sqlite3.Connection, leaving: Iterable[PageHeadings], entering: Iterable[PageHeadings]
           ) -> "HeadingChanges":
        origins: dict[int, int] = {}
        titles: dict[int, dict[str, int]] = {}
        for sources, sign in ((leaving, -1), (entering, 1)):
            for source in sources:
                origins[source.origin_id] = origins.get(source.origin_id, 0) + sign
                of_origin = titles.setdefault(source.origin_id, {})
                for title in source.anchorless_titles:
                    of_origin[title] = of_origin.get(title, 0) + sign
        return cls(conn, origins, titles)

    def _sets(self, conn: sqlite3.Connection, origin: int) -> tuple[frozenset[str], frozenset[str]]:
        """The boilerplate titles of ``origin`` before and after the changes."""
        row = conn.execute("SELECT pages FROM search_origin WHERE origin_id = ?", (origin,)).fetchone()
        pages_before = row[0] if row else 0
        pages_after = pages_before + self.origins[origin]
        changed = self.titles.get(origin, {})
        # a title whose count stays is boilerplate before or after only with the minimum
        counts = dict(conn.execute(_FREQUENT_SQL, (origin, BOILERPLATE_MIN_PAGES)).fetchall())
        for title, d in changed.items():
            if title not in counts:
                found = conn.execute("SELECT pages FROM search_heading WHERE origin_id = ? AND title = ?",
                                     (origin, title)).fetchone()
                counts[title] = found[0] if found else 0
        before = frozenset(t for t, n in counts.items() if is_boilerplate(n, pages_before))
        after = frozenset(t for t, n in counts.items() if is_boilerplate(n + changed.get(t, 0), pages_after))
        return before, after

    def before(self, origin: int, conn: sqlite3.Connection) -> frozenset[str]:
        """The boilerplate titles of ``origin`` before the changes."""
        return self._before[origin] if origin in self._before else boilerplate_of(conn, origin)

    def after(self, origin: int, conn: sqlite3.Connection) -> frozenset[str]:
        """The boilerplate titles of ``origin`` after the changes."""
        return self._after[origin] if origin in self._after else boilerplate_of(conn, origin)

    def flipped_pages(self, conn: sqlite3.Connection) -> set[int]:
        """The indexed pages (generation ids in search_page) with an anchorless heading
        whose title becomes boilerplate or stops being it."""
        pages: set[int] = set()
        for origin in self.origins:
            flipped = self._before[origin] ^ self._after[origin]
            if flipped:
                pages.update(r[0] for r in conn.execute(_PAGES_WITH_SQL, (origin, json.dumps(sorted(flipped)))))
        return pages

    def apply(self, conn: sqlite3.Connection) -> None:
        """Write the changes to search_origin and search_heading; rows counting no page go.

        Raises:
            sqlite3.IntegrityError: a count would fall below 0 (the tables do not match
                the index: it must be rebuilt).
        """
        conn.executemany("INSERT INTO search_origin(origin_id, pages) VALUES (?, ?) "
                         "ON CONFLICT(origin_id) DO UPDATE SET pages = pages + excluded.pages",
                         [(o, d) for o, d in self.origins.items() if d])
        conn.executemany("INSERT INTO search_heading(origin_id, title, pages) VALUES (?, ?, ?) "
                         "ON CONFLICT(origin_id, title) DO UPDATE SET pages = pages + excluded.pages",
                         [(o, t, d) for o, of_origin in self.titles.items() for t, d in of_origin.items() if d])
        for origin in self.origins:
            if conn.execute("SELECT count(*) FROM search_origin WHERE origin_id = ? AND pages < 0", (origin,)
                            ).fetchone()[0] or conn.execute(
                    "SELECT count(*) FROM search_heading WHERE origin_id = ? AND pages < 0", (origin,)).fetchone()[0]:
                raise sqlite3.IntegrityError(f"the heading counts of origin {origin} do not match the search index")
            conn.execute("DELETE FROM search_origin WHERE origin_id = ? AND pages = 0", (origin,))
        conn.executemany("DELETE FROM search_heading WHERE origin_id = ? AND title = ? AND pages = 0",
                         [(o, t) for o, of_origin in self.titles.items() for t in of_origin])
