"""Facets, the date order and grouping by site on the search page and in the JSON API (issue 32)."""

import html
import json

import pytest

from search.versions_site import BLOG, DOCS, FORUM, versions_site
from textpile.web.app import build_datasette
from web.client import get


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    path = tmp_path_factory.mktemp("facets_web") / "summary.db"
    versions_site(path)
    return build_datasette(path)


def test_json_facets_only_when_asked(ds):
    plain = json.loads(get(ds, "/search?format=json&search=asyncio&mode=keyword").text)
    assert plain["facets"] is None and plain["sort"] == "relevance"
    body = json.loads(get(ds, "/search?format=json&search=asyncio&mode=keyword&facets=1").text)
    assert [(v["value"], v["count"]) for v in body["facets"]["path"]] == [
        ("docs.pytest.test/docs/3.12/", 3), ("docs.pytest.test/docs/3.11/", 2), ("blog.pytest.test/2022/", 1),
        ("blog.pytest.test/2024/", 1)]
    assert body["facets"]["lower_bound"] is False
    version = json.loads(get(ds, "/search?format=json&mode=keyword&search="
                             + "asyncio+site%3Adocs.pytest.test%2Fdocs%2F3.12%2F").text)
    assert sorted(r["url"] for r in version["list"]) == [
        f"{DOCS}/docs/3.12/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio.html",
        f"{DOCS}/docs/3.12/whatsnew/3.12.html"]


def test_json_sort_date_and_after(ds):
    body = json.loads(get(ds, "/search?format=json&search=asyncio+after%3A2024-03&mode=keyword&sort=date").text)
    assert body["sort"] == "date"
    assert [r["url"] for r in body["list"]] == [f"{DOCS}/docs/3.12/whatsnew/3.12.html",
                                                f"{DOCS}/docs/3.12/library/asyncio-task.html",
                                                f"{DOCS}/docs/3.12/library/asyncio.html"]
    bad = get(ds, "/search?format=json&search=asyncio&sort=newest")
    assert bad.status_code == 400
    assert json.loads(bad.text)["message"] == "sort: unknown order 'newest' (expected one of: relevance, date)"


def test_json_keeps_rank_order_and_groups_when_asked(ds):
    # an API client (SearxNG merging engines by position, a script) gets the ranking as it is
    body = json.loads(get(ds, "/search?format=json&search=asyncio+library&mode=keyword&per_page=4").text)
    assert body["results_per_site"] == 0
    assert [(r["url"], r["more_from_site"]) for r in body["list"]] == [
        (f"{DOCS}/docs/3.11/library/asyncio.html", None),
        (f"{DOCS}/docs/3.12/library/asyncio.html", None),
        (f"{DOCS}/docs/3.11/library/asyncio-task.html", None),
        (f"{DOCS}/docs/3.12/library/asyncio-task.html", None)]
    grouped = json.loads(get(ds, "/search?format=json&search=asyncio+library&mode=keyword&per_page=4"
                                 "&results_per_site=2").text)
    assert grouped["results_per_site"] == 2
    assert [(r["url"], r["more_from_site"]) for r in grouped["list"]] == [
        (f"{DOCS}/docs/3.11/library/asyncio.html", None),
        (f"{DOCS}/docs/3.12/library/asyncio.html", "asyncio library site:docs.pytest.test"),
        (f"{BLOG}/2022/asyncio-einfuehrung", None),
        (f"{FORUM}/t/asyncio-question", None)]
    one = json.loads(get(ds, "/search?format=json&search=asyncio+library&mode=keyword&per_page=4"
                             "&results_per_site=1").text)
    assert [r["site"] for r in one["list"]] == ["docs.pytest.test", "blog.pytest.test", "forum.pytest.test",
                                               "docs.pytest.test"]
    bad = get(ds, "/search?format=json&search=asyncio&results_per_site=two")
    assert bad.status_code == 400
    assert json.loads(bad.text)["message"] == "results_per_site: expected a whole number, got 'two'"


def test_page_groups_by_default_and_its_json_link_says_so(ds):
    page = get(ds, "/search?search=asyncio+library&mode=keyword&per_page=4").text
    assert ('<link rel="alternate" type="application/json" href="/search?search=asyncio+library&amp;per_page=4'
            '&amp;mode=keyword&amp;format=json&amp;results_per_site=2">') in page
    flat = get(ds, "/search?search=asyncio+library&mode=keyword&per_page=4&results_per_site=0").text
    assert 'class="tp-more"' not in flat
    # the next page's link keeps the grouping asked for
    assert ('<a rel="next" href="/search?search=asyncio+library&amp;page=1&amp;per_page=4&amp;mode=keyword'
            '&amp;results_per_site=0">') in flat


def test_page_shows_facets_sort_links_and_more_from_site(ds):
    page = get(ds, "/search?search=asyncio+library&mode=keyword&per_page=4")
    assert page.status_code == 200
    text = page.text
    assert '<nav class="tp-facets" aria-label="Narrow the results">' in text
    assert ('<li><a href="/search?search=asyncio+library+site%3Adocs.pytest.test%2Fdocs%2F3.12%2F&amp;per_page=4'
            '&amp;mode=keyword">docs.pytest.test/docs/3.12/</a> <span class="tp-count">3</span></li>') in text
    assert ('<li><a href="/search?search=asyncio+library+after%3A2024+before%3A2025&amp;per_page=4&amp;mode=keyword">'
            '2024</a> <span class="tp-count">4</span></li>') in text
    assert ('<p class="tp-more"><a href="/search?search=asyncio+library+site%3Adocs.pytest.test&amp;per_page=4'
            '&amp;mode=keyword">More from docs.pytest.test</a></p>') in text
    assert text.count('class="tp-more"') == 1
    assert '<a href="/search?search=asyncio+library&amp;per_page=4&amp;mode=keyword&amp;sort=date">date</a>' in text
    dated = get(ds, "/search?search=asyncio&mode=keyword&sort=date").text
    assert "Order:\n  <strong>date</strong>" not in dated  # the current order is marked, not linked
    assert "<strong>date</strong>" in dated
    titles = [html.unescape(t.split("</a>")[0].split(">")[-1]) for t in dated.split('<h2 class="tp-title">')[1:]]
    assert titles[:3] == ["What's New In Python 3.12", "Coroutines and Tasks", "asyncio: Asynchronous I/O"]
