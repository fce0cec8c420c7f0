"""The plugin's settings are checked when Datasette starts: a bad value stops it with a
message naming the setting (not a 500 on every search)."""

import asyncio
import json

import pytest
from datasette.app import Datasette
from datasette.utils import StartupError



def _instance(summary_path, settings):
    return Datasette(files=[], immutables=[str(summary_path)], metadata={"plugins": {"textpile": settings}})


@pytest.mark.parametrize("settings, message", [
    ({"search_time_limit_ms": "abc"}, "plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                                      "1000000000, got 'abc'"),
    ({"search_time_limit_ms": None}, "plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                                     "1000000000, got None"),
    ({"search_time_limit_ms": 0}, "plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                                  "1000000000, got 0"),
    ({"search_time_limit_ms": -5}, "plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                                   "1000000000, got -5"),
    ({"search_time_limit_ms": True}, "plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                                     "1000000000, got True"),
    ({"search_time_limt_ms": 50}, "plugins.textpile: unknown setting 'search_time_limt_ms' "
                                  "(known: search_time_limit_ms, synonyms, shards, results_per_site, ranking_rules, "
                                  "extra, query_analytics)"),
    ({"results_per_site": -1}, "plugins.textpile.results_per_site: expected a whole number from 0 to 100, got -1"),
    ({"results_per_site": "2"}, "plugins.textpile.results_per_site: expected a whole number from 0 to 100, got '2'"),
    ({"synonyms": {"k8s": "kubernetes"}}, "plugins.textpile.synonyms: expected a list of groups (lists of words), "
                                          "got {'k8s': 'kubernetes'}"),
    ({"synonyms": [["kitten", "cat"], ["cat"]]}, "plugins.textpile.synonyms[1]: expected a list of 2 to 20 words "
                                                 "or phrases, got ['cat']"),
    ({"synonyms": [["kitten", "cat"], ["Cat", "moggy"]]}, "plugins.textpile.synonyms[1][0]: 'Cat' is already in "
                                                          "group 0"),
    ("fast", "plugins.textpile: expected a table of settings, got 'fast'"),
    ({"shards": "http://a:3000/"}, "plugins.textpile.shards: expected a list of http(s) URLs, got 'http://a:3000/'"),
    ({"shards": ["ftp://a/"]}, "plugins.textpile.shards[0]: expected the http(s) URL of a textpile server, "
                               "got 'ftp://a/'"),
    ({"shards": ["http://a:3000/", "http://"]}, "plugins.textpile.shards[1]: expected the http(s) URL of a textpile "
                                                "server, got 'http://'"),
    ({"shards": ["http://[::1"]}, "plugins.textpile.shards[0]: expected the http(s) URL of a textpile server "
                                  "(Invalid IPv6 URL), got 'http://[::1'"),
    ({"shards": ["http://a b/"]}, "plugins.textpile.shards[0]: expected the http(s) URL of a textpile server "
                                  "(no spaces or control characters), got 'http://a b/'"),
    ({"shards": ["http://a:99999/"]}, "plugins.textpile.shards[0]: expected the http(s) URL of a textpile server "
                                      "(Port out of range 0-65535), got 'http://a:99999/'"),
])
def test_a_bad_setting_stops_datasette_naming_it(summary_path, settings, message):
    with pytest.raises(StartupError) as caught:
        asyncio.run(_instance(summary_path, settings).invoke_startup())
    assert str(caught.value) == message


def test_datasette_serve_prints_a_bad_setting_as_one_line(summary_path, tmp_path):
    """Plain ``datasette serve`` runs the startup hooks outside its handling of
    StartupError: the bad setting is still one line naming it, exit status 1."""
    import subprocess
    import sys
    from pathlib import Path

    metadata = tmp_path / "metadata.json"
    metadata.write_text(json.dumps({"plugins": {"textpile": {"synonyms": [["k8s"], "kubernetes"]}}}))
    datasette = Path(sys.executable).with_name("datasette")
    done = subprocess.run([str(datasette), str(summary_path), "-m", str(metadata), "--get", "/"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "Error: plugins.textpile.synonyms[0]: expected a list of 2 to 20 words or phrases, got ['k8s']\n")


def test_a_good_setting_is_the_search_time_limit(summary_path):
    ds = _instance(summary_path, {"search_time_limit_ms": 250})
    asyncio.run(ds.invoke_startup())
    response = asyncio.run(ds.client.get("/search?q=heron&format=json"))
    assert response.status_code == 200
    assert json.loads(response.text)["query"] == "heron"


def test_the_synonyms_setting_is_the_served_index_table(summary_path):
    ds = _instance(summary_path, {"synonyms": [["moggy", "cats"]]})
    asyncio.run(ds.invoke_startup())
    response = asyncio.run(ds.client.get("/search?q=moggy&format=json"))
    assert response.status_code == 200
    assert [r["url"] for r in json.loads(response.text)["list"]] == [
        "https://blog.example.org/2024/cats", "https://de.example.net/katzen"]
    plain = _instance(summary_path, {})
    asyncio.run(plain.invoke_startup())
    assert json.loads(asyncio.run(plain.client.get("/search?q=moggy&format=json")).text)["total"] == 0


def test_the_synonym_table_is_built_once_for_every_search():
    """The search page reads the setting at every search: the same table, built once (the
    largest allowed takes 25 ms to build)."""
    from textpile.web.settings import search_synonyms

    config = {"synonyms": [[f"w{g}x{m}" for m in range(20)] for g in range(1000)]}
    first = search_synonyms(config)
    assert len(first.groups) == 1000 and search_synonyms({"synonyms": [list(g) for g in config["synonyms"]]}) is first
    assert search_synonyms({"synonyms": [["k8s", "kubernetes"]]}).groups == (("k8s", "kubernetes"),)
