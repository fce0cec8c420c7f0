"""Searching a summary database: query in, ranked results with snippets out.

Ranking (issue 4; unobtanium-documentation.txt, "Summary Database" and "Calculating
Indexiness"): FTS5 ``bm25()`` with the column weights in :data:`BM25_WEIGHTS`, times
an indexiness prior::

    score = bm25 * (1 - 0.5 * clamp(indexiness / 100, -1, 1))

``bm25`` is negative (more negative is better), so a leaf page (negative indexiness)
gets up to 1.5 times its score and a navigation page down to 0.5 times; lower score
ranks first, ties by ``entity_generation_id``. Only searchable generations are found:
the SQL joins ``entity_generation`` on the FTS rowid and requires
``confirmed_end_unix_utc IS NULL AND NOT marked_duplicate AND text_pile_id IS NOT NULL``
so that a stale FTS row never leaks.

If all-terms finds nothing and the query had more than one positive term, the terms
are retried as alternatives (Dead Simple Search, "The search process"), and the
result says so (``fallback_any_term``).
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from dataclasses import dataclass, field

from textpile.search.fts import CompiledQuery, compile_query
from textpile.search.query import Filter, ParsedQuery, matches_subdomains, parse_query
from textpile.search.snippets import CLOSE, ELLIPSIS, OPEN, has_mark, leading_text, marked_to_html, marked_to_text

DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100
MAX_PAGE = 1000
SNIPPET_TOKENS = 24

# Weights in the FTS table's column order.
BM25_WEIGHTS = {
    "text_pile_id": 0.0,
    "any": 0.0,
    "title": 10.0,
    "description": 5.0,
    "text": 2.0,
    "secondary_text": 1.0,
    "big_headlines": 5.0,
    "small_headlines": 3.0,
    "code_text": 0.5,
    "quote_text": 0.5,
}
_FTS_COLUMNS = list(BM25_WEIGHTS)
# Columns a snippet is taken from, in order of preference.
SNIPPET_COLUMNS = ("text", "secondary_text", "big_headlines", "small_headlines", "quote_text", "code_text", "description", "title")

_SEARCHABLE = (
    "eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate AND eg.text_pile_id IS NOT NULL"
)
_FROM = (
    "FROM full_text_entity_index AS f "
    "JOIN entity_generation AS eg ON eg.entity_generation_id = f.rowid "
    "JOIN url AS u ON u.url_id = eg.url_id "
    "JOIN origin AS o ON o.origin_id = u.origin_id "
    "LEFT JOIN document_description AS dd ON dd.entity_generation_id = eg.entity_generation_id "
)
_SCORE = (
    "bm25(full_text_entity_index, " + ", ".join(str(w) for w in BM25_WEIGHTS.values()) + ")"
    " * (1.0 - 0.5 * max(-1.0, min(1.0, coalesce(dd.indexiness, 0) / 100.0)))"
)


@dataclass
class SearchResult:
    """One hit. ``snippet_html`` is HTML-escaped text with <mark> around matched terms.

    ``url`` is ``url.str_url`` plus ``#url_fragment`` when the generation has one;
    times are unix seconds UTC; ``score`` is the ranking score (lower ranks first).
    """

    title: str
    url: str
    description: str
    snippet_html: str
    language: str | None = None
    time_updated_unix_utc: int | None = None
    time_created_unix_utc: int | None = None
    entity_generation_uuid: str | None = None
    snippet_text: str = ""
    score: float = 0.0


@dataclass
class SearchResults:
    """A page of hits. ``page`` counts from 0; ``message`` explains fallbacks or errors.

    ``message`` is ``notes`` (sentences about the query and fallbacks) joined with
    spaces, plus :meth:`past_last_page_sentence` (pages counted from 1) when the page
    is beyond the last one; interfaces that count pages differently rebuild it from
    ``notes``.
    """

    query: str
    page: int
    per_page: int
    results: list[SearchResult] = field(default_factory=list)
    total: int = 0
    message: str | None = None
    fallback_any_term: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        """How many pages of ``per_page`` the ``total`` results fill (0 when none)."""
        return -(-self.total // self.per_page)

    @property
    def past_last_page(self) -> bool:
        """True when there are results but ``page`` is beyond the last page of them."""
        return self.total > 0 and self.page >= self.page_count

    def past_last_page_sentence(self, shown_page: int, note: str = "") -> str:
        """Return ``No results on page P{note}; there are N results on K pages.``

        ``shown_page`` is the page number as the reader's interface counts it (the web
        page shows ``page + 1``, the command line's ``--page`` counts from 0).
        """
        results = "result" if self.total == 1 else "results"
        pages = "page" if self.page_count == 1 else "pages"
        return (f"No results on page {shown_page}{note}; there are {self.total:,} {results} "
                f"on {self.page_count:,} {pages}.")


def clamp_paging(page: int | str | None, per_page: int | str | None) -> tuple[int, int]:
    """Return (page, per_page) as ints: page in 0..MAX_PAGE, per_page in 1..MAX_PER_PAGE.

    Unparseable values fall back to page 0 and :data:`DEFAULT_PER_PAGE`.
    """
    try:
        p = int(page) if page is not None else 0
    except (TypeError, ValueError):
        p = 0
    try:
        pp = int(per_page) if per_page is not None else DEFAULT_PER_PAGE
    except (TypeError, ValueError):
        pp = DEFAULT_PER_PAGE
    return max(0, min(MAX_PAGE, p)), max(1, min(MAX_PER_PAGE, pp))


def _filter_sql(filters: list[Filter]) -> tuple[str, list]:
    """Return the SQL conditions (joined with AND, leading AND) and parameters."""
    clauses: list[str] = []
    params: list = []

    def site(f: Filter) -> tuple[str, list]:
        if not matches_subdomains(f.value):
            return host(f)
        suffix = "." + f.value
        return ("(coalesce(o.host, '') = ? OR substr(coalesce(o.host, ''), -?) = ?)", [f.value, len(suffix), suffix])

    def host(f: Filter) -> tuple[str, list]:
        return ("(coalesce(o.host, '') = ?)", [f.value])

    def lang(f: Filter) -> tuple[str, list]:
        return (
            "(lower(coalesce(dd.primary_language, '')) = ? OR "
            "substr(lower(coalesce(dd.primary_language, '')), 1, ?) = ?)",
            [f.value, len(f.value) + 1, f.value + "-"],
        )

    makers = {"site": site, "host": host, "lang": lang}
    for kind in ("site", "host", "lang"):
        positive = [f for f in filters if f.kind == kind and not f.negated]
        negative = [f for f in filters if f.kind == kind and f.negated]
        if positive:
            parts = [makers[kind](f) for f in positive]
            clauses.append("(" + " OR ".join(p[0] for p in parts) + ")")
            for p in parts:
                params.extend(p[1])
        for f in negative:
            sql, ps = makers[kind](f)
            clauses.append(f"NOT {sql}")
            params.extend(ps)
    return "".join(f" AND {c}" for c in clauses), params


def _count(conn: sqlite3.Connection, match: str, filter_sql: str, filter_params: list) -> int:
    sql = f"SELECT count(*) {_FROM} WHERE full_text_entity_index MATCH ? AND {_SEARCHABLE}{filter_sql}"
    return conn.execute(sql, [match, *filter_params]).fetchone()[0]


def _page_rows(conn, match, filter_sql, filter_params, limit, offset) -> list[tuple]:
    sql = (
        f"SELECT eg.entity_generation_id, {_SCORE} AS score, eg.entity_generation_uuid, eg.url_fragment, "
        "u.str_url, dd.title, dd.primary_headline, dd.description, dd.primary_language, "
        "dd.time_updated_unix_utc, dd.time_created_unix_utc, eg.text_pile_id "
        f"{_FROM} WHERE full_text_entity_index MATCH ? AND {_SEARCHABLE}{filter_sql} "
        "ORDER BY score, eg.entity_generation_id LIMIT ? OFFSET ?"
    )
    return conn.execute(sql, [match, *filter_params, limit, offset]).fetchall()


def _snippets(conn: sqlite3.Connection, match: str, ids: list[int]) -> dict[int, str]:
    """Return {entity_generation_id: marked snippet} for ``ids`` (best column with a match)."""
    if not ids:
        return {}
    cols = ", ".join(
        f"snippet(full_text_entity_index, {_FTS_COLUMNS.index(c)}, ?, ?, ?, {SNIPPET_TOKENS})" for c in SNIPPET_COLUMNS
    )
    marks = [OPEN, CLOSE, ELLIPSIS] * len(SNIPPET_COLUMNS)
    placeholders = ", ".join("?" for _ in ids)
    sql = (
        f"SELECT rowid, {cols} FROM full_text_entity_index "
        f"WHERE full_text_entity_index MATCH ? AND rowid IN ({placeholders})"
    )
    found: dict[int, str] = {}
    for row in conn.execute(sql, [*marks, match, *ids]):
        for candidate in row[1:]:
            if has_mark(candidate):
                found[row[0]] = re.sub(r"\s+", " ", candidate).strip()
                break
    return found


def _leading(conn: sqlite3.Connection, text_pile_ids: list[int]) -> dict[int, str]:
    if not text_pile_ids:
        return {}
    placeholders = ", ".join("?" for _ in text_pile_ids)
    sql = (
        "SELECT text_pile_id, substr(CASE WHEN text != '' THEN text ELSE secondary_text END, 1, 600) "
        f"FROM text_pile WHERE text_pile_id IN ({placeholders})"
    )
    return {r[0]: leading_text(r[1] or "") for r in conn.execute(sql, text_pile_ids)}


def _nonempty(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value or None


def _run(conn, compiled: CompiledQuery, parsed: ParsedQuery, page: int, per_page: int):
    filter_sql, filter_params = _filter_sql(parsed.filters)
    total = _count(conn, compiled.match, filter_sql, filter_params)
    rows = _page_rows(conn, compiled.match, filter_sql, filter_params, per_page, page * per_page) if total else []
    return total, rows


def search(conn: sqlite3.Connection, query: str, *, page: int = 0, per_page: int = DEFAULT_PER_PAGE) -> SearchResults:
    """Run ``query`` (textpile's query language) against the summary database ``conn``.

    ``page`` counts from 0; ``per_page`` is clamped to 1..100 (default 20). Any query
    string is valid: problems (nothing searchable, cut-off query, fallback to any
    term) are explained in ``message``; this never raises for the query's content.

    Raises:
        sqlite3.Error: only for database problems (a missing table, a locked file).
    """
    page, per_page = clamp_paging(page, per_page)
    parsed = parse_query(query if isinstance(query, str) else str(query))
    # The query is echoed back: lone surrogates (undecodable CLI bytes) become "?" so it
    # can always be encoded as UTF-8.
    echoed = query.encode("utf-8", "replace").decode("utf-8") if isinstance(query, str) else str(query)
    out = SearchResults(query=echoed, page=page, per_page=per_page)
    messages = list(parsed.messages)
    compiled = compile_query(parsed)
    messages.extend(compiled.messages)
    if compiled.match is None:
        messages.append("Nothing to search for: type some words." if not parsed.positive_terms else "Nothing searchable remained in the query.")
        out.message = " ".join(messages)
        return out

    total, rows = _run(conn, compiled, parsed, page, per_page)
    if total == 0 and compiled.positive_count > 1:
        any_compiled = compile_query(parsed, any_term=True)
        any_total, any_rows = _run(conn, any_compiled, parsed, page, per_page)
        if any_total:
            total, rows, compiled = any_total, any_rows, any_compiled
            out.fallback_any_term = True
            messages.append("No page holds all the words; showing pages holding any of them.")
    if total == 0:
        messages.append("No results.")
    out.notes = list(messages)
    out.total = total
    if out.past_last_page:
        messages.append(out.past_last_page_sentence(page + 1))

    snippets = _snippets(conn, compiled.match, [r[0] for r in rows])
    leading = _leading(conn, sorted({r[11] for r in rows if r[0] not in snippets and r[11] is not None}))
    for (eg_id, score, eg_uuid, fragment, str_url, title, headline, description, lang, t_up, t_cr, tp_id) in rows:
        url = str_url + (f"#{fragment}" if fragment is not None else "")
        marked = snippets.get(eg_id)
        if marked is not None:
            snippet_html = marked_to_html(marked)
            snippet_text = marked_to_text(marked)
        else:
            snippet_text = leading.get(tp_id, "")
            snippet_html = marked_to_html(snippet_text)
        out.results.append(
            SearchResult(
                title=_nonempty(title) or _nonempty(headline) or url,
                url=url,
                description=_nonempty(description) or snippet_text,
                snippet_html=snippet_html,
                language=_nonempty(lang),
                time_updated_unix_utc=t_up,
                time_created_unix_utc=t_cr,
                entity_generation_uuid=str(uuid.UUID(bytes=eg_uuid)) if isinstance(eg_uuid, bytes) and len(eg_uuid) == 16 else None,
                snippet_text=snippet_text,
                score=float(score),
            )
        )
    out.message = " ".join(messages) if messages else None
    return out
