"""Stage one of a search: candidate pages and sections from the FTS5 search tables.

Pages come from ``search_index`` scored by FTS5 ``bm25()`` with per-column weights,
sections from ``section_search_index`` the same way. FTS5 yields matches in rowid
order, which is the pages' prior order (:func:`textpile.index.docids.page_prior`), so a
scan stops after ``scan`` matches: for a query whose words most pages hold, only the
``scan`` likeliest pages are scored, never every match; below that the candidates are
exact. Both are joined to ``entity_generation`` so that only searchable generations are
found even when the index lags behind the database (a stale row never leaks), and to
the filters' tables when the query has ``site:``/``host:``/``lang:``. Scores are
returned positive (larger is better).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textpile.index.analysis import Analyzer
from textpile.index.pages import section_terms
from textpile.store.searchable import SEARCHABLE

if TYPE_CHECKING:
    from textpile.search.shard_memo import ShardMemo

_SEARCHABLE = SEARCHABLE.format(eg="eg")
#: The joins the SQL of a query's filters (:func:`textpile.search.filters.filter_sql`) needs.
FILTER_JOINS = ("JOIN url u ON u.url_id = eg.url_id JOIN origin o ON o.origin_id = u.origin_id "
                 "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id ")


@dataclass(frozen=True)
class SectionHit:
    """A matching section: its ids, anchor, title, level, Gen2 span, bm25 score, and the
    analyzed terms of its title and anchor name (stemmed and not:
    :func:`textpile.index.pages.section_terms`)."""

    section_id: int
    entity_generation_id: int
    anchor: str | None
    title: str
    level: int
    start: int
    end: int
    score: float
    title_terms: str = ""
    title_words: str = ""
    name_terms: str = ""
    name_words: str = ""


def _weights(weights: tuple[float, ...]) -> str:
    return ", ".join(repr(float(w)) for w in weights)


@dataclass(frozen=True)
class Tiers:
    """The search index's size and its first tier (``search_top_tier``, see
    :mod:`textpile.index.tier`): pages and sections in the whole index, the last page and
    section docid of the first tier (0 when the index has none: it is small) and the
    pages and sections in it."""

    pages: int = 0
    sections: int = 0
    last_docid: int = 0
    last_section_docid: int = 0
    top_pages: int = 0
    top_sections: int = 0


NO_TIERS = Tiers()
#: bm25 reads about this many document-list entries at most (the pages holding each phrase
#: it scores, summed over the phrases: :func:`expression_postings`); a scan that would read
#: more takes its matches in prior order, unscored (see :func:`page_candidates`).
SCORE_POSTINGS = 30_000
_FTS_STRING = re.compile(r'"((?:[^"]|"")*)"')


def search_tiers(conn: sqlite3.Connection) -> Tiers:
    """The :class:`Tiers` of the search index of ``conn`` (:data:`NO_TIERS` without a first
    tier). An index of an older textpile has no counts of its first tier: its docids
    numbered the pages (and sections) from 1, so its last docids are its counts."""
    cursor = conn.execute("SELECT * FROM search_top_tier")
    row = cursor.fetchone()
    if row is None:
        return NO_TIERS
    if len(cursor.description) == 4:
        return Tiers(*row, row[2], row[3])
    return Tiers(*row)


def expression_postings(conn: sqlite3.Connection, expression: str, every_shard: Mapping[str, int] | None = None) -> int:
    """About how many document-list entries FTS5's bm25 reads to score ``expression``
    (an FTS5 expression of quoted strings, as :mod:`textpile.search.plan` writes them):
    the pages holding each term of each of its strings (``search_term.docs``, or
    ``every_shard``'s ``{term: pages}`` over shards), summed over every string written in it."""
    terms = [t for m in _FTS_STRING.finditer(expression) for t in m.group(1).replace('""', '"').split()]
    if not terms:
        return 0
    if every_shard is not None:
        return sum(every_shard.get(t, 0) for t in terms)
    distinct = sorted(set(terms))
    docs: dict[str, int] = {}
    for start in range(0, len(distinct), 500):
        chunk = distinct[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        docs.update(conn.execute(f"SELECT term, docs FROM search_term WHERE term IN ({marks})", chunk).fetchall())
    return sum(docs.get(t, 0) for t in terms)


#: Sections kept beyond those asked for, for stale rows (without filters).
SECTION_SPARE = 10
#: The largest rowid: a scan without a last docid reads to the end.
LAST_ROWID = (1 << 63) - 1


def _scored_scan(conn: sqlite3.Connection, table: str, match: str, score_match: str | None,
                 weights: tuple[float, ...], scan: int, after: int = 0, last: int = LAST_ROWID) -> list[tuple[int, float]]:
    """The first ``scan`` rows of ``table`` (search_index or its first tier) matching
    ``match`` with rowid above ``after`` and up to ``last``, in rowid order, each with its
    bm25 score (of ``score_match`` when given: see :func:`page_candidates`)."""
    if score_match is None:
        return conn.execute(
            f"SELECT rowid, -bm25({table}, {_weights(weights)}) FROM {table} "
            f"WHERE {table} MATCH ? AND rowid > ? AND rowid <= ? LIMIT ?", [match, after, last, scan]).fetchall()
    found = _unscored_scan(conn, table, match, scan, after, last)
    if not found:
        return []
    scores = dict(conn.execute(
        f"SELECT rowid, -bm25({table}, {_weights(weights)}) FROM {table} "
        f"WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?", [score_match, found[0][0], found[-1][0]]).fetchall())
    return [(docid, scores.get(docid, 0.0)) for docid, _ in found]


def _unscored_scan(conn: sqlite3.Connection, table: str, match: str, scan: int,
                   after: int = 0, last: int = LAST_ROWID) -> list[tuple[int, float]]:
    """The first ``scan`` rows of ``table`` matching ``match`` with rowid above ``after``
    and up to ``last``, in rowid (prior) order, each with score 0."""
    return [(docid, 0.0) for docid, in conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid > ? AND rowid <= ? LIMIT ?",
        [match, after, last, scan])]


def tiered_scan(conn: sqlite3.Connection, tables: tuple[str, str], match: str, score_match: str | None,
                weights: tuple[float, ...], scan: int, whole: int, top: int, top_rows: int,
                last: int = LAST_ROWID, postings: int | None = None, scored: bool = True) -> list[tuple[int, float]]:
    """The first ``scan`` matches of ``match`` in prior order (up to docid ``last``), with their bm25 scores,
    from ``tables`` (the whole index and its first tier) of ``whole`` rows, the
    ``top_rows`` with a docid up to ``top`` (0: none) being in the first tier.

    With a first tier the scan runs there first; when it finds ``scan`` matches those
    are the rows the whole index would give (both yield matches in rowid order), scored
    with the tier's statistics. Otherwise the whole index is scanned. A scan is scored
    only when bm25 would read at most :data:`SCORE_POSTINGS` list entries
    (:func:`expression_postings`, in proportion to the rows of the table scanned); else
    its matches come unscored, in prior order: those of the first tier keep their
    scores, those after it follow with score 0. Not ``scored``: the same matches, every
    one unscored (a shard whose scans are scored again with every shard's statistics:
    FTS5's bm25 would read each phrase's whole document list for scores thrown away)."""
    if scored and postings is None:  # given: over every shard
        postings = expression_postings(conn, score_match or match)
    scanned: list[tuple[int, float]] = []
    full_table, top_table = tables
    if top:
        if scored and postings * top_rows / max(whole, 1) <= SCORE_POSTINGS:
            scanned = _scored_scan(conn, top_table, match, score_match, weights, scan, last=last)
        else:
            scanned = _unscored_scan(conn, top_table, match, scan, last=last)
        if len(scanned) >= scan or last <= top:
            return scanned
    if scored and postings <= SCORE_POSTINGS:
        return _scored_scan(conn, full_table, match, score_match, weights, scan, last=last)
    return scanned + _unscored_scan(conn, full_table, match, scan - len(scanned), after=top, last=last)


def page_candidates(conn: sqlite3.Connection, match: str, weights: tuple[float, ...], limit: int, scan: int,
                    filter_sql: str = "", filter_params: list | None = None,
                    score_match: str | None = None, tiers: Tiers = NO_TIERS,
                    rescore=None, seen: list[int] | None = None,
                    last: int = LAST_ROWID,
                    every_shard: Mapping[str, int] | None = None,
                    handoff: ShardMemo | None = None) -> tuple[list[tuple[int, float]], int, bool]:
    """The best ``limit`` of the first ``scan`` pages (in prior order) matching ``match``
    (an FTS5 expression over search_index), as ``(entity_generation_id, score)`` best
    first, how many matches the scan saw (stale rows found among the best not counted),
    and whether that was every match. Only searchable generations (and, with filters,
    those passing them) count.

    ``score_match`` (without filters only): a sub-expression every match of ``match``
    also matches, whose bm25 is the pages' score. FTS5's bm25 reads the whole document
    list of every phrase of its expression to count the pages holding it; leaving out
    words that more than half of the pages hold (bm25 gives them an IDF of 1e-6, so the
    scores change by about 1e-5 relative) saves reading their long lists: the matches
    are found with ``match`` (no bm25), then scored with ``score_match`` over the
    docid range they span. ``tiers`` (:func:`search_tiers`): the first tier is scanned
    first, and long document lists are not scored (:func:`tiered_scan`). ``rescore``
    (without filters only): called with the scanned ``(docid, score)`` rows and the
    expression they are scored by (``score_match`` or ``match``),
    it gives them the scores to rank by (a shard's pages scored with every shard's
    statistics: :class:`textpile.search.global_bm25.GlobalBm25`). ``seen``, when
    given, is extended with the entity generation ids of every searchable match the
    scan saw (facets and the date order count them: :mod:`textpile.search.facets`).
    ``last``: the last docid scanned (a shard's part of one index's scan over shards:
    :mod:`textpile.search.cuts`); ``every_shard``: ``{term: pages}`` of every shard,
    which decide, as in one index of them, whether the scan is scored (then by
    ``rescore``) or not (:func:`tiered_scan`). ``handoff``: a shard's
    :class:`~textpile.search.shard_memo.ShardMemo`, holding the first ``scan`` matches
    of ``match`` when the search's cut round scanned them (:func:`match_docids`): a scan
    rescored takes its rows from there (those up to ``last``) instead of scanning again."""
    if filter_sql:  # the filters decide which rows count: join them into the scan
        sql = (f"SELECT sp.entity_generation_id, -bm25(search_index, {_weights(weights)}) FROM search_index si "
               "JOIN search_page sp ON sp.docid = si.rowid "
               f"JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id {FILTER_JOINS}"
               f"WHERE search_index MATCH ? AND si.rowid <= ? AND {_SEARCHABLE}{filter_sql} LIMIT ?")
        rows = conn.execute(sql, [match, last, *(filter_params or []), scan]).fetchall()
        if seen is not None:
            seen.extend(r[0] for r in rows)
        rows.sort(key=lambda r: (-r[1], r[0]))
        return rows[:limit], len(rows), len(rows) < scan
    postings = None
    if every_shard is not None:
        postings = expression_postings(conn, score_match or match, every_shard)
        rescore = rescore if postings <= SCORE_POSTINGS else None
    handed = handoff.take(("pages", match, scan)) if handoff is not None and rescore is not None else None
    if handed is not None:  # the first matches in prior order: those up to last are this scan's
        scanned = [(docid, 0.0) for docid in handed if docid <= last][:scan]
    else:
        scanned = tiered_scan(conn, ("search_index", "search_index_top"), match, score_match, weights, scan,
                              tiers.pages, tiers.last_docid, tiers.top_pages, last, postings, scored=rescore is None)
    complete = len(scanned) < scan
    if rescore is not None:
        scanned = rescore(scanned, score_match or match)
    if seen is not None:
        every = _searchable_pages(conn, [docid for docid, _ in scanned])
        seen.extend(every[docid] for docid, _ in scanned if docid in every)
    scanned.sort(key=lambda r: (-r[1], r[0]))
    best = scanned[:limit + 10]  # a few spare for stale rows
    ids = _searchable_pages(conn, [docid for docid, _ in best])
    rows = [(ids[docid], score) for docid, score in best if docid in ids]
    return rows[:limit], len(scanned) - (len(best) - len(rows)), complete  # stale rows seen are not counted


def match_docids(conn: sqlite3.Connection, match: str, scan: int, filter_sql: str = "",
                 filter_params: list | None = None, handoff: ShardMemo | None = None) -> list[int]:
    """The docids of the first ``scan`` pages matching ``match`` in prior order, as
    :func:`page_candidates` scans them: index rows, or with filters the searchable
    generations passing them. ``handoff``: the index rows are handed on there to the
    same search's :func:`page_candidates` (a shard's cut round, :mod:`textpile.search.cuts`)."""
    if not filter_sql:
        docids = [docid for docid, in conn.execute(
            "SELECT rowid FROM search_index WHERE search_index MATCH ? LIMIT ?", [match, scan])]
        if handoff is not None:
            handoff.hand(("pages", match, scan), docids)
        return docids
    return [docid for docid, in conn.execute(
        "SELECT si.rowid FROM search_index si JOIN search_page sp ON sp.docid = si.rowid "
        f"JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id {FILTER_JOINS}"
        f"WHERE search_index MATCH ? AND {_SEARCHABLE}{filter_sql} LIMIT ?", [match, *(filter_params or []), scan])]


def _searchable_pages(conn: sqlite3.Connection, docids: list[int]) -> dict[int, int]:
    """{docid: entity_generation_id} of those ``docids`` whose generation is searchable."""
    if not docids:
        return {}
    marks = ", ".join("?" * len(docids))
    return dict(conn.execute(
        "SELECT sp.docid, sp.entity_generation_id FROM search_page sp "
        "JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id "
        f"WHERE sp.docid IN ({marks}) AND {_SEARCHABLE}", docids).fetchall())


def count_pages(conn: sqlite3.Connection, match: str, cap: int, filter_sql: str = "",
                filter_params: list | None = None) -> int:
    """How many pages match ``match``, counting at most ``cap``. Without filters this
    counts index rows (a generation closed since the last rebuild still counts until the
    next one); with filters, searchable generations passing them."""
    if not filter_sql:
        sql = "SELECT count(*) FROM (SELECT rowid FROM search_index WHERE search_index MATCH ? LIMIT ?)"
        return conn.execute(sql, [match, cap]).fetchone()[0]
    sql = (f"SELECT count(*) FROM (SELECT si.rowid FROM search_index si "
           "JOIN search_page sp ON sp.docid = si.rowid "
           f"JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id {FILTER_JOINS}"
           f"WHERE search_index MATCH ? AND {_SEARCHABLE}{filter_sql} LIMIT ?)")
    return conn.execute(sql, [match, *(filter_params or []), cap]).fetchone()[0]


def page_docids(conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """``{docid: entity_generation_id}`` (search_index rowids) of the pages ``ids`` that
    have a search_page row."""
    docids: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        docids.update(conn.execute(
            f"SELECT docid, entity_generation_id FROM search_page WHERE entity_generation_id IN ({marks})", chunk))
    return docids


def held_shares(conn: sqlite3.Connection, plan, weights: list[float], ids: list[int]) -> dict[int, float]:
    """``{entity_generation_id: share}`` for the pages ``ids``: the sum of ``weights`` (one
    per requirement of ``plan``, a :class:`textpile.search.plan.QueryPlan`) of the
    requirements each page holds; one FTS5 scan per requirement over the docid range
    these pages span. A page without a search_index row holds nothing.

    A scan of the range, not a lookup of each docid (``rowid IN (...)``): FTS5 evaluates
    the whole expression again for every docid of such a list, which for a requirement of
    several forms (an identifier's stemmed, unstemmed and split forms) cost more than
    reading its document lists once: 6.8-7.6 against 1.8-2.2 ms per call (the hybrid
    mode's 30 nearest pages, 197 calls of the speed benchmark's queries at 100,000 pages),
    the same shares."""
    if not ids:
        return {}
    docids = page_docids(conn, ids)
    out = dict.fromkeys(ids, 0.0)
    if not docids:
        return out
    for i, weight in enumerate(weights):
        for docid in matching_docids(conn, plan.subset([i]), docids):
            out[docids[docid]] += weight
    return out


def matching_docids(conn: sqlite3.Connection, match: str, docids: Mapping[int, int]) -> Iterator[int]:
    """Those of ``docids`` (search_index rowids) whose row matches ``match``
    (:func:`among_rows`: one scan of the docid range they span, see :func:`held_shares`
    for why not a lookup)."""
    among, params = among_rows(sorted(docids))
    for docid, in conn.execute(f"SELECT rowid FROM search_index WHERE search_index MATCH ? AND {among}",
                               [match, *params]):
        yield docid


def among_rows(docids: list[int]) -> tuple[str, list[int]]:
    """The condition (and its parameters) keeping the rows ``docids`` (sorted, at least
    one) of an FTS5 MATCH: FTS5 reads the docid range they span (a ``rowid IN (...)`` it
    is given makes it evaluate the expression, and bm25 count the phrase's rows, again for
    every docid), and SQLite leaves out the others with ``+rowid IN (...)`` on the rows
    FTS5 gives (the ``+`` keeps that condition from FTS5), before the select list's
    ``bm25()`` is computed: a phrase common in the range (the sections of the pages
    between two a scan found) holds ten times the rows asked for."""
    marks = ", ".join("?" * len(docids))
    return f"rowid BETWEEN ? AND ? AND +rowid IN ({marks})", [docids[0], docids[-1], *docids]


def scored_sections(conn: sqlite3.Connection, match: str, weights: tuple[float, ...], scan: int,
                    tiers: Tiers = NO_TIERS, last: int = LAST_ROWID, rescore=None,
                    every_shard: Mapping[str, int] | None = None,
                    handoff: ShardMemo | None = None) -> list[tuple[int, float]]:
    """The first ``scan`` sections (up to docid ``last``, in their pages' prior order)
    matching ``match`` as ``(docid, bm25)``, best first (ties by docid), scored by
    ``rescore`` when given (:class:`textpile.search.global_bm25.GlobalBm25` of
    section_search_index) and ``every_shard`` (as :func:`page_candidates`) says one
    index would score them; ``handoff`` as :func:`sections_scored_by`'s (taking)."""
    return sections_scored_by(conn, match, weights, scan, [(rescore, every_shard)], tiers, last, handoff)[0]


def sections_scored_by(conn: sqlite3.Connection, match: str, weights: tuple[float, ...], scan: int,
                       scorers: list[tuple], tiers: Tiers = NO_TIERS, last: int = LAST_ROWID,
                       handoff: ShardMemo | None = None, hand: bool = False) -> list[list[tuple[int, float]]]:
    """:func:`scored_sections` for each of ``scorers`` (``(rescore, every_shard)``
    pairs), in order, scanning the sections once where they can share the scan (every
    scan has the same sections: the first matches in prior order; a rescored one ignores
    the scan's scores), and the phrases' scores of the rows once
    (:meth:`textpile.search.global_bm25.GlobalBm25.__call__`'s ``shared``).

    ``handoff`` (a shard's :class:`~textpile.search.shard_memo.ShardMemo`): with ``hand``
    (a search's cut round, scanning to the end), each scan's rows with their scores are
    handed on there; without, a scan whose rows the same search's cut round handed on
    (the same expression, scan, weights, tiers and statistics:
    :meth:`textpile.search.global_bm25.TieredBm25.fingerprint`, or the postings that
    left it unscored by every shard's statistics) takes those up to ``last`` instead
    of scanning and scoring them again: its rows are a prefix of the cut round's, and
    a row's score depends neither on the others scanned nor on ``last``
    (:func:`tiered_scan` with more postings than :data:`SCORE_POSTINGS` scores the
    first tier's rows in it, each the same at any ``last``). A scan of one index (no
    ``every_shard``) is not handed on."""
    planned = []
    for rescore, every_shard in scorers:
        postings = expression_postings(conn, match, every_shard) if every_shard is not None else None
        planned.append((rescore if postings is None or postings <= SCORE_POSTINGS else None, postings))
    if handoff is not None:
        keys = [("sections", match, weights, scan, tiers, rescore.fingerprint(match)) if rescore is not None else
                ("sections", match, weights, scan, tiers, "scanned", postings)
                if postings is not None and postings > SCORE_POSTINGS else None for rescore, postings in planned]
        if not hand:
            taken = [handoff.take(key) if key is not None else None for key in keys]
            if all(rows is not None for rows in taken):  # every scan: handed on by the cut round
                return [sorted([r for r in rows if r[0] <= last][:scan], key=lambda r: (-r[1], r[0]))
                        for rows in taken]
    tables = ("section_search_index", "section_search_index_top")
    scans: dict[object, list[tuple[int, float]]] = {}
    for rescore, postings in planned:  # scored scans first: a rescored scorer takes any scan
        if rescore is None and postings not in scans:
            scans[postings] = tiered_scan(conn, tables, match, None, weights, scan, tiers.sections,
                                          tiers.last_section_docid, tiers.top_sections, last, postings)
    shared: dict = {}
    out = []
    for rescore, postings in planned:
        if rescore is None:
            scanned = list(scans[postings])
        else:
            if not scans:
                scans["unscored"] = tiered_scan(conn, tables, match, None, weights, scan, tiers.sections,
                                                tiers.last_section_docid, tiers.top_sections, last, scored=False)
            scanned = rescore(next(iter(scans.values())), match, shared)
        if handoff is not None and hand and keys[len(out)] is not None:
            handoff.hand(keys[len(out)], list(scanned))  # in prior order
        scanned.sort(key=lambda r: (-r[1], r[0]))
        out.append(scanned)
    return out


def section_candidates(conn: sqlite3.Connection, analyzer: Analyzer, match: str, weights: tuple[float, ...],
                       limit: int, scan: int, filter_sql: str = "", filter_params: list | None = None,
                       tiers: Tiers = NO_TIERS, last: int = LAST_ROWID, rescore=None,
                       floor: tuple[float, int, int] | None = None,
                       every_shard: Mapping[str, int] | None = None,
                       handoff: ShardMemo | None = None) -> list[SectionHit]:
    """The best ``limit`` of the first ``scan`` sections (in their pages' prior order)
    matching ``match`` (over section_search_index, its first tier first as in
    :func:`page_candidates`), best first; only sections of searchable generations (and,
    with filters, of pages passing them). ``analyzer`` analyzes the titles and anchor
    names of the ``limit`` returned (the rerank's strings). ``last``, ``rescore``,
    ``every_shard``, ``handoff``: as :func:`scored_sections`; ``floor``
    ``(score, section_summary_id, docid)``: only sections
    scoring above ``score``, or equal to it with an id up to the given one (a shard's
    part of the best sections of one index: :mod:`textpile.search.cuts`)."""
    joins = FILTER_JOINS if filter_sql else ""
    scanned = scored_sections(conn, match, weights, scan, tiers, last, rescore, every_shard, handoff)
    if floor is not None:
        scanned = [r for r in scanned if r[1] >= floor[0]]
    if not filter_sql:
        scanned = scanned[:limit + SECTION_SPARE]
    scores = dict(scanned)
    found = section_rows(conn, [docid for docid, _ in scanned], filter_sql, filter_params, joins)
    if floor is not None:
        found = [r for r in found if scores[r[0]] > floor[0] or (r[1] <= floor[1] and r[0] <= floor[2])]
    found.sort(key=lambda r: (-scores[r[0]], r[1]))
    analyzed: dict[tuple[str, str | None, str | None], tuple[str, str, str, str]] = {}  # headings repeat
    hits = []
    for row in found[:limit]:
        key = (row[4], row[3], row[8])
        terms = analyzed.get(key)
        if terms is None:
            terms = analyzed[key] = section_terms(analyzer, row[4], row[3], row[8])
        hits.append(SectionHit(*row[1:8], scores[row[0]], *terms))
    return hits


def section_rows(conn: sqlite3.Connection, docids: list[int], filter_sql: str = "", filter_params: list | None = None,
                 joins: str = "") -> list[tuple]:
    """``(docid, section_summary_id, entity_generation_id, anchor, title, level,
    start_offset, end_offset, page language)`` of the sections ``docids`` of searchable
    generations (passing ``filter_sql`` with ``joins``)."""
    return _searchable_sections(
        conn, "t.docid, t.section_summary_id, s.entity_generation_id, s.anchor, s.title, s.level, s.start_offset, "
        "s.end_offset, sp.language", "LEFT JOIN search_page sp ON sp.entity_generation_id = s.entity_generation_id ",
        docids, filter_sql, filter_params, joins)


def section_ids(conn: sqlite3.Connection, docids: list[int], filter_sql: str = "", filter_params: list | None = None,
                joins: str = "") -> dict[int, int]:
    """``{docid: section_summary_id}`` of the sections ``docids`` of searchable generations
    (passing ``filter_sql`` with ``joins``): the first two columns of :func:`section_rows`,
    read alone (a shard's cut round reads them for its first 300 matches: 0.18 ms against
    0.42 for the whole rows at 100K pages)."""
    return dict(_searchable_sections(conn, "t.docid, t.section_summary_id", "", docids, filter_sql, filter_params,
                                     joins))


def _searchable_sections(conn: sqlite3.Connection, columns: str, more_joins: str, docids: list[int], filter_sql: str,
                         filter_params: list | None, joins: str) -> list[tuple]:
    """``columns`` of the sections ``docids`` of searchable generations (passing
    ``filter_sql`` with ``joins``; ``more_joins`` for the columns), 500 docids a statement."""
    found: list[tuple] = []
    for start in range(0, len(docids), 500):
        chunk = docids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        found.extend(conn.execute(
            f"SELECT {columns} "
            "FROM search_section t JOIN section_summary s ON s.section_summary_id = t.section_summary_id "
            f"JOIN entity_generation eg ON eg.entity_generation_id = s.entity_generation_id {joins}{more_joins}"
            f"WHERE t.docid IN ({marks}) AND {_SEARCHABLE}{filter_sql}", [*chunk, *(filter_params or [])]))
    return found


@dataclass(frozen=True)
class PageInfo:
    """What the reranker and the result need of a candidate page."""

    entity_generation_id: int
    uuid: bytes | None
    url: str
    fragment: str | None
    title: str | None
    headline: str | None
    description: str | None
    language: str | None
    time_updated: int | None
    time_created: int | None
    indexiness: int
    text_pile_id: int | None
    text_pile_v0_2_id: int | None
    stem_language: str | None
    term_count: int
    in_links: int
    content_in_links: int
    link_density: float
    text_length: int  # code points of the Gen2 text (sections' spans are within it)
    title_terms: str  # search_page's analyzed fields (lines of terms)
    title_words: str
    url_terms: str
    url_last_terms: str
    anchor_terms: str
    docid: int = 0  # its search index row (prior order: textpile.index.docids), 0 without one


def page_infos(conn: sqlite3.Connection, ids: list[int]) -> dict[int, PageInfo]:
    """:class:`PageInfo` of each of ``ids`` (pages without a search_page row get zeros)."""
    out: dict[int, PageInfo] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        sql = (
            "SELECT eg.entity_generation_id, eg.entity_generation_uuid, u.str_url, eg.url_fragment, dd.title, "
            "dd.primary_headline, dd.description, dd.primary_language, dd.time_updated_unix_utc, "
            "dd.time_created_unix_utc, coalesce(dd.indexiness, 0), eg.text_pile_id, eg.text_pile_v0_2_id, "
            "sp.language, coalesce(sp.term_count, 0), coalesce(sp.in_links, 0), coalesce(sp.content_in_links, 0), "
            "coalesce(sp.link_density, 0.0), coalesce(sp.text_length, 0), "
            "coalesce(sp.title_terms, ''), coalesce(sp.title_words, ''), coalesce(sp.url_terms, ''), "
            "coalesce(sp.url_last_terms, ''), coalesce(sp.anchor_terms, ''), coalesce(sp.docid, 0) "
            "FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
            "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
            "LEFT JOIN search_page sp ON sp.entity_generation_id = eg.entity_generation_id "
            f"WHERE eg.entity_generation_id IN ({marks})"
        )
        for row in conn.execute(sql, chunk):
            out[row[0]] = PageInfo(*row)
    return out
