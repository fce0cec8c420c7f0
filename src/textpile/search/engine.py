"""The keyword search of a summary database: query in, ranked results with snippets out.

This is the keyword stage of :mod:`textpile.search.service`, the front door every
interface calls (the semantic and hybrid modes reorder its ranking through
:data:`Reorder`). A keyword search has two stages (design: ``../shared/DESIGN.md``,
"Search is two stages"):

1. **candidates**: FTS5 ``bm25()`` over textpile's analyzed ``search_index`` finds the
   best :data:`RERANK_DEPTH` pages holding every required word (stemmed, identifiers by
   parts, CJK by bigrams: :mod:`textpile.index.analysis`), and ``section_search_index``
   the best matching sections (headings, API definitions). When few pages hold every
   word, pages holding most of them follow (:func:`_partial_candidates`), never a plain
   any-word search;
2. **rerank**: each candidate is scored by its features (title, section, URL, anchor
   text, in-links, length, indexiness, the weight of the query's words it holds:
   :mod:`textpile.search.features`) with the weights of :mod:`textpile.search.rank`;
   missing a word costs score, it is no sort key. Stop words are not required of a page
   and earn no credit, rare words weigh more (:mod:`textpile.search.weights`).

A result links to its best matching section (``page.html#anchor``) when a section
matches the query better than the page as a whole, and shows that section's title; the
other matching sections of the page come with it (``sections``), never as results of
their own. Snippets are made for the shown results only, from the best matching part of
the text (:class:`textpile.search.snippets.SnippetMaker`). Every search has a time budget
(:mod:`textpile.search.budget`, default 1 s): when it is spent, the search returns what
it found so far and says so. Only searchable generations (open, not marked duplicate,
with a text pile) are ever found, even from an index that lags behind its database.

The query language is :mod:`textpile.search.query`'s; a query with only exclusions or
filters lists the pages that satisfy them, most linked first.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import uuid
from collections.abc import Callable

from textpile.index.analysis import Analyzer
from textpile.search.budget import DEFAULT_BUDGET_MS, Budget, BudgetSpent
from textpile.search.candidates import (LAST_ROWID, PageInfo, SectionHit, Tiers, count_pages, page_candidates, page_infos,
                                       search_tiers, section_candidates)
from textpile.search.boosts import RankingRule, apply_rules
from textpile.search.facets import count_facets, page_facts, refine
from textpile.search.features import Scored
from textpile.search.filters import PAGE_DATE_SQL, filter_sql, missing_language_note
from textpile.search.global_bm25 import page_rescorer, section_rescorer
from textpile.search.grouping import group_by_site, site_of
from textpile.index.schema import require_search_index
from textpile.search.plan import (MIN_SPLIT_WORD, Item, QueryPlan, index_languages, language_codes, plan_query,
                                  split_candidates, with_split_forms)
from textpile.search.query import ParsedQuery, parse_query
from textpile.search.rank import DEFAULT_RANKING, Ranking
from textpile.search.proximity import PROXIMITY_DEPTH
from textpile.search.rerank import Found, Rescorer, known_pairs, rerank
from textpile.search.results import (DEFAULT_PER_PAGE, ResultSection, SearchResult, SearchResults, result_page,
                                     results_per_page)
from textpile.search.sorting import by_date, check_sort, with_seen
from textpile.search.render import Snippet, SnippetSource, render_snippets, with_snippet
from textpile.search.spelling import did_you_mean
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, with_synonyms
from textpile.search.typos import below_exact, typo_candidates
from textpile.search.weights import CorpusStats, core_indexes, core_plan, document_frequencies, requirement_weights
from textpile.store.gen2_piles import ensure_functions

#: Candidate pages reranked by their features (deeper result pages rerank more). The
#: relevance benchmark gives the same MRR@10, success@1 and NDCG@10 overall (0.951 /
#: 0.931 / 0.951) with 30 as with 50 (and 15 SECTION_PAGES as with 30); with 20 and 10,
#: success@1 0.930.
RERANK_DEPTH = 30
#: At most this many candidates, whatever the page asked for.
MAX_CANDIDATES = 2000
#: Matching pages scored by bm25 per search, at most: the first ones in prior order (a
#: query of common words stops there instead of scoring every match).
PAGE_SCAN = 300
#: Matching sections scored per search, at most (in their pages' prior order).
SECTION_SCAN = 300
#: Matching sections looked at per search.
SECTION_DEPTH = 100
#: The share of the query a page holding an identifier's parts apart (not in a row) is
#: taken to hold: a whole identifier ranks above its parts scattered over a page.
PARTS_HELD = 0.5
#: Partial matches are added when fewer pages than this hold every word.
PARTIAL_BELOW = 10
#: The notes of a search whose results include partial matches.
PARTIAL_NOTE = "Few pages hold all the words; pages holding most of them follow."
PARTS_NOTE = "Few pages hold the query's names as written; pages holding their parts follow."
#: Other matching sections listed with a result.
MAX_RESULT_SECTIONS = 3

#: The hook of the semantic and hybrid search modes (:mod:`textpile.search.service`):
#: called with the connection, the parsed query, the keyword ranking (every reranked
#: candidate, best first), whether the time budget ended the keyword search early and a
#: :class:`~textpile.search.rerank.Rescorer` (features for pages that were no candidates), it
#: returns the ranking to show and whether keyword matching still decides which pages
#: are results (hybrid: True; semantic: False, then ``total`` counts the returned
#: ranking and no partial-match note is given).
Reorder = Callable[[sqlite3.Connection, ParsedQuery, list[Scored], bool, Rescorer], tuple[list[Scored], bool]]


def _nonempty(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value or None


def _common_terms(conn: sqlite3.Connection, plan: QueryPlan) -> set[str]:
    """The single-term alternatives of ``plan`` that at least half of the indexed pages
    hold: FTS5's bm25 gives such a term an IDF of 1e-6 (SQLite's fts5_aux.c: the IDF
    ``log((N - n + 0.5) / (n + 0.5))`` is clamped when not positive), so scoring can
    leave it out (see :func:`page_candidates`' ``score_match``)."""
    terms = sorted({alt[0] for item in plan.items for alt in item.alternatives if len(alt) == 1})
    if not terms:
        return set()
    pages = search_tiers(conn).pages
    marks = ", ".join("?" * len(terms))
    rows = conn.execute(f"SELECT term, docs FROM search_term WHERE term IN ({marks})", terms).fetchall()
    return {term for term, docs in rows if 2 * docs >= pages > 0}


def _candidates(conn: sqlite3.Connection, plan: QueryPlan, parsed: ParsedQuery, ranking: Ranking,
                depth: int, budget: Budget, found: Found, analyzer: Analyzer, stats: CorpusStats | None = None) -> bool:
    """Fill ``found`` (stage one) and return whether few pages hold every word (fewer
    than :data:`PARTIAL_BELOW`; over shards, in all of them: ``stats.cut.few``); stops
    early when the budget is spent (BudgetSpent).
    ``analyzer`` analyzes the found sections' titles for the rerank.

    ``found.total`` is the number of matches the page scan saw: exact when it saw every
    match, else a lower bound (``total_is_lower_bound``): counting every match of common
    words would read their whole document lists. With ``stats`` (a search over shards),
    pages are scored with every shard's statistics (:mod:`textpile.search.global_bm25`)."""
    fsql, fparams = filter_sql(parsed.filters)
    cut = stats.cut if stats is not None else None
    # a scan that one index ends in its first tier is scored with the tier's statistics
    rescore, docs = (None, None) if stats is None or fsql else \
        page_rescorer(conn, stats, ranking.page_columns, cut is not None and cut.tier_pages)
    rescore_sections, section_docs = section_rescorer(conn, stats, ranking.section_columns,
                                                      cut is not None and cut.tier_sections)
    expr = plan.all_terms
    scan = max(PAGE_SCAN, depth + 1)  # one more than the page needs: is there more?
    handoff = stats.memo if cut is not None else None  # the cut round's scans of this search
    with budget.guard():
        tiers = search_tiers(conn)
        if fsql:
            score_expr = None
        elif stats is not None:  # the words at least half of every shard's pages hold
            score_expr = plan.scoring_terms({t for t, docs in stats.terms.items() if 2 * docs >= stats.pages > 0})
        else:
            score_expr = plan.scoring_terms(_common_terms(conn, plan))
        rows, seen, complete = page_candidates(conn, expr, ranking.page_columns, depth, scan, fsql, fparams,
                                               score_match=score_expr, tiers=tiers, rescore=rescore, seen=found.seen,
                                               last=cut.last_page if cut is not None else LAST_ROWID,
                                               every_shard=docs, handoff=handoff)
    complete = complete and not (cut is not None and cut.cut_pages)  # the scan over every shard was cut
    found.add_pages(rows, 1.0)
    found.total, found.total_is_lower_bound = seen, not complete
    found.all_terms_complete = complete and len(rows) < depth
    with budget.guard():
        found.add_sections(section_candidates(
            conn, analyzer, expr, ranking.section_columns, SECTION_DEPTH, SECTION_SCAN, fsql, fparams, tiers=tiers,
            last=cut.last_section if cut is not None else LAST_ROWID, rescore=rescore_sections,
            floor=cut.section_floor if cut is not None else None, every_shard=section_docs, handoff=handoff), 1.0)
    relaxed = plan.relaxed()
    few = len(rows) < PARTIAL_BELOW if cut is None or cut.few is None else cut.few
    if len(relaxed.requirements) > 1 and few:
        _partial_candidates(conn, relaxed, ranking, depth, budget, found, analyzer, fsql, fparams, tiers,
                            every_part=len(relaxed.requirements) > len(plan.requirements),
                            stats=None if fsql else stats, section_stats=stats)
    return few


def _partial_candidates(conn, plan: QueryPlan, ranking: Ranking, depth: int, budget: Budget, found: Found,
                        analyzer: Analyzer, fsql: str, fparams: list, tiers: Tiers, every_part: bool = False,
                        stats: CorpusStats | None = None, section_stats: CorpusStats | None = None) -> None:
    """Pages and sections holding most of the words of ``plan`` (a relaxed plan:
    identifiers by parts), added to ``found``, in levels until :data:`PARTIAL_BELOW`
    pages are found:

    1. with ``every_part`` (the plan split identifiers into parts): every part, in any
       order; a page found so holds :data:`PARTS_HELD` of the query (a whole identifier
       ranks above its parts scattered over a page);
    2. up to 6 words: pages holding at least ``m`` of them, ``m`` from n-1 down to 1 (one
       FTS5 expression per level: the OR of every ``m``-word AND);
    3. longer queries (pasted text): the ``k`` rarest words (by document frequency), ``k``
       the largest for which some page holds them all (a galloping search of about
       2 log2(n) capped counts).

    ``found.total`` becomes the number of matches of the last level that added pages
    (a lower bound when its scan was cut short). Over shards, ``stats`` (None with
    filters) and ``section_stats``: every shard's statistics (the rarity of 3., the
    pages' and sections' bm25), and the shard's part of one index's scans of each level
    (``stats.cut``: :class:`textpile.search.cuts.ScanCut`).
    """
    n = len(plan.requirements)
    cut = section_stats.cut if section_stats is not None else None
    docs = section_stats.terms if section_stats is not None else None
    scan = max(PAGE_SCAN, depth + 1)  # one more than the page needs: is there more?
    for level, (m, expr) in enumerate(_partial_levels(conn, plan, budget, fsql, fparams, every_part, docs)):
        if cut is not None and cut.levels is not None and level >= cut.levels:
            return  # one index of every shard holds enough pages before this level
        held = m / n * (PARTS_HELD if every_part else 1.0)
        found.parts_level = found.parts_level or every_part
        rescore, every_shard = (None, None) if stats is None else \
            page_rescorer(conn, stats, ranking.page_columns, _level_cut(cut, "level_tier", level, False))
        rescore_sections, section_docs = section_rescorer(conn, section_stats, ranking.section_columns,
                                                          _level_cut(cut, "level_section_tier", level, False))
        with budget.guard():
            rows, seen, complete = page_candidates(conn, expr, ranking.page_columns, depth, scan, fsql, fparams,
                                                   tiers=tiers, rescore=rescore, seen=found.seen,
                                                   every_shard=every_shard,
                                                   last=_level_cut(cut, "level_last", level, LAST_ROWID),
                                                   handoff=None if stats is None or cut is None else stats.memo)
            hits = section_candidates(conn, analyzer, expr, ranking.section_columns, SECTION_DEPTH // 2, SECTION_SCAN,
                                      fsql, fparams, tiers=tiers, rescore=rescore_sections, every_shard=section_docs,
                                      last=_level_cut(cut, "level_section_last", level, LAST_ROWID),
                                      floor=_level_cut(cut, "level_section_floor", level, None),
                                      handoff=section_stats.memo if cut is not None else None)
        before = len(found.pages)
        if n > 6 and not (every_part and m == n):  # the level of the k rarest words (3.)
            found.rarest.update(eg_id for eg_id, _ in rows if eg_id not in found.pages)
        found.level_rows.append(rows)
        found.add_pages(rows, held)
        found.add_sections(hits, held)
        if len(found.pages) > before:
            found.partial = True
            found.parts_only = found.parts_only and every_part and m == n
            found.total, found.total_is_lower_bound = seen, not complete
        if len(found.pages) >= PARTIAL_BELOW:
            return


def _level_cut(cut, name: str, level: int, default):
    """The ``level``-th value of the :class:`~textpile.search.cuts.ScanCut` field ``name``,
    ``default`` without a cut or that level."""
    values = getattr(cut, name, ()) if cut is not None else ()
    return values[level] if level < len(values) else default


def _partial_levels(conn, plan: QueryPlan, budget: Budget, fsql: str, fparams: list, every_part: bool, docs=None):
    """Yield ``(words held, FTS5 expression)`` of the levels of :func:`_partial_candidates`."""
    n = len(plan.requirements)
    if every_part:
        yield n, plan.subset()
    if n <= 6:
        for m in range(n - 1, 0, -1):
            yield m, " OR ".join("(" + plan.subset(list(c)) + ")" for c in itertools.combinations(range(n), m))
        return
    with budget.guard():
        frequencies = document_frequencies(conn, plan, docs)
    # rarest first; words no page holds cannot help
    rarity = sorted((i for i in range(n) if frequencies[i] > 0), key=lambda i: (frequencies[i], i))[:n - 1]
    if rarity:
        k = _largest_matching(conn, plan, rarity, budget, fsql, fparams)
        yield k, plan.subset(sorted(rarity[:k]))


def _largest_matching(conn, plan: QueryPlan, rarity: list[int], budget: Budget, fsql: str, fparams: list) -> int:
    """The largest k (at least 1) such that some page holds the k rarest requirements."""
    def holds(k: int) -> bool:
        with budget.guard():
            return count_pages(conn, plan.subset(sorted(rarity[:k])), 1, fsql, fparams) > 0

    low, high = 1, 1
    while high < len(rarity) and holds(min(len(rarity), high * 2)):
        low = high = min(len(rarity), high * 2)
    high = min(len(rarity), high * 2)
    while low < high:
        mid = (low + high + 1) // 2
        if holds(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _page_url(info: PageInfo) -> str:
    return info.url + (f"#{info.fragment}" if info.fragment is not None else "")


def _shown_section(s: Scored) -> SectionHit | None:
    """The section a result links to: the best match, unless the page itself is the
    match: the section is the page's own top heading, or the page's title holds every
    query word and the section's title is not the query word for word while the page's
    title is not (``vacuum`` opens the VACUUM page at its top, not at "3. How VACUUM
    works"; ``json arguments`` opens "3.1. JSON arguments" of "JSON Functions")."""
    hit = s.section
    if hit is None or hit.anchor is None or s.info.fragment is not None:
        return None
    f = s.features
    if hit.level <= 2 and hit.start < 300 and f.get("title_cover", 0.0) >= f.get("section_cover", 0.0):
        return None
    if f.get("title_cover", 0.0) >= 1.0 and (f.get("title_exact", 0.0) > 0 or not f.get("section_exact", 0.0)):
        return None
    return hit


#: Query words a snippet looks for, at most (a pasted paragraph: its rarest words).
SNIPPET_WORDS = 10


def _snippet_words(conn: sqlite3.Connection, plan: QueryPlan, analyzer: Analyzer) -> list[list[str]]:
    """The word forms snippets mark, per requirement (:class:`SnippetMaker`): its words
    as typed and their analyzed terms; not the stop words of a query that has other
    words (:func:`textpile.search.weights.core_indexes`: as they earn a page no credit,
    they neither choose the part of its text shown nor are marked in it; the split form
    of a word, ``back-end`` for ``backend`` (:class:`SnippetMaker`), is its parts in a row,
    as the index matches it: "war" and "ning" of ``warnings`` are not marked apart); for a query of
    more than :data:`SNIPPET_WORDS` such requirements, only the rarest ones (by
    :func:`_document_frequencies`): a snippet of a pasted paragraph shows where its
    telling words are."""
    requirements = core_indexes(plan)
    if len(requirements) > SNIPPET_WORDS:
        frequencies = document_frequencies(conn, plan)
        requirements = sorted(sorted(requirements, key=lambda i: (not frequencies[i], frequencies[i], i))[:SNIPPET_WORDS])
    out = []
    for i in requirements:
        forms: list[str] = []
        for item in plan.requirements[i]:
            phrase = _phrase_form(analyzer, item) if item.phrase else None
            if phrase is not None:
                forms.append(phrase)
            words = list(analyzer.words(item.text))
            forms.extend(words)
            for alt in item.alternatives:
                if _split_form(item, words, alt):  # (backend: back end) those parts in a row, not each apart
                    forms.append("-".join(alt))
                else:  # a term, the parts of words written together, a CJK word's character pairs
                    forms.extend(alt)
        out.append(forms)
    return out


def _split_form(item: Item, words: list[str], alternative: tuple[str, ...]) -> bool:
    """Whether ``alternative`` of ``item`` (typed as ``words``) is a split form of its one
    word (:func:`textpile.search.plan.split_candidates`: two terms, of an unquoted word of
    letters only)."""
    return (len(alternative) == 2 and len(words) == 1 and not item.phrase and item.text.isalpha()
            and len(item.text) >= MIN_SPLIT_WORD)


def _phrase_form(analyzer: Analyzer, item: Item) -> str | None:
    """The snippet form of a phrase of two or more words (:class:`SnippetMaker`: words
    separated by spaces, each matched as a word prefix): each word cut to what it shares
    with its stem (``temporary directory`` -> ``temporar director``, which marks
    "temporary directories" too); None for a one-word phrase or one whose words and
    terms do not pair up (CJK bigrams), which is matched word by word."""
    words = [w.lower() for w in analyzer.words(item.text)]
    terms = item.alternatives[0] if item.alternatives else ()
    if len(words) < 2 or len(terms) != len(words):
        return None
    parts = []
    for word, term in zip(words, terms):
        shared = os.path.commonprefix([word, term])
        parts.append(shared if len(shared) >= 3 else word)
    return " ".join(parts)


def _results(conn: sqlite3.Connection, shown: list[tuple[Scored, SectionHit | None]], words: list[list[str]],
             snippets: bool = True) -> list[SearchResult]:
    """The results of the ``shown`` candidates (each with the section it links to), with
    their snippets marking ``words`` (:mod:`textpile.search.render`), or without them but
    with their ``snippet_source`` when not ``snippets`` (a shard's candidates)."""
    sources = [SnippetSource(s.info.entity_generation_id, s.info.text_pile_id, s.info.text_pile_v0_2_id,
                             hit.start if hit is not None else None, hit.end if hit is not None else None)
               for s, hit in shown]
    made = render_snippets(conn, words, sources) if snippets else [None] * len(sources)
    return [_result(s, hit, source, snippet) for (s, hit), source, snippet in zip(shown, sources, made)]


def _result(s: Scored, hit: SectionHit | None, source: SnippetSource, snippet: Snippet | None) -> SearchResult:
    info = s.info
    page_url = _page_url(info)
    others = [h for h in s.sections if h is not hit and h.anchor is not None and h.level > 1][:MAX_RESULT_SECTIONS]
    result = SearchResult(
        title=_nonempty(info.title) or _nonempty(info.headline) or page_url,
        url=page_url + (f"#{hit.anchor}" if hit is not None else ""),
        description=_nonempty(info.description) or "",
        snippet_html="",
        language=_nonempty(info.language),
        time_updated_unix_utc=info.time_updated,
        time_created_unix_utc=info.time_created,
        entity_generation_uuid=(str(uuid.UUID(bytes=info.uuid))
                                if isinstance(info.uuid, bytes) and len(info.uuid) == 16 else None),
        score=float(s.score),
        page_url=page_url,
        site=site_of(s),
        section_title=hit.title if hit is not None else None,
        sections=[ResultSection(h.title, info.url + "#" + h.anchor) for h in others],
        snippet_source=source,
    )
    if snippet is not None:
        with_snippet(result, snippet)
    return result


def _time_limit_note(budget: Budget) -> str:
    return (f"The search stopped at its time limit ({budget.budget_ms:g} ms); "
            "these are the results found by then.")


def _browse(conn: sqlite3.Connection, parsed: ParsedQuery, out: SearchResults, page: int, per_page: int,
            budget: Budget, facets: bool = False, snippets: bool = True) -> None:
    """A query without words: pages passing its filters and exclusions, most linked
    first (newest first with ``out.sort`` date, undated last); with ``facets``, the
    facets of the first :data:`PAGE_SCAN` of them. When ``budget`` is spent while they
    are counted or listed, ``out`` says so (``timed_out``) and holds what was found by
    then (no pages when the list was not reached)."""
    from textpile.search.query_compiler import compile_query

    compiled = compile_query(parsed)
    out.notes.extend(compiled.messages)
    if compiled.match is None:
        return
    fsql, fparams = filter_sql(parsed.filters)
    base = ("FROM full_text_entity_index f JOIN entity_generation eg ON eg.entity_generation_id = f.rowid "
            "JOIN url u ON u.url_id = eg.url_id JOIN origin o ON o.origin_id = u.origin_id "
            "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
            "LEFT JOIN search_page sp ON sp.entity_generation_id = eg.entity_generation_id "
            "WHERE full_text_entity_index MATCH ? AND eg.confirmed_end_unix_utc IS NULL "
            f"AND NOT eg.marked_duplicate AND eg.text_pile_id IS NOT NULL{fsql}")
    ids: list[int] = []
    order = "coalesce(sp.content_in_links, 0) DESC, eg.entity_generation_id"
    if out.sort == "date":
        order = f"{PAGE_DATE_SQL} IS NULL, {PAGE_DATE_SQL} DESC, {order}"
    try:
        with budget.guard():
            out.total = conn.execute(f"SELECT count(*) {base}", [compiled.match, *fparams]).fetchone()[0]
            ids = [r[0] for r in conn.execute(
                f"SELECT eg.entity_generation_id {base} ORDER BY {order} LIMIT ? OFFSET ?",
                [compiled.match, *fparams, per_page, page * per_page])]
            if facets:
                counted = [r[0] for r in conn.execute(
                    f"SELECT eg.entity_generation_id {base} ORDER BY {order} LIMIT ?", [compiled.match, *fparams, PAGE_SCAN])]
                out.facets = count_facets(page_facts(conn, counted), out.query, out.total > len(counted))
    except BudgetSpent:
        out.timed_out = True
        out.notes.append(_time_limit_note(budget))
    conn.set_progress_handler(None, 0)  # what follows is bounded by the page size
    infos = page_infos(conn, ids)
    scored = [Scored(infos[i], {"title_cover": 0.0, "section_cover": 0.0}) for i in ids if i in infos]
    out.results = _results(conn, [(s, None) for s in scored], [], snippets)
    out.snippet_words = None if snippets else []


def search(conn: sqlite3.Connection, query: str, *, page: int = 0, per_page: int = DEFAULT_PER_PAGE,
           budget_ms: float = DEFAULT_BUDGET_MS, ranking: Ranking = DEFAULT_RANKING,
           disable: frozenset[str] = frozenset(), explain: bool = False,
           reorder: Reorder | None = None, correct: bool = True, facets: bool = False,
           sort: str | None = None, per_site: int = 0, typos: bool = True,
           rules: tuple[RankingRule, ...] = (), synonyms: Synonyms = NO_SYNONYMS,
           stats: CorpusStats | None = None, proximity_depth: int | None = PROXIMITY_DEPTH,
           snippets: bool = True) -> SearchResults:
    """Run ``query`` (textpile's query language) against the summary database ``conn``.

    ``page`` counts from 0 (0..1000), ``per_page`` is 1..100 (default 20): a whole
    number beyond either end is taken at that end (:mod:`textpile.search.results`);
    ``budget_ms`` is the time budget in milliseconds (the search returns what it has
    when it is spent); ``ranking`` the weights, ``disable`` features to leave out (the
    relevance benchmark's ablation); ``explain`` fills ``explained``; ``reorder`` is the
    semantic modes' hook (:data:`Reorder`); ``synonyms`` the index's synonym table
    (:mod:`textpile.search.synonyms`: a member of a group finds the others). With
    ``correct``, a query no page matches whose "did you mean"
    (:mod:`textpile.search.spelling`) matches some gives that query's results instead,
    with ``corrected`` set and a note naming both (within the same time budget).
    ``stats``: the statistics the query's words are weighed by (pages and term document
    counts summed over every shard, :mod:`textpile.search.fanout`) instead of this
    index's own. ``proximity_depth``: the candidates whose ``proximity`` feature is
    measured (:func:`textpile.search.rerank.rerank`), None for every one (a shard's
    answer: the fan-out keeps it for the first over all shards). Not ``snippets``: the
    results come without snippets, each with its ``snippet_source``, and ``snippet_words``
    set (a shard's answer: the fan-out makes the snippets of the results it shows,
    :mod:`textpile.search.render`). Any query string is
    valid: problems (nothing searchable, a cut-off query, partial matches, the budget) are explained in
    ``message``; this never raises for the query's content.

    Raises:
        textpile.search.results.PagingError: ``page`` or ``per_page`` is not a whole number.
        textpile.errors.DatabaseError: the database has no search index of this textpile
            version (summarized by an older one; ``textpile summarize`` builds it).
        sqlite3.Error: other database problems (a missing table, a locked file).
    """
    page, per_page = result_page(page), results_per_page(per_page)
    sort = check_sort(sort)
    ensure_functions(conn)  # the text_pile_v0_2 and text_pile views unpack (textpile.store.gen2_piles)
    if disable:
        ranking = Ranking(ranking.features, ranking.page_columns, ranking.section_columns, frozenset(disable))
    parsed = parse_query(query if isinstance(query, str) else str(query))
    # The query is echoed back: lone surrogates (undecodable CLI bytes) become "?" so it
    # can always be encoded as UTF-8.
    echoed = query.encode("utf-8", "replace").decode("utf-8") if isinstance(query, str) else str(query)
    out = SearchResults(query=echoed, page=page, per_page=per_page, sort=sort or parsed.sort or "relevance")
    notes = list(parsed.messages)
    budget = Budget(budget_ms)
    require_search_index(conn)
    analyzer = Analyzer()
    codes = language_codes(stats.languages) if stats is not None and stats.languages else index_languages(conn)
    plan = with_synonyms(plan_query(parsed, analyzer, codes), synonyms, analyzer, codes)
    notes.extend(plan.messages)
    with budget.installed(conn):
        if not plan.requirements:
            if parsed.excluded or parsed.filters:
                _browse(conn, parsed, out, page, per_page, budget, facets, snippets)
                notes.extend(out.notes)
            else:
                notes.append("Nothing to search for: type some words." if not parsed.positive_terms
                             else "Nothing searchable remained in the query.")
                out.notes = notes
                out.message = " ".join(notes)
                return out
        else:
            _ranked_search(conn, parsed, plan, analyzer, codes, ranking, budget, out, page, per_page, notes, explain,
                           reorder, stats, facets, per_site, typos, rules, proximity_depth, snippets)
    if out.total == 0 and correct and out.suggestion and not out.timed_out and budget.remaining_s() > 0:
        fixed = search(conn, out.suggestion, page=page, per_page=per_page, budget_ms=budget.remaining_s() * 1000.0,
                       ranking=ranking, explain=explain, reorder=reorder, correct=False, facets=facets, sort=sort,
                       per_site=per_site, typos=typos, rules=rules, synonyms=synonyms, stats=stats,
                       proximity_depth=proximity_depth, snippets=snippets)
        if fixed.total:
            fixed.query, fixed.suggestion, fixed.corrected = echoed, out.suggestion, True
            note = f"No page holds every word of “{echoed}”: these are the results for “{out.suggestion}”."
            return _finish(fixed, [*notes, note, *fixed.notes], page)
    if out.total == 0:
        notes.append(missing_language_note(conn, parsed.filters) or "No results.")
    return _finish(out, notes, page)


def _finish(out: SearchResults, notes: list[str], page: int) -> SearchResults:
    """``out`` with its ``notes`` and ``message`` (the notes, and the past-the-last-page sentence)."""
    out.notes = notes
    if out.past_last_page:
        notes = [*notes, out.past_last_page_sentence(page + 1)]
    out.message = " ".join(notes) if notes else None
    return out


def search_plan(conn: sqlite3.Connection, plan: QueryPlan, analyzer: Analyzer, codes: list[str | None],
                stats: CorpusStats | None = None) -> tuple[QueryPlan, QueryPlan, list[float]]:
    """``(plan, core, weights)`` of a ranked search of ``plan``: the plan with the split
    forms of its words that the index holds (``backend`` finds back-end; over shards, the
    terms any shard holds: ``stats.terms``), its core (the requirements a page must hold:
    :func:`textpile.search.weights.core_plan`) and each requirement's weight (its rarity
    in this index, or in ``stats``).

    Raises:
        sqlite3.Error: database problems.
    """
    if stats is None:
        weights = requirement_weights(plan, document_frequencies(conn, plan), search_tiers(conn).pages)
    else:
        weights = requirement_weights(plan, document_frequencies(conn, plan, stats.terms), stats.pages)
    splits = split_candidates(analyzer, plan, codes)
    if splits:  # backend finds back-end
        plan = with_split_forms(plan, splits, known_pairs(conn, splits, stats.terms if stats is not None else None))
    return plan, core_plan(plan), weights


def _ranked_search(conn, parsed: ParsedQuery, plan: QueryPlan, analyzer: Analyzer, codes, ranking: Ranking,
                   budget: Budget, out: SearchResults, page: int, per_page: int, notes: list[str],
                   explain: bool = False, reorder: Reorder | None = None, stats: CorpusStats | None = None,
                   facets: bool = False, per_site: int = 0, typos: bool = True,
                   rules: tuple[RankingRule, ...] = (), proximity_depth: int | None = PROXIMITY_DEPTH,
                   snippets: bool = True) -> None:
    found = Found(seen=[] if facets or out.sort == "date" else None)
    depth = min(MAX_CANDIDATES, max(RERANK_DEPTH, (page + 1) * per_page))
    if stats is not None and stats.cut is not None and stats.cut.depth is not None:
        depth = stats.cut.depth  # a shard reranks as deep as one index of every shard
    scored: list[Scored] = []
    typo = None
    weights = [1.0 / len(plan.requirements)] * len(plan.requirements)
    core = core_plan(plan)  # stop words are not required (textpile.search.weights)
    try:
        with budget.guard():
            plan, core, weights = search_plan(conn, plan, analyzer, codes, stats)
        few = _candidates(conn, core, parsed, ranking, depth, budget, found, analyzer, stats)
        if typos and few:
            fsql, fparams = filter_sql(parsed.filters)
            typo = typo_candidates(conn, core, analyzer, codes, ranking.page_columns, depth, max(PAGE_SCAN, depth + 1),
                                   fsql, fparams, search_tiers(conn), budget, found, stats)
    except BudgetSpent:
        out.timed_out = True
    try:
        scored = rerank(conn, plan, core, weights, analyzer, codes, ranking, found, budget, proximity_depth)
    except BudgetSpent:
        out.timed_out = True
        scored = []
    conn.set_progress_handler(None, 0)  # what follows is bounded by the page size
    if out.timed_out and not scored and found.pages:
        # Spent before reranking: the candidates in bm25 order.
        scored = rerank(conn, plan, core, weights, analyzer, codes,
                         Ranking(features={"bm25": 1.0, "all_terms": 1.0, "held": 1.0}), found, Budget(float("inf")))
    typo_only: list[Scored] = []  # pages found through close words only: after every other page
    if typo is not None and typo[2]:
        scored = below_exact(scored, typo[2])
        for s in scored:  # for a merge over shards
            if s.info.entity_generation_id in typo[2]:
                s.raw["typo"] = 1.0
        close = "; ".join(f"“{core.requirements[i][0].text}”: {', '.join(w)}" for i, w in typo[1].items())
        notes.append(f"Pages holding close words follow ({close}).")
        if reorder is not None:  # the vector modes rank the others as they would without them
            typo_only = [s for s in scored if s.info.entity_generation_id in typo[2]]
            scored = scored[:len(scored) - len(typo_only)]
    if reorder is not None:  # the semantic and hybrid modes (textpile.search.service)
        scored, lexical = reorder(conn, parsed, scored, out.timed_out,
                                  Rescorer(conn, plan, core, weights, analyzer, codes, ranking))
        if lexical and typo_only:
            have = {s.info.entity_generation_id for s in scored}
            scored += [s for s in typo_only if s.info.entity_generation_id not in have]
        if not lexical:
            found.total, found.total_is_lower_bound, found.partial = len(scored), False, False
            found.seen = [] if found.seen is not None else None
    scored = apply_rules(scored, rules)
    capped: set[tuple[int, str]] = set()
    if found.seen is not None:
        facts = page_facts(conn, list(dict.fromkeys([s.info.entity_generation_id for s in scored] + found.seen)))
        if facets:
            out.facets = count_facets(facts, out.query, max(found.total, len(scored)) > len(facts)
                                      or found.total_is_lower_bound or out.timed_out)
            out.page_facts = list(facts.values()) if explain else None
        if out.sort == "date":
            scored = by_date(with_seen(conn, scored, found.seen), facts)
    if per_site and out.sort == "relevance":  # a date order stays in date order
        scored, capped = group_by_site(scored, per_page, per_site, pages=page + 1)
        out.results_per_site = per_site
    out.total = max(found.total, len(scored))
    out.keyword_total = found.total
    out.total_is_lower_bound = found.total_is_lower_bound
    out.fallback_any_term = found.partial
    if found.partial and found.parts_only:
        notes.append(PARTS_NOTE)
    elif found.partial:
        notes.append(PARTIAL_NOTE)
    if out.timed_out:
        notes.append(_time_limit_note(budget))
    if explain:
        out.explained = [{"url": _page_url(s.info), "held": s.held, "score": s.score, "features": dict(s.features),
                          "raw": dict(s.raw)} for s in scored]
    shown = scored[page * per_page:(page + 1) * per_page]
    with_sections = [(s, _shown_section(s)) for s in shown]
    words = _snippet_words(conn, plan, analyzer) + (list(typo[1].values()) if typo is not None else [])  # close words too
    out.results = _results(conn, with_sections, words, snippets)
    out.snippet_words = None if snippets else words
    linked: set[str] = set()
    for result in reversed(out.results):  # the link follows a site's last result
        site = result.site
        if (page, site) in capped and site not in linked:
            linked.add(site)
            result.more_from_site = refine(out.query, "site", [f"site:{site}"])
    if (out.total < 3 or found.partial or (typo is not None and typo[2])) and not out.timed_out:  # maybe a typo
        out.suggestion = did_you_mean(conn, out.query)
