"""Search as you type (issue 32, "Search as you type"): the page titles and section titles
that a query being typed could be looking for.

The last word of the query is a prefix (unless the query ends with a space): its
completions are the :data:`COMPLETIONS` words of the index's vocabulary (``search_word``,
a table keyed by the word, so a prefix is a range of it) that most pages hold, among the
first :data:`PREFIX_SCAN` words of that range. The titles (``search_index``'s title
column) and section titles (``section_search_index``'s) holding every word before it
and one of the completions are listed in the index's prior order (FTS5 yields matches by
rowid, which is that order: :mod:`textpile.index.docids`), so a lookup stops after
:data:`MAX_SUGGESTIONS` of each, and never scores or counts every match. A prefix
shorter than :data:`MIN_PREFIX` letters is not completed (the words before it are
looked up alone). Every lookup has a time
budget (:data:`SUGGEST_BUDGET_MS`): when it is spent, what was found is returned.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from textpile.index.analysis import Analyzer, fold
from textpile.search.budget import Budget, BudgetSpent
from textpile.search.plan import fts_phrase, index_languages
from textpile.store.searchable import SEARCHABLE

#: Letters a word being typed needs before it is completed.
MIN_PREFIX = 2
#: Completions of the word being typed, at most (the commonest).
COMPLETIONS = 5
#: Vocabulary words of a prefix looked at, at most (in alphabetical order).
PREFIX_SCAN = 5000
#: Page titles, and section titles, suggested at most.
MAX_SUGGESTIONS = 8
#: The time budget of one lookup, in milliseconds.
SUGGEST_BUDGET_MS = 200.0
#: Words of the query used, at most (the last ones).
MAX_WORDS = 8

_SEARCHABLE = SEARCHABLE.format(eg="eg")


@dataclass(frozen=True)
class Suggestion:
    """A page (``section`` None) or a section of one: its title, its page's title and the URL."""

    title: str
    url: str
    page_title: str | None = None
    section: bool = False


@dataclass
class Suggestions:
    """What :func:`suggest` found for ``query``: the completions of its last word, and the
    pages and sections whose titles hold the query's words. ``timed_out`` is true when
    the time budget ended the lookup early."""

    query: str
    completions: list[str] = field(default_factory=list)
    pages: list[Suggestion] = field(default_factory=list)
    sections: list[Suggestion] = field(default_factory=list)
    timed_out: bool = False

    def as_json(self) -> dict:
        """``{"query", "completions", "pages": [{"title", "url"}], "sections": [{"title",
        "page_title", "url"}], "timed_out"}``."""
        return {"query": self.query, "completions": self.completions,
                "pages": [{"title": s.title, "url": s.url} for s in self.pages],
                "sections": [{"title": s.title, "page_title": s.page_title, "url": s.url} for s in self.sections],
                "timed_out": self.timed_out}


def completions(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """The :data:`COMPLETIONS` commonest vocabulary words starting with ``prefix`` (folded,
    lower case), among the first :data:`PREFIX_SCAN` of them; the prefix itself first
    when it is a word."""
    rows = conn.execute(
        "SELECT word FROM (SELECT word, docs FROM search_word WHERE word >= ? AND word < ? ORDER BY word LIMIT ?) "
        "ORDER BY word != ?, docs DESC, word LIMIT ?",
        (prefix, prefix + "\U0010ffff", PREFIX_SCAN, prefix, COMPLETIONS)).fetchall()
    return [r[0] for r in rows]


def _requirement(analyzer: Analyzer, words: list[str], codes: list[str | None]) -> str | None:
    """An FTS5 expression matching any of ``words`` (each in any of its analyses)."""
    alternatives = {a for w in words for a in analyzer.query_alternatives(w, codes)}
    if not alternatives:
        return None
    return "(" + " OR ".join(fts_phrase(a) for a in sorted(alternatives)) + ")"


def suggest(conn: sqlite3.Connection, query: str, *, budget_ms: float = SUGGEST_BUDGET_MS,
            analyzer: Analyzer | None = None) -> Suggestions:
    """The :class:`Suggestions` for ``query`` (any string) from the search index of ``conn``.

    Raises:
        sqlite3.Error: the database has no search index of this textpile, or cannot be read.
    """
    text = " ".join(query.split())[:200]
    out = Suggestions(query=text)
    analyzer = analyzer or Analyzer()
    words = list(analyzer.words(text))[-MAX_WORDS:]
    if not words:
        return out
    typing = not query[-1:].isspace()
    done, last = (words[:-1], fold(words[-1]).lower()) if typing else (words, None)
    if last is not None and len(last) < MIN_PREFIX:  # too short to complete: the words before it
        last = None
        if not done:
            return out
    codes = index_languages(conn)
    requirements = [r for r in (_requirement(analyzer, [w], codes) for w in done) if r is not None]
    budget = Budget(budget_ms)
    try:
        with budget.installed(conn), budget.guard():
            if last is not None:
                out.completions = completions(conn, last)
                if not out.completions:
                    return out
                requirement = _requirement(analyzer, out.completions, codes)
                if requirement is None:
                    return out
                requirements.append(requirement)
            if not requirements:
                return out
            match = "title : (" + " AND ".join(requirements) + ")"
            out.pages = _pages(conn, match)
            out.sections = _sections(conn, match)
    except BudgetSpent:
        out.timed_out = True
    return out


def _pages(conn: sqlite3.Connection, match: str) -> list[Suggestion]:
    rows = conn.execute(
        "SELECT coalesce(nullif(trim(dd.title), ''), u.str_url), u.str_url, eg.url_fragment "
        "FROM search_index si JOIN search_page sp ON sp.docid = si.rowid "
        "JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id "
        "JOIN url u ON u.url_id = eg.url_id "
        "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
        f"WHERE search_index MATCH ? AND {_SEARCHABLE} ORDER BY si.rowid LIMIT ?",
        (match, MAX_SUGGESTIONS)).fetchall()
    return [Suggestion(" ".join(title.split()), url + (f"#{fragment}" if fragment else ""))
            for title, url, fragment in rows]


def _sections(conn: sqlite3.Connection, match: str) -> list[Suggestion]:
    rows = conn.execute(
        "SELECT s.title, coalesce(nullif(trim(dd.title), ''), u.str_url), u.str_url, s.anchor "
        "FROM section_search_index ssi JOIN search_section t ON t.docid = ssi.rowid "
        "JOIN section_summary s ON s.section_summary_id = t.section_summary_id "
        "JOIN entity_generation eg ON eg.entity_generation_id = s.entity_generation_id "
        "JOIN url u ON u.url_id = eg.url_id "
        "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
        f"WHERE section_search_index MATCH ? AND s.anchor IS NOT NULL AND {_SEARCHABLE} ORDER BY ssi.rowid LIMIT ?",
        (match, MAX_SUGGESTIONS)).fetchall()
    return [Suggestion(" ".join(title.split()), f"{url}#{anchor}", " ".join(page_title.split()), True)
            for title, page_title, url, anchor in rows]
