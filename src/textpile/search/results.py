"""A page of search results: what it holds, which page it is, and its JSON document.

Every front door (the web page and JSON API, ``textpile search``) shows
:class:`SearchResults` as :mod:`textpile.search.service` returns them; :func:`results_json`
is the JSON document of the API and of ``textpile search --format json``, kept apart from
the web layer so that ``textpile search`` does not import Datasette.

Paging: ``page`` counts from 0 up to :data:`MAX_PAGE`, ``per_page`` from 1 up to
:data:`MAX_PER_PAGE` (default :data:`DEFAULT_PER_PAGE`). :func:`result_page` and
:func:`results_per_page` read either from a number or from a request's text: a whole
number beyond either end is taken at that end, anything else that is not a whole number
is a :class:`PagingError` naming the parameter.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from textpile.errors import TextpileError
from textpile.search.facets import Facets, PageFacts
from textpile.search.render import SnippetSource

DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100
MAX_PAGE = 1000
#: A whole number as a request writes it (signed, up to 100 digits; surrounding spaces
#: are stripped first).
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,100}")


class PagingError(TextpileError):
    """A result page or page size that is not a whole number; the message names the
    parameter (``page: expected a whole number, got 'abc'``)."""


@dataclass
class ResultSection:
    """A section of a result page that matches the query: its title and link."""

    title: str
    url: str


@dataclass
class SearchResult:
    """One hit. ``snippet_html`` is HTML-escaped text with <mark> around matched terms.

    ``url`` is the page's URL (``url.str_url`` plus ``#url_fragment`` when the generation
    has one), or its best section's ``page#anchor``; ``page_url`` is the page's URL
    without that anchor; ``section_title`` names the best section (None when the page as
    a whole matched best); ``sections`` are further matching sections of the page. Times
    are unix seconds UTC; ``score`` is the rerank score (higher ranks first).
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
    page_url: str = ""
    section_title: str | None = None
    sections: list[ResultSection] = field(default_factory=list)
    site: str = ""
    more_from_site: str | None = None
    #: where the snippet is read from while it is not made yet (a shard's candidate: the
    #: search over shards asks for the snippets of the results it shows,
    #: :mod:`textpile.search.render`); None once made; not in the JSON API
    snippet_source: SnippetSource | None = None


@dataclass
class SearchResults:
    """A page of hits. ``page`` counts from 0; ``message`` explains fallbacks or errors.

    ``message`` is ``notes`` (sentences about the query, partial matches, the time
    budget) joined with spaces, plus :meth:`past_last_page_sentence` (pages counted from
    1) when the page is beyond the last one; interfaces that count pages differently
    rebuild it from ``notes``. ``total`` counts the matching pages (a lower bound when
    ``total_is_lower_bound``). ``fallback_any_term`` is true when pages holding only some
    of the words are included (``partial_matches``; the old name is kept for API
    clients). ``suggestion`` is a "did you mean" query; ``timed_out`` is true when the
    time budget ended the search early. ``explained`` (with ``search(explain=True)``)
    lists every reranked candidate in rank order: ``{"url", "held", "score",
    "features"}``. ``mode`` is the search mode that ran (set by
    :func:`textpile.search.service.search_pages`), ``mode_note`` says why it is not the one
    asked for (an index without page vectors answers keyword results). ``corrected`` is
    true when no page matched ``query`` and the results are those of ``suggestion`` (a
    note says so). ``partial`` is true when a search over shards
    (:mod:`textpile.search.fanout`) lacks the answer of a shard that was down or late
    (``missing_shards`` names them; a note says so). ``sort`` is the order used
    (``relevance`` or ``date``), ``facets`` the counts asked for
    (:mod:`textpile.search.facets`), None when not asked for; ``results_per_site`` the
    grouping by site used (at most that many results of one site per result page:
    :mod:`textpile.search.grouping`), 0 when the results are in rank order.
    """

    query: str
    page: int
    per_page: int
    results: list[SearchResult] = field(default_factory=list)
    total: int = 0
    message: str | None = None
    fallback_any_term: bool = False
    notes: list[str] = field(default_factory=list)
    total_is_lower_bound: bool = False
    suggestion: str | None = None
    timed_out: bool = False
    explained: list[dict] | None = None
    mode: str = "keyword"
    mode_note: str | None = None
    corrected: bool = False
    partial: bool = False
    missing_shards: list[str] = field(default_factory=list)
    sort: str = "relevance"
    facets: Facets | None = None
    results_per_site: int = 0
    #: the pages the keyword scans counted as holding the query's words (``total`` in the
    #: keyword mode; the hybrid mode's ``total`` is at least the pages it ranked): what a
    #: search over shards sums (:mod:`textpile.search.fanout`); None when no scan counted
    #: them (a query without words: ``total`` counts the pages listed); not in the JSON API
    keyword_total: int | None = None
    #: with ``explain`` and facets: the facts of the pages the facets count (a search over
    #: shards counts every shard's together: :mod:`textpile.search.fanout`)
    page_facts: list[PageFacts] | None = None
    #: the word forms the snippets mark, per requirement, when the results' snippets are
    #: not made yet (``snippet_source``); not in the JSON API
    snippet_words: list[list[str]] | None = None

    @property
    def partial_matches(self) -> bool:
        """Pages holding only some of the words are included."""
        return self.fallback_any_term

    @property
    def total_label(self) -> str:
        """``total`` as a reader sees it: ``1,234``, or ``300+`` when it is a lower bound."""
        return f"{self.total:,}" + ("+" if self.total_is_lower_bound else "")

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


