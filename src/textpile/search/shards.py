"""The shards of one search: what each shard answers, locally or over HTTP.

A shard is a summary database searched in this process (:class:`LocalShard`) or one
served by another textpile (:class:`RemoteShard`, its ``/-/textpile/shard`` endpoint:
:mod:`textpile.web.shards`). A search over shards (:mod:`textpile.search.fanout`) asks
each shard four things, all answered by the functions here, so that a local and a
served shard answer alike:

* ``hosts``: the hosts of the shard's origins (a ``site:`` or ``host:`` query goes only
  to the shards holding the site);
* ``stats`` (:func:`query_stats`): the shard's page count and, for each index term of
  the query as the shard plans it, the pages holding it; the search sums them over the
  shards (:class:`textpile.search.weights.CorpusStats`); what depends only on the
  shard's content is kept between searches (:mod:`textpile.search.shard_memo`);
* ``keys`` (:func:`textpile.search.cuts.scan_keys`): the shard's first matching pages
  and sections, to cut the scans together as one index would;
* ``search`` (:func:`shard_search`): the query searched with those summed statistics and its cut,
  every reranked candidate rendered without its snippet (where the snippet is read
  from instead, and the words it marks) with its features and the raw values behind
  the features that are relative to the other candidates (bm25, the similarities), at
  most :data:`ANSWER_DEPTH`; the fan-out ranks them together once;
* ``render`` (:func:`textpile.search.render.render_snippets`): the snippets of the
  results the fan-out shows, from their sources.

"More like this" asks two more things, ``page`` and ``like`` (:mod:`textpile.search.shard_like`).
:func:`answer_json` and :func:`answer_from_json` are the JSON form of an answer.
"""

from __future__ import annotations

import contextlib
import json
import threading
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path

from textpile.errors import ConfigError, TextpileError
from textpile.index.analysis import Analyzer
from textpile.index.docids import last_section_docid
from textpile.index.tier import TOP_TIER_PAGES
from textpile.search.candidates import LAST_ROWID, search_tiers
from textpile.search.engine import MAX_CANDIDATES
from textpile.search.cuts import PRIOR_KEY_SHIFT, ScanCut, ScanKeys, scan_keys
from textpile.search.global_bm25 import SECTION_TABLE, phrases_of
from textpile.search.plan import (fts_phrase, language_codes, language_pages, plan_query, split_candidates,
                                  with_split_forms)
from textpile.search.query import Filter, matches_subdomains, parse_query
from textpile.search.render import Snippet, SnippetSource, render_snippets
from textpile.search.results import ResultSection, SearchResult, SearchResults
from textpile.search.shard_memo import ShardMemo
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, synonym_table, with_synonyms
from textpile.search.typos import nearby_words
from textpile.search.weights import CorpusStats, plan_terms, term_documents
from textpile.semantic.loaded import SemanticCache

#: Candidates a shard renders and returns, at most (a search reranks 30 to 75 of them
#: for a first page; the fan-out shows results up to this depth).
ANSWER_DEPTH = 100
#: Snippet sources a served shard is asked to render per request, at most.
RENDER_PER_REQUEST = 25
#: The fields of a snippet source's JSON object.
SOURCE_FIELDS = frozenset({"entity_generation_id", "text_pile_id", "text_pile_v0_2_id", "start", "end"})
#: Requirements whose words a snippet marks, at most, in a shard request (a query has at
#: most 64 words: textpile.search.query).
MAX_WORD_GROUPS = 200
#: The path of the shard endpoint of a served textpile.
SHARD_PATH = "/-/textpile/shard"


class ShardError(TextpileError):
    """A shard did not answer, or answered something that is no shard answer; the
    message names the shard."""


