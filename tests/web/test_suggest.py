"""Search as you type: ``/suggest?q=`` (issue 32) and the script the page loads for it."""

import json
import re

import pytest

from search.fixture_site import html_page, summarized_site
from search.versions_site import BLOG, DOCS, FORUM, versions_site
from textpile.search.suggest import suggest
from textpile.web.app import build_datasette
from web.client import get


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    path = tmp_path_factory.mktemp("suggest") / "summary.db"
    versions_site(path)
    return build_datasette(path)


def test_a_prefix_suggests_titles_in_prior_order(ds):
    r = get(ds, "/suggest?q=asy")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json; charset=utf-8"
    assert json.loads(r.text) == {
        "query": "asy", "completions": ["asyncio", "asynchronous"], "timed_out": False, "sections": [],
        "pages": [{"title": "asyncio: Asynchronous I/O", "url": f"{DOCS}/docs/3.11/library/asyncio.html"},
                  {"title": "asyncio: Asynchronous I/O", "url": f"{DOCS}/docs/3.12/library/asyncio.html"},
                  {"title": "Asyncio tips", "url": f"{BLOG}/2024/asyncio-tips"},
                  {"title": "Asyncio Einführung", "url": f"{BLOG}/2022/asyncio-einfuehrung"},
                  {"title": "A question about asyncio", "url": f"{FORUM}/t/asyncio-question"}]}
    body = json.loads(get(ds, "/suggest?q=coroutines+ta").text)
    assert body["completions"] == ["tasks"]
    assert [p["url"] for p in body["pages"]] == [f"{DOCS}/docs/3.11/library/asyncio-task.html",
                                                f"{DOCS}/docs/3.12/library/asyncio-task.html"]
    # one letter completes nothing; nothing typed, nothing suggested
    assert json.loads(get(ds, "/suggest?q=a").text)["pages"] == []
    assert json.loads(get(ds, "/suggest").text)["pages"] == []
    assert json.loads(get(ds, "/suggest?q=zzzz").text) == {"query": "zzzz", "completions": [], "pages": [],
                                                            "sections": [], "timed_out": False}


def test_sections_are_suggested(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://docs.example/replication.html": html_page(
            "High availability", '<h1>High availability</h1><p>Intro.</p><h2 id="streaming">Streaming replication</h2>'
                                 "<p>Ship the WAL to a standby.</p>"),
        "https://docs.example/backup.html": html_page("Backup", "<p>Dumps.</p>"),
    })
    found = suggest(conn, "streaming repl")
    assert found.completions == ["replication"]
    assert [(s.title, s.page_title, s.url) for s in found.sections] == [
        ("Streaming replication", "High availability", "https://docs.example/replication.html#streaming")]


def test_the_page_loads_the_script_and_works_without_it(ds):
    page = get(ds, "/search?search=asyncio&mode=keyword")
    assert re.search(r'<script (nonce="[^"]+" )?src="/-/textpile/static/suggest.js" defer></script>', page.text)
    assert 'data-suggest-url="/suggest"' in page.text
    # without the script the form is a plain GET form with results rendered by the server
    assert '<form class="tp-form" action="/search" method="get" role="search">' in page.text
    assert page.text.count('<li class="tp-result">') == 8
    script = get(ds, "/-/textpile/static/suggest.js")
    assert script.status_code == 200 and 'input.getAttribute("data-suggest-url")' in script.text


def test_fts_syntax_is_only_words(ds):
    body = json.loads(get(ds, "/suggest?q=%22asy*%20OR%20NEAR(%20%5E").text)
    assert body["pages"] == [] and body["completions"] == []
    body = json.loads(get(ds, "/suggest?q=tasks%20AND%20cor").text)  # AND is the word "and" of the title
    assert [p["title"] for p in body["pages"]] == ["Coroutines and Tasks", "Coroutines and Tasks"]
