"""Query analytics (issue 32): per-day counts of queries and zero-result queries,
normalized, with no visitor data, in a database beside the index; the Datasette table,
the report page, and one setting to turn it off. The summary database is never written."""

import datetime as dt
import hashlib
import json
import shutil
import sqlite3

import pytest

from textpile.cli import build_parser
from textpile.web.analytics import QueryCounter, analytics_path, normalize, report
from textpile.web.app import build_datasette
from web.client import get


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def served(summary_path, tmp_path):
    path = tmp_path / "summary.db"
    shutil.copy(summary_path, path)
    return path


def test_counts_after_searches_with_no_visitor_data(served):
    before = _digest(served)
    ds = build_datasette(served)
    for q in ("cats", "  CATS ", "cats&page=1", "zebrafinch", "marmalade&format=json", "Zebrafinch", "cats"):
        assert get(ds, "/search?search=" + q).status_code == 200
    get(ds, "/search?like=https%3A%2F%2Fdocs.example.org%2Ffts5.html")  # more like this: no query typed
    counts = analytics_path(served)
    assert counts.name == "summary-analytics.db"
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    rows = sqlite3.connect(counts).execute("SELECT day, query, searches, zero_results FROM query_day "
                                           "ORDER BY query").fetchall()
    # the second result page of "cats" is not counted again; case and spaces are folded
    assert rows == [(today, "cats", 3, 0), (today, "marmalade", 1, 0), (today, "zebrafinch", 2, 2)]
    columns = [r[1] for r in sqlite3.connect(counts).execute("PRAGMA table_info(query_day)")]
    assert columns == ["day", "query", "searches", "zero_results"]
    data = b"".join(p.read_bytes() for p in served.parent.glob("summary-analytics.db*"))
    assert b"127.0.0.1" not in data and b"testclient" not in data and b"python-httpx" not in data
    assert _digest(served) == before  # the index is never written
    # the Datasette table and the report page
    table = json.loads(get(ds, "/analytics/query_day.json?_shape=array&_sort=query").text)
    assert [(r["query"], r["searches"], r["zero_results"]) for r in table] == [
        ("cats", 3, 0), ("marmalade", 1, 0), ("zebrafinch", 2, 2)]
    body = json.loads(get(ds, "/analytics?format=json").text)
    assert body == {"days": [{"day": today, "searches": 6, "zero_results": 2}],
                    "top": [{"query": "cats", "searches": 3}, {"query": "zebrafinch", "searches": 2},
                            {"query": "marmalade", "searches": 1}],
                    "zero": [{"query": "zebrafinch", "searches": 2}]}
    page = get(ds, "/analytics").text
    assert f"<tr><td>{today}</td><td>6</td><td>2</td></tr>" in page
    assert "<tr><td>zebrafinch</td><td>2</td></tr>" in page


def test_one_setting_turns_it_off(served):
    ds = build_datasette(served, query_analytics=False)
    assert get(ds, "/search?search=cats").status_code == 200
    assert not analytics_path(served).exists()
    assert get(ds, "/analytics").status_code == 404
    assert build_parser().parse_args(["serve", "--no-query-analytics"]).query_analytics is False
    assert build_parser().parse_args(["serve"]).query_analytics is True


def test_counter_and_report(tmp_path):
    counter = QueryCounter(tmp_path / "a.db")
    for day, query, found in ((dt.date(2026, 1, 1), "Foo  Bar", 3), (dt.date(2026, 1, 1), "foo bar", 0),
                              (dt.date(2026, 1, 2), "x" * 300, 1), (dt.date(2026, 1, 2), "   ", 0)):
        counter.count(query, found, day)
    counter.close()
    assert normalize("  Straße\tNow ") == "strasse now"
    assert report(tmp_path / "a.db", dt.date(2026, 1, 2)) == {
        "days": [{"day": "2026-01-02", "searches": 1, "zero_results": 0},
                 {"day": "2026-01-01", "searches": 2, "zero_results": 1}],
        "top": [{"query": "foo bar", "searches": 2}, {"query": "x" * 200, "searches": 1}],
        "zero": [{"query": "foo bar", "searches": 1}]}
    # a file that cannot be written stops the counting, logged, without failing the search
    blocked = QueryCounter(tmp_path / "missing" / "a.db")
    blocked.count("cats", 1)
    assert blocked.failed
