"""Typo tolerance at match time (issue 32, "Typo tolerance"): a query word that no page
holds, or only a page or two beside a more common close word, also matches the
words of the index's own vocabulary within 1 edit (words of :data:`ONE_TYPO` letters or
more) or 2 edits (:data:`TWO_TYPOS` or more), Meilisearch's default thresholds.

The vocabulary is ``search_word`` (the words of the indexed pages as written, lower
case, with their document counts: :mod:`textpile.index.vocabulary`), as "did you mean"
reads it (:mod:`textpile.search.spelling`); the distance is Damerau-Levenshtein's
(optimal string alignment: a swap of two letters is one edit), and a close word starts
with the same letter (the vocabulary is read by that prefix). Identifiers (a word with
digits, ``_``, ``.``, ``-`` or an inner capital: ``utf8``, ``pg_dump``, ``getUser``) and
quoted phrases are matched exactly, as are words more than :data:`TYPO_MAX_DOCS` pages
hold; a close word is one more pages hold than the word itself.

Pages found through a close word rank below every page the search found without one
(:func:`below_exact`), and the close words are marked in their snippets.
"""

from __future__ import annotations

import sqlite3

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from textpile.index.analysis import Analyzer, fold
from textpile.search.budget import Budget
from textpile.search.candidates import Tiers, page_candidates
from textpile.search.features import Scored
from textpile.search.global_bm25 import GlobalBm25
from textpile.search.plan import Item, QueryPlan
from textpile.search.rerank import Found
from textpile.search.weights import CorpusStats

#: A word of this many letters or more matches words 1 edit away...
ONE_TYPO = 5
#: ... and of this many, 2 edits away.
TWO_TYPOS = 9
#: A word held by this many pages or fewer may be a typo.
TYPO_MAX_DOCS = 2
#: Close words used per query word, at most (the closest, then the most common).
MAX_CLOSE_WORDS = 5
#: Vocabulary words compared per query word, at most.
MAX_SCAN = 20_000


def allowed_edits(word: str) -> int:
    """The edits a word of this length may have: 0, 1 (:data:`ONE_TYPO` letters) or 2 (:data:`TWO_TYPOS`)."""
    return 2 if len(word) >= TWO_TYPOS else 1 if len(word) >= ONE_TYPO else 0


def is_plain_word(text: str) -> bool:
    """True for a word of letters only, in lower case or with a leading capital (no identifier)."""
    return text.isalpha() and (text.islower() or text[1:].islower() or text.isupper())


def close_words(conn: sqlite3.Connection, word: str) -> list[str]:
    """The vocabulary words close to ``word`` (see the module docstring), closest first,
    then most common; empty when ``word`` is too short, no plain word, or common enough
    to be no typo.

    Raises:
        sqlite3.Error: the database has no ``search_word`` or cannot be read.
    """
    folded = fold(word)
    edits = allowed_edits(folded)
    if not edits or not is_plain_word(word) or not folded.isalpha():
        return []
    row = conn.execute("SELECT docs FROM search_word WHERE word = ?", (folded,)).fetchone()
    held = row[0] if row else 0
    if held > TYPO_MAX_DOCS:
        return []
    return _nearby(conn, folded, edits, held + 1)[:MAX_CLOSE_WORDS]


def nearby_words(conn: sqlite3.Connection, word: str) -> list[str]:
    """Every vocabulary word within the edits ``word`` may have (closest first, then most
    common), whatever their and its page counts: the words :func:`close_words` chooses
    among in one index of several shards (:func:`textpile.search.shards.query_stats`
    counts their pages on each shard); empty as :func:`close_words` for a short word or
    an identifier.

    Raises:
        sqlite3.Error: as :func:`close_words`.
    """
    folded = fold(word)
    edits = allowed_edits(folded)
    if not edits or not is_plain_word(word) or not folded.isalpha():
        return []
    return _nearby(conn, folded, edits, 1)


