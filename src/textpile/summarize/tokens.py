"""The experimental token index: ``token`` and ``token_statistics`` of the summary database.

Source: unobtanium-documentation.txt, page "Token Index" (a token is roughly a word
after normalization; a statistics table counts how often a token appears in a given
text pile) and page "unobtanium-crawler" (regenerate-token-index).
textpile's tokens: maximal runs of Unicode word characters (``\\w+``), lower-cased
(``str.lower``), counted over all six Gen1 fields of each text pile.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from textpile.store.database import open_summary_db, sqlite_errors
from textpile.store.text_piles import GEN1_FIELDS

WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Return the tokens of ``text`` in order: lower-cased Unicode words."""
    return [m.group(0).lower() for m in WORD.finditer(text)]


@dataclass
class TokenIndexReport:
    """What :func:`regenerate_token_index` wrote."""

    text_piles: int = 0
    tokens: int = 0
    statistics_rows: int = 0


def regenerate_token_index(summary_db: str | Path) -> TokenIndexReport:
    """Rebuild token and token_statistics from every Gen1 text pile, in one transaction.

    Raises:
        DatabaseError: ``summary_db`` does not exist, is empty, is not a summary database
            (it is left unchanged then), or is corrupt, read-only or locked.
    """
    conn = open_summary_db(summary_db, create=False)
    report = TokenIndexReport()
    try:
        with sqlite_errors(summary_db), conn:
            conn.execute("DELETE FROM token_statistics")
            conn.execute("DELETE FROM token")
            token_ids: dict[str, int] = {}
            rows = conn.execute(f"SELECT text_pile_id, {', '.join(GEN1_FIELDS)} FROM text_pile ORDER BY text_pile_id")
            for text_pile_id, *fields in rows.fetchall():
                counts = Counter(tok for value in fields for tok in tokenize(value))
                stats = []
                for tok, n in sorted(counts.items()):
                    token_id = token_ids.get(tok)
                    if token_id is None:
                        token_id = token_ids[tok] = conn.execute(
                            "INSERT INTO token(token_text) VALUES (?)", (tok,)).lastrowid
                    stats.append((token_id, text_pile_id, n))
                conn.executemany("INSERT INTO token_statistics(token_id, text_pile_id, occurances) VALUES (?, ?, ?)",
                                 stats)
                report.text_piles += 1
                report.statistics_rows += len(stats)
            report.tokens = len(token_ids)
    finally:
        conn.close()
    return report
