"""``textpile serve`` over shards: two local summary databases and one served by another
``textpile serve`` answer one search; SQL exploration shows each local shard; the served
shard stopped (late) or killed (down) gives answers flagged partial within the time
budget, never an error."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from search.builder import SHARD_HOSTS, sharded_sites

BUDGET_MS = 2000


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(*args: str) -> tuple[subprocess.Popen, str]:
    port = _port()
    # (python -m: the Datasette 1.0 test's environment has no textpile script beside its interpreter)
    proc = subprocess.Popen([sys.executable, "-m", "textpile.cli", "serve", *args, "-l", f"127.0.0.1:{port}",
                             "--search-time-limit-ms", str(BUDGET_MS)], stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # a loaded machine starts Datasette slowly
    while True:
        try:
            httpx.get(base + "/robots.txt", timeout=60)
            return proc, base
        except httpx.TransportError:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.2)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    one, paths = sharded_sites(tmp_path_factory.mktemp("served"))
    shard, shard_url = _serve("-s", str(paths[1]))
    router, base = _serve("-s", str(paths[0]), "-s", str(paths[2]), "--shard", shard_url)
    yield shard, shard_url, base, paths
    for proc in (router, shard):
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
            proc.wait(60)


def _search(base: str, query: str) -> tuple[int, dict, float]:
    started = time.monotonic()
    r = httpx.get(base + "/search", params={"search": query, "format": "json", "per_page": "60"}, timeout=60)
    return r.status_code, r.json(), time.monotonic() - started


def test_shards_answer_one_search_and_each_is_explored(servers):
    shard, shard_url, base, paths = servers
    status, doc, _ = _search(base, "vacuum")
    assert status == 200 and doc["partial"] is False and doc["missing_shards"] == []
    assert {item["url"].split("/")[2] for item in doc["list"]} == set(SHARD_HOSTS)
    # SQL exploration: each local summary database is a database of its own
    for path in (paths[0], paths[2]):
        r = httpx.get(f"{base}/{path.stem}.json?sql=select+count(*)+as+n+from+search_page&_shape=array", timeout=60,
                      follow_redirects=True)  # (Datasette 1.0 answers ?sql= on its query page)
        assert r.status_code == 200 and r.json() == [{"n": 20}]
    # the shard endpoint of the served shard: its hosts
    r = httpx.get(shard_url + "/-/textpile/shard", params={"op": "hosts"}, timeout=60)
    assert r.json() == {"hosts": [SHARD_HOSTS[1]]}
    assert httpx.get(shard_url + "/-/textpile/shard", params={"op": "nothing"}, timeout=60).status_code == 400
    # statistics without the close words of typo tolerance (near=0), and a bad near
    stats = [httpx.get(shard_url + "/-/textpile/shard", params={"op": "stats", "search": "checkpoinnt", **near},
                       timeout=60).json() for near in ({}, {"near": "0"})]
    assert stats[0]["terms"] == {"checkpoint": stats[0]["phrases"]['"checkpoint"']} and stats[1]["terms"] == {}
    r = httpx.get(shard_url + "/-/textpile/shard", params={"op": "stats", "search": "x", "near": "yes"}, timeout=60)
    assert r.status_code == 400 and r.json()["error"] == "near: expected 0 or 1, got 'yes'"


SYNONYMS = [["compact", "vacuum"], ["wal", "journal", "checkpoint"]]


def test_a_served_shard_searches_with_the_synonym_groups_sent(servers):
    """A served shard gets the query's synonym groups with each round: three shards, one
    of them served, give one index's pages and scores; the Datasette plugin setting
    ``synonyms`` of a textpile serving several shards is the search's table; a bad
    ``synonyms`` parameter is a 400 naming it."""
    import asyncio

    from datasette.app import Datasette

    from textpile.search.fanout import ShardedSearch
    from textpile.search.service import search_pages
    from textpile.search.shards import LocalShard, RemoteShard
    from textpile.search.synonyms import synonym_table

    shard, shard_url, base, paths = servers
    one = paths[0].parent / "one.db"
    table = synonym_table(SYNONYMS)
    single = LocalShard.open(one)
    ds = Datasette(files=[], immutables=[str(p) for p in paths],
                   metadata={"plugins": {"textpile": {"synonyms": SYNONYMS}}})
    asyncio.run(ds.invoke_startup())
    with ShardedSearch([LocalShard.open(paths[0]), RemoteShard(shard_url), LocalShard.open(paths[2])]) as router:
        for query in ("compact", "wal lock", "compact index"):
            with single._connect() as conn:
                expected = search_pages(conn, query, mode="keyword", per_page=10, budget_ms=60_000, synonyms=table)
            got = router.search(query, mode="keyword", per_page=10, budget_ms=60_000, synonyms=table)
            assert not got.partial and expected.total > 3, query
            assert [r.url for r in got.results] == [r.url for r in expected.results], query
            assert [round(r.score, 9) for r in got.results] == [round(r.score, 9) for r in expected.results], query
            served = asyncio.run(ds.client.get("/search", params={"search": query, "format": "json", "mode": "keyword",
                                                                  "per_page": "10"}))
            assert [item["url"] for item in served.json()["list"]] == [r.url for r in expected.results], query
    single.close()
    r = httpx.get(shard_url + "/-/textpile/shard", params={"op": "stats", "search": "wal", "synonyms": '[["wal"]]'},
                  timeout=60)
    assert r.status_code == 400
    assert r.json()["error"] == "synonyms[0]: expected a list of 2 to 20 words or phrases, got ['wal']"


def test_a_served_shard_makes_the_snippets_of_its_results_shown(servers):
    """The served shard's results shown come with their snippets (asked for after the
    merge, op=render): the same as one index of every shard's pages gives; bad render
    requests are 400s naming the parameter."""
    from textpile.search.service import search_pages
    from textpile.search.shards import LocalShard

    shard, shard_url, base, paths = servers
    one = LocalShard.open(paths[0].parent / "one.db")
    try:
        for query in ("vacuum index", "checkpoint journal lock"):
            status, doc, _ = _search(base, query)
            with one._connect() as conn:
                expected = search_pages(conn, query, mode="keyword", per_page=60, budget_ms=60_000)
            assert status == 200 and not doc["partial"]
            assert [(i["url"], i["snippet"], i["snippet_text"], i["description"]) for i in doc["list"]] == \
                [(r.url, r.snippet_html, r.snippet_text, r.description) for r in expected.results]
            assert any(SHARD_HOSTS[1] in i["url"] and "<mark>" in i["snippet"] for i in doc["list"]), query
    finally:
        one.close()
    # more results than one request carries: asked in several, the same snippets as in process
    from textpile.search.shards import RENDER_PER_REQUEST, RemoteShard

    remote, local = RemoteShard(shard_url), LocalShard.open(paths[1])
    try:
        answer = remote.search("vacuum", remote.stats("vacuum"), "keyword", 60_000)
        sources = [r.snippet_source for r in answer.results] * 4
        assert len(sources) > 2 * RENDER_PER_REQUEST and all(sources)
        made = remote.render(answer.snippet_words, sources)
        assert made == local.render(answer.snippet_words, sources) and all("<mark>" in m.html for m in made)
    finally:
        local.close()
    endpoint = shard_url + "/-/textpile/shard"
    source = {"entity_generation_id": 1, "text_pile_id": 1, "text_pile_v0_2_id": None, "start": None, "end": None}
    r = httpx.get(endpoint, params={"op": "render", "words": '[["vacuum"]]', "sources": json.dumps([source])},
                  timeout=60)
    assert r.status_code == 200 and len(r.json()["snippets"]) == 1
    for params, named in (({"words": "[[1]]", "sources": json.dumps([source])}, "words: "),
                          ({"words": "{", "sources": json.dumps([source])}, "words: "),
                          ({"words": "[]", "sources": "[]"}, "sources: "),
                          ({"words": "[]", "sources": json.dumps([source] * 101)}, "sources: "),
                          ({"words": "[]", "sources": json.dumps([{**source, "start": "x"}])}, "sources: ")):
        r = httpx.get(endpoint, params={"op": "render", **params}, timeout=60)
        assert r.status_code == 400 and r.json()["error"].startswith(named), (params, r.text)


def test_a_served_shard_answers_hostile_numbers_with_400s_naming_them(servers):
    """Numbers SQLite cannot hold, JSON infinities, deep nesting: 400s naming the
    parameter, never a 500; a first tier share above the shard's pages is every page."""
    shard, shard_url, base, paths = servers
    endpoint = shard_url + "/-/textpile/shard"

    def get(**params):
        return httpx.get(endpoint, params=params, timeout=60)

    whole = get(op="stats", search="vacuum").json()
    for share in ("21", "5000", "9" * 18):  # the shard holds 20 pages
        r = get(op="stats", search="vacuum", tier_pages=share)
        assert r.status_code == 200 and r.json()["tier"]["pages"] == 20, share
        assert r.json()["tier"]["phrases"] == whole["phrases"] and r.json()["tier_last"] > 0
    source = {"entity_generation_id": 1, "text_pile_id": 2**63, "text_pile_v0_2_id": None, "start": None, "end": None}
    stats = json.dumps(whole)
    bad = [({"op": "stats", "search": "x", "tier_pages": "9" * 5000}, "tier_pages: "),
           ({"op": "stats", "search": "x", "languages": '{"en": Infinity}'}, "languages: "),
           ({"op": "stats", "search": "x", "languages": '{"en": 1.5}'}, "languages: "),
           ({"op": "render", "words": "[]", "sources": json.dumps([source])}, "sources: "),
           ({"op": "search", "search": "x", "stats": stats.replace('"pages": 20', '"pages": Infinity')}, "stats: "),
           ({"op": "search", "search": "x", "stats": stats.replace('"pages": 20', '"pages": -5')}, "stats: "),
           ({"op": "search", "search": "x", "stats": '{"tier":' * 1500 + "1" + "}" * 1500}, "stats: "),
           ({"op": "search", "search": "x", "budget_ms": "9" * 40, "stats": stats}, "budget_ms: "),
           ({"op": "keys", "search": "x", "page_scan": "9" * 40, "section_scan": "1", "stats": stats}, "page_scan: ")]
    assert '"pages": 20' in stats
    for params, named in bad:
        r = get(**params)
        assert r.status_code == 400 and r.json()["error"].startswith(named), (params, r.text[:300])
    cut = {"last_page": 10**30, "last_section": 0, "cut_pages": True, "section_floor": None, "depth": None,
           "few": None, "level_last": [], "level_section_last": [], "level_section_floor": []}
    r = get(op="search", search="vacuum", stats=json.dumps({**whole, "cut": cut}))
    assert r.status_code == 400 and r.json()["error"].startswith("stats: ")
    # counts that disagree (a phrase on more pages than there are): scored, not a 500
    r = get(op="search", search="vacuum", stats=stats.replace('"pages": 20', '"pages": 1'))
    assert r.status_code == 200 and r.json()["results"]


def test_a_stopped_then_killed_shard_gives_partial_answers_in_time(servers):
    shard, shard_url, base, paths = servers
    shard.send_signal(signal.SIGSTOP)  # late: the kernel accepts, nobody answers
    try:
        late = [_search(base, q) for q in ("vacuum", "index table", "query planner")]
    finally:
        shard.send_signal(signal.SIGCONT)
    shard.kill()
    shard.wait(60)
    down = [_search(base, q) for q in ("vacuum", "index table", "query planner")]
    for status, doc, took in late + down:
        assert status == 200
        assert doc["partial"] is True and doc["missing_shards"] == [shard_url]
        assert doc["list"] and all(SHARD_HOSTS[1] not in item["url"] for item in doc["list"])
        assert "did not answer in time or are down" in doc["message"]
        # within the budget and its grace, on a loaded machine (never the HTTP client's 60 s)
        assert took < BUDGET_MS / 1000 + 8

