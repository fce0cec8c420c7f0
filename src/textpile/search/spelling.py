""""Did you mean": a close word from the index's own vocabulary for a word it lacks.

The vocabulary is ``search_word`` (the words of the documented ``full_text_entity_index``
as written, lower case, with their document counts, copied from its fts5vocab at the
rebuild), so suggestions are real words of the indexed pages, never stems. A word is suggested
for a query word that no page holds when it starts with the same letter, is within
Damerau-Levenshtein distance 1 (words up to 4 letters) or 2 (longer), and is held by at
least :data:`MIN_DOCS` pages; the closest wins, then the most common. A query word that a
few pages hold (a typo that made it into a page or two: ``vaccum``) gets a suggestion too,
when the close word is held by :data:`COMMON_RATIO` times as many pages and at least
:data:`COMMON_MIN_DOCS`.
"""

from __future__ import annotations

import sqlite3

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from textpile.index.analysis import fold
from textpile.search.query import parse_query, with_words_replaced

MIN_DOCS = 2
#: A word some pages hold is corrected only to a close word this many times as common...
COMMON_RATIO = 20
#: ... and held by this many pages at least.
COMMON_MIN_DOCS = 10
#: A word more pages than this hold is never taken for a typo (nor looked up: a pasted
#: paragraph's words would each scan the vocabulary).
TYPO_MAX_DOCS = 5
#: Vocabulary words looked at per query word, at most.
MAX_SCAN = 20_000


def _doc_count(conn: sqlite3.Connection, word: str) -> int:
    row = conn.execute("SELECT docs FROM search_word WHERE word = ?", (word,)).fetchone()
    return row[0] if row else 0


def suggest_word(conn: sqlite3.Connection, word: str) -> str | None:
    """A close, common vocabulary word for ``word`` when no page holds ``word``, or when a
    few pages do and the close word is far more common (see the module docstring); else None."""
    folded = fold(word)
    if len(folded) < 3 or not folded.isalpha():
        return None
    held = _doc_count(conn, folded)
    if held > TYPO_MAX_DOCS:
        return None
    least = max(COMMON_MIN_DOCS, COMMON_RATIO * held) if held else MIN_DOCS
    limit = 1 if len(folded) <= 4 else 2
    first = folded[0]
    rows = conn.execute(
        "SELECT word, docs FROM search_word WHERE word >= ? AND word < ? AND docs >= ? "
        "AND length(word) BETWEEN ? AND ? AND word != ? LIMIT ?",
        (first, chr(ord(first) + 1), least, len(folded) - limit, len(folded) + limit, folded, MAX_SCAN)).fetchall()
    if not rows:
        return None
    docs = dict(rows)
    close = process.extract(folded, list(docs), scorer=DamerauLevenshtein.distance, score_cutoff=limit, limit=None)
    if not close:
        return None
    best = min(close, key=lambda m: (m[1], -docs[m[0]], m[0]))
    return best[0]


def did_you_mean(conn: sqlite3.Connection, query: str) -> str | None:
    """The query ``query`` with each of its words (outside quotes; not its filters or
    exclusions) that has a suggestion (:func:`suggest_word`) replaced by it, the rest of
    the query as written (:func:`textpile.search.query.with_words_replaced`); None when no
    word has one."""
    corrections = {}
    for term in parse_query(query).positive_terms:
        if not term.phrase and term.text not in corrections and term.text.isalpha():
            suggestion = suggest_word(conn, term.text)
            if suggestion:
                corrections[term.text] = suggestion
    return with_words_replaced(query, corrections) if corrections else None
