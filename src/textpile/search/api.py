"""The JSON document of a search: the web API's answer and ``textpile search --format json``.

Kept apart from the web layer so that ``textpile search`` does not import Datasette.
"""

from __future__ import annotations

import datetime as dt

from textpile.search.engine import SearchResults


def iso_date(unix_utc: int | None) -> str | None:
    """Return ``unix_utc`` seconds as an ISO 8601 UTC timestamp, or None."""
    if unix_utc is None:
        return None
    try:
        return dt.datetime.fromtimestamp(unix_utc, tz=dt.timezone.utc).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def results_json(results: SearchResults) -> dict:
    """Return the JSON document of a search (the API and ``textpile search --format json``).

    Shape: ``{"query", "page", "per_page", "total", "total_is_lower_bound", "message",
    "fallback_any_term", "partial_matches", "suggestion", "corrected", "timed_out", "mode", "mode_note",
    "list": [{"title",
    "url", "page_url", "section_title", "sections": [{"title", "url"}], "description",
    "snippet", "snippet_text", "language", "time_updated", "time_created",
    "time_updated_unix_utc", "time_created_unix_utc", "entity_generation_uuid"}]}``;
    ``url`` links to the best matching section (``page_url#anchor``) when there is one,
    ``snippet`` is escaped HTML with ``<mark>``; ``corrected`` is true when no page matched
    the query and ``list`` holds the results of ``suggestion``; ``mode`` is the search mode that ran and
    ``mode_note`` why it is not the one asked for (else null). The SearxNG ``json_engine`` reads
    ``list``, ``title``, ``url`` and ``description``.
    """
    return {
        "query": results.query,
        "page": results.page,
        "per_page": results.per_page,
        "total": results.total,
        "total_is_lower_bound": results.total_is_lower_bound,
        "message": results.message,
        "fallback_any_term": results.fallback_any_term,
        "partial_matches": results.partial_matches,
        "suggestion": results.suggestion,
        "corrected": results.corrected,
        "timed_out": results.timed_out,
        "mode": results.mode,
        "mode_note": results.mode_note,
        "list": [
            {
                "title": r.title,
                "url": r.url,
                "page_url": r.page_url,
                "section_title": r.section_title,
                "sections": [{"title": x.title, "url": x.url} for x in r.sections],
                "description": r.description,
                "snippet": r.snippet_html,
                "snippet_text": r.snippet_text,
                "language": r.language,
                "time_updated": iso_date(r.time_updated_unix_utc),
                "time_created": iso_date(r.time_created_unix_utc),
                "time_updated_unix_utc": r.time_updated_unix_utc,
                "time_created_unix_utc": r.time_created_unix_utc,
                "entity_generation_uuid": r.entity_generation_uuid,
            }
            for r in results.results
        ],
    }
