"""One search over several shards (design, "Scale": one search over all shards).

:class:`ShardedSearch` searches shards (:mod:`textpile.search.shards`: summary databases
in this process, or other textpile servers) as one index, within the search's time
budget (:mod:`textpile.search.budget`):

1. **route**: a query with positive ``site:``/``host:`` filters goes only to the shards
   whose origins hold such a host (their hosts are read once per :data:`HOSTS_TTL_S`);
2. **statistics**: every shard gives its page count and its term document counts for the
   query's terms, at most :data:`STATS_SHARE` of the budget; they are summed, so that a
   word's rarity (the weights of :mod:`textpile.search.weights`) is the same on every
   shard, as in one index. When one index of the shards would have a first tier
   (:mod:`textpile.index.tier`: its first pages in prior order, from the shards' pages
   per prior key, kept :data:`HOSTS_TTL_S`), each shard counts the same of its part of
   the tier, so that a scan one index ends in its tier is scored with the tier's
   statistics (:class:`textpile.search.global_bm25.TieredBm25`). What of this depends
   only on a shard's content (where its part of the tier ends, the rows and tokens up to
   there, phrase counts) the shard keeps between searches (:mod:`textpile.search.shard_memo`).
   The close words of typo tolerance (each shard's vocabulary searched, their pages
   counted) are asked for in a second round after the cut, only when fewer than
   :data:`~textpile.search.engine.PARTIAL_BELOW` pages of all the shards hold every word
   (only then does a search look for them);
3. **cut**: the routed shards give their first matching pages and sections, and the
   scans of one index are cut from them (:mod:`textpile.search.cuts`), at most
   :data:`KEYS_SHARE` of the time left;
4. **search**: the routed shards search with the summed statistics and their cut in the
   time left, in parallel, each returning every reranked candidate rendered, with its
   features;
5. **merge**: the candidates of all shards are ranked once, with the features that are
   relative to the other candidates made anew over all of them: ``bm25`` divided by the
   best candidate's of every shard, and in hybrid mode ``semantic`` and ``passage`` (the
   similarity less the best of every shard: :mod:`textpile.search.hybrid`), and the pages
   one index drops (no query word, at the floor of similarity against that best) dropped;
   the semantic mode ranks by similarity. The keyword and hybrid weights are those of
   :mod:`textpile.search.rank`. The total is the shards' keyword counts summed (in
   hybrid mode at least the pages ranked, as one index counts);
6. **render**: the shards holding the results shown make their snippets (the shards'
   candidates come without them: a shard answers 30 to 100 for the 10 shown), in the
   time left (:mod:`textpile.search.render`); results a shard did not render in time
   are shown without a snippet, the answer flagged ``partial``.

"More like this" (:meth:`ShardedSearch.more_like_this`) finds the page on whichever
shard holds it, and every shard ranks its pages nearest to that page's vector
(:mod:`textpile.search.shard_like`); they are merged by similarity, as one index's
:data:`~textpile.search.nearest.SEMANTIC_DEPTH` nearest. The synonym table's groups of
the query's items go to every shard with each round (:meth:`ShardedSearch.search`).

A shard that is down, fails, or does not answer in time is left out and the answer is
flagged ``partial`` (with ``missing_shards`` and a note), never an error. When no page of
any shard holds every word, the "did you mean" of the shards is searched instead, as a
single index does (:func:`textpile.search.engine.search`).

Left as one index does it not: the scans of the level of a long query's rarest words
are not cut, and the close words of typo tolerance are each shard's own (a misspelled
word beside other words may find other pages than one index); with
``site:``/``host:``/``lang:`` filters a page's bm25 is its shard's; a page's prior (its
links) is counted on its shard, so links from sites of other shards do not count;
results deeper than :data:`textpile.search.shards.ANSWER_DEPTH` are not shown. In "more
like this", pages of equal similarity are ordered by shard, then by the shard's
generation id (one index: by its generation id), and the keyword search of the page's
title words that a result's snippet and section link come from is each shard's own
(weighed by its own statistics).
"""

from __future__ import annotations

import concurrent.futures as futures
import sqlite3
import threading
import time
from dataclasses import dataclass, field, replace

from textpile.errors import TextpileError
from textpile.search.boosts import RankingRule, rules_boost
from textpile.search.budget import DEFAULT_BUDGET_MS, Budget
from textpile.search.cuts import PRIOR_KEY_SHIFT, cut_scans
from textpile.search.engine import (MAX_CANDIDATES, PAGE_SCAN, PARTIAL_BELOW, PARTIAL_NOTE, PARTS_NOTE, RERANK_DEPTH,
                                     SECTION_DEPTH, SECTION_SCAN)
