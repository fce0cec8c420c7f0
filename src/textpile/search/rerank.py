"""Stage two of a keyword search: every candidate scored by its features.

Stage one (:mod:`textpile.search.engine`) fills a :class:`Found` with candidate pages
and matching sections; :func:`rerank` scores each candidate with
:func:`textpile.search.features.page_features` and the weights of a
:class:`textpile.search.rank.Ranking`. Missing a word is a cost in the score (the
``held`` feature: the weight of the query's words a page holds, measured for partial
matches with one FTS5 lookup per word), not a sort key. :class:`Rescorer` gives pages
found some other way (the semantic modes' nearest pages) the same features.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from textpile.index.analysis import Analyzer
from textpile.search.budget import Budget
from textpile.search.candidates import SectionHit, held_shares, page_infos
from textpile.search.features import QueryMatcher, Scored, page_features
from textpile.search.plan import QueryPlan
from textpile.search.proximity import PROXIMITY_DEPTH, proximity_shares
from textpile.search.rank import Ranking

#: Pages that become candidates through a matching section only (not among the page
#: candidates), at most.
SECTION_PAGES = 15


@dataclass
class Found:
    """Stage one's harvest: candidate pages (id -> (bm25, the share of the query's
    requirements the page holds at least, 1.0 = all)), section hits, and for pages found
    only by a section, the share they hold."""

    pages: dict[int, tuple[float, float]] = field(default_factory=dict)
    section_held: dict[int, float] = field(default_factory=dict)
    sections: dict[int, list[SectionHit]] = field(default_factory=dict)
    total: int = 0
    total_is_lower_bound: bool = False
    partial: bool = False
    parts_only: bool = True  # the partial matches hold every part of the query's identifiers
    all_terms_complete: bool = False  # every page holding all the words is in ``pages``
    parts_level: bool = False  # the partial levels counted the parts of the query's identifiers
    seen: list[int] | None = None  # every match the scans saw, when facets or the date order need them
    rarest: set[int] = field(default_factory=set)  # pages found holding a long query's k rarest words
    level_rows: list[list[tuple[int, float]]] = field(default_factory=list)  # each partial level's best pages

    def add_pages(self, rows: list[tuple[int, float]], held: float) -> None:
        for eg_id, score in rows:
            if eg_id not in self.pages:
                self.pages[eg_id] = (score, held)

    def add_sections(self, hits: list[SectionHit], held: float) -> None:
        """Attach ``hits`` (best first) to their pages; a page not yet a candidate becomes
        one only through the best :data:`SECTION_PAGES` new pages' sections."""
        new_pages = 0
        for hit in hits:
            if hit.entity_generation_id not in self.pages and hit.entity_generation_id not in self.sections:
                if new_pages >= SECTION_PAGES:
                    continue
                new_pages += 1
            self.section_held[hit.entity_generation_id] = max(held, self.section_held.get(hit.entity_generation_id, 0))
            group = self.sections.setdefault(hit.entity_generation_id, [])
            if all(h.section_id != hit.section_id for h in group):
                group.append(hit)