def _nearby(conn: sqlite3.Connection, folded: str, edits: int, least: int) -> list[str]:
    """The vocabulary words within ``edits`` of ``folded`` held by ``least`` pages or
    more, closest first, then most common."""
    first = folded[0]
    rows = conn.execute(
        "SELECT word, docs FROM search_word WHERE word >= ? AND word < ? AND docs >= ? "
        "AND length(word) BETWEEN ? AND ? AND word != ? LIMIT ?",
        (first, chr(ord(first) + 1), least, len(folded) - edits, len(folded) + edits, folded, MAX_SCAN)).fetchall()
    docs = dict(rows)
    close = process.extract(folded, list(docs), scorer=DamerauLevenshtein.distance, score_cutoff=edits, limit=None)
    close.sort(key=lambda m: (m[1], -docs[m[0]], m[0]))
    return [w for w, _, _ in close]


def typo_plan(conn: sqlite3.Connection, plan: QueryPlan, analyzer: Analyzer,
              codes: list[str | None]) -> tuple[QueryPlan, dict[int, list[str]]] | None:
    """``plan`` with each one-word requirement that may be a typo widened by its close
    words (:func:`close_words`, analyzed in ``codes``), and the close words per
    requirement; None when no word of ``plan`` has any."""
    found: dict[int, list[str]] = {}
    out = QueryPlan(excluded=list(plan.excluded), messages=list(plan.messages))
    for i, requirement in enumerate(plan.requirements):
        item = requirement[0]
        words = close_words(conn, item.text) if len(requirement) == 1 and not item.phrase else []
        if words:
            found[i] = words
            extra = [a for w in words for a in analyzer.query_alternatives(w, codes)]
            alternatives = tuple(dict.fromkeys(item.alternatives + tuple(extra)))
            requirement = [Item(item.text, item.phrase, alternatives)]
        out.requirements.append(requirement)
    return (out, found) if found else None


def below_exact(ranking: list[Scored], typo_pages: set[int]) -> list[Scored]:
    """``ranking`` with every page of ``typo_pages`` (found only through a close word)
    after every other page (those holding the query's words as typed, all or some of
    them: a close word never displaces a page the search found without it, so a query
    without typos ranks as it did); each part keeps its order."""
    return ([s for s in ranking if s.info.entity_generation_id not in typo_pages]
            + [s for s in ranking if s.info.entity_generation_id in typo_pages])


def typo_candidates(conn: sqlite3.Connection, plan: QueryPlan, analyzer: Analyzer, codes: list[str | None],
                    columns: tuple[float, ...], depth: int, scan: int, fsql: str, fparams: list, tiers: Tiers,
                    budget: Budget, found: Found,
                    stats: CorpusStats | None = None) -> tuple[QueryPlan, dict[int, list[str]], set[int]] | None:
    """Add to ``found`` the pages holding every requirement of ``plan`` (the words a page
    must hold) with its possible typos widened (:func:`typo_plan`), each holding the share
    of the query less half of each widened word's; return the widened plan, the close
    words per requirement and the pages only it found (None when no word may be a
    typo). ``columns`` are bm25's column weights, ``depth``, ``scan``, the filter SQL and
    ``tiers`` as :func:`textpile.search.candidates.page_candidates` takes them; with
    ``stats`` (a search over shards) the pages are scored with every shard's statistics
    (the close words' own phrases, which the statistics do not hold, with the shard's).

    Raises:
        textpile.search.budget.BudgetSpent: the time budget ran out.
    """
    with budget.guard():
        widened = typo_plan(conn, plan, analyzer, codes)
        if widened is None:
            return None
        wide, words = widened
        rescore = None
        if stats is not None and not fsql:
            rescore = GlobalBm25(conn, stats.pages, stats.tokens, stats.phrases, columns)
        rows, _, _ = page_candidates(conn, wide.all_terms, columns, depth, scan, fsql, fparams, tiers=tiers,
                                     seen=found.seen, rescore=rescore,
                                     every_shard=stats.terms if rescore is not None else None)
    held = 1.0 - 0.5 * len(words) / len(plan.requirements)
    new = {eg_id for eg_id, _ in rows if eg_id not in found.pages}
    found.add_pages(rows, held)
    return wide, words, new
