"""``site:``, ``host:``, ``lang:``, ``after:`` and ``before:`` filters as SQL conditions.

The conditions use the aliases ``o`` (origin) and ``dd`` (document_description) of the
search queries' joins; values are bound as parameters, never written into the SQL.
"""

from __future__ import annotations

import sqlite3

from textpile.search.query import Filter, date_start, matches_subdomains

#: A page's own date, as ``after:``, ``before:`` and ``sort:date`` read it: its last
#: update (page_modified: the page's own dateModified, else the file's Last-Modified),
#: else its publication (page_published, from its markup); the precedence of
#: dead-simple-search-how-it-works.txt, "Page dates", as textpile.summarize.scrape.dates
#: stores them. NULL for a page that gives no date. Reads ``dd`` (document_description).
PAGE_DATE_SQL = "coalesce(dd.time_updated_unix_utc, dd.time_created_unix_utc)"
#: Languages named at most in :func:`missing_language_note` (the others are counted).
NOTED_LANGUAGES = 12


def filter_sql(filters: list[Filter]) -> tuple[str, list]:
    """Return the SQL conditions (each prefixed with `` AND ``) and their parameters.

    Positive filters of one kind are alternatives (``site:a site:b``: either); negated
    ones all apply; every date bound applies (a page without a date passes none, and
    passes a negated one). A filter with a path prefix also needs the URL's path to start with it.
    The SQL reads the tables as ``o`` (origin), ``u`` (url) and ``dd``
    (document_description).
    """
    clauses: list[str] = []
    params: list = []

    def within(f: Filter, sql: str, ps: list) -> tuple[str, list]:
        if f.path is None:
            return sql, ps
        return (f"({sql} AND substr(coalesce(u.path, '/'), 1, ?) = ?)", [*ps, len(f.path), f.path])

    def site(f: Filter) -> tuple[str, list]:
        if not matches_subdomains(f.value):
            return host(f)
        suffix = "." + f.value
        return within(f, "(coalesce(o.host, '') = ? OR substr(coalesce(o.host, ''), -?) = ?)",
                      [f.value, len(suffix), suffix])

    def host(f: Filter) -> tuple[str, list]:
        return within(f, "(coalesce(o.host, '') = ?)", [f.value])

    def lang(f: Filter) -> tuple[str, list]:
        return (
            "(lower(coalesce(dd.primary_language, '')) = ? OR "
            "substr(lower(coalesce(dd.primary_language, '')), 1, ?) = ?)",
            [f.value, len(f.value) + 1, f.value + "-"],
        )

    def after(f: Filter) -> tuple[str, list]:
        return f"({PAGE_DATE_SQL} >= ?)", [date_start(f.value)]

    def before(f: Filter) -> tuple[str, list]:
        return f"({PAGE_DATE_SQL} < ?)", [date_start(f.value)]

    makers = {"site": site, "host": host, "lang": lang, "after": after, "before": before}
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
    for f in filters:  # every date bound applies (after:2024 before:2025 is the year 2024)
        if f.kind in ("after", "before"):
            sql, ps = makers[f.kind](f)
            clauses.append(f"NOT coalesce({sql}, 0)" if f.negated else sql)
            params.extend(ps)
    return "".join(f" AND {c}" for c in clauses), params


def _language_matches(value: str, language: str) -> bool:
    """Whether ``lang:value`` matches a page in ``language`` (lower case), as :func:`filter_sql` does."""
    return language == value or language.startswith(value + "-")


def missing_language_note(conn: sqlite3.Connection, filters: list[Filter]) -> str | None:
    """Why a search with ``lang:`` filters found nothing, when no searchable page is in
    any of the languages asked for: "No page is in language zz: the index has pages in
    en (388), de (2)." (languages of ``document_description.primary_language``, lower
    case, most pages first, at most :data:`NOTED_LANGUAGES` named). None when there is no
    positive ``lang:`` filter or a page is in one of its languages (then the words are
    what matched nothing). One grouped scan of the searchable pages; called only for an
    empty result.

    Raises:
        sqlite3.Error: the database cannot be read.
    """
    wanted = [f.value for f in filters if f.kind == "lang" and not f.negated]
    if not wanted:
        return None
    rows = conn.execute(
        "SELECT lower(dd.primary_language) AS language, count(*) AS pages FROM search_page sp "
        "JOIN document_description dd ON dd.entity_generation_id = sp.entity_generation_id "
        "WHERE coalesce(dd.primary_language, '') != '' GROUP BY language ORDER BY pages DESC, language").fetchall()
    if any(_language_matches(value, language) for value in wanted for language, _ in rows):
        return None
    asked = " or ".join(dict.fromkeys(wanted))
    if not rows:
        return f"No page is in language {asked}: no page of the index has a language."
    named = ", ".join(f"{language} ({pages})" for language, pages in rows[:NOTED_LANGUAGES])
    more = f" and {len(rows) - NOTED_LANGUAGES} more" if len(rows) > NOTED_LANGUAGES else ""
    return f"No page is in language {asked}: the index has pages in {named}{more}."
