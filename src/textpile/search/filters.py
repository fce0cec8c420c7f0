"""``site:``, ``host:`` and ``lang:`` filters as SQL conditions.

The conditions use the aliases ``o`` (origin) and ``dd`` (document_description) of the
search queries' joins; values are bound as parameters, never written into the SQL.
"""

from __future__ import annotations

from textpile.search.query import Filter, matches_subdomains


def filter_sql(filters: list[Filter]) -> tuple[str, list]:
    """Return the SQL conditions (each prefixed with `` AND ``) and their parameters.

    Positive filters of one kind are alternatives (``site:a site:b``: either); negated
    ones all apply.
    """
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
