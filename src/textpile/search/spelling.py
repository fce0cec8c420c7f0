""""Did you mean": a close word from the index's own vocabulary for a word it lacks.

The vocabulary is ``search_word`` (the words of the documented ``full_text_entity_index``
as written, lower case, with their document counts, copied from its fts5vocab at the
rebuild), so suggestions are real words of the indexed pages, never stems. A word is suggested
for a query word that no page holds when it starts with the same letter, is within
Damerau-Levenshtein distance 1 (words up to 4 letters) or 2 (longer), and is held by at
least :data:`MIN_DOCS` pages; the closest wins, then the most common.
"""

from __future__ import annotations

import sqlite3

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from textpile.search.analysis import fold

MIN_DOCS = 2
#: Vocabulary words looked at per query word, at most.
MAX_SCAN = 20_000


def _doc_count(conn: sqlite3.Connection, word: str) -> int:
    row = conn.execute("SELECT docs FROM search_word WHERE word = ?", (word,)).fetchone()
    return row[0] if row else 0


def suggest_word(conn: sqlite3.Connection, word: str) -> str | None:
    """A close, common vocabulary word for ``word`` when no page holds ``word``; else None."""
    folded = fold(word)
    if len(folded) < 3 or not folded.isalpha() or _doc_count(conn, folded):
        return None
    limit = 1 if len(folded) <= 4 else 2
    first = folded[0]
    rows = conn.execute(
        "SELECT word, docs FROM search_word WHERE word >= ? AND word < ? AND docs >= ? "
        "AND length(word) BETWEEN ? AND ? LIMIT ?",
        (first, chr(ord(first) + 1), MIN_DOCS, len(folded) - limit, len(folded) + limit, MAX_SCAN)).fetchall()
    if not rows:
        return None
    docs = dict(rows)
    close = process.extract(folded, list(docs), scorer=DamerauLevenshtein.distance, score_cutoff=limit, limit=None)
    if not close:
        return None
    best = min(close, key=lambda m: (m[1], -docs[m[0]], m[0]))
    return best[0]


def did_you_mean(conn: sqlite3.Connection, words: list[str]) -> str | None:
    """The query ``words`` with each unknown word replaced by its suggestion, or None when
    no word has one."""
    changed = False
    out = []
    for word in words:
        suggestion = suggest_word(conn, word) if word.isalpha() else None
        if suggestion:
            changed = True
            out.append(suggestion)
        else:
            out.append(word)
    return " ".join(out) if changed else None