def _whole_number(name: str, value: int | str | None, default: int, low: int, high: int) -> int:
    """``value`` as an int in ``low..high`` (a whole number beyond either end is taken at
    that end); ``default`` for None or blank text.

    Raises:
        PagingError: ``value`` is not a whole number (text other than one, a bool, a float).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value.strip()):
        number = int(value.strip())
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise PagingError(f"{name}: expected a whole number, got {value!r}")
    return max(low, min(high, number))


def result_page(value: int | str | None) -> int:
    """The result page ``value`` names, counted from 0: 0..:data:`MAX_PAGE`, 0 when None
    or blank.

    Raises:
        PagingError: ``value`` is not a whole number (the message names ``page``).
    """
    return _whole_number("page", value, 0, 0, MAX_PAGE)


def results_per_page(value: int | str | None) -> int:
    """The page size ``value`` names: 1..:data:`MAX_PER_PAGE`, :data:`DEFAULT_PER_PAGE`
    when None or blank.

    Raises:
        PagingError: ``value`` is not a whole number (the message names ``per_page``).
    """
    return _whole_number("per_page", value, DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)


def per_site(value: int | str | None, default: int) -> int:
    """The grouping by site ``value`` names (at most that many results of one site per
    result page, :mod:`textpile.search.grouping`): 0..:data:`MAX_PER_PAGE`, 0 for rank
    order, ``default`` when None or blank.

    Raises:
        PagingError: ``value`` is not a whole number (the message names ``results_per_site``).
    """
    return _whole_number("results_per_site", value, default, 0, MAX_PER_PAGE)


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
    "partial", "missing_shards", "sort", "results_per_site", "facets", "list": [{"title",
    "url", "page_url", "section_title", "sections": [{"title", "url"}], "description",
    "snippet", "snippet_text", "language", "time_updated", "time_created",
    "time_updated_unix_utc", "time_created_unix_utc", "entity_generation_uuid", "site",
    "more_from_site"}]}``; ``facets`` is :meth:`Facets.as_json` or null when not asked for,
    ``results_per_site`` the grouping by site used (0: rank order), ``more_from_site``
    the query of the result's site alone when grouping moved more of its results to
    later pages (else null);
    ``url`` links to the best matching section (``page_url#anchor``) when there is one,
    ``snippet`` is escaped HTML with ``<mark>``; ``corrected`` is true when no page matched
    the query and ``list`` holds the results of ``suggestion``; ``mode`` is the search mode that ran and
    ``mode_note`` why it is not the one asked for (else null); ``partial`` is true when shards
    named in ``missing_shards`` did not answer in time (a search over shards). The SearxNG ``json_engine`` reads
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
        "partial": results.partial,
        "missing_shards": list(results.missing_shards),
        "sort": results.sort,
        "results_per_site": results.results_per_site,
        "facets": results.facets.as_json() if results.facets is not None else None,
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
                "site": r.site,
                "more_from_site": r.more_from_site,
            }
            for r in results.results
        ],
    }
