""""Did you mean": a close word from the index's own vocabulary for a word it lacks.

The vocabulary is ``full_text_vocabulary`` (fts5vocab over the documented
``full_text_entity_index``: words as written, lower case, with their document counts),
so suggestions are real words of the indexed pages, never stems. A word is suggested
for a query word that no page holds when it starts with the same letter, is within
Damerau-Levenshtein distance 1 (words up to 4 letters) or 2 (longer), and is held by at
least :data:`MIN_DOCS` pages; the closest wins, then the most common.
"""

from __future__ import annotations

import sqlite3

from rapidfuzz.distance import DamerauLevenshtein

from textpile.search.analysis import fold

MIN_DOCS = 2
#: Vocabulary words looked at per query word, at most.
MAX_SCAN = 20_000


def _doc_count(conn: sqlite3.Connection, word: str) -> int:
    row = conn.execute("SELECT doc FROM full_text_vocabulary WHERE term = ?", (word,)).fetchone()
    return row[0] if row else 0


def suggest_word(conn: sqlite3.Connection, word: str) -> str | None:
    """A close, common vocabulary word for ``word`` when no page holds ``word``; else None."""
    folded = fold(word)
    if len(folded) < 3 or not folded.isalpha() or _doc_count(conn, folded):
        return None
    limit = 1 if len(folded) <= 4 else 2
    first = folded[0]
    rows = conn.execute(
        "SELECT term, doc FROM full_text_vocabulary WHERE term >= ? AND term < ? AND doc >= ? LIMIT ?",
        (first, chr(ord(first) + 1), MIN_DOCS, MAX_SCAN)).fetchall()
    best: tuple[int, int, str] | None = None
    for term, docs in rows:
        if abs(len(term) - len(folded)) > limit:
            continue
        distance = DamerauLevenshtein.distance(folded, term, score_cutoff=limit)
        if distance > limit:
            continue
        key = (distance, -docs, term)
        if best is None or key < best:
            best = key
    return best[2] if best else None


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