def query_stats(conn: sqlite3.Connection, query: str, languages: Mapping[str, int] | None = None,
                tier_pages: int | None = None, synonyms: Synonyms = NO_SYNONYMS,
                memo: ShardMemo | None = None, near: bool = True) -> CorpusStats:
    """The shard's statistics for ``query``: its indexed pages, its pages per stemmer
    language, and ``{term: pages}`` (and phrases) for the index terms of the query
    analyzed in its stemmer languages, or in those of ``languages`` (``{language:
    pages}`` of every shard: :func:`textpile.search.plan.language_codes`), its items
    joined by their ``synonyms`` (:func:`textpile.search.synonyms.with_synonyms`: the
    members' terms are counted too, as the search will weigh them). With
    ``tier_pages`` (its first pages in docid order that one index of every shard holds in
    its first tier: :func:`tier_shares`), the same statistics of those pages
    (:attr:`CorpusStats.tier`, :attr:`CorpusStats.tier_last`). ``memo``: the counts kept
    for this shard's content between searches (:mod:`textpile.search.shard_memo`; none:
    everything counted for this call). ``near``: the close words of typo tolerance in
    this shard's vocabulary are counted too (a search over shards asks for them only when
    few pages of all the shards hold every word: only then does typo tolerance run).

    Raises:
        sqlite3.Error: database problems.
    """
    parsed = parse_query(query)
    own = language_pages(conn)
    analyzer, codes = Analyzer(), language_codes(languages if languages else own)
    plan = with_synonyms(plan_query(parsed, analyzer, codes), synonyms, analyzer, codes)
    expressions = [plan.all_terms, plan.relaxed().all_terms]
    splits = split_candidates(analyzer, plan, codes)
    terms = plan_terms(plan)
    if splits:  # every split form: the search adds those any shard holds both terms of
        split = with_split_forms(plan, splits, {pair for pairs in splits.values() for pair in pairs})
        expressions.append(split.all_terms)
        terms = plan_terms(split)
    near = [(i, w) for i, r in enumerate(plan.requirements) if near and len(r) == 1 and not r[0].phrase
            for w in nearby_words(conn, r[0].text)]  # the close words of typo tolerance, any shard's
    if near:
        extra = {fts_phrase(a) for _, w in near for a in analyzer.query_alternatives(w, codes)}
        expressions.append(" OR ".join(sorted(extra)))
        terms = sorted(set(terms) | {t for _, w in near for a in analyzer.query_alternatives(w, codes) for t in a})
    phrases = sorted({p for e in expressions for p in phrases_of(e)})
    memo = memo if memo is not None else ShardMemo(max_phrases=0)
    rows, tokens = memo.table_totals(conn)
    sections, section_tokens = memo.table_totals(conn, SECTION_TABLE)
    tier, tier_last = None, None
    if tier_pages is not None:
        tier_last, tier = tier_stats(conn, tier_pages, phrases, memo)
    return CorpusStats(search_tiers(conn).pages, term_documents(conn, terms), tokens,
                       memo.phrase_documents(conn, phrases), sections, section_tokens,
                       memo.phrase_documents(conn, phrases, SECTION_TABLE), own, tier=tier, tier_last=tier_last)


def prior_pages(conn: sqlite3.Connection) -> dict[int, int]:
    """``{prior key: pages}`` of the shard's search index (a docid's bits above its
    entity generation id: :func:`textpile.index.docids.page_docid`)."""
    return dict(conn.execute(f"SELECT docid >> {PRIOR_KEY_SHIFT}, count(*) FROM search_page GROUP BY 1").fetchall())


def tier_shares(priors: Mapping[int, Mapping[int, int]], top: int = TOP_TIER_PAGES) -> dict[int, int]:
    """``{shard: its pages in one index's first tier}`` from each shard's
    :func:`prior_pages` ``priors`` ({shard: {prior key: pages}}): the first ``top`` pages
    in one index's docid order (prior key, then shard, then docid, as
    :mod:`textpile.search.cuts` merges them; :func:`textpile.index.tier.tier_end`);
    empty when one index of them holds no more than ``top`` pages (it has no first tier)."""
    if sum(n for keys in priors.values() for n in keys.values()) <= top:
        return {}
    out = dict.fromkeys(priors, 0)
    left = top
    for key, shard, n in sorted((k, s, n) for s, keys in priors.items() for k, n in keys.items()):
        taken = min(n, left)
        out[shard] += taken
        left -= taken
        if not left:
            break
    return out


def tier_stats(conn: sqlite3.Connection, tier_pages: int, phrases: list[str],
               memo: ShardMemo | None = None) -> tuple[int, CorpusStats]:
    """The shard's last page docid among its first ``tier_pages`` pages (0: none) and the
    statistics of those pages and their sections: rows, tokens and rows holding each
    of the quoted ``phrases`` (what one index's first tier counts of them); ``memo`` as
    in :func:`query_stats`."""
    memo = memo if memo is not None else ShardMemo(max_phrases=0)
    last = memo.kept(("tier_last", tier_pages), lambda: _tier_last(conn, tier_pages))
    section_last = last_section_docid(last) if last else 0
    pages, tokens = memo.rows_up_to(conn, last)
    sections, section_tokens = memo.rows_up_to(conn, section_last, SECTION_TABLE)
    return last, CorpusStats(pages, {}, tokens, memo.phrase_documents(conn, phrases, last=last), sections,
                             section_tokens, memo.phrase_documents(conn, phrases, SECTION_TABLE, last=section_last))