def rerank(conn: sqlite3.Connection, plan: QueryPlan, core: QueryPlan, weights: list[float], analyzer: Analyzer,
            codes: list[str | None], ranking: Ranking, found: Found, budget: Budget,
            proximity_depth: int | None = PROXIMITY_DEPTH) -> list[Scored]:
    """Score every candidate of ``found`` (stage two): ``plan`` is the query's, ``core``
    its requirements a page must hold (:func:`textpile.search.weights.core_plan`),
    ``weights`` each requirement's share of ``plan``. A page holding only some of the
    words pays for the share it misses in its score (the ``held`` and ``all_terms``
    features), it is not put after every page that holds them all. The ``proximity``
    feature is measured for the first ``proximity_depth`` candidates by the score without
    it (None: every candidate; 0 for the others), which are then scored again."""
    with budget.guard():
        infos = page_infos(conn, sorted(set(found.pages) | set(found.sections)))
    matcher = QueryMatcher(plan, analyzer, codes, weights)
    relaxed_plan = plan.relaxed()
    relaxed = QueryMatcher(relaxed_plan, analyzer, codes) if len(relaxed_plan.requirements) > len(plan.requirements) else None
    # a partial match's bm25 scores fewer words (another expression): it counts in
    # proportion to the share of the query the page holds
    bm25_of = {eg_id: score * min(1.0, held) for eg_id, (score, held) in found.pages.items()}
    best_bm25 = max(bm25_of.values(), default=0.0)
    n = len(core.requirements)
    held_by: dict[int, float] = {}
    for eg_id in infos:
        if eg_id in found.pages:
            held = found.pages[eg_id][1]
        else:  # found by a section only: it holds every word unless all such pages were found
            held = found.section_held.get(eg_id, 0.0)
            if held >= 1.0 and found.all_terms_complete:
                held = (n - 1) / n if n > 1 else 0.5
        held_by[eg_id] = held
    partial = [eg_id for eg_id, held in held_by.items() if held < 1.0]
    if partial and n > 1 and not found.parts_level:  # parts of identifiers: the levels' shares stand
        with budget.guard():
            held_by.update(held_shares(conn, core, _core_weights(plan, core, weights), partial))
    scored = []
    for eg_id, info in infos.items():
        bm25 = bm25_of.get(eg_id, 0.0)
        s = page_features(matcher, info, bm25, best_bm25, found.sections.get(eg_id, []), held_by[eg_id], relaxed)
        s.raw["bm25"] = bm25
        if eg_id in found.pages:  # how it became a candidate, for a merge over shards (textpile.search.fanout)
            s.raw["level"], s.raw["docid"] = found.pages[eg_id][1], info.docid
            if eg_id in found.rarest:
                s.raw["rarest"] = 1.0
        for j, rows in enumerate(found.level_rows):  # among the best pages of partial level j, by its bm25
            s.raw.update((f"level_{j}", score) for i, score in rows if i == eg_id)
        if found.sections.get(eg_id):
            best = min(found.sections[eg_id], key=lambda h: (-h.score, h.section_id))
            s.raw["section"], s.raw["section_id"] = best.score, best.section_id
            s.raw["section_held"] = found.section_held.get(eg_id, 1.0)  # the level its sections came from
        s.score = ranking.score(s.features)
        scored.append(s)
        budget.check()
    scored.sort(key=_rank_order)
    if n > 1 and ranking.features.get("proximity") and "proximity" not in ranking.disable:  # off: no lookup
        top = scored if proximity_depth is None else scored[:proximity_depth]
        with budget.guard():
            near = proximity_shares(conn, core, _core_weights(plan, core, weights),
                                    [s.info.entity_generation_id for s in top])
        for s in top:
            s.features["proximity"] = near[s.info.entity_generation_id]
            s.score = ranking.score(s.features)
        scored.sort(key=_rank_order)
    return scored


def _rank_order(s: Scored) -> tuple[float, float, int]:
    """Best score first; ties: better bm25, then lower id."""
    return -s.score, -s.features["bm25"], s.info.entity_generation_id


def known_pairs(conn: sqlite3.Connection, splits: dict[int, list[tuple[str, ...]]],
                docs: Mapping[str, int] | None = None) -> set[tuple[str, str]]:
    """The pairs of ``splits`` (:func:`textpile.search.plan.split_candidates`) whose two
    terms the index holds (or, given ``docs`` ``{term: pages}``, the shards together)."""
    terms = sorted({t for pairs in splits.values() for pair in pairs for t in pair})
    if not terms:
        return set()
    if docs is not None:
        held = {t for t in terms if docs.get(t, 0) > 0}
        return {pair for pairs in splits.values() for pair in pairs if pair[0] in held and pair[1] in held}
    marks = ", ".join("?" * len(terms))
    held = {r[0] for r in conn.execute(f"SELECT term FROM search_term WHERE term IN ({marks}) AND docs > 0", terms)}
    return {pair for pairs in splits.values() for pair in pairs if pair[0] in held and pair[1] in held}


def _core_weights(plan: QueryPlan, core: QueryPlan, weights: list[float]) -> list[float]:
    """The shares of ``core``'s requirements (a sublist of ``plan``'s), summing to 1."""
    kept = [weights[plan.requirements.index(r)] for r in core.requirements]
    total = sum(kept)
    return [w / total for w in kept] if total > 0 else [1.0 / len(kept)] * len(kept)




@dataclass
class Rescorer:
    """What a search knows to score more pages than its candidates: the query's plan,
    its core (the requirements a page must hold), the requirements' weights, the
    analyzer and stemmer languages, and the weights of its ranking."""

    conn: sqlite3.Connection
    plan: QueryPlan
    core: QueryPlan
    weights: list[float]
    analyzer: Analyzer
    codes: list[str | None]
    ranking: Ranking

    def features(self, ids: list[int]) -> list[Scored]:
        """:class:`Scored` pages ``ids`` (those with a page_infos row), their features as
        :func:`rerank` gives a candidate holding no matching section, with bm25 0 (they
        were not among the candidates) and ``held`` measured; score 0.

        Raises:
            sqlite3.Error: database problems.
        """
        infos = page_infos(self.conn, ids)
        if not infos:
            return []
        matcher = QueryMatcher(self.plan, self.analyzer, self.codes, self.weights)
        shares = _core_weights(self.plan, self.core, self.weights)
        held = held_shares(self.conn, self.core, shares, list(infos))
        near = ({} if "proximity" in self.ranking.disable
                else proximity_shares(self.conn, self.core, shares, list(infos)))
        return [page_features(matcher, info, 0.0, 1.0, [], held[eg_id], proximity=near.get(eg_id, 0.0))
                for eg_id, info in infos.items()]
