"""A parsed query as search-index terms: what to match, and the FTS5 expressions for it.

Every query item (word or quoted phrase) is analyzed with :class:`Analyzer` in each
stemmer language of the index (:func:`index_languages`); its *alternatives* are the
distinct term sequences that gives (``timezones`` -> ``timezon`` in English, ``timezones``
unstemmed). A one-term alternative matches that term; a longer one (``json.dumps`` ->
``json dump``, a quoted phrase, a CJK word as bigrams) matches the terms in a row.

FTS5 expressions are built only from analyzed terms, each written as an FTS5 string,
so nothing a person types is read as FTS5 syntax:

* ``all_terms``: every item required (items joined with ``OR`` in the query are one
  requirement), exclusions (``-"phrase"``) removed with ``NOT``;
* :meth:`QueryPlan.subset`: the same for a chosen subset of the requirements (partial
  matches: pages with most of the words).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from textpile.index.analysis import Analyzer
from textpile.search.query import ParsedQuery, Term

Alternative = tuple[str, ...]


@dataclass(frozen=True)
class Item:
    """One query word or phrase: as typed, and its alternatives (see module docstring)."""

    text: str
    phrase: bool
    alternatives: tuple[Alternative, ...]

    def fts(self) -> str:
        """The item as an FTS5 expression (alternatives joined with OR)."""
        parts = [fts_phrase(a) for a in self.alternatives]
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


@dataclass
class QueryPlan:
    """What a query asks of the search index.

    ``requirements``: each a list of items, any of which satisfies it (``a OR b``);
    ``excluded``: items no result may contain; ``messages``: words dropped and why.
    """

    requirements: list[list[Item]] = field(default_factory=list)
    excluded: list[Item] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        """Every positive item, in query order."""
        return [i for r in self.requirements for i in r]

    def _requirement_fts(self, requirement: list[Item]) -> str:
        if len(requirement) == 1:
            return requirement[0].fts()
        return "(" + " OR ".join(i.fts() for i in requirement) + ")"

    def subset(self, indexes: list[int] | None = None, *, any_of: bool = False) -> str | None:
        """The FTS5 expression requiring the requirements at ``indexes`` (all when None),
        every one of them (or any one with ``any_of``), minus the exclusions; None when
        there is no requirement."""
        chosen = self.requirements if indexes is None else [self.requirements[i] for i in indexes]
        if not chosen:
            return None
        joiner = " OR " if any_of else " AND "
        expr = joiner.join(self._requirement_fts(r) for r in chosen)
        for item in self.excluded:
            expr = f"({expr}) NOT {item.fts()}"
        return expr

    def scoring_terms(self, common: set[str]) -> str | None:
        """The FTS5 expression to score the matches of :attr:`all_terms` with: every
        requirement except those whose alternatives are all single terms in ``common``
        (words FTS5's bm25 gives no weight, see :func:`textpile.search.engine`'s
        ``_common_terms``), without the exclusions; None when no requirement, or every
        one, is common (then :attr:`all_terms` scores itself)."""
        kept = [i for i, requirement in enumerate(self.requirements)
                if not all(len(alt) == 1 and alt[0] in common for item in requirement for alt in item.alternatives)]
        if not kept or len(kept) == len(self.requirements):
            return None
        return " AND ".join(self._requirement_fts(self.requirements[i]) for i in kept)

    @property
    def all_terms(self) -> str | None:
        """The FTS5 expression requiring every requirement (see :meth:`subset`)."""
        return self.subset()

    def relaxed(self) -> "QueryPlan":
        """The plan with every multi-term word that was not quoted (an identifier such as
        ``sqlalchemy.sql.schema.Column``, a CJK word) made one requirement per part, for
        partial matches: a documented ``sqlalchemy.schema.Column`` holds 3 of its 4 parts.
        Quoted phrases and OR groups stay whole."""
        out = QueryPlan(excluded=list(self.excluded), messages=list(self.messages))
        for requirement in self.requirements:
            item = requirement[0]
            first = item.alternatives[0]
            if len(requirement) > 1 or item.phrase or len(first) == 1:
                out.requirements.append(requirement)
                continue
            for j in range(len(first)):
                parts = tuple(dict.fromkeys((alt[j],) for alt in item.alternatives if len(alt) == len(first)))
                out.requirements.append([Item(first[j], False, parts)])
        return out


def fts_phrase(terms: Alternative) -> str:
    """Analyzed terms as one FTS5 string (a phrase when more than one term)."""
    return '"' + " ".join(terms).replace('"', '""') + '"'


def index_languages(conn: sqlite3.Connection) -> list[str | None]:
    """The stemmer languages pages of the index were analyzed with, most pages first,
    then None (unstemmed). Queries are analyzed in each.

    Raises:
        sqlite3.Error: the database has no ``search_language`` table (its search index
            was not built by this textpile) or cannot be read.
    """
    return language_codes(language_pages(conn))


def language_pages(conn: sqlite3.Connection) -> dict[str, int]:
    """``{stemmer language: pages analyzed with it}`` of the index (``search_language``).

    Raises:
        sqlite3.Error: as :func:`index_languages`.
    """
    return {language: int(pages) for language, pages in conn.execute("SELECT language, pages FROM search_language")}


def language_codes(pages: Mapping[str, int]) -> list[str | None]:
    """The stemmer languages a query is analyzed in, given ``{language: pages}`` (of an
    index, or summed over shards): the 8 with most pages, most first (ties by name),
    then None (unstemmed)."""
    return [code for code, _ in sorted(pages.items(), key=lambda kv: (-kv[1], kv[0]))[:8]] + [None]


def _item(analyzer: Analyzer, term: Term, codes: list[str | None]) -> Item | None:
    alternatives = analyzer.query_alternatives(term.text, codes)
    if not alternatives:
        return None
    if not term.phrase and len(alternatives[0]) > 1 and all(w.isalpha() for w in analyzer.words(term.text)):
        # a word written with hyphens or apart (back-end, e-mail): also written together
        joined = "".join(analyzer.words(term.text))
        alternatives += [a for a in analyzer.query_alternatives(joined, codes) if a not in alternatives]
    return Item(term.text, term.phrase, tuple(alternatives))


#: A compound word is tried as two words (backend -> back end) when it is at least this
#: long and both parts are at least :data:`MIN_SPLIT_PART` letters.
MIN_SPLIT_WORD = 6
MIN_SPLIT_PART = 3


def split_candidates(analyzer: Analyzer, plan: QueryPlan, codes: list[str | None]) -> dict[int, list[Alternative]]:
    """Per requirement of ``plan`` that is one unquoted word of letters only (at least
    :data:`MIN_SPLIT_WORD`), the two-word phrases it could be written as (``backend`` ->
    ``back end``), analyzed in ``codes``: every split into parts of at least
    :data:`MIN_SPLIT_PART` letters. :func:`with_split_forms` keeps those the index holds."""
    out: dict[int, list[Alternative]] = {}
    for i, requirement in enumerate(plan.requirements):
        item = requirement[0]
        word = item.text
        if len(requirement) > 1 or item.phrase or len(word) < MIN_SPLIT_WORD or not word.isalpha():
            continue
        splits: list[Alternative] = []
        for k in range(MIN_SPLIT_PART, len(word) - MIN_SPLIT_PART + 1):
            for code in codes:
                left, right = analyzer.term(word[:k], None), analyzer.term(word[k:], code)
                if (left, right) not in splits:
                    splits.append((left, right))
        out[i] = splits
    return out


def with_split_forms(plan: QueryPlan, splits: dict[int, list[Alternative]], known: set[tuple[str, str]]) -> QueryPlan:
    """``plan`` with each split of ``splits`` (:func:`split_candidates`) that is in
    ``known`` (the pairs of terms the index holds as a phrase, or both terms of) added
    to its word's alternatives: ``backend`` then finds "back-end" and "back end" too."""
    if not any(a in known for alts in splits.values() for a in alts):
        return plan
    out = QueryPlan(excluded=list(plan.excluded), messages=list(plan.messages))
    for i, requirement in enumerate(plan.requirements):
        extra = tuple(a for a in splits.get(i, []) if a in known)
        if extra:
            item = requirement[0]
            requirement = [Item(item.text, item.phrase, item.alternatives + extra)]
        out.requirements.append(requirement)
    return out


def plan_query(parsed: ParsedQuery, analyzer: Analyzer, codes: list[str | None]) -> QueryPlan:
    """Analyze the items of ``parsed`` in the languages ``codes``; never raises."""
    plan = QueryPlan()
    dropped: list[str] = []
    for group in parsed.groups:
        items = []
        for term in group:
            item = _item(analyzer, term, codes)
            if item is None:
                dropped.append(term.text)
            else:
                items.append(item)
        if items:
            plan.requirements.append(items)
    for term in parsed.excluded:
        item = _item(analyzer, term, codes)
        if item is None:
            dropped.append(term.text)
        else:
            plan.excluded.append(item)
    if dropped:
        unique = sorted(set(dropped))
        shown = ", ".join(repr(d) for d in unique[:5]) + (" …" if len(unique) > 5 else "")
        plan.messages.append(f"Ignored for having no letters or digits: {shown}.")
    return plan
