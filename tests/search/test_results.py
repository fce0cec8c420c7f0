"""Paging of search results: whole numbers taken into range, anything else refused by name."""

import sqlite3

import pytest

from search.builder import sample_site
from textpile.search.results import DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE, PagingError, result_page, results_per_page
from textpile.search.service import search_pages


@pytest.mark.parametrize(("value", "page", "per_page"), [
    (None, 0, DEFAULT_PER_PAGE),
    ("", 0, DEFAULT_PER_PAGE),
    ("  ", 0, DEFAULT_PER_PAGE),
    ("7", 7, 7),
    (" +7 ", 7, 7),
    ("007", 7, 7),
    (7, 7, 7),
    ("-1", 0, 1),
    (0, 0, 1),
    ("1" * 100, MAX_PAGE, MAX_PER_PAGE),
    (10**30, MAX_PAGE, MAX_PER_PAGE),
])
def test_whole_numbers_are_taken_into_range(value, page, per_page):
    assert (result_page(value), results_per_page(value)) == (page, per_page)


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3", "٣", "1" * 101, "0x10", "1_000", 1.5, True, b"1"])
def test_anything_else_is_refused_naming_the_parameter(value):
    with pytest.raises(PagingError) as page_error:
        result_page(value)
    assert str(page_error.value) == f"page: expected a whole number, got {value!r}"
    with pytest.raises(PagingError) as size_error:
        results_per_page(value)
    assert str(size_error.value) == f"per_page: expected a whole number, got {value!r}"


def test_a_search_refuses_bad_paging_instead_of_showing_the_first_page(tmp_path):
    path = tmp_path / "summary.db"
    sample_site(path)
    conn = sqlite3.connect(path)
    assert [r.url for r in search_pages(conn, "sqlite", mode="keyword", page="1", per_page="1").results] == [
        "https://docs.example.org/json1.html"]
    with pytest.raises(PagingError, match=r"^page: expected a whole number, got 'x'$"):
        search_pages(conn, "sqlite", mode="keyword", page="x")
    with pytest.raises(PagingError, match=r"^per_page: expected a whole number, got 'all'$"):
        search_pages(conn, "sqlite", per_page="all")
