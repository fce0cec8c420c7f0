"""URL traps: session IDs that make endless copies of every URL, and calendar-like URL
spaces that go on for ever (``/cal?month=2024-05`` linking the next month, and the next).

Two defences, both pure functions of a URL:

* :func:`strip_session_ids` removes session-ID parameters from a URL before it becomes a
  crawl candidate: query parameters and path parameters (``;jsessionid=...``) named in
  :data:`DEFAULT_SESSION_PARAMETERS` (configurable: ``session_parameters``).
* :func:`calendar_pattern` gives a calendar-like URL (one with a date in it) its path
  pattern, every run of digits written ``#``; the crawl loop crawls at most
  ``max_urls_per_pattern`` URLs of one pattern per run and logs the rest as 173
  blocked_url_by_local_policy, leaving them due for the next run.

Sources: issue 11 (the measured calendar trap and session-ID duplicates);
unobtanium-documentation.txt, page "Crawl Loop" (a URL blocked by a local policy is
logged with exit code 173); the session parameter names are those of the common server
frameworks (Java servlets' ``jsessionid``, PHP's ``PHPSESSID``, ColdFusion's ``CFID`` and
``CFTOKEN``, osCommerce's ``osCsid``, Zen Cart's ``zenid``, and the generic ``sid``,
``sessionid``, ``session_id``, ``sessid``).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

from textpile.store.urls import ParsedUrl, UrlError, parse_url

#: Session-ID parameter names stripped by default (compared case-insensitively).
DEFAULT_SESSION_PARAMETERS = ("jsessionid", "phpsessid", "sid", "sessionid", "session_id", "sessid",
                              "cfid", "cftoken", "oscsid", "zenid")
#: URLs of one calendar pattern crawled per run by default (0: no cap).
DEFAULT_MAX_URLS_PER_PATTERN = 25

_DIGITS = re.compile(r"\d+")


def session_names(names: list[str] | tuple[str, ...]) -> frozenset[str]:
    """The configured session parameter names as the lower-case set the functions here take."""
    return frozenset(name.lower() for name in names)


def strip_session_ids(url: ParsedUrl, names: frozenset[str]) -> ParsedUrl:
    """``url`` without the session-ID parameters ``names`` (lower case): query parameters
    of those names (percent-decoded, any case) and path parameters ``;name=value`` in any
    path segment. Other parameters keep their order and spelling; a query left empty is
    dropped with its ``?``. Returns ``url`` itself when nothing is stripped (the common
    case costs a substring test).
    """
    if not names:
        return url
    path = url.path
    query = url.query
    new_path = _strip_path_parameters(path, names) if ";" in path else path
    new_query = _strip_query(query, names) if query else query
    if new_path == path and new_query == query:
        return url
    origin = url.str_url[: len(url.str_url) - len(path) - (0 if query is None else len(query) + 1)]
    text = origin + new_path + ("" if new_query is None else "?" + new_query)
    try:
        return parse_url(text)
    except UrlError:
        return url


def _strip_path_parameters(path: str, names: frozenset[str]) -> str:
    segments = []
    for segment in path.split("/"):
        if ";" in segment:
            head, *params = segment.split(";")
            kept = [p for p in params if unquote_plus(p.partition("=")[0]).lower() not in names]
            segment = ";".join([head, *kept])
        segments.append(segment)
    return "/".join(segments)


def _strip_query(query: str, names: frozenset[str]) -> str | None:
    parts = query.split("&")
    kept = [part for part in parts if unquote_plus(part.partition("=")[0]).lower() not in names]
    if len(kept) == len(parts):
        return query
    kept = [part for part in kept if part]
    return "&".join(kept) if kept else None


def _is_date_digits(run: str) -> bool:
    """A run of digits that reads as a date: a year from 1900 to 2199, or such a year
    followed by a month (``yyyymm``), or by month and day (``yyyymmdd``)."""
    if len(run) not in (4, 6, 8):
        return False
    year = int(run[:4])
    if not 1900 <= year <= 2199:
        return False
    if len(run) >= 6 and not 1 <= int(run[4:6]) <= 12:
        return False
    return len(run) < 8 or 1 <= int(run[6:8]) <= 31


def calendar_pattern(url: ParsedUrl) -> str | None:
    """The path pattern of a calendar-like URL, or None when ``url`` is not one.

    A URL is calendar-like when its path or query holds a date (see
    :func:`_is_date_digits`: ``2024``, ``202405``, ``20240501``, also within
    ``2024-05-01``). Its pattern is its origin, path and query with every run of digits
    written ``#``: ``/cal?month=2024-05`` and ``/cal?month=2031-12`` share
    ``/cal?month=#-#``, while ``/2024/05/my-post`` and ``/2024/06/other-post`` (a blog's
    dated posts) differ. Numbered pages without a date (``/item/1234``, ``/page/7``)
    have no pattern and are never capped.
    """
    target = url.path if url.query is None else f"{url.path}?{url.query}"
    if not any(_is_date_digits(run) for run in _DIGITS.findall(target)):
        return None
    return url.str_origin + _DIGITS.sub("#", target)