def _tier_last(conn: sqlite3.Connection, tier_pages: int) -> int:
    """The shard's last page docid among its first ``tier_pages`` pages (0: none)."""
    if tier_pages <= 0:
        return 0
    row = conn.execute("SELECT docid FROM search_page ORDER BY docid LIMIT 1 OFFSET ?",
                       (min(tier_pages, LAST_ROWID) - 1,)).fetchone()
    if row is None:  # every page of the shard (a share asked of more pages than it holds)
        row = conn.execute("SELECT coalesce(max(docid), 0) FROM search_page").fetchone()
    return row[0]


def summed_stats(parts: list[CorpusStats]) -> CorpusStats:
    """The statistics of the shards ``parts`` together: pages, tokens, term and phrase
    counts summed, and so those of one index's first tier when every part has its own."""
    def summed(counts) -> dict[str, int]:
        out: dict[str, int] = {}
        for part in counts:
            for key, docs in part.items():
                out[key] = out.get(key, 0) + int(docs)
        return out

    tiers = [p.tier for p in parts if p.tier is not None]
    return CorpusStats(sum(int(p.pages) for p in parts), summed(p.terms for p in parts),
                       sum(int(p.tokens) for p in parts), summed(p.phrases for p in parts),
                       sum(int(p.sections) for p in parts), sum(int(p.section_tokens) for p in parts),
                       summed(p.section_phrases for p in parts), summed(p.languages for p in parts),
                       tier=summed_stats(tiers) if tiers and len(tiers) == len(parts) else None)


def stats_json(stats: CorpusStats) -> dict:
    """The JSON document of ``stats`` (the shard endpoint's statistics, and its search's
    ``stats`` parameter)."""
    doc = {"pages": stats.pages, "terms": dict(stats.terms), "tokens": stats.tokens, "phrases": dict(stats.phrases),
           "sections": stats.sections, "section_tokens": stats.section_tokens,
           "section_phrases": dict(stats.section_phrases), "languages": dict(stats.languages)}
    if stats.cut is not None:
        doc["cut"] = asdict(stats.cut)
    if stats.tier is not None:
        doc["tier"] = stats_json(stats.tier)
    if stats.tier_last is not None:
        doc["tier_last"] = stats.tier_last
    return doc


def origin_hosts(conn: sqlite3.Connection) -> frozenset[str]:
    """The hosts of the origins of the summary database ``conn`` (lower case)."""
    return frozenset((h or "").lower() for h, in conn.execute("SELECT DISTINCT host FROM origin"))


def holds_site(hosts: frozenset[str], filters: list[Filter]) -> bool:
    """True when a shard of ``hosts`` may hold pages passing the positive ``site:`` and
    ``host:`` filters of a query (always, for a query without them), as
    :func:`textpile.search.filters.filter_sql` reads them: ``site:`` matches its host and
    its subdomains, ``host:`` only its host."""
    wanted = [f for f in filters if f.kind in ("site", "host") and not f.negated]
    if not wanted:
        return True
    for f in wanted:
        suffix = "." + f.value
        if f.value in hosts or (f.kind == "site" and matches_subdomains(f.value)
                                and any(h.endswith(suffix) for h in hosts)):
            return True
    return False


def shard_search(conn: sqlite3.Connection, query: str, stats: CorpusStats, *, mode: str | None = None,
                 semantic=None, budget_ms: float = 1000.0, facets: bool = False, sort: str | None = None,
                 synonyms: Synonyms = NO_SYNONYMS) -> SearchResults:
    """``query`` searched on the shard ``conn`` with the summed ``stats`` (and the search's
    ``synonyms``, :mod:`textpile.search.synonyms`): every reranked
    candidate (at most :data:`ANSWER_DEPTH`) rendered, ``explained`` filled (features and
    raw values, the ``proximity`` of every candidate: the fan-out keeps it for the first
    over all shards), no "did you mean" correction (the fan-out corrects over all shards);
    with ``facets``, the facts of the pages they count (``page_facts``); with ``sort``
    ``date``, the pages the scan saw too, newest first.

    Raises:
        as :func:`textpile.search.service.search_pages`.
    """
    from textpile.search.service import search_pages

    return search_pages(conn, query, mode=mode, semantic=semantic, page=0, per_page=ANSWER_DEPTH,
                        budget_ms=budget_ms, explain=True, correct=False, stats=stats, facets=facets, sort=sort,
                        proximity_depth=None, synonyms=synonyms, snippets=False)


