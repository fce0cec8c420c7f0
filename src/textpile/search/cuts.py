"""One index's scans over shards: where each shard's part of them ends.

One index scores only the first :data:`~textpile.search.engine.PAGE_SCAN` pages matching
a query in prior order (their docids, :mod:`textpile.index.docids`), and keeps the best
:data:`~textpile.search.engine.SECTION_DEPTH` of the first
:data:`~textpile.search.engine.SECTION_SCAN` matching sections
(:mod:`textpile.search.candidates`). A shard scanning its own first matches would score
other pages than one index of all the shards, so a search over shards
(:mod:`textpile.search.fanout`) cuts the scans together first:

1. each shard gives the docids of its first matching pages and sections, the sections
   with their bm25 over every shard (:func:`scan_keys`: the query planned and scored as
   its search will, with the summed statistics);
2. :func:`cut_scans` merges them in one index's prior order: by prior key (a docid's
   top bits, :func:`textpile.index.docids.prior_key` of the page's own links, the same on
   every shard), then by shard, then by docid (one index numbering the generations shard
   by shard), and cuts the pages and the sections where one index's scans end; among the
   sections kept, the best ``SECTION_DEPTH`` by bm25 (ties by shard, then
   ``section_summary_id``);
3. each shard searches with its :class:`ScanCut` (in
   :attr:`textpile.search.weights.CorpusStats.cut`): its pages and sections up to its last
   docid in the cut, its sections from the floor of the best ones, and the page scan
   counted as cut short (a lower-bound total) when the one over every shard was.

When fewer than :data:`~textpile.search.engine.PARTIAL_BELOW` pages of all the shards
hold every word, the scans of the partial-match levels are cut the same way (not the
level of a long query's rarest words, whose count of words each shard finds on its
own). With one index's first tier (``tier_last``), each scan is also said to end in it
or not (:func:`textpile.search.candidates.tiered_scan`), and the best sections of a
scan ending in it are those with the best bm25 over the tier.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from textpile.index.analysis import Analyzer
from textpile.index.docids import SECTIONS_PER_PAGE, last_section_docid
from textpile.search.candidates import (FILTER_JOINS, LAST_ROWID, SECTION_SPARE, match_docids, search_tiers, section_ids,
                                        sections_scored_by)
from textpile.search.global_bm25 import section_rescorer
from textpile.search.budget import Budget
from textpile.search.engine import PARTIAL_BELOW, search_plan
from textpile.search.engine import _partial_levels as partial_levels
from textpile.search.filters import filter_sql
from textpile.search.plan import index_languages, language_codes, plan_query
from textpile.search.query import parse_query
from textpile.search.rank import DEFAULT_RANKING
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, with_synonyms
from textpile.search.weights import CorpusStats

#: Bits of a page docid below its prior key (textpile.index.docids: the entity_generation_id).
PRIOR_KEY_SHIFT = 28
#: Bits of a section docid below its page's prior key.
_SECTION_ID_BITS = PRIOR_KEY_SHIFT + SECTIONS_PER_PAGE.bit_length() - 1


@dataclass(frozen=True)
class ScanCut:
    """A shard's part of one index's scans over shards: the last docid of its pages
    (and sections) that one index's page (section) scan reaches, whether that page scan
    was cut short (more pages match), and the floor of the best sections: a section
    counts when its bm25 is above ``section_floor[0]``, or equal with a
    ``section_summary_id`` up to ``section_floor[1]`` and a docid up to
    ``section_floor[2]`` (None: no floor). ``depth``: the
    page candidates one index reranks (its page's; None: the shard's own page's), the
    shard keeping its best ones as candidates (it holds one index's among them). ``few``:
    whether fewer than :data:`~textpile.search.engine.PARTIAL_BELOW` pages of all the
    shards hold every word (then partial matches and close words are looked for; None:
    as the shard's own count says). ``level_last``, ``level_section_last``,
    ``level_section_floor``: per partial-match level, the last docid of its page and
    section scans and the floor of its best sections (the level of a long query's rarest
    words is not cut). ``tier_pages``, ``tier_sections`` (``level_tier``,
    ``level_section_tier``, per level): whether one index's page (section) scan ends in
    its first tier, which then scores it with the tier's
    statistics (:func:`textpile.search.candidates.tiered_scan`; over shards
    :attr:`textpile.search.weights.CorpusStats.tier`). ``levels``: how many
    partial-match levels one index searches before it holds ``PARTIAL_BELOW`` pages
    (None: as the shard's own count says)."""

    last_page: int = LAST_ROWID
    last_section: int = LAST_ROWID
    cut_pages: bool = False
    section_floor: tuple[float, int, int] | None = None
    depth: int | None = None
    few: bool | None = None
    level_last: tuple[int, ...] = ()
    level_section_last: tuple[int, ...] = ()
    level_section_floor: tuple[tuple[float, int, int] | None, ...] = ()
    tier_pages: bool = False
    tier_sections: bool = False
    level_tier: tuple[bool, ...] = ()
    level_section_tier: tuple[bool, ...] = ()
    levels: int | None = None


@dataclass(frozen=True)
class ScanKeys:
    """A shard's first matches of a query: page docids in prior order, and ``(docid,
    bm25, section_summary_id)`` of sections in prior order (id -1: a section of a page
    no longer searchable, or failing the query's filters), and per partial-match level
    (when the shard holds few pages with every word) its first pages and sections;
    ``section_tier`` (``level_section_tier``): the (level's) sections' bm25 over one
    index's first tier, position by position (empty: it has none)."""

    pages: list[int]
    sections: list[tuple[int, float, int]]
    levels: list[list[int]] = field(default_factory=list)
    level_sections: list[list[tuple[int, float, int]]] = field(default_factory=list)
    #: the bm25 of ``sections`` with the statistics of one index's first tier (when it has one)
    section_tier: list[float] = field(default_factory=list)
    level_section_tier: list[list[float]] = field(default_factory=list)


def scan_keys(conn: sqlite3.Connection, query: str, stats: CorpusStats, page_scan: int, section_scan: int,
              synonyms: Synonyms = NO_SYNONYMS) -> ScanKeys:
    """The first ``page_scan`` pages and ``section_scan`` sections of the shard ``conn``
    matching ``query`` (its items joined by their ``synonyms``) as its search with the
    summed ``stats`` will scan them (:func:`textpile.search.engine.search_plan`), the
    sections with their bm25 over every shard; empty for a query without words. The
    scans (pages without filters, sections with their scores) are handed on to the
    search round through the shard's memo (``stats.memo``, when given:
    :meth:`textpile.search.shard_memo.ShardMemo.hand`).

    Raises:
        sqlite3.Error: database problems.
    """
    parsed = parse_query(query)
    analyzer, codes = Analyzer(), language_codes(stats.languages) if stats.languages else index_languages(conn)
    plan = with_synonyms(plan_query(parsed, analyzer, codes), synonyms, analyzer, codes)
    if not plan.requirements:
        return ScanKeys([], [])
    _, core, _ = search_plan(conn, plan, analyzer, codes, stats)
    expr = core.all_terms
    fsql, fparams = filter_sql(parsed.filters)
    pages = match_docids(conn, expr, page_scan, fsql, fparams, stats.memo)
    sections, section_tier = _section_keys(conn, expr, stats, section_scan, fsql, fparams)
    levels, level_sections, level_section_tier = [], [], []
    relaxed = core.relaxed()
    if len(pages) < PARTIAL_BELOW and len(relaxed.requirements) > 1:
        n, every_part = len(relaxed.requirements), len(relaxed.requirements) > len(core.requirements)
        for m, level in partial_levels(conn, relaxed, Budget(float("inf")), fsql, fparams, every_part, stats.terms):
            if n > 6 and not (every_part and m == n):
                break  # the rarest words: each shard's own k
            levels.append(match_docids(conn, level, page_scan, fsql, fparams, stats.memo))
            rows, tier = _section_keys(conn, level, stats, section_scan, fsql, fparams)
            level_sections.append(rows)
            level_section_tier.append(tier)
    return ScanKeys(pages, sections, levels, level_sections, section_tier, level_section_tier)


def _section_keys(conn: sqlite3.Connection, expr: str, stats: CorpusStats, scan: int, fsql: str,
                  fparams: list) -> tuple[list[tuple[int, float, int]], list[float]]:
    """``(docid, bm25 over every shard, section_summary_id)`` of the first ``scan``
    sections matching ``expr`` in prior order (id -1: not searchable, or failing the
    filters), and their bm25 over one index's first tier (``stats.tier``; empty without one)."""
    scorers = [section_rescorer(conn, stats, DEFAULT_RANKING.section_columns, in_tier)
               for in_tier in ((False, True) if stats.tier is not None and stats.tier.sections else (False,))]
    scored = [dict(rows) for rows in sections_scored_by(conn, expr, DEFAULT_RANKING.section_columns, scan, scorers,
                                                        search_tiers(conn), handoff=stats.memo, hand=True)]
    ids = section_ids(conn, list(scored[0]), fsql, fparams, FILTER_JOINS if fsql else "")
    rows = sorted((d, score, ids.get(d, -1)) for d, score in scored[0].items())
    return rows, [scored[1][d] for d, _, _ in rows] if len(scored) > 1 else []


def _last_docids(keys: dict[int, list[int]], shift: int, scan: int) -> tuple[dict[int, int], bool]:
    """{shard: its last docid in one index's scan of ``scan`` matches} (0: none of its
    matches) and whether that scan was cut short, from each shard's first matches
    ``keys`` in prior order (docids whose prior key is above bit ``shift``)."""
    merged = sorted((d >> shift, shard, d) for shard, docids in keys.items() for d in docids)
    if len(merged) < scan:
        return {shard: LAST_ROWID for shard in keys}, False
    last = dict.fromkeys(keys, 0)
    for _, shard, docid in merged[:scan]:
        last[shard] = docid
    return last, True


def cut_scans(keys: dict[int, ScanKeys], page_scan: int, section_scan: int, section_depth: int,
              depth: int | None = None, tier_last: dict[int, int] | None = None,
              filtered: bool = False) -> dict[int, ScanCut]:
    """{shard: its :class:`ScanCut`} of one index's page scan of ``page_scan`` matches,
    section scan of ``section_scan`` and best ``section_depth`` sections, reranking
    ``depth`` page candidates, from the shards' :func:`scan_keys` ``keys`` (module
    docstring); ``tier_last``: {shard: its last page docid in one index's first tier}
    (None: no first tier), a scan that finds its matches there ending in it;
    ``filtered``: the query has filters (one index then keeps no spare sections)."""
    def level(name: str, j: int) -> dict[int, list]:
        return {s: getattr(k, name)[j] if j < len(getattr(k, name)) else [] for s, k in keys.items()}

    def scan(pages: dict[int, list[int]], sections: dict[int, list], tier_scores: dict[int, list[float]],
             best: int) -> tuple[dict[int, int], bool, bool, dict[int, int], dict]:
        tier_pages, tier_sections = _in_tier(pages, sections, page_scan, section_scan, tier_last)
        last_page, cut_pages = _last_docids(pages, PRIOR_KEY_SHIFT, page_scan)
        scored = {s: [(d, tier_scores[s][n], ssid) for n, (d, _, ssid) in enumerate(rows)]
                  if tier_sections and tier_scores[s] else rows for s, rows in sections.items()}
        return (last_page, cut_pages, tier_pages) + _section_cut(scored, section_scan, best,
                                                                 None if filtered else SECTION_SPARE) + (tier_sections,)

    whole = scan({s: k.pages for s, k in keys.items()}, {s: k.sections for s, k in keys.items()},
                 {s: k.section_tier for s, k in keys.items()}, section_depth)
    levels = [scan(level("levels", j), level("level_sections", j), level("level_section_tier", j), section_depth // 2)
              for j in range(max((len(k.levels) for k in keys.values()), default=0))]
    few = sum(len(k.pages) for k in keys.values()) < PARTIAL_BELOW
    # one index stops after the level that brings its pages to PARTIAL_BELOW: those holding
    # every word, and each level's best (every match of a level with fewer than its depth)
    searched, found = None, {(s, d) for s, k in keys.items() for d in k.pages}
    for j, cut in enumerate(levels):
        found |= {(s, d) for s, docids in level("levels", j).items() for d in docids if d <= cut[0][s]}
        if len(found) >= PARTIAL_BELOW:
            searched = j + 1
            break
    return {s: ScanCut(whole[0][s], whole[3][s], whole[1], whole[4][s], depth, few,
                       tuple(cut[0][s] for cut in levels), tuple(cut[3][s] for cut in levels),
                       tuple(cut[4][s] for cut in levels), whole[2], whole[5],
                       tuple(cut[2] for cut in levels), tuple(cut[5] for cut in levels), searched) for s in keys}


def _in_tier(pages: dict[int, list[int]], sections: dict[int, list[tuple[int, float, int]]], page_scan: int,
             section_scan: int, tier_last: dict[int, int] | None) -> tuple[bool, bool]:
    """Whether one index's scan of ``page_scan`` of the shards' first matching ``pages``
    ({shard: docids}), and that of ``section_scan`` of their ``sections``, end in its
    first tier: the pages up to ``tier_last`` ({shard: last docid}; None: no first tier)
    and their sections."""
    if tier_last is None or not all(s in tier_last for s in pages):
        return False, False
    section_end = {s: last_section_docid(last) if last else 0 for s, last in tier_last.items()}
    return (sum(d <= tier_last[s] for s, docids in pages.items() for d in docids) >= page_scan,
            sum(d <= section_end[s] for s, rows in sections.items() for d, _, _ in rows) >= section_scan)


def _section_cut(keys: dict[int, list[tuple[int, float, int]]], scan: int, depth: int,
                 spare: int | None = SECTION_SPARE) -> tuple[dict[int, int], dict[int, tuple[float, int, int] | None]]:
    """{shard: last section docid} of one index's section scan of ``scan`` matches and
    {shard: floor of one index's best ``depth`` of them} (None: no floor), from each
    shard's first sections ``keys``: ``(docid, bm25, section_summary_id)``. As
    :func:`textpile.search.candidates.section_candidates` (``spare``: None with filters),
    one index keeps the best ``depth + spare`` sections by bm25, then by docid (prior
    order), and of those the best ``depth`` by bm25, then by ``section_summary_id``."""
    last, _ = _last_docids({s: [d for d, _, _ in rows] for s, rows in keys.items()}, _SECTION_ID_BITS, scan)
    scanned = sorted((-score, d >> _SECTION_ID_BITS, shard, d, ssid) for shard, rows in keys.items()
                     for d, score, ssid in rows if d <= last[shard])
    if spare is not None:
        scanned = scanned[:depth + spare]
    kept = sorted((score, shard, ssid) for score, _, shard, _, ssid in scanned if ssid >= 0)
    floors: dict[int, tuple[float, int, int] | None] = dict.fromkeys(keys)
    if len(kept) > depth:
        score, at, ssid = kept[depth - 1]
        tied = {shard: d for s, _, shard, d, _ in scanned if s == score}  # each shard's last equal one kept
        for shard in keys:  # equal scores: the shards before ``at`` keep all, those after none
            floors[shard] = (-score, LAST_ROWID if shard < at else ssid if shard == at else -1,
                             tied.get(shard, 0) if spare is not None else LAST_ROWID)
    return last, floors
