"""Compiling a parsed query into a safe FTS5 MATCH expression of the documented index.

The expression is for unobtanium's ``full_text_entity_index``: a query of filters and
exclusions only lists the pages that satisfy it, and the vector modes find the pages
holding an excluded phrase there (:func:`fts_string`). textpile's own ``search_index`` is
matched through :mod:`textpile.search.plan`.

Every term becomes an FTS5 string (double quotes, inner ``"`` doubled), so nothing a
person types is ever read as FTS5 syntax. A term without any FTS5 token (``*``,
``++``, ``-``) would make an empty phrase, which matches nothing and would empty an
AND query; such terms are found with the index's own tokenizer (an in-memory FTS5
table with the same ``tokenize`` option, read back through ``fts5vocab``) and dropped
with a message. Positive terms search the content columns only (never ``any``);
a query with no positive term starts from ``any:"any"``, the column that exists
for that (unobtanium-documentation.txt, "Summary Database", full_text_entity_index).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from textpile.search.query import ParsedQuery, Term

TOKENIZE = "unicode61 remove_diacritics 2"
CONTENT_COLUMNS = (
    "title",
    "description",
    "text",
    "secondary_text",
    "big_headlines",
    "small_headlines",
    "code_text",
    "quote_text",
)
_COLSPEC = "{" + " ".join(CONTENT_COLUMNS) + "}"


@dataclass
class CompiledQuery:
    """The FTS5 expression of a query.

    ``match`` is None when nothing remains to search (the caller returns no results);
    ``positive_count`` counts the positive terms kept; ``messages`` name dropped terms.
    """

    match: str | None
    positive_count: int = 0
    any_term: bool = False
    messages: list[str] = field(default_factory=list)


def fts_string(text: str) -> str:
    """Return ``text`` as an FTS5 string literal: in double quotes, inner quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def token_counts(texts: list[str]) -> list[int]:
    """Return how many FTS5 tokens the index's tokenizer makes of each of ``texts``."""
    if not texts:
        return []
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = '{TOKENIZE}')")
        mem.execute("CREATE VIRTUAL TABLE probe_vocab USING fts5vocab(probe, 'instance')")
        mem.executemany("INSERT INTO probe(rowid, x) VALUES (?, ?)", list(enumerate(texts, start=1)))
        counts = dict(mem.execute("SELECT doc, count(*) FROM probe_vocab GROUP BY doc"))
    finally:
        mem.close()
    return [counts.get(i, 0) for i in range(1, len(texts) + 1)]


def _phrase(term: Term) -> str:
    return fts_string(term.text)


def compile_query(parsed: ParsedQuery, *, any_term: bool = False) -> CompiledQuery:
    """Compile ``parsed`` to an FTS5 MATCH expression.

    With ``any_term`` the positive terms are alternatives (OR) instead of all required.
    Never raises for any parse; the expression it returns is always valid FTS5.
    """
    all_terms = parsed.positive_terms + parsed.excluded
    counts = dict(zip([t.text for t in all_terms], token_counts([t.text for t in all_terms])))
    messages: list[str] = []
    dropped = sorted({t.text for t in all_terms if counts.get(t.text, 0) == 0})
    if dropped:
        shown = ", ".join(repr(d) for d in dropped[:5]) + (" …" if len(dropped) > 5 else "")
        messages.append(f"Ignored for having no letters or digits: {shown}.")

    groups = [[t for t in g if counts.get(t.text, 0) > 0] for g in parsed.groups]
    groups = [g for g in groups if g]
    excluded = [t for t in parsed.excluded if counts.get(t.text, 0) > 0]
    positive = [t for g in groups for t in g]

    if positive:
        if any_term:
            inner = " OR ".join(_phrase(t) for t in positive)
        else:
            parts = []
            for g in groups:
                if len(g) == 1:
                    parts.append(_phrase(g[0]))
                else:
                    parts.append("(" + " OR ".join(_phrase(t) for t in g) + ")")
            inner = " AND ".join(parts)
        base = f"{_COLSPEC} : ({inner})"
    elif excluded or parsed.filters:
        base = 'any : "any"'
    else:
        return CompiledQuery(None, 0, any_term, messages)

    expr = base
    for t in excluded:
        expr = f"({expr}) NOT ({_COLSPEC} : ({_phrase(t)}))"
    return CompiledQuery(expr, len(positive), any_term, messages)
