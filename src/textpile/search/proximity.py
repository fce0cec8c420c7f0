"""Term proximity: whether a page holds the query's words close together.

A page that holds "date" and "formatting" anywhere is a weaker answer to ``date
formatting`` than one that writes "formatting ... dates" in one phrase; a short
description of a task ("compare two branches", "sha-256 hash") is usually written with
its words close together on the page that does it. The ``proximity`` feature
(:mod:`textpile.search.features`) measures it: each pair of consecutive weighted words of
the query (stop words and words on every page weigh nothing:
:mod:`textpile.search.weights`) counts when the page holds the two within
:data:`PROXIMITY_WINDOW` terms of each other in one column (FTS5 ``NEAR``, over the
analyzed terms, so stemmed), weighted by the smaller weight of the two; the feature is
the share of the pairs' weight the page holds, 0 for a query of fewer than two weighted
words. One FTS5 lookup per pair, of the candidates' docids only.

Source: term proximity as a ranking signal (Tao and Zhai, "An exploration of proximity
measures in information retrieval", SIGIR 2007; Büttcher, Clarke and Lushman 2006); the
window was chosen on the relevance benchmark (``bench/relevance``, leave one site out:
README, issue 29).
"""

from __future__ import annotations

import itertools
import sqlite3

from textpile.search.candidates import page_docids
from textpile.search.plan import Item, QueryPlan, fts_phrase

#: Terms at most between the two words of a pair (FTS5 ``NEAR(a b, N)``).
PROXIMITY_WINDOW = 3
#: Alternative pairs (stemmed and unstemmed forms of the two words) tried for one pair.
MAX_FORMS = 16


def near_expression(first: list[Item], second: list[Item], window: int = PROXIMITY_WINDOW,
                    indexed: set[str] | None = None) -> str | None:
    """The FTS5 expression matching pages that hold a form of ``first`` (a requirement:
    items any of which satisfies it) within ``window`` terms of a form of ``second``;
    at most :data:`MAX_FORMS` form pairs (``NEAR`` groups joined with ``OR``). With
    ``indexed`` (the terms the index holds), only forms made of such terms; None when
    either side has none left."""
    def forms(requirement: list[Item]) -> list[tuple[str, ...]]:
        return [a for item in requirement for a in item.alternatives
                if indexed is None or all(t in indexed for t in a)]

    pairs = list(itertools.islice(itertools.product(forms(first), forms(second)), MAX_FORMS))
    if not pairs:
        return None
    return " OR ".join(f"NEAR({fts_phrase(a)} {fts_phrase(b)}, {window})" for a, b in pairs)


def indexed_terms(conn: sqlite3.Connection, requirements: list[list[Item]]) -> set[str]:
    """The terms of ``requirements``' forms that some page of the index holds."""
    terms = sorted({t for r in requirements for item in r for a in item.alternatives for t in a})
    if not terms:
        return set()
    marks = ", ".join("?" * len(terms))
    return {r[0] for r in conn.execute(f"SELECT term FROM search_term WHERE term IN ({marks}) AND docs > 0", terms)}


def proximity_shares(conn: sqlite3.Connection, core: QueryPlan, weights: list[float], ids: list[int],
                     window: int = PROXIMITY_WINDOW) -> dict[int, float]:
    """``{entity_generation_id: share}`` for the pages ``ids``: the weight of the pairs of
    consecutive weighted requirements of ``core`` (``weights``: one per requirement, 0
    for a stop word) that the page holds within ``window`` terms, over the weight of all
    such pairs (a pair weighs the smaller of its two weights). Every page gets 0 when
    fewer than two requirements weigh anything; a page without a search_index row 0.

    Raises:
        ValueError: ``weights`` is not one per requirement of ``core``.
        sqlite3.Error: database problems.
    """
    if len(weights) != len(core.requirements):
        raise ValueError(f"{len(weights)} weights for {len(core.requirements)} requirements")
    out = dict.fromkeys(ids, 0.0)
    weighted = [(r, w) for r, w in zip(core.requirements, weights) if w > 0]
    pairs = [(a, b, min(wa, wb)) for (a, wa), (b, wb) in zip(weighted, weighted[1:])]
    total = sum(w for _, _, w in pairs)
    if not pairs or total <= 0 or not ids:
        return out
    docids = page_docids(conn, ids)
    if not docids:
        return out
    marks = ", ".join("?" * len(docids))
    indexed = indexed_terms(conn, [r for r, _ in weighted])  # a form no page holds costs a lookup per page
    for first, second, weight in pairs:
        expression = near_expression(first, second, window, indexed)
        if expression is None:
            continue
        for docid, in conn.execute(f"SELECT rowid FROM search_index WHERE search_index MATCH ? AND rowid IN ({marks})",
                                   [expression, *docids]):
            out[docids[docid]] += weight / total
    return out
