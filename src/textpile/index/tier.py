"""The first tier of the search index: the same rows for its likeliest pages.

``search_index_top`` and ``section_search_index_top`` hold the rows of the first
:data:`TOP_TIER_PAGES` pages in docid order and their sections (a tiered index, Manning,
Raghavan and Schütze, *Introduction to Information Retrieval*, section 7.2.1), when the
index has more pages than that. FTS5's ``bm25()`` reads the whole document list of every
phrase it scores to count the pages holding it; over the first tier that list is at
most :data:`TOP_TIER_PAGES` long, and since both tiers yield matches in docid order, a
scan that finds enough matches in the first tier finds the same pages the whole index
would (only the IDF and average lengths are taken over the tier).

The tier is a prefix of the docid order: every page with a docid up to
``search_top_tier.last_docid``. An update keeps it exact: after its changes the tier's
end is the :data:`TOP_TIER_PAGES`-th docid again, and the pages between the old end and
the new one move in or out (:func:`moved_pages`).
"""

from __future__ import annotations

import sqlite3

from textpile.index.docids import last_section_docid

#: Pages in the first tier: an index with more pages than this gets one.
TOP_TIER_PAGES = 10_000


def tier_end(conn: sqlite3.Connection, pages: int, top_tier_pages: int = TOP_TIER_PAGES) -> int:
    """The last docid of the first tier of an index of ``pages`` pages (search_page as it
    is now): the ``top_tier_pages``-th smallest docid, 0 (no tier) when ``pages`` is not
    more than ``top_tier_pages`` (at least 1)."""
    top = max(1, top_tier_pages)
    if pages <= top:
        return 0
    return conn.execute("SELECT docid FROM search_page ORDER BY docid LIMIT 1 OFFSET ?", (top - 1,)).fetchone()[0]


def section_end(last_docid: int) -> int:
    """The last section docid of a first tier that ends at page docid ``last_docid``."""
    return last_section_docid(last_docid) if last_docid else 0


def moved_pages(conn: sqlite3.Connection, old_end: int, new_end: int, exclude: set[int]) -> tuple[list[int], list[int]]:
    """The pages (generation ids in search_page, but not in ``exclude``) that enter the
    first tier when its end moves from docid ``old_end`` to ``new_end`` (0: no tier), and
    those that leave it."""
    low, high = sorted((old_end, new_end))
    if low == high:
        return [], []
    rows = conn.execute("SELECT entity_generation_id FROM search_page WHERE docid > ? AND docid <= ? ORDER BY docid",
                        (low, high)).fetchall()
    moved = [r[0] for r in rows if r[0] not in exclude]
    return (moved, []) if new_end > old_end else ([], moved)
