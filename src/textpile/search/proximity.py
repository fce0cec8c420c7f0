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
words.

Its cost is bounded by the candidates: the rerank measures it only for the first
:data:`PROXIMITY_DEPTH` candidates by the score without it, a word's split forms
(``backend`` -> ``back end``) are left out, and each pair costs one FTS5 statement, either
a lookup of those candidates' docids or, when the pair's rarer words are on fewer pages
than that lookup is worth (:data:`SCAN_DOCS_PER_LOOKUP`), a scan of the pages holding
the pair close together within the docid range the candidates span.

Source: term proximity as a ranking signal (Tao and Zhai, "An exploration of proximity
measures in information retrieval", SIGIR 2007; Büttcher, Clarke and Lushman 2006); the
window was chosen on the relevance benchmark (``bench/relevance``, leave one site out:
README, issue 29).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Mapping

from textpile.search.candidates import matching_docids, page_docids
from textpile.search.plan import Alternative, Item, QueryPlan, fts_phrase

#: Terms at most between the two words of a pair (FTS5 ``NEAR(a b, N)``).
PROXIMITY_WINDOW = 3
#: Alternative pairs (stemmed and unstemmed forms of the two words) tried for one pair.
MAX_FORMS = 16
#: Candidates (in the order of the score without proximity) whose proximity the rerank
#: measures; the others get 0. On the relevance benchmark's candidate lists the first 10
#: keep the whole gain: everyday + natural MRR@10 hybrid 0.703 and keyword 0.603, as with
#: every candidate (and with 15, 20, 30 or 50); leaving one site out 0.700 and 0.601.
PROXIMITY_DEPTH = 10
#: A NEAR scan of the candidates' docid range costs about as much per page holding the
#: pair's rarer word as a lookup of one candidate's docid costs per form pair, over this
#: many pages. A lookup (``rowid IN (...)``) makes FTS5 evaluate the whole NEAR expression
#: again for each docid; on the speed benchmark's queries at 100,000 pages in hybrid mode
#: (692 pairs over about 20 candidates) the lookups cost 1,371 ms, the scans 313 ms, the
#: choice with 1,000 here 329 ms and with 40 (the value before, measured on 10,000 pages
#: with scans of the whole index) 1,097 ms; above 1,000 a lookup is kept as the bound for
#: words on most pages.
SCAN_DOCS_PER_LOOKUP = 1000


def form_pairs(first: list[Item], second: list[Item],
               indexed: Mapping[str, int] | set[str] | None = None) -> list[tuple[Alternative, Alternative]]:
    """The pairs of forms (a form of ``first``, a requirement: items any of which
    satisfies it; a form of ``second``) whose closeness counts, at most
    :data:`MAX_FORMS`: a word's own forms, not its split forms (a form of more terms than
    the word's first: ``back end`` of ``backend``, :func:`textpile.search.plan.with_split_forms`);
    with ``indexed`` (the terms the index holds), only forms made of such terms."""
    def forms(requirement: list[Item]) -> list[Alternative]:
        return [a for item in requirement for a in item.alternatives
                if len(a) <= len(item.alternatives[0]) and (indexed is None or all(t in indexed for t in a))]

    return list(itertools.islice(itertools.product(forms(first), forms(second)), MAX_FORMS))


def near_expression(first: list[Item], second: list[Item], window: int = PROXIMITY_WINDOW,
                    indexed: Mapping[str, int] | set[str] | None = None) -> str | None:
    """The FTS5 expression matching pages that hold a form of ``first`` within
    ``window`` terms of a form of ``second`` (the pairs of :func:`form_pairs`, ``NEAR``
    groups joined with ``OR``); None when either side has no form left."""
    pairs = form_pairs(first, second, indexed)
    return _near(pairs, window) if pairs else None


def _near(pairs: list[tuple[Alternative, Alternative]], window: int) -> str:
    return " OR ".join(f"NEAR({fts_phrase(a)} {fts_phrase(b)}, {window})" for a, b in pairs)


def indexed_terms(conn: sqlite3.Connection, requirements: list[list[Item]]) -> dict[str, int]:
    """``{term: pages holding it}`` for the terms of ``requirements``' forms that some
    page of the index holds (search_term)."""
    terms = sorted({t for r in requirements for item in r for a in item.alternatives for t in a})
    if not terms:
        return {}
    marks = ", ".join("?" * len(terms))
    return dict(conn.execute(f"SELECT term, docs FROM search_term WHERE term IN ({marks}) AND docs > 0", terms))


def scan_is_cheaper(pairs: list[tuple[Alternative, Alternative]], docs: Mapping[str, int], candidates: int) -> bool:
    """Whether scanning every page that holds one of ``pairs`` close together costs less
    than looking up ``candidates`` docids: the pages to scan are at most, per form pair,
    those holding its rarest term (``docs``: pages per term), against
    :data:`SCAN_DOCS_PER_LOOKUP` per candidate and form pair."""
    scanned = sum(min(docs[t] for t in (*a, *b)) for a, b in pairs)
    return scanned <= SCAN_DOCS_PER_LOOKUP * candidates * len(pairs)


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
        forms = form_pairs(first, second, indexed)
        if not forms:
            continue
        if scan_is_cheaper(forms, indexed, len(docids)):  # over the docids the pages span
            found = matching_docids(conn, _near(forms, window), docids)
        else:
            found = (docid for docid, in conn.execute(
                f"SELECT rowid FROM search_index WHERE search_index MATCH ? AND rowid IN ({marks})",
                [_near(forms, window), *docids]))
        for docid in found:
            out[docids[docid]] += weight / total
    return out
