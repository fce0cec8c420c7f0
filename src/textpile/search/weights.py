"""How much each word of a query counts: its rarity in the index; stop words nothing.

A query such as "write changes to the disk" or "how do I undo the last commit" holds
words that say what is wanted (``write``, ``changes``, ``disk``) and words that only
hold the sentence together (``to``, ``the``, ``how``, ``do``, ``I``). Two rules follow:

* **stop words** (:data:`STOP_WORDS`, English function words: articles, pronouns,
  auxiliaries, common prepositions and question words) are not required of a page when
  the query has another word (:func:`core_plan`), and earn no feature credit
  (:func:`requirement_weights` gives them weight 0). A word typed in quotes, a word of
  an ``OR`` group and a query made only of stop words (``to be or not to be`` quoted or
  not: every word then counts) are never left out;
* every other requirement weighs its **rarity**: the inverse document frequency of its
  commonest form (stemmed or as typed) over the pages of the index,
  ``log((N + 0.5) / (n + 0.5))`` (the Robertson-Sparck Jones form without its negative
  part: a word on every page weighs 0). A feature that counts the query's words in a field (title, section title,
  URL, anchor text, exact form: :mod:`textpile.search.features`) sums the weights of
  the words it finds, so a word that every page's title holds (the product's name in
  every man page title) adds almost nothing.

Sources: the stop words are the function words of the Snowball English stop list
(snowballstem.org, ``english/stop.txt``) without its content words (``between``,
``before``, ``not``, ``same`` ...), which a description of a task uses with meaning; the
weight is the IDF of Robertson and Sparck Jones (1976), as BM25 uses it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textpile.search.plan import QueryPlan

if TYPE_CHECKING:
    from textpile.search.cuts import ScanCut
    from textpile.search.shard_memo import ShardMemo

#: English function words that say nothing of what is searched for (module docstring).
STOP_WORDS = frozenset("""
a an the and or but if of at by for with to from in on into onto as than then so
is are was were be been being am do does did doing done have has had having
i me my mine myself we us our ours you your yours he him his she her hers it its
they them their theirs this that these those there here
what which who whom whose when where why how
can could should would will shall may might must
also just very some any one
""".split())


def is_stop_requirement(requirement: list) -> bool:
    """True when ``requirement`` (a plan's list of items) is one unquoted stop word."""
    if len(requirement) != 1:
        return False
    item = requirement[0]
    return not item.phrase and item.text.lower() in STOP_WORDS


def core_indexes(plan: QueryPlan) -> list[int]:
    """The requirements of ``plan`` a page must hold: those that are not stop words, or
    every one when all of them are."""
    kept = [i for i, r in enumerate(plan.requirements) if not is_stop_requirement(r)]
    return kept or list(range(len(plan.requirements)))


def core_plan(plan: QueryPlan) -> QueryPlan:
    """``plan`` without its stop-word requirements (:func:`core_indexes`), its exclusions
    and messages kept; ``plan`` itself when it has none."""
    kept = core_indexes(plan)
    if len(kept) == len(plan.requirements):
        return plan
    return QueryPlan([plan.requirements[i] for i in kept], list(plan.excluded), list(plan.messages))


@dataclass(frozen=True)
class CorpusStats:
    """The statistics rarity is measured with: the pages of the index and ``{term: pages
    holding it}`` for a query's terms. A search over shards (:mod:`textpile.search.fanout`)
    gives every shard the sums over all of them, so that a word weighs the same on each,
    and FTS5's bm25 is scored as one index would (:mod:`textpile.search.global_bm25`)."""

    pages: int
    terms: Mapping[str, int]
    #: tokens of the search index in all columns (FTS5's average row length is tokens / pages)
    tokens: int = 0
    #: ``{quoted phrase: pages holding it}`` for the phrases of the query's FTS5 expressions
    phrases: Mapping[str, int] = field(default_factory=dict)
    #: rows and tokens of the section index, ``{quoted phrase: sections holding it}``
    sections: int = 0
    section_tokens: int = 0
    section_phrases: Mapping[str, int] = field(default_factory=dict)
    #: ``{stemmer language: pages}`` (over shards: summed, the languages queries are analyzed in)
    languages: Mapping[str, int] = field(default_factory=dict)
    #: a shard's part of one index's scans over shards (:class:`textpile.search.cuts.ScanCut`;
    #: None: the shard scans as one index would)
    cut: ScanCut | None = None
    #: one index's first tier (:mod:`textpile.index.tier`) over shards: the statistics of
    #: its pages (summed over the shards; None: one index of them has no first tier), and
    #: a shard's last page docid in it (0: none of its pages; None: no first tier)
    tier: CorpusStats | None = None
    tier_last: int | None = None
    #: a shard's own counts kept between searches (:class:`textpile.search.shard_memo.ShardMemo`),
    #: given by the shard to its rounds in its process; never sent, never compared
    memo: ShardMemo | None = field(default=None, compare=False, repr=False)


def plan_terms(plan: QueryPlan) -> list[str]:
    """Every index term of ``plan``'s requirements (their alternatives' terms), sorted."""
    return sorted({term for requirement in plan.requirements for item in requirement
                   for alt in item.alternatives for term in alt})


def term_documents(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """``{term: pages holding it}`` from ``search_term``, for those of ``terms`` the index holds.

    Raises:
        sqlite3.Error: database problems.
    """
    docs: dict[str, int] = {}
    for start in range(0, len(terms), 500):
        chunk = terms[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        docs.update(conn.execute(f"SELECT term, docs FROM search_term WHERE term IN ({marks})", chunk).fetchall())
    return docs


def document_frequencies(conn: sqlite3.Connection, plan: QueryPlan,
                         docs: Mapping[str, int] | None = None) -> list[int]:
    """Per requirement of ``plan``, the pages holding its rarest single-term alternative
    (a phrase counts as its rarest term), from ``search_term`` (or from ``docs``, ``{term:
    pages}``, when given: the summed counts of every shard, :mod:`textpile.search.fanout`);
    0 for a requirement no page holds.

    Raises:
        sqlite3.Error: database problems.
    """
    if docs is None:
        docs = term_documents(conn, plan_terms(plan))
    out = []
    for requirement in plan.requirements:
        # an alternative is as rare as its rarest term; the requirement as its commonest alternative
        alts = [min((docs.get(t, 0) for t in alt), default=0) for item in requirement for alt in item.alternatives]
        out.append(max(alts, default=0))
    return out


def idf(docs: int, pages: int) -> float:
    """The weight of a word ``docs`` of ``pages`` pages hold: ``log((N + 0.5) / (n + 0.5))``,
    0 for a word on every page, never below 0."""
    return max(0.0, math.log((pages + 0.5) / (docs + 0.5)))


def requirement_weights(plan: QueryPlan, frequencies: list[int], pages: int) -> list[float]:
    """Per requirement of ``plan``, its share of the query (they sum to 1): its
    :func:`idf` from ``frequencies`` (:func:`document_frequencies`) over ``pages``, 0 for
    a stop word left out of :func:`core_indexes` and for a word no page holds (it tells
    no page from another); equal shares when every kept one weighs 0 (a word on every
    page: then they count alike)."""
    n = len(plan.requirements)
    if not n:
        return []
    core = set(core_indexes(plan))
    raw = [idf(frequencies[i], pages) if i in core and frequencies[i] > 0 else 0.0 for i in range(n)]
    total = sum(raw)
    if total <= 0.0:
        return [1.0 / len(core) if i in core else 0.0 for i in range(n)]
    return [w / total for w in raw]