@dataclass
class ShardAnswer:
    """A shard's answer to a search: its rendered results and, position by position, the
    candidates' ``explained`` entries (``{"url", "held", "score", "features", "raw"}``;
    none for a query without words), and what the search said of itself."""

    results: list[SearchResult]
    explained: list[dict]
    total: int = 0
    total_is_lower_bound: bool = False
    fallback_any_term: bool = False
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)
    suggestion: str | None = None
    mode: str = "keyword"
    mode_note: str | None = None
    #: with facets: ``[host, path, language, date]`` of the pages they count, and whether
    #: more pages match than these
    facts: list[list] | None = None
    facets_lower_bound: bool = False
    #: the pages its keyword scans counted (:attr:`SearchResults.keyword_total`); None
    #: from a server of an older textpile (``total`` stands for it)
    keyword_total: int | None = None
    #: the word forms the results' snippets mark (:attr:`SearchResults.snippet_words`),
    #: None when the results come with their snippets (a server of an older textpile)
    snippet_words: list[list[str]] | None = None


def answer_of(results: SearchResults) -> ShardAnswer:
    """The :class:`ShardAnswer` of a shard's ``results`` (from :func:`shard_search`)."""
    facts = None
    if results.page_facts is not None:
        facts = [[f.host, f.path, f.language, f.date] for f in results.page_facts]
    return ShardAnswer(list(results.results), list(results.explained or []), results.total,
                       results.total_is_lower_bound, results.fallback_any_term, results.timed_out,
                       list(results.notes), results.suggestion, results.mode, results.mode_note, facts,
                       results.facets is not None and results.facets.lower_bound, results.keyword_total,
                       results.snippet_words)


def keys_json(keys: ScanKeys) -> dict:
    """The JSON document of ``keys`` (the shard endpoint's answer to ``op=keys``)."""
    return {"pages": list(keys.pages), "sections": [list(s) for s in keys.sections],
            "levels": [list(level) for level in keys.levels],
            "level_sections": [[list(row) for row in level] for level in keys.level_sections],
            "section_tier": list(keys.section_tier), "level_section_tier": [list(t) for t in keys.level_section_tier]}


def keys_from_json(doc) -> ScanKeys:
    """The :class:`ScanKeys` of :func:`keys_json`'s document.

    Raises:
        KeyError, TypeError, ValueError: ``doc`` is not one.
    """
    return ScanKeys([int(d) for d in doc["pages"]], [(int(d), float(score), int(ssid))
                                                     for d, score, ssid in doc["sections"]],
                    [[int(d) for d in level] for level in doc["levels"]],
                    [[(int(d), float(score), int(ssid)) for d, score, ssid in level]
                     for level in doc["level_sections"]],
                    [float(score) for score in doc.get("section_tier", [])],
                    [[float(score) for score in level] for level in doc.get("level_section_tier", [])])


def answer_json(answer: ShardAnswer) -> dict:
    """The JSON document of ``answer`` (the shard endpoint's answer to a search)."""
    doc = asdict(answer)
    return doc


def answer_from_json(doc, shard: str) -> ShardAnswer:
    """The :class:`ShardAnswer` of a shard endpoint's JSON ``doc``.

    Raises:
        ShardError: ``doc`` is not a shard answer (named after ``shard``).
    """
    try:
        results = []
        for item in doc["results"]:
            item = dict(item)
            item["sections"] = [ResultSection(**s) for s in item.get("sections", [])]
            if item.get("snippet_source") is not None:
                item["snippet_source"] = source_from_json(item["snippet_source"])
            results.append(SearchResult(**item))
        explained = [dict(e) for e in doc["explained"]]
        rest = {k: doc[k] for k in ("total", "total_is_lower_bound", "fallback_any_term", "timed_out", "notes",
                                    "suggestion", "mode", "mode_note", "facts", "facets_lower_bound")}
        keyword_total = doc.get("keyword_total")
        if keyword_total is not None and (not isinstance(keyword_total, int) or isinstance(keyword_total, bool)):
            raise TypeError(f"keyword_total {keyword_total!r} is no whole number")
        words = doc.get("snippet_words")
        if words is not None:
            words = words_from_json(words)
        return ShardAnswer(results, explained, **rest, keyword_total=keyword_total, snippet_words=words)
    except (KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"{shard}: the answer is no shard answer ({type(exc).__name__}: {exc})") from exc


def source_from_json(doc) -> SnippetSource:
    """The :class:`SnippetSource` of its JSON object (``dataclasses.asdict``'s).

    Raises:
        KeyError, TypeError, ValueError: ``doc`` is not one.
    """
    def whole(value, name: str, empty: bool = True) -> int | None:
        if value is None and empty:
            return None
        try:
            return whole_number(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"snippet_source {name}: {exc}") from exc

    if not isinstance(doc, dict) or set(doc) != SOURCE_FIELDS:
        raise ValueError(f"snippet_source {doc!r}: expected the fields {', '.join(sorted(SOURCE_FIELDS))}")
    return SnippetSource(whole(doc["entity_generation_id"], "entity_generation_id", empty=False),
                         *(whole(doc[name], name) for name in ("text_pile_id", "text_pile_v0_2_id", "start", "end")))


