"""Semantic retrieval, a stage of :mod:`textpile.search.service`: the searchable pages
nearest in meaning to a query, within its filters and without its exclusions.

The query's vector is made from its words (filters and exclusions left out,
:func:`query_text`); the page vectors (:class:`textpile.semantic.vectors.PageVectors`)
are searched for the :data:`SEMANTIC_DEPTH` nearest ones that the query's ``site:``,
``host:`` and ``lang:`` filters allow. The query's words hold for them as keyword mode
reads them, in the search index (:func:`unmatched`): a page holding an excluded
``-"phrase"`` is dropped, and so is one without a phrase the query quoted (a page found
by its vector may lack the query's plain words, never a quoted phrase).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import numpy as np

from textpile.search.filters import filter_sql
from textpile.search.plan import QueryPlan
from textpile.search.query import ParsedQuery
from textpile.semantic.vectors import PageVectors
from textpile.store.searchable import SEARCHABLE

#: Pages the vectors contribute per search (fused in hybrid mode, the ranking in semantic).
SEMANTIC_DEPTH = 100


def query_text(parsed: ParsedQuery) -> str:
    """The text a query's vector is made of: its words and phrases, in order, with spaces."""
    return " ".join(t.text for t in parsed.positive_terms)


def nearest_pages(conn: sqlite3.Connection, parsed: ParsedQuery, plan: QueryPlan, vectors: PageVectors,
                  query_vector: np.ndarray, exclude: int | None = None) -> list[tuple[int, float]]:
    """The at most :data:`SEMANTIC_DEPTH` searchable pages of ``conn`` nearest to
    ``query_vector`` (a unit vector), as ``(entity_generation_id, cosine similarity)``,
    most similar first: those ``parsed``'s filters allow, without the pages holding one of
    the excluded words or phrases of ``plan`` (the query's plan) or lacking one of its
    quoted phrases (:func:`unmatched`), and without the page ``exclude`` (more like this).

    Raises:
        sqlite3.Error: database problems.
    """
    nearest = vectors.nearest(query_vector, SEMANTIC_DEPTH + len(plan.excluded) * 10, _allowed(conn, parsed),
                              exclude)
    dropped = unmatched(conn, plan, quoted_requirements(plan, parsed), [i for i, _ in nearest])
    return [(i, sim) for i, sim in nearest if i not in dropped][:SEMANTIC_DEPTH]


def quoted_requirements(plan: QueryPlan, parsed: ParsedQuery) -> list[int]:
    """The indexes of the requirements of ``plan`` that hold a phrase the query
    ``parsed`` quoted (not the several words of a synonym, which match as a phrase too)."""
    typed = {t.text for t in parsed.positive_terms if t.phrase}
    return [i for i, requirement in enumerate(plan.requirements)
            if any(item.phrase and item.text in typed for item in requirement)]


def unmatched(conn: sqlite3.Connection, plan: QueryPlan, required: list[int], ids: list[int]) -> set[int]:
    """Those of the pages ``ids`` (entity generation ids) that keyword mode would not
    find for the requirements of ``plan`` at ``required`` (:func:`quoted_requirements`):
    a page lacking one of them, or holding one of the plan's excluded words or phrases,
    matched in the search index as keyword mode matches them (analyzed forms, identifiers'
    parts). Each page is looked up by its docid (at most ``len(ids)`` lookups, whatever the
    phrase's document list). Empty when nothing is required or excluded.

    Raises:
        sqlite3.Error: database problems.
    """
    if not ids or not (required or plan.excluded):
        return set()
    if required:  # the pages holding every quoted phrase and no exclusion
        match, matching_are_kept = plan.subset(required), True
    else:
        match, matching_are_kept = " OR ".join(item.fts() for item in plan.excluded), False
    marks = ", ".join("?" * len(ids))
    matching = {r[0] for r in conn.execute(
        "SELECT sp.entity_generation_id FROM search_page sp CROSS JOIN search_index si ON si.rowid = sp.docid "
        f"WHERE si.search_index MATCH ? AND sp.entity_generation_id IN ({marks})", [match, *ids])}
    return set(ids) - matching if matching_are_kept else matching


def _allowed(conn: sqlite3.Connection, parsed: ParsedQuery) -> Callable[[np.ndarray], np.ndarray] | None:
    """A mask function for :meth:`PageVectors.nearest` from the query's filters, or None."""
    if not parsed.filters:
        return None
    fsql, fparams = filter_sql(parsed.filters)
    sql = ("SELECT eg.entity_generation_id FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
           "JOIN origin o ON o.origin_id = u.origin_id "
           "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
           f"WHERE {SEARCHABLE.format(eg='eg')}{fsql}")
    ok = np.asarray([r[0] for r in conn.execute(sql, fparams)], dtype=np.int64)
    return lambda ids: np.isin(ids, ok)
