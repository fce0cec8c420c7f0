"""Typo tolerance at match time (issue 32): close words of the index's vocabulary, below
exact matches, marked in snippets; identifiers and quoted phrases exact."""

import json
import sqlite3

import pytest

from search.builder import SummaryBuilder
from textpile.search.service import search_pages
from textpile.search.typos import allowed_edits, close_words
from textpile.web.app import build_datasette
from web.client import get

TYPO, ORANGE, LEMON = "https://jam.test/typo", "https://jam.test/orange", "https://jam.test/lemon"


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = tmp_path_factory.mktemp("typos") / "summary.db"
    b = SummaryBuilder(path)
    b.add_page(TYPO, title="Grandma's recipes", text="Her marmelade recipe: oranges, sugar, water.", lang="en")
    b.add_page(ORANGE, title="Orange marmalade", text="Seville oranges make the best marmalade.", lang="en")
    b.add_page(LEMON, title="Lemon curd", text="Lemon curd and lemon marmalade for tea. See pg_restore.", lang="en")
    b.add_page("https://jam.test/bread", title="Bread", text="Bread with butter and pg_dump.", lang="en")
    b.build_fts()
    b.close()
    return path


@pytest.fixture(scope="module")
def conn(path):
    with sqlite3.connect(path) as c:
        yield c


def found(conn, query, **options):
    out = search_pages(conn, query, mode="keyword", **options)
    return [(r.url, r.snippet_html) for r in out.results], out.message


def test_a_one_typo_word_finds_its_pages_below_the_exact_match(conn):
    results, message = found(conn, "marmelade")
    assert results == [(TYPO, "Her <mark>marmelade</mark> recipe: oranges, sugar, water."),
                       (ORANGE, "Seville oranges make the best <mark>marmalade</mark>."),
                       (LEMON, "Lemon curd and lemon <mark>marmalade</mark> for tea. See pg_restore.")]
    assert message == "Pages holding close words follow (“marmelade”: marmalade)."
    # a word no page holds: its close word's pages
    results, _ = found(conn, "oranjes")
    assert [url for url, _ in results] == [ORANGE, TYPO]
    # the correct word needs no tolerance; typos=False turns it off
    assert found(conn, "marmalade")[0][0][0] == ORANGE and found(conn, "marmalade")[1] is None
    assert [url for url, _ in found(conn, "marmelade", typos=False)[0]] == [TYPO]


def test_phrases_identifiers_and_short_words_are_exact(conn):
    assert [url for url, _ in found(conn, '"marmelade"')[0]] == [TYPO]
    assert close_words(conn, "pg_dumb") == [] and close_words(conn, "pgdumb") == []
    assert close_words(conn, "breda") == ["bread"]
    assert close_words(conn, "lemn") == []  # under 5 letters: exact
    assert close_words(conn, "curds") == ["curd"]
    assert allowed_edits("bread") == 1 and allowed_edits("curd") == 0 and allowed_edits("marmalades") == 2
    assert close_words(conn, "getMarmalade") == []


def test_typos_through_the_json_api_and_page(path):
    ds = build_datasette(path)
    body = json.loads(get(ds, "/search?format=json&mode=keyword&search=marmelade").text)
    assert [r["url"] for r in body["list"]] == [TYPO, ORANGE, LEMON]
    assert body["list"][1]["snippet"] == "Seville oranges make the best <mark>marmalade</mark>."
    page = get(ds, "/search?mode=keyword&search=marmelade").text
    assert '<p class="tp-snippet">Seville oranges make the best <mark>marmalade</mark>.</p>' in page
    assert "Pages holding close words follow (“marmelade”: marmalade)." in page
