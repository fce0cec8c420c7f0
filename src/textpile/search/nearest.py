"""Semantic retrieval, a stage of :mod:`textpile.search.service`: the searchable pages
nearest in meaning to a query, within its filters and without its exclusions.

The query's vector is made from its words (filters and exclusions left out,
:func:`query_text`); the page vectors (:class:`textpile.semantic.vectors.PageVectors`)
are searched for the :data:`SEMANTIC_DEPTH` nearest ones that the query's ``site:``,
``host:`` and ``lang:`` filters allow, and pages holding an excluded ``-"phrase"`` are
dropped as keyword mode drops them (a match in the documented full_text_entity_index).
A quoted phrase holds for them too: :func:`lacking_phrases` names the pages without one
(a vector page may lack the query's plain words, never a phrase the user quoted).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import numpy as np

from textpile.search.filters import filter_sql
from textpile.search.plan import QueryPlan
from textpile.search.query import ParsedQuery
from textpile.search.query_compiler import fts_string
from textpile.semantic.vectors import PageVectors
from textpile.store.searchable import SEARCHABLE

#: Pages the vectors contribute per search (fused in hybrid mode, the ranking in semantic).
SEMANTIC_DEPTH = 100


def query_text(parsed: ParsedQuery) -> str:
    """The text a query's vector is made of: its words and phrases, in order, with spaces."""
    return " ".join(t.text for t in parsed.positive_terms)


def nearest_pages(conn: sqlite3.Connection, parsed: ParsedQuery, vectors: PageVectors, query_vector: np.ndarray,
                  exclude: int | None = None) -> list[tuple[int, float]]:
    """The at most :data:`SEMANTIC_DEPTH` searchable pages of ``conn`` nearest to
    ``query_vector`` (a unit vector), as ``(entity_generation_id, cosine similarity)``,
    most similar first: those ``parsed``'s filters allow, without the pages holding one of
    its excluded phrases, and without the page ``exclude`` (more like this).

    Raises:
        sqlite3.Error: database problems.
    """
    nearest = vectors.nearest(query_vector, SEMANTIC_DEPTH + len(parsed.excluded) * 10, _allowed(conn, parsed),
                              exclude)
    dropped = _excluded(conn, parsed, [i for i, _ in nearest])
    return [(i, sim) for i, sim in nearest if i not in dropped][:SEMANTIC_DEPTH]


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


def _excluded(conn: sqlite3.Connection, parsed: ParsedQuery, ids: list[int]) -> set[int]:
    """Those of ``ids`` whose page holds an excluded word or phrase (the unobtanium FTS
    index's match, as keyword mode excludes them)."""
    if not parsed.excluded or not ids:
        return set()
    match = " OR ".join(fts_string(t.text) for t in parsed.excluded)
    marks = ", ".join("?" * len(ids))
    try:
        return {r[0] for r in conn.execute(
            f"SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ? AND rowid IN ({marks})",
            [match, *ids])}
    except sqlite3.OperationalError:  # an exclusion FTS5 cannot parse excludes nothing (keyword mode drops it too)
        return set()


def lacking_phrases(conn: sqlite3.Connection, plan: QueryPlan, ids: list[int]) -> set[int]:
    """Those of the pages ``ids`` (entity generation ids) that do not hold every
    requirement of ``plan`` with a quoted phrase in it, matched in the search index as
    keyword mode matches them (the phrase's analyzed forms, an ``OR`` group whole): a
    page found by its vector is a result only with the phrases the query quoted. Empty
    when the query quoted none.

    Raises:
        sqlite3.Error: database problems.
    """
    quoted = [i for i, requirement in enumerate(plan.requirements) if any(item.phrase for item in requirement)]
    if not quoted or not ids:
        return set()
    match = plan.subset(quoted)
    marks = ", ".join("?" * len(ids))
    holding = {r[0] for r in conn.execute(
        "SELECT sp.entity_generation_id FROM search_page sp JOIN search_index si ON si.rowid = sp.docid "
        f"WHERE search_index MATCH ? AND sp.entity_generation_id IN ({marks})", [match, *ids])}
    return set(ids) - holding
