"""The date order of a search (``sort:date``, ``sort=date``): newest first by the date
the page gives itself (:data:`textpile.search.filters.PAGE_DATE_SQL`), pages without a
date last, and pages of the same date in relevance order (issue 32, "Sort by date").

The pages ordered are those the search already has: every reranked candidate and every
match the candidate scan saw (:func:`with_seen`), so a date-sorted page lists every
match when the scan saw them all (``total_is_lower_bound`` false).
"""

from __future__ import annotations

import sqlite3

from textpile.errors import TextpileError
from textpile.search.candidates import page_infos
from textpile.search.facets import PageFacts
from textpile.search.features import Scored
from textpile.search.query import SORTS


class SortError(TextpileError):
    """An order that is not one of :data:`textpile.search.query.SORTS`; the message names ``sort``."""


def check_sort(sort: str | None) -> str | None:
    """``sort`` if it is one of :data:`SORTS`, None for None or "" (the query's order).

    Raises:
        SortError: any other value.
    """
    if sort is None or sort == "":
        return None
    if sort not in SORTS:
        raise SortError(f"sort: unknown order {sort!r} (expected one of: {', '.join(SORTS)})")
    return sort


def with_seen(conn: sqlite3.Connection, ranking: list[Scored], seen: list[int]) -> list[Scored]:
    """``ranking`` followed by the pages of ``seen`` (entity generation ids, in scan
    order) that it lacks, each with score 0 and no features (one query of their rows)."""
    have = {s.info.entity_generation_id for s in ranking}
    missing = list(dict.fromkeys(i for i in seen if i not in have))
    infos = page_infos(conn, missing) if missing else {}
    return ranking + [Scored(infos[i], {"title_cover": 0.0, "section_cover": 0.0}) for i in missing if i in infos]


def by_date(ranking: list[Scored], facts: dict[int, PageFacts]) -> list[Scored]:
    """``ranking`` newest first by the pages' own dates (``facts``), undated pages last;
    the sort is stable, so equal dates keep their relevance order."""
    def key(s: Scored) -> tuple[bool, int]:
        fact = facts.get(s.info.entity_generation_id)
        date = fact.date if fact is not None else None
        return date is None, -(date or 0)
    return sorted(ranking, key=key)
