"""Facets, date filters, the date order and grouping by site (issue 32), on the three
sites of :mod:`search.versions_site`, through the search service."""

import sqlite3

import pytest

from search.versions_site import BLOG, DOCS, FORUM, versions_site
from textpile.search.facets import path_prefixes, refine
from textpile.search.grouping import group_by_site
from textpile.search.query import Filter, parse_query
from textpile.search.results import results_json
from textpile.search.service import search_pages
from textpile.search.sorting import SortError


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    path = tmp_path_factory.mktemp("facets") / "summary.db"
    versions_site(path)
    with sqlite3.connect(path) as c:
        yield c


def urls(results):
    return [r.url for r in results.results]


def test_facets_count_sites_languages_versions_and_years(conn):
    out = results_json(search_pages(conn, "asyncio", mode="keyword", facets=True))
    assert out["facets"] == {
        "pages": 8, "lower_bound": False,
        "site": [{"value": "docs.pytest.test", "count": 5, "query": "asyncio site:docs.pytest.test"},
                 {"value": "blog.pytest.test", "count": 2, "query": "asyncio site:blog.pytest.test"},
                 {"value": "forum.pytest.test", "count": 1, "query": "asyncio site:forum.pytest.test"}],
        "language": [{"value": "en", "count": 7, "query": "asyncio lang:en"},
                     {"value": "de", "count": 1, "query": "asyncio lang:de"}],
        "path": [{"value": "docs.pytest.test/docs/3.12/", "count": 3, "query": "asyncio site:docs.pytest.test/docs/3.12/"},
                 {"value": "docs.pytest.test/docs/3.11/", "count": 2, "query": "asyncio site:docs.pytest.test/docs/3.11/"},
                 {"value": "blog.pytest.test/2022/", "count": 1, "query": "asyncio site:blog.pytest.test/2022/"},
                 {"value": "blog.pytest.test/2024/", "count": 1, "query": "asyncio site:blog.pytest.test/2024/"}],
        "year": [{"value": "2024", "count": 4, "query": "asyncio after:2024 before:2025"},
                 {"value": "2023", "count": 2, "query": "asyncio after:2023 before:2024"}],
    }
    # without facets asked for, none are counted
    assert results_json(search_pages(conn, "asyncio", mode="keyword"))["facets"] is None


def test_a_version_facet_filters_to_that_version(conn):
    out = search_pages(conn, "asyncio site:docs.pytest.test/docs/3.12/", mode="keyword", facets=True)
    assert sorted(urls(out)) == [f"{DOCS}/docs/3.12/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio.html",
                                 f"{DOCS}/docs/3.12/whatsnew/3.12.html"]
    # within one version, its sections are the choices; the query's site: is replaced, not added to
    assert [(v.value, v.count, v.query) for v in out.facets.path] == [
        ("docs.pytest.test/docs/3.12/library/", 2, "asyncio site:docs.pytest.test/docs/3.12/library/"),
        ("docs.pytest.test/docs/3.12/whatsnew/", 1, "asyncio site:docs.pytest.test/docs/3.12/whatsnew/")]


def test_counts_are_lower_bounds_when_the_scan_stops(conn, monkeypatch):
    import textpile.search.engine as engine

    monkeypatch.setattr(engine, "PAGE_SCAN", 3)
    monkeypatch.setattr(engine, "RERANK_DEPTH", 2)
    out = search_pages(conn, "asyncio", mode="keyword", facets=True, per_page=2)
    assert (out.total, out.total_is_lower_bound) == (3, True)
    assert (out.facets.pages, out.facets.lower_bound) == (3, True)
    assert sum(v.count for v in out.facets.site) == 3


