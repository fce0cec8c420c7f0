"""Ranking rules (issue 32): boosts and demotions by URL in the seed's criteria language,
through the search service, the JSON API and ``textpile serve --ranking-rules``."""

import asyncio
import json
import sqlite3

import pytest
from datasette.app import Datasette
from datasette.utils import StartupError

from search.versions_site import BLOG, DOCS, FORUM, versions_site
from textpile.cli.setting_files import read_ranking_rules
from textpile.errors import ConfigError
from textpile.search.service import search_pages
from textpile.web.app import build_datasette
from textpile.web.settings import compile_ranking_rules
from web.client import get

BOOST_DOCS_312 = {"if": {"url": {"path": {"has_prefix": "/docs/3.12/"}}}, "boost": 1.5}
DEMOTE_BLOG = {"if": {"url": {"host": {"equals": "blog.pytest.test"}}}, "boost": -3}


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = tmp_path_factory.mktemp("boosts") / "summary.db"
    versions_site(path)
    return path


def urls(conn, query, rules=()):
    return [r.url for r in search_pages(conn, query, mode="keyword", rules=rules).results]


def test_a_boost_and_a_demotion_move_pages(path):
    conn = sqlite3.connect(path)
    assert urls(conn, "asyncio") == [
        f"{BLOG}/2022/asyncio-einfuehrung", f"{FORUM}/t/asyncio-question", f"{BLOG}/2024/asyncio-tips",
        f"{DOCS}/docs/3.11/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio.html",
        f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
        f"{DOCS}/docs/3.12/whatsnew/3.12.html"]
    rules = compile_ranking_rules([BOOST_DOCS_312, DEMOTE_BLOG])
    assert urls(conn, "asyncio", rules) == [
        f"{DOCS}/docs/3.12/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
        f"{DOCS}/docs/3.12/whatsnew/3.12.html", f"{FORUM}/t/asyncio-question",
        f"{DOCS}/docs/3.11/library/asyncio.html", f"{DOCS}/docs/3.11/library/asyncio-task.html",
        f"{BLOG}/2022/asyncio-einfuehrung", f"{BLOG}/2024/asyncio-tips"]
    explained = search_pages(conn, "asyncio", mode="keyword", rules=rules, explain=True).explained
    assert {e["url"]: e["features"].get("ranking_rules") for e in explained}[f"{BLOG}/2024/asyncio-tips"] == -3.0
    # no rules: nothing changes
    assert urls(conn, "asyncio", compile_ranking_rules([])) == urls(conn, "asyncio")


def test_rules_through_the_json_api(path):
    ds = build_datasette(path, ranking_rules=[BOOST_DOCS_312, DEMOTE_BLOG])
    body = json.loads(get(ds, "/search?format=json&mode=keyword&search=asyncio").text)
    assert [r["url"] for r in body["list"]][:4] == [
        f"{DOCS}/docs/3.12/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
        f"{DOCS}/docs/3.12/whatsnew/3.12.html", f"{FORUM}/t/asyncio-question"]
    # grouping (2 per site) holds on top of the rules
    body = json.loads(get(ds, "/search?format=json&mode=keyword&search=asyncio&results_per_site=2").text)
    assert [r["url"] for r in body["list"]][:4] == [
        f"{DOCS}/docs/3.12/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
        f"{FORUM}/t/asyncio-question", f"{BLOG}/2022/asyncio-einfuehrung"]


def test_the_rules_file_of_serve(tmp_path, path):
    good = tmp_path / "rules.toml"
    good.write_text('[[ranking_rules]]\nif.url.path.has_prefix = "/docs/3.12/"\nboost = 1.5\n')
    assert read_ranking_rules(good) == [BOOST_DOCS_312]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[ranking_rules]]\nif.url.path.has_prefx = "/docs/"\nboost = 1\n')
    with pytest.raises(ConfigError, match=r"bad.toml: ranking_rules\[0\]\.if\.url\.path"):
        read_ranking_rules(bad)
    bad.write_text('[[ranking_rules]]\nif.url.path.has_prefix = "/docs/"\nboost = "high"\n')
    with pytest.raises(ConfigError, match=r"ranking_rules\[0\]\.boost: expected a number from -1000 to 1000, got 'high'"):
        read_ranking_rules(bad)
    bad.write_text('[[ranking_rule]]\nboost = 1\n')
    with pytest.raises(ConfigError, match="unknown key 'ranking_rule'"):
        read_ranking_rules(bad)


def test_a_bad_rule_stops_datasette(path):
    ds = Datasette(files=[], immutables=[str(path)],
                   metadata={"plugins": {"textpile": {"ranking_rules": [{"if": "always", "boost": True}]}}})
    with pytest.raises(StartupError, match=r"plugins.textpile.ranking_rules\[0\].boost: expected a number"):
        asyncio.run(ds.invoke_startup())