def words_from_json(doc) -> list[list[str]]:
    """The snippet words (a list of lists of strings, at most :data:`MAX_WORD_GROUPS`) of
    their JSON document.

    Raises:
        TypeError, ValueError: ``doc`` is not one.
    """
    if not isinstance(doc, list) or len(doc) > MAX_WORD_GROUPS or \
            not all(isinstance(forms, list) and all(isinstance(f, str) for f in forms) for forms in doc):
        raise ValueError(f"snippet words: expected at most {MAX_WORD_GROUPS} lists of strings")
    return [list(forms) for forms in doc]


class LocalShard:
    """A summary database searched in this process. ``connect`` yields a read-only search
    connection (a pool of them by default: :meth:`open`); ``semantic`` keeps the page
    vectors and model of the vector modes between searches; ``memo`` gives the
    statistics kept for the file's current content (:mod:`textpile.search.shard_memo`;
    none: each search counts them)."""

    def __init__(self, name: str, connect: Callable[[], contextlib.AbstractContextManager[sqlite3.Connection]],
                 semantic: Callable[[], SemanticCache] | None = None,
                 memo: Callable[[], ShardMemo] | None = None) -> None:
        self.name = name
        self._connect = connect
        cache = SemanticCache()
        self._semantic = semantic if semantic is not None else (lambda: cache)
        self._memo = memo if memo is not None else (lambda: None)

    @classmethod
    def open(cls, path: str | Path) -> "LocalShard":
        """A shard of the summary database file ``path``, with a pool of connections.

        Raises:
            DatabaseError: ``path`` is not a readable summary database.
        """
        from textpile.search.limits import limit_search_connection
        from textpile.store.database import check_summary_db, map_for_reading, sqlite_uri

        check_summary_db(path)
        pool = _ConnectionPool()

        def open_one() -> sqlite3.Connection:
            # as the web frontend opens it (textpile.web.state): read-only, mapped, used
            # by one thread at a time but not always the one that opened it
            conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True, check_same_thread=False)
            map_for_reading(conn)
            limit_search_connection(conn).execute("PRAGMA busy_timeout=10000")
            return conn

        watch = _ContentWatch(open_one)
        shard = cls(str(path), partial(pool.connection, open_one), memo=watch.memo)
        shard._pool, shard._watch = pool, watch
        return shard

    def hosts(self, timeout_s: float | None = None) -> frozenset[str]:
        with self._connect() as conn:
            return origin_hosts(conn)

    def priors(self, timeout_s: float | None = None) -> dict[int, int]:
        with self._connect() as conn:
            return prior_pages(conn)

    def stats(self, query: str, timeout_s: float | None = None, languages: Mapping[str, int] | None = None,
              tier_pages: int | None = None, synonyms: Synonyms = NO_SYNONYMS, near: bool = True) -> CorpusStats:
        memo = self._memo()
        with self._connect() as conn:
            return query_stats(conn, query, languages, tier_pages, synonyms, memo, near)

    def keys(self, query: str, stats: CorpusStats, page_scan: int, section_scan: int,
             timeout_s: float | None = None, synonyms: Synonyms = NO_SYNONYMS) -> ScanKeys:
        with self._connect() as conn:
            return scan_keys(conn, query, replace(stats, memo=self._memo()), page_scan, section_scan, synonyms)

    def search(self, query: str, stats: CorpusStats, mode: str | None, budget_ms: float, facets: bool = False,
               sort: str | None = None, synonyms: Synonyms = NO_SYNONYMS) -> ShardAnswer:
        from textpile.search.service import check_mode

        with self._connect() as conn:
            semantic = None
            if check_mode(mode) != "keyword":
                semantic = self._semantic().get(conn)
            return answer_of(shard_search(conn, query, replace(stats, memo=self._memo()), mode=mode, semantic=semantic,
                                          budget_ms=budget_ms, facets=facets, sort=sort, synonyms=synonyms))

    def render(self, words: list[list[str]], sources: list[SnippetSource],
               timeout_s: float | None = None) -> list[Snippet]:
        """The snippets of ``sources`` marking ``words`` (:func:`render_snippets`)."""
        with self._connect() as conn:
            return render_snippets(conn, words, sources)

    def page(self, target: str, timeout_s: float | None = None):
        """The :class:`textpile.search.service.LikePage` of ``target`` on this shard, None
        when it holds no such page (:mod:`textpile.search.shard_like`)."""
        from textpile.search.service import like_page

        with self._connect() as conn:
            return like_page(conn, target, self._semantic().get(conn, with_model=False))

    def like(self, like, exclude: int | None, depth: int, budget_ms: float, facets: bool = False,
             sort: str | None = None) -> ShardAnswer:
        """This shard's pages nearest to ``like``'s vector, the first ``depth`` rendered
        (:func:`textpile.search.shard_like.shard_like`)."""
        from textpile.search.shard_like import shard_like

        with self._connect() as conn:
            return answer_of(shard_like(conn, like, self._semantic().get(conn, with_model=False), exclude,
                                        depth=depth, budget_ms=budget_ms, facets=facets, sort=sort))

    def close(self) -> None:
        """Close the shard's connections: the idle ones at once, those a late search still
        uses (the search over shards does not wait for them) interrupted, and closed as
        that search gives them back. Closing a connection another thread is running a
        statement on crashes the process."""
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()
        watch = getattr(self, "_watch", None)
        if watch is not None:
            watch.close()