def test_sort_by_date_newest_first_undated_last(conn):
    out = search_pages(conn, "asyncio", mode="keyword", sort="date")
    assert results_json(out)["sort"] == "date"
    assert urls(out)[:6] == [f"{DOCS}/docs/3.12/whatsnew/3.12.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
                             f"{DOCS}/docs/3.12/library/asyncio.html", f"{BLOG}/2024/asyncio-tips",
                             f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.11/library/asyncio.html"]
    # the undated pages last, in their relevance order
    relevance = urls(search_pages(conn, "asyncio", mode="keyword"))
    undated = [f"{BLOG}/2022/asyncio-einfuehrung", f"{FORUM}/t/asyncio-question"]
    assert urls(out)[6:] == sorted(undated, key=relevance.index)
    assert search_pages(conn, "asyncio", mode="keyword").sort == "relevance"
    assert urls(search_pages(conn, "asyncio sort:date", mode="keyword")) == urls(out)
    with pytest.raises(SortError, match="sort: unknown order 'newest'"):
        search_pages(conn, "asyncio", mode="keyword", sort="newest")


def test_after_and_before_read_the_pages_own_dates(conn):
    out = search_pages(conn, "asyncio after:2024-03 sort:date", mode="keyword")
    assert urls(out) == [f"{DOCS}/docs/3.12/whatsnew/3.12.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
                         f"{DOCS}/docs/3.12/library/asyncio.html"]
    # a page that gives only its publication date is dated by it
    assert urls(search_pages(conn, "asyncio after:2024-02-10 before:2024-02-11", mode="keyword")) == [
        f"{BLOG}/2024/asyncio-tips"]
    assert sorted(urls(search_pages(conn, "asyncio before:2024", mode="keyword"))) == [
        f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.11/library/asyncio.html"]
    # filters alone list the pages newest first too
    assert urls(search_pages(conn, "site:blog.pytest.test sort:date", mode="keyword")) == [
        f"{BLOG}/2024/asyncio-tips", f"{BLOG}/2022/asyncio-einfuehrung"]


def test_date_filters_parse():
    assert parse_query("x after:2024-01 before:2025").filters == [Filter("after", "2024-01"), Filter("before", "2025")]
    bad = parse_query("x after:2024-13 sort:newest")
    assert bad.filters == [] and bad.sort is None
    assert bad.messages == ["The filter 'after:2024-13' is no date (YYYY, YYYY-MM or YYYY-MM-DD) and was ignored.",
                            "The order 'sort:newest' is unknown and was ignored (sort:relevance or sort:date)."]


def test_grouping_puts_two_per_site_on_a_page_with_a_more_link(conn):
    flat = urls(search_pages(conn, "asyncio library", mode="keyword", per_page=4))
    assert flat == [f"{DOCS}/docs/3.11/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio.html",
                    f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio-task.html"]
    first = search_pages(conn, "asyncio library", mode="keyword", per_page=4, per_site=2)
    assert [(r.url, r.more_from_site) for r in first.results] == [
        (f"{DOCS}/docs/3.11/library/asyncio.html", None),
        (f"{DOCS}/docs/3.12/library/asyncio.html", "asyncio library site:docs.pytest.test"),
        (f"{BLOG}/2022/asyncio-einfuehrung", None),
        (f"{FORUM}/t/asyncio-question", None)]
    second = search_pages(conn, "asyncio library", mode="keyword", per_page=4, per_site=2, page=1)
    # the rest in rank order, two of a site first, then what remains fills the page
    assert urls(second) == [f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
                            f"{BLOG}/2024/asyncio-tips", f"{DOCS}/docs/3.12/whatsnew/3.12.html"]
    # one site alone is not grouped
    alone = search_pages(conn, "asyncio site:docs.pytest.test", mode="keyword", per_page=4, per_site=2)
    assert [r.more_from_site for r in alone.results] == [None] * 4 and len({r.site for r in alone.results}) == 1


def test_path_prefixes_and_refine():
    assert path_prefixes(["/docs/3.11/a.html", "/docs/3.12/b.html", "/docs/3.12/c/d.html", "/index.html"]) == {
        "/docs/3.11/": 1, "/docs/3.12/": 2}
    assert path_prefixes(["/t/a", "/t/b"]) == {}
    assert refine("json site:a.org lang:en", "site", ["site:b.org/x/"]) == "json lang:en site:b.org/x/"
    assert refine("json after:2020", "year", ["after:2024", "before:2025"]) == "json after:2024 before:2025"


def test_grouping_refuses_bad_sizes():
    with pytest.raises(ValueError, match="per_site must be 0 or more"):
        group_by_site([], 10, -1)