from textpile.search.facets import PageFacts, count_facets, refine
from textpile.search.filters import filter_sql
from textpile.search.grouping import group_by_site
from textpile.search.hybrid import SEMANTIC_CANDIDATES, SEMANTIC_FLOOR
from textpile.search.nearest import SEMANTIC_DEPTH
from textpile.search.plan import language_codes
from textpile.search.query import parse_query
from textpile.search.proximity import PROXIMITY_DEPTH
from textpile.search.rank import DEFAULT_RANKING, HYBRID_RANKING
from textpile.search.rerank import SECTION_PAGES
from textpile.search.render import with_snippet
from textpile.search.results import SearchResult, SearchResults, result_page, results_per_page
from textpile.search.service import ModeError, check_mode, no_vector_message
from textpile.search.shards import ANSWER_DEPTH, ShardAnswer, holds_site, summed_stats, tier_shares
from textpile.search.sorting import check_sort
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, query_synonyms
from textpile.search.weights import CorpusStats

#: The share of the time budget the statistics round may take.
STATS_SHARE = 0.3
#: The share of the time left that the round of scan keys may take.
KEYS_SHARE = 0.3
#: Seconds a shard's hosts are kept before they are read again (new sites get crawled).
HOSTS_TTL_S = 60.0
#: Seconds a served shard may take beyond the time budget it is given (the HTTP round
#: trip, the rendering of its results) before it counts as late.
GRACE_S = 0.25


#: What a shard that is down or failing raises (a served shard: ShardError, a TextpileError;
#: a local one: its database's errors); anything else is a defect and is raised.
_DOWN = (TextpileError, sqlite3.Error, OSError)


def _answered(job: futures.Future) -> bool:
    """True when ``job`` is done with an answer; False when it is late or its shard is
    down (:data:`_DOWN`).

    Raises:
        whatever else the shard raised.
    """
    if not job.done():
        return False
    exc = job.exception()
    if exc is None:
        return True
    if isinstance(exc, _DOWN):
        return False
    raise exc


@dataclass
class _Candidate:
    shard: int
    order: int
    result: SearchResult
    explained: dict
    score: float = 0.0
    bm25: float = 0.0
    features: dict[str, float] = field(default_factory=dict)  # made anew over all shards (_score)
    reranked: bool = False  # one index's keyword stage would rerank it (_as_one_index)