class _ContentWatch:
    """The :class:`ShardMemo` of a file's current content: a new one whenever ``PRAGMA
    data_version`` of a connection kept for watching (``open_one()``) changed, that is,
    another connection committed to the file (a publish writes it in place). Thread-safe."""

    def __init__(self, open_one: Callable[[], sqlite3.Connection]) -> None:
        self._open_one = open_one
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._version: int | None = None
        self._memo = ShardMemo()

    def memo(self) -> ShardMemo:
        """The memo of the file's content now.

        Raises:
            sqlite3.Error: the file cannot be read.
        """
        with self._lock:
            if self._conn is None:
                self._conn = self._open_one()
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            if self._version is not None and version != self._version:
                self._memo = ShardMemo()
            self._version = version
            return self._memo

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class _ConnectionPool:
    """Search connections of one file, each used by one thread at a time; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._busy: set[sqlite3.Connection] = set()
        self._closed = False

    @contextlib.contextmanager
    def connection(self, open_one: Callable[[], sqlite3.Connection]) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise ShardError("the shard was closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = open_one()
        with self._lock:
            self._busy.add(conn)
        try:
            yield conn
        finally:
            with self._lock:
                self._busy.discard(conn)
                keep = not self._closed
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            busy = list(self._busy)
        for conn in busy:
            conn.interrupt()
        for conn in idle:
            conn.close()


def shard_url_problem(url: object) -> str | None:
    """Why ``url`` is not the http(s) URL of a textpile server (``http://host:3000/``), as
    a sentence to follow its name; None when it is one: a string without spaces or
    control characters that parses, with the scheme http or https, a host and a valid
    port when it has one."""
    expected = "expected the http(s) URL of a textpile server"
    if not isinstance(url, str) or not url:
        return expected
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return f"{expected} (no spaces or control characters)"
    try:
        parsed = urllib.parse.urlsplit(url)
        parsed.port  # a port that is no number in range raises  # noqa: B018
    except ValueError as exc:
        return f"{expected} ({exc})"
    if parsed.scheme.lower() not in ("http", "https") or not parsed.hostname:
        return expected
    return None


class RemoteShard:
    """A shard served by another textpile (``textpile serve``) at ``url`` (its root),
    asked through its shard endpoint (:data:`SHARD_PATH`).

    Raises:
        ShardError: ``url`` is no http(s) URL of a server (:func:`shard_url_problem`).
    """

    def __init__(self, url: str) -> None:
        problem = shard_url_problem(url)
        if problem is not None:
            raise ShardError(f"{url!r}: {problem}")
        self.url = url.rstrip("/")
        self.name = self.url

    def _get(self, params: dict, timeout_s: float):
        address = self.url + SHARD_PATH + "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(address, timeout=max(0.001, timeout_s)) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise ShardError(f"{self.name}: HTTP {exc.code}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise ShardError(f"{self.name}: {getattr(exc, 'reason', exc)}") from exc
        except ValueError as exc:
            raise ShardError(f"{self.name}: the answer is not JSON") from exc

    def hosts(self, timeout_s: float = 5.0) -> frozenset[str]:
        doc = self._get({"op": "hosts"}, timeout_s)
        try:
            return frozenset(str(h) for h in doc["hosts"])
        except (KeyError, TypeError) as exc:
            raise ShardError(f"{self.name}: the answer has no hosts") from exc

    def priors(self, timeout_s: float = 5.0) -> dict[int, int]:
        doc = self._get({"op": "priors"}, timeout_s)
        try:
            return {int(k): int(n) for k, n in doc["priors"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ShardError(f"{self.name}: the answer has no prior keys") from exc

    def stats(self, query: str, timeout_s: float = 5.0, languages: Mapping[str, int] | None = None,
              tier_pages: int | None = None, synonyms: Synonyms = NO_SYNONYMS, near: bool = True) -> CorpusStats:
        params = {"op": "stats", "search": query, **synonyms_param(synonyms)}
        if not near:
            params["near"] = "0"
        if languages:
            params["languages"] = json.dumps(dict(languages), separators=(",", ":"))
        if tier_pages is not None:
            params["tier_pages"] = str(tier_pages)
        doc = self._get(params, timeout_s)
        try:
            return _stats_of(doc)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ShardError(f"{self.name}: the answer has no statistics") from exc

    def keys(self, query: str, stats: CorpusStats, page_scan: int, section_scan: int,
             timeout_s: float = 5.0, synonyms: Synonyms = NO_SYNONYMS) -> ScanKeys:
        doc = self._get({"op": "keys", "search": query, "page_scan": str(page_scan), "section_scan": str(section_scan),
                         "stats": json.dumps(stats_json(stats), separators=(",", ":")),
                         **synonyms_param(synonyms)}, timeout_s)
        try:
            return keys_from_json(doc)
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardError(f"{self.name}: the answer has no scan keys") from exc

    def search(self, query: str, stats: CorpusStats, mode: str | None, budget_ms: float, facets: bool = False,
               sort: str | None = None, synonyms: Synonyms = NO_SYNONYMS,
               timeout_s: float | None = None) -> ShardAnswer:
        params = {"op": "search", "search": query, "budget_ms": f"{max(1.0, budget_ms):.0f}",
                  "stats": json.dumps(stats_json(stats), separators=(",", ":")), **synonyms_param(synonyms)}
        if mode:
            params["mode"] = mode
        return self._answer(params, budget_ms, facets, sort, timeout_s)

    def render(self, words: list[list[str]], sources: list[SnippetSource], timeout_s: float = 5.0) -> list[Snippet]:
        """The snippets of ``sources`` (in requests of at most :data:`RENDER_PER_REQUEST`:
        a request's address stays within what HTTP servers take, 16 KiB for Uvicorn's h11)."""
        out: list[Snippet] = []
        for start in range(0, len(sources), RENDER_PER_REQUEST):
            chunk = sources[start:start + RENDER_PER_REQUEST]
            doc = self._get({"op": "render", "words": json.dumps(words, separators=(",", ":")),
                             "sources": json.dumps([asdict(s) for s in chunk], separators=(",", ":"))}, timeout_s)
            try:
                snippets = [Snippet(str(html), str(text)) for html, text in doc["snippets"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise ShardError(f"{self.name}: the answer has no snippets") from exc
            if len(snippets) != len(chunk):
                raise ShardError(f"{self.name}: {len(snippets)} snippets for {len(chunk)} results")
            out += snippets
        return out

    def page(self, target: str, timeout_s: float = 5.0):
        from textpile.search.shard_like import like_from_json

        doc = self._get({"op": "page", "like": target}, timeout_s)
        try:
            return like_from_json(doc)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ShardError(f"{self.name}: the answer is no page ({type(exc).__name__}: {exc})") from exc

    def like(self, like, exclude: int | None, depth: int, budget_ms: float, facets: bool = False,
             sort: str | None = None, timeout_s: float | None = None) -> ShardAnswer:
        from textpile.search.shard_like import like_json

        params = {"op": "like", "page": json.dumps(like_json(like), separators=(",", ":")), "depth": str(depth),
                  "budget_ms": f"{max(1.0, budget_ms):.0f}"}
        if exclude is not None:
            params["exclude"] = str(exclude)
        return self._answer(params, budget_ms, facets, sort, timeout_s)

    def _answer(self, params: dict[str, str], budget_ms: float, facets: bool, sort: str | None,
                timeout_s: float | None) -> ShardAnswer:
        """The served shard's answer to a search or like request ``params`` with the
        result options every one takes (facets, sort), within ``timeout_s`` (default: the
        time budget and a second for the round trip)."""
        if facets:
            params["facets"] = "1"
        if sort:
            params["sort"] = sort
        doc = self._get(params, timeout_s if timeout_s is not None else budget_ms / 1000.0 + 1.0)
        return answer_from_json(doc, self.name)

    def close(self) -> None:
        pass


def stats_from_json(text: str) -> CorpusStats:
    """The :class:`CorpusStats` of the shard endpoint's ``stats`` parameter.

    Raises:
        ShardError: ``text`` is not ``{"pages": N, "terms": {term: N}}``.
    """
    try:
        return _stats_of(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
        raise ShardError(f"stats: expected {{\"pages\": N, \"terms\": {{term: N}}, \"tokens\": N, "
                         f"\"phrases\": {{phrase: N}}, \"sections\": N, \"section_tokens\": N, "
                         f"\"section_phrases\": {{phrase: N}}, \"languages\": {{language: N}}}}, "
                         f"got {text[:80]!r}") from exc


def _stats_of(doc: dict) -> CorpusStats:
    """The :class:`CorpusStats` of its JSON document (:func:`stats_json`).

    Raises:
        KeyError, TypeError, ValueError, AttributeError, IndexError: ``doc`` is not one.
    """
    cut = doc.get("cut")
    if cut is not None:
        floor = cut["section_floor"]
        cut = ScanCut(whole_number(cut["last_page"]), whole_number(cut["last_section"]), bool(cut["cut_pages"]),
                      _floor(floor),
                      None if cut["depth"] is None else min(MAX_CANDIDATES, whole_number(cut["depth"])),
                      None if cut["few"] is None else bool(cut["few"]),
                      tuple(whole_number(d) for d in cut["level_last"]),
                      tuple(whole_number(d) for d in cut["level_section_last"]),
                      tuple(_floor(f) for f in cut["level_section_floor"]),
                      bool(cut.get("tier_pages", False)), bool(cut.get("tier_sections", False)),
                      tuple(bool(t) for t in cut.get("level_tier", ())),
                      tuple(bool(t) for t in cut.get("level_section_tier", ())),
                      None if cut.get("levels") is None else whole_number(cut["levels"]))
    tier = _stats_of(doc["tier"]) if doc.get("tier") is not None else None
    tier_last = whole_number(doc["tier_last"]) if doc.get("tier_last") is not None else None
    def counts(mapping) -> dict[str, int]:
        return {str(key): whole_number(n) for key, n in mapping.items()}

    return CorpusStats(whole_number(doc["pages"]), counts(doc["terms"]), whole_number(doc["tokens"]),
                       counts(doc["phrases"]), whole_number(doc["sections"]), whole_number(doc["section_tokens"]),
                       counts(doc["section_phrases"]), counts(doc["languages"]), cut, tier, tier_last)


def whole_number(value) -> int:
    """``value`` when it is a whole number SQLite can store and a count or docid can be:
    0 to 2**63 - 1 (a JSON ``true``, ``1.5`` or ``1e3`` is none).

    Raises:
        TypeError, ValueError: it is not.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is no whole number")
    if not 0 <= value <= LAST_ROWID:
        raise ValueError(f"{value} is not from 0 to {LAST_ROWID}")
    return value


def _floor(doc) -> tuple[float, int, int] | None:
    """A section floor of a cut's JSON document (:class:`textpile.search.cuts.ScanCut`).

    Raises:
        TypeError, ValueError, IndexError: ``doc`` is not one.
    """
    return None if doc is None else (float(doc[0]), whole_number(doc[1]), whole_number(doc[2]))


def synonyms_param(synonyms: Synonyms) -> dict[str, str]:
    """The shard endpoint's ``synonyms`` parameter for the table ``synonyms`` (its groups
    as a JSON list of lists, those of the query's items:
    :func:`textpile.search.synonyms.query_synonyms`); none for the empty table."""
    return {"synonyms": json.dumps([list(g) for g in synonyms.groups], separators=(",", ":"))} if synonyms else {}


def synonyms_from_json(text: str | None) -> Synonyms:
    """The synonym table of the shard endpoint's ``synonyms`` parameter (none: the empty
    table; the served shard's own ``synonyms`` setting is not read, the searching
    textpile's table is the search's).

    Raises:
        ShardError: ``text`` is not a JSON list of groups of words (the message names
            the entry, as :func:`textpile.search.synonyms.synonym_table`'s).
    """
    if not text:
        return NO_SYNONYMS
    try:
        groups = json.loads(text)
    except ValueError as exc:
        raise ShardError(f"synonyms: expected a JSON list of groups of words, got {text[:80]!r}") from exc
    try:
        return synonym_table(groups, "synonyms")
    except ConfigError as exc:  # naming the entry
        raise ShardError(str(exc)) from exc


def languages_from_json(text: str) -> dict[str, int]:
    """The ``{language: pages}`` of the shard endpoint's ``languages`` parameter.

    Raises:
        ShardError: ``text`` is not ``{"language": N}``.
    """
    try:
        return {str(code): whole_number(n) for code, n in json.loads(text).items()}
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise ShardError(f"languages: expected {{\"language\": pages}}, got {text[:80]!r}") from exc