class ShardedSearch:
    """Search ``shards`` (objects with ``name``, ``hosts(timeout_s)``, ``priors(timeout_s)``,
    ``stats(query, timeout_s, ...)``, ``keys(...)``, ``search(query, stats, mode, budget_ms, ...)``,
    ``render(words, sources, timeout_s)``, ``page(target, timeout_s)``, ``like(like, exclude, depth, budget_ms, ...)`` and ``close()``:
    :class:`textpile.search.shards.LocalShard`, :class:`~textpile.search.shards.RemoteShard`)
    as one index. Thread-safe; keeps a pool of threads until :meth:`close`."""

    def __init__(self, shards: list, *, clock=time.monotonic) -> None:
        if not shards:
            raise ValueError("a search over shards needs at least one shard")
        self.shards = list(shards)
        self._pool = futures.ThreadPoolExecutor(max_workers=8 * len(self.shards), thread_name_prefix="textpile-shard")
        self._hosts: dict[int, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._priors: dict[int, int] = {}
        self._priors_at = float("-inf")

    def close(self) -> None:
        """Stop the threads (not waiting for late shards) and close the shards."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for shard in self.shards:
            shard.close()

    def __enter__(self) -> "ShardedSearch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _hosts_of(self, i: int, timeout_s: float) -> frozenset[str] | None:
        """Shard ``i``'s hosts (kept :data:`HOSTS_TTL_S`), None when it cannot say."""
        now = self._clock()
        with self._lock:
            kept = self._hosts.get(i)
        if kept is not None and now - kept[0] < HOSTS_TTL_S:
            return kept[1]
        try:
            hosts = self.shards[i].hosts(timeout_s)
        except _DOWN:  # a down shard is asked all the same, and missed like any
            return None
        with self._lock:
            self._hosts[i] = (now, hosts)
        return hosts

    def _tier_shares(self, timeout_s: float) -> dict[int, int]:
        """{shard: its pages in one index's first tier} (:func:`textpile.search.shards.tier_shares`),
        each shard's prior keys kept :data:`HOSTS_TTL_S`; empty when one index has no
        first tier or a shard cannot say (then each shard's statistics are every page's)."""
        now = self._clock()
        with self._lock:
            kept = self._priors if now - self._priors_at < HOSTS_TTL_S else None
        if kept is None:
            jobs = {i: self._pool.submit(shard.priors, timeout_s) for i, shard in enumerate(self.shards)}
            futures.wait(list(jobs.values()), timeout=timeout_s)
            if not all(_answered(job) for job in jobs.values()):
                return {}
            kept = tier_shares({i: job.result() for i, job in jobs.items()})
            with self._lock:
                self._priors, self._priors_at = kept, now
        return kept

    def route(self, query: str, timeout_s: float = 1.0) -> list[int]:
        """The shards ``query`` goes to: those that may hold its ``site:``/``host:``
        filters' hosts (every shard for a query without them; a shard whose hosts are not
        known is asked too)."""
        parsed = parse_query(query)
        if not any(f.kind in ("site", "host") and not f.negated for f in parsed.filters):
            return list(range(len(self.shards)))
        out = []
        for i in range(len(self.shards)):
            hosts = self._hosts_of(i, timeout_s)
            if hosts is None or holds_site(hosts, parsed.filters):
                out.append(i)
        return out

    def search(self, query: str, *, mode: str | None = None, page: int = 0, per_page: int = 20,
               budget_ms: float = DEFAULT_BUDGET_MS, correct: bool = True, facets: bool = False,
               sort: str | None = None, per_site: int = 0, rules: tuple[RankingRule, ...] = (),
               synonyms: Synonyms = NO_SYNONYMS) -> SearchResults:
        """``query`` searched over every shard as one index (module docstring): a page of
        :class:`SearchResults`, ``partial`` when a shard's answer is missing. ``facets``,
        ``sort``, ``per_site``, ``rules`` and ``synonyms`` are
        :func:`textpile.search.engine.search`'s: the facets count the pages of every
        shard, the date order, the grouping by site and the ranking rules apply to the
        merged ranking; the groups of the synonym table that the query's items are members
        of go to every shard with each of its rounds (the statistics count the members'
        terms, as one index weighs them).

        Raises:
            textpile.search.service.ModeError: ``mode`` is not a search mode.
            textpile.search.results.PagingError: ``page`` or ``per_page`` is not a whole number.
            textpile.search.sorting.SortError: ``sort`` is not an order.
        """
        check_mode(mode)
        page, per_page = result_page(page), results_per_page(per_page)
        sort = check_sort(sort) or parse_query(query).sort
        budget = Budget(budget_ms)
        routed = self.route(query, timeout_s=max(0.001, budget.remaining_s() * STATS_SHARE))
        missing: list[str] = []
        table = query_synonyms(synonyms, query)
        # statistics: from every shard (rarity is the whole index's), within STATS_SHARE
        tier = self._tier_shares(max(0.001, budget.remaining_s() * STATS_SHARE))
        parts: dict[int, CorpusStats] = {}
        self._stats_round(query, range(len(self.shards)), None, tier, table, budget, parts, routed, missing)
        languages = summed_stats(list(parts.values())).languages
        # a shard without some language of the others: its counts of their stems too
        self._stats_round(query, [i for i, part in parts.items()
                                  if language_codes(part.languages) != language_codes(languages)],
                          languages, tier, table, budget, parts, routed, missing)
        stats = summed_stats(list(parts.values()))
        asked = [i for i in routed if i in parts]
        # cuts: each shard's part of one index's scans (textpile.search.cuts)
        scans = (max(PAGE_SCAN, ANSWER_DEPTH + 1), SECTION_SCAN)
        keys_jobs = {i: self._pool.submit(self.shards[i].keys, query, replace(stats, tier_last=parts[i].tier_last),
                                          *scans, budget.remaining_s(), synonyms=table) for i in asked}
        futures.wait(list(keys_jobs.values()), timeout=max(0.0, budget.remaining_s() * KEYS_SHARE))
        keys = {}
        for i, job in keys_jobs.items():
            if _answered(job):
                keys[i] = job.result()
            else:
                missing.append(self.shards[i].name)
        tier_last = {i: parts[i].tier_last for i in keys} if stats.tier is not None else None
        cuts = cut_scans(keys, *scans, SECTION_DEPTH, min(MAX_CANDIDATES, max(RERANK_DEPTH, (page + 1) * per_page)),
                         tier_last, filtered=bool(filter_sql(parse_query(query).filters)[0]))
        if any(cut.few for cut in cuts.values()):  # typo tolerance runs: the close words' counts too
            self._stats_round(query, list(parts), languages, tier, table, budget, parts, routed, missing, near=True)
            stats = summed_stats(list(parts.values()))
            keys = {i: k for i, k in keys.items() if i in parts}
        jobs = {i: self._pool.submit(self.shards[i].search, query,
                                     replace(stats, cut=cuts[i], tier_last=parts[i].tier_last), mode,
                                     max(1.0, budget.remaining_s() * 1000.0), facets, sort, synonyms=table)
                for i in keys}
        answers = self._answers(jobs, budget, missing)
        out = merge(query, answers, page, per_page, mode, facets=facets, sort=sort, per_site=per_site, rules=rules)
        unrendered = self._render(out, answers, budget)
        self._flag_missing(out, missing, unrendered)
        if out.total == 0 and correct and out.suggestion and budget.remaining_s() > 0:
            fixed = self.search(out.suggestion, mode=mode, page=page, per_page=per_page,
                                budget_ms=budget.remaining_s() * 1000.0, correct=False, facets=facets, sort=sort,
                                per_site=per_site, rules=rules, synonyms=synonyms)
            if fixed.total:
                note = f"No page holds every word of “{query}”: these are the results for “{out.suggestion}”."
                fixed.query, fixed.suggestion, fixed.corrected = query, out.suggestion, True
                fixed.notes.insert(0, note)
                out = fixed
        if out.total == 0 and not out.notes:
            out.notes.append("No results.")
        out.message = " ".join(out.notes + ([out.past_last_page_sentence(page + 1)] if out.past_last_page else [])) \
            or None
        return out


    def _stats_round(self, query: str, asked, languages: dict[str, int] | None, tier: dict[int, int],
                     synonyms: Synonyms, budget: Budget, parts: dict[int, CorpusStats], routed: list[int],
                     missing: list[str], near: bool = False) -> None:
        """Ask the shards ``asked`` for their statistics of ``query`` (analyzed in
        ``languages``, or each in its own; with their part of one index's first tier,
        ``tier``; with the close words of typo tolerance when ``near``) within
        :data:`STATS_SHARE` of the time left, into ``parts`` ({shard: statistics}); a shard
        that does not answer leaves ``parts``, and is added to ``missing`` when the query
        is ``routed`` to it."""
        jobs = {i: self._pool.submit(self.shards[i].stats, query, budget.remaining_s(), languages, tier.get(i),
                                     synonyms=synonyms, near=near) for i in asked}
        if not jobs:
            return
        futures.wait(list(jobs.values()), timeout=max(0.0, budget.remaining_s() * STATS_SHARE))
        for i, job in jobs.items():
            if _answered(job):
                parts[i] = job.result()
            else:
                parts.pop(i, None)
                if i in routed:
                    missing.append(self.shards[i].name)

    def _answers(self, jobs: dict[int, futures.Future], budget: Budget, missing: list[str]) -> dict[int, ShardAnswer]:
        """The answers of the shards' ``jobs`` ({shard index: job}) that came within the time
        left (and the grace for the round trip); the names of the others are added to
        ``missing``."""
        futures.wait(list(jobs.values()), timeout=max(0.0, budget.remaining_s()) + GRACE_S)
        answers: dict[int, ShardAnswer] = {}
        for i, job in jobs.items():
            if _answered(job):
                answers[i] = job.result()
            else:
                missing.append(self.shards[i].name)
        return answers

    def _render(self, out: SearchResults, answers: dict[int, ShardAnswer], budget: Budget) -> dict[str, int]:
        """Make the snippets of ``out``'s results that came without them: each shard those
        of its own (:meth:`render`, with the words of its answer), in parallel, within the
        time left and the grace for the round trip. Returns ``{shard name: results left
        without a snippet}`` of the shards that did not answer in time or are down."""
        owner = {id(r): i for i, a in answers.items() for r in a.results}
        wanted: dict[int, list[SearchResult]] = {}
        for r in out.results:
            if r.snippet_source is not None:
                wanted.setdefault(owner[id(r)], []).append(r)
        timeout_s = max(0.0, budget.remaining_s()) + GRACE_S
        jobs = {i: self._pool.submit(self.shards[i].render, answers[i].snippet_words or [],
                                     [r.snippet_source for r in rs], timeout_s) for i, rs in wanted.items()}
        futures.wait(list(jobs.values()), timeout=timeout_s)
        unrendered = {}
        for i, job in jobs.items():
            if _answered(job):
                for r, snippet in zip(wanted[i], job.result()):
                    with_snippet(r, snippet)
            else:
                unrendered[self.shards[i].name] = len(wanted[i])
        return unrendered

    def _flag_missing(self, out: SearchResults, missing: list[str], unrendered: dict[str, int] | None = None) -> None:
        """Flag ``out`` partial when shards (their names ``missing``) did not answer, or
        did not make the snippets of their results shown (``unrendered``: {name: results})."""
        missing = sorted(set(missing))  # (a shard may miss several rounds)
        if missing:
            out.notes.append(f"{len(missing)} of {len(self.shards)} shards did not answer in time or are down "
                             f"({', '.join(missing)}): their pages are missing from these results.")
        if unrendered:
            lacking = sum(unrendered.values())
            out.notes.append(f"{lacking} {'result lacks its' if lacking == 1 else 'results lack their'} snippet: "
                             f"{', '.join(sorted(unrendered))} did not answer in time or "
                             f"{'is' if len(unrendered) == 1 else 'are'} down.")
        if missing or unrendered:
            out.partial = True
            out.missing_shards = sorted(set(missing) | set(unrendered or ()))

    def more_like_this(self, target: str, *, page: int = 0, per_page: int = 20,
                       budget_ms: float = DEFAULT_BUDGET_MS, facets: bool = False, sort: str | None = None,
                       per_site: int = 0, rules: tuple[RankingRule, ...] = ()) -> SearchResults:
        """The pages of every shard nearest to ``target`` (a page's URL or entity generation
        UUID, :func:`textpile.search.service.find_page`) by vector similarity, itself left
        out, as :func:`textpile.search.service.more_like_this` ranks those of one index:
        every shard is asked for the page (at most :data:`STATS_SHARE` of the budget), the
        first shard holding it gives its vector and title, and every shard that answered
        ranks its pages nearest to that vector (:mod:`textpile.search.shard_like`); they
        are merged by similarity (:func:`merge`). A shard down or late in either round
        leaves its pages out, flagged ``partial``. ``facets``, ``sort``, ``per_site`` and
        ``rules`` are :meth:`search`'s.

        Raises:
            textpile.search.service.ModeError: no shard that answered holds ``target`` (the
                message names it, and the shards that did not answer), or the shard holding
                it has no vector for it.
            textpile.search.results.PagingError: ``page`` or ``per_page`` is not a whole number.
        """
        page, per_page = result_page(page), results_per_page(per_page)
        sort = check_sort(sort)
        budget = Budget(budget_ms)
        jobs = {i: self._pool.submit(shard.page, target, budget.remaining_s()) for i, shard in enumerate(self.shards)}
        futures.wait(list(jobs.values()), timeout=max(0.0, budget.remaining_s() * STATS_SHARE))
        missing = [self.shards[i].name for i, job in jobs.items() if not _answered(job)]
        held = [(i, job.result()) for i, job in jobs.items() if _answered(job) and job.result() is not None]
        if not held:
            unanswered = f" ({len(missing)} of {len(self.shards)} shards did not answer: {', '.join(sorted(missing))})"
            raise ModeError(f"{target!r}: no searchable page of the shards has that URL or entity generation UUID"
                            + (unanswered if missing else ""))
        owner, like = held[0]
        if like.vector is None:
            raise ModeError(no_vector_message(target))
        # each shard renders the results the page may show: the first (page + 1) * per_page,
        # all it may give when they are ordered or grouped anew
        depth = ANSWER_DEPTH if sort or per_site or rules else min(ANSWER_DEPTH, (page + 1) * per_page)
        like_jobs = {i: self._pool.submit(self.shards[i].like, like, like.entity_generation_id if i == owner else None,
                                          depth, max(1.0, budget.remaining_s() * 1000.0), facets, sort)
                     for i, job in jobs.items() if _answered(job)}
        answers = self._answers(like_jobs, budget, missing)
        out = merge(like.title, answers, page, per_page, "semantic", facets=facets, sort=sort, per_site=per_site,
                    rules=rules)
        self._flag_missing(out, missing)
        if out.total == 0 and not out.notes:
            out.notes.append("No results.")
        out.message = " ".join(out.notes + ([out.past_last_page_sentence(page + 1)] if out.past_last_page else [])) \
            or None
        return out


def merge(query: str, answers: dict[int, ShardAnswer], page: int, per_page: int, mode: str | None, *,
          facets: bool = False, sort: str | None = None, per_site: int = 0,
          rules: tuple[RankingRule, ...] = ()) -> SearchResults:
    """One page of results from the shards' ``answers`` ({shard index: answer}), their
    candidates ranked once (module docstring, 5) as :func:`textpile.search.engine.search`
    ranks them: pages found through close words only after the others, the ``rules``'
    boosts, then with ``sort`` ``date`` newest first, or with ``per_site`` grouped by
    site; with ``facets``, the facets of every shard's pages. The notes are the shards'
    (each once), the total their sum (in semantic mode: the pages ranked)."""
    ran = {a.mode for a in answers.values()}
    kind = check_mode(mode) if ran == {check_mode(mode)} else "keyword"
    candidates = [_Candidate(i, n, r, e) for i, a in sorted(answers.items())
                  for n, (r, e) in enumerate(zip(a.results, a.explained or [{}] * len(a.results)))]
    all_words = [c for c in candidates if c.explained.get("raw", {}).get("level", 0.0) >= 1.0]
    # one index adds partial matches only when fewer than PARTIAL_BELOW pages of all
    # the shards together hold every word (a shard that added them holds fewer, all
    # of them among its candidates)
    whole = kind != "semantic" and len(all_words) >= PARTIAL_BELOW
    if kind != "semantic":
        candidates = _as_one_index(candidates, max(RERANK_DEPTH, (page + 1) * per_page), seen=sort == "date")
    _score(candidates, kind)
    if kind == "hybrid":
        candidates = _above_floor(candidates)
    # pages found through close words only after the others; in date order, the pages the
    # scan saw (no raw values) after those reranked, as one index appends them
    candidates.sort(key=lambda c: ("typo" in c.explained.get("raw", {}),
                                   "features" in c.explained and not c.explained.get("raw"),
                                   -c.score, -c.bm25, c.shard, c.order))
    if kind == "semantic":  # one index ranks its SEMANTIC_DEPTH nearest pages, each among its shard's
        candidates = candidates[:SEMANTIC_DEPTH]
    ranked = len(candidates)
    candidates, capped = _arranged(candidates, rules, sort, per_site, per_page, page)
    out = SearchResults(query=query, page=page, per_page=per_page, mode=kind, sort=sort or "relevance",
                        results_per_site=per_site if per_site and sort != "date" else 0)
    out.results = [c.result for c in candidates[page * per_page:(page + 1) * per_page]]
    linked: set[str] = set()
    for c, r in reversed(list(zip(candidates[page * per_page:(page + 1) * per_page], out.results))):
        r.score = c.score
        if (page, r.site) in capped and r.site not in linked:  # the link follows a site's last result
            linked.add(r.site)
            r.more_from_site = refine(query, "site", [f"site:{r.site}"])
    if facets:
        facts = {(i, n): PageFacts(*f) for i, a in answers.items() for n, f in enumerate(a.facts or [])}
        out.facets = count_facets(facts, query, any(a.facets_lower_bound for a in answers.values()))
    if kind == "semantic":  # one index's SEMANTIC_DEPTH nearest at most (each shard's are counted)
        out.total = min(SEMANTIC_DEPTH, sum(a.total for a in answers.values()))
    else:  # the keyword scans' counts; in hybrid mode at least the pages ranked, as one index counts
        keyword = (a.keyword_total if kind == "hybrid" and a.keyword_total is not None else a.total
                   for a in answers.values())
        out.total = sum(sum(1 for c in all_words if c.shard == i) if whole and a.fallback_any_term else counted
                        for (i, a), counted in zip(answers.items(), keyword))
        if kind == "hybrid":
            out.total = max(out.total, ranked)
    out.total_is_lower_bound = any(a.total_is_lower_bound for a in answers.values()
                                   if not (whole and a.fallback_any_term))
    out.fallback_any_term = not whole and any(a.fallback_any_term for a in answers.values())
    out.timed_out = any(a.timed_out for a in answers.values())
    out.mode_note = next((a.mode_note for a in answers.values() if a.mode_note), None)
    dropped = {"No results."} | ({PARTIAL_NOTE, PARTS_NOTE} if whole else set())
    for a in answers.values():
        for note in a.notes:
            if note not in out.notes and note not in dropped:
                out.notes.append(note)
    if out.total == 0:
        out.suggestion = next((a.suggestion for a in answers.values() if a.suggestion), None)
    return out


def _as_one_index(candidates: list[_Candidate], depth: int, seen: bool = False) -> list[_Candidate]:
    """The candidates one index of every shard would have reranked, as far as their
    ``raw`` values tell (each shard keeps its own best): the best ``depth`` page
    candidates holding every word by bm25 (each shard scored them with every shard's
    statistics); the partial matches only when fewer than
    :data:`~textpile.search.engine.PARTIAL_BELOW` pages hold every word; the best
    :data:`~textpile.search.rerank.SECTION_PAGES` pages found by a section only (by
    their best section's bm25, a shard's own); in hybrid mode the
    :data:`~textpile.search.hybrid.SEMANTIC_CANDIDATES` pages nearest to the query that
    no keyword stage found. With ``seen`` (the date order), the candidates one index would
    not rerank stay, as the pages its scans saw (no raw values, score 0)."""
    def raw(c: _Candidate) -> dict:
        return c.explained.get("raw", {})

    full = [c for c in candidates if raw(c).get("level", 0.0) >= 1.0]
    full.sort(key=lambda c: (-raw(c).get("bm25", 0.0), *_prior_order(c)))
    kept = full[:depth]
    lowest = 1.0  # the level of the partial matches one index looked for last
    if len(full) < PARTIAL_BELOW:
        partial = _partial_levels(candidates, len(full), depth)
        kept += partial
        lowest = min((raw(c)["level"] for c in partial), default=lowest)
    # pages found by a section only: those of the shards, and the page candidates one index
    # would not keep (each shard keeps more), their bm25 left out as one index's; each
    # level's sections bring SECTION_PAGES new pages at most
    chosen = {id(c) for c in kept}
    by_section = sorted((c for c in candidates if "section" in raw(c) and id(c) not in chosen
                         and raw(c).get("section_held", 1.0) >= lowest),
                        key=lambda c: (-raw(c)["section"], c.shard, raw(c).get("section_id", 0)))
    per_level: dict[float, int] = {}
    for c in by_section:
        held = raw(c).get("section_held", 1.0)
        if per_level.get(held, 0) >= SECTION_PAGES:
            continue
        per_level[held] = per_level.get(held, 0) + 1
        if "level" in raw(c):
            c.explained = dict(c.explained, raw={k: v for k, v in raw(c).items() if k not in ("bm25", "level")})
        kept.append(c)
    for c in kept:  # one index's keyword stage reranked these (its proximity depth counts them)
        c.reranked = True
    # one index's nearest pages are the best SEMANTIC_CANDIDATES by similarity of all its
    # pages, each of them among its shard's nearest (keyword candidates take their places too)
    similarities = sorted((raw(c)["semantic"] for c in candidates if "semantic" in raw(c)), reverse=True)
    if similarities:
        least = similarities[:SEMANTIC_CANDIDATES][-1]
        chosen = {id(c) for c in kept}
        for c in candidates:
            if id(c) not in chosen and raw(c).get("semantic", least - 1.0) >= least:
                if "level" in raw(c) or "section" in raw(c):  # a keyword candidate one index would not have
                    c.explained = dict(c.explained, raw={k: v for k, v in raw(c).items() if k != "bm25"})
                kept.append(c)
    kept += [c for c in candidates if not raw(c)]  # a query without words; in date order, the pages the scan saw
    if seen:  # the date order lists every page the scans saw: the others' too, as one index unranked
        chosen = {id(c) for c in kept}
        for c in candidates:
            if id(c) not in chosen and "level" in raw(c):
                c.explained = {"features": {}, "raw": {}}
                c.result.score = 0.0
                kept.append(c)
    return kept


def _arranged(candidates: list[_Candidate], rules: tuple[RankingRule, ...], sort: str | None, per_site: int,
              per_page: int, page: int) -> tuple[list[_Candidate], set[tuple[int, str]]]:
    """The ranked ``candidates`` with the ``rules``' boosts added to their scores (sorted
    again, stably), newest first with ``sort`` ``date`` (undated last, stably), or grouped
    by site with ``per_site`` (:func:`textpile.search.grouping.group_by_site`), and the
    (result page, site) pairs that left results of that site to later pages."""
    if rules:
        for c in candidates:
            c.score += rules_boost(c.result.page_url or c.result.url, rules)
        candidates.sort(key=lambda c: -c.score)
    if sort == "date":
        def date(c: _Candidate) -> int | None:
            r = c.result
            return r.time_updated_unix_utc if r.time_updated_unix_utc is not None else r.time_created_unix_utc
        return sorted(candidates, key=lambda c: (date(c) is None, -(date(c) or 0))), set()
    if per_site:
        return group_by_site(candidates, per_page, per_site, pages=page + 1, site=lambda c: c.result.site or "")
    return candidates, set()


def _partial_levels(candidates: list[_Candidate], full: int, depth: int) -> list[_Candidate]:
    """The partial matches among ``candidates`` one index would find when ``full`` pages
    of all the shards hold every word (:func:`textpile.search.engine._partial_candidates`):
    level by level, the best ``depth`` pages of the level by its bm25 (raw ``level_<j>``:
    pages found before it among them) that no level before found, until
    :data:`PARTIAL_BELOW` pages are found (each shard went at least as deep: it stopped
    with fewer pages); a long query's one level of the k rarest words: that of the
    largest k of any shard. The pages found through close words (no level's) stay."""
    def raw(c: _Candidate) -> dict:
        return c.explained.get("raw", {})

    partial = [c for c in candidates if 0.0 <= raw(c).get("level", 1.0) < 1.0]
    rarest = [raw(c)["level"] for c in partial if "rarest" in raw(c)]
    out: list[_Candidate] = []
    chosen: set[int] = set()
    levels = 1 + max((int(k[6:]) for c in candidates for k in raw(c) if k.startswith("level_")), default=-1)
    for j in range(levels):  # a level may have found nothing
        if full + len(out) >= PARTIAL_BELOW:
            break
        key = f"level_{j}"
        at = [c for c in candidates if key in raw(c)]
        at.sort(key=lambda c: (-raw(c)[key], *_prior_order(c)))
        for c in at[:depth]:
            new = c in partial and id(c) not in chosen and not any(f"level_{i}" in raw(c) for i in range(j))
            if new and ("rarest" not in raw(c) or raw(c)["level"] >= max(rarest)):
                chosen.add(id(c))
                out.append(c)
    # and the pages close words found (typo tolerance: no partial level's)
    return out + [c for c in partial if not any(k.startswith("level_") for k in raw(c))]


def _prior_order(c: _Candidate) -> tuple[int, int, int]:
    """One index's order of page candidates with equal bm25 (its docids,
    :func:`textpile.search.candidates.page_candidates`): prior key, then shard, then
    docid (raw ``docid``), as :mod:`textpile.search.cuts` merges them."""
    docid = int(c.explained.get("raw", {}).get("docid", 0))
    return docid >> PRIOR_KEY_SHIFT, c.shard, docid


def _score(candidates: list[_Candidate], kind: str) -> None:
    """Each candidate's score over all shards: the features relative to the other
    candidates (bm25, semantic, passage) made anew from the raw values, then weighted."""
    if kind == "semantic":
        for c in candidates:
            c.score = float(c.explained.get("raw", {}).get("semantic", c.result.score))
        return
    best_bm25 = max((c.explained.get("raw", {}).get("bm25", 0.0) for c in candidates), default=0.0)
    ranking = HYBRID_RANKING if kind == "hybrid" else DEFAULT_RANKING
    best_page = max((c.explained["raw"]["semantic"] for c in candidates
                     if "semantic" in c.explained.get("raw", {})), default=0.0)
    best_passage = max((c.explained["raw"]["passage"] for c in candidates
                        if "passage" in c.explained.get("raw", {})), default=0.0)
    for c in candidates:
        if not c.explained.get("raw"):  # a query without words, a page the scan saw: the shard's own score
            c.score = c.result.score
            continue
        raw = c.explained.get("raw", {})
        features = dict(c.explained["features"])
        features["bm25"] = raw.get("bm25", 0.0) / best_bm25 if best_bm25 > 0 else 0.0
        if kind == "hybrid" and "semantic" in raw:
            features["semantic"] = max(-SEMANTIC_FLOOR, raw["semantic"] - best_page)
            features["passage"] = (max(-SEMANTIC_FLOOR, raw["passage"] - best_passage) if "passage" in raw
                                   else -SEMANTIC_FLOOR)
        c.bm25 = features["bm25"]
        c.features = features
    _proximity_as_one_index([c for c in candidates if "features" in c.explained])
    for c in candidates:
        if "features" in c.explained:
            c.score = ranking.score(c.features)


def _above_floor(candidates: list[_Candidate]) -> list[_Candidate]:
    """The hybrid ``candidates`` one index keeps (:func:`textpile.search.hybrid.hybrid_ranking`):
    without the pages that hold none of the query's words and whose page similarity is at
    the floor, :data:`~textpile.search.hybrid.SEMANTIC_FLOOR` or more below the best of
    every shard (a shard measured it against its own best, which may be lower)."""
    return [c for c in candidates if "features" not in c.explained or c.explained.get("held", 0.0) > 0
            or c.features.get("semantic", 0.0) > -SEMANTIC_FLOOR]


def _proximity_as_one_index(candidates: list[_Candidate]) -> None:
    """One index measures ``proximity`` only for its first
    :data:`~textpile.search.proximity.PROXIMITY_DEPTH` keyword candidates by the keyword
    score without it (:func:`textpile.search.rerank.rerank`: the pages its page scans
    found and those only a section found; the pages only the vectors found have it
    measured too); the shards measured it for every candidate: the others' is set to 0."""
    keyword = [c for c in candidates if c.reranked]
    without = {id(c): DEFAULT_RANKING.score({**c.features, "proximity": 0.0}) for c in keyword}
    keyword.sort(key=lambda c: (-without[id(c)], -c.bm25, c.shard, c.order))
    for c in keyword[PROXIMITY_DEPTH:]:
        c.features["proximity"] = 0.0
