""""More like this" over shards served by textpile: a page held by a served shard, or by a
local one, finds its neighbours on every shard as one index does, through the shard
endpoint (``op=page``, ``op=like``) and through the search page's ``like=``; a missing
page is named; the served shard killed gives partial answers."""

from __future__ import annotations

import asyncio
import signal

import httpx
import pytest

from search.builder import SHARD_HOSTS, like_on_one_index, sharded_sites
from web.test_shards_served import _serve


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The three shards of :func:`sharded_sites` with vectors, the second served by a
    ``textpile serve``, and one index of the same pages."""
    from textpile.semantic.embed import embed_summary
    from textpile.semantic.model import load_embedder

    one, paths = sharded_sites(tmp_path_factory.mktemp("like_served"))
    embedder = load_embedder()
    for path in (one, *paths):
        embed_summary(path, embedder)
    shard, shard_url = _serve("-s", str(paths[1]))
    yield shard, shard_url, one, paths
    if shard.poll() is None:
        shard.terminate()
        shard.wait(60)


def test_like_over_a_served_shard_ranks_as_one_index(served):
    from datasette.app import Datasette

    from textpile.search.fanout import ShardedSearch
    from textpile.search.service import ModeError
    from textpile.search.shards import LocalShard, RemoteShard

    shard, shard_url, one, paths = served
    ds = Datasette(files=[], immutables=[str(paths[0]), str(paths[2])],
                   metadata={"plugins": {"textpile": {"shards": [shard_url], "search_time_limit_ms": 60_000}}})
    asyncio.run(ds.invoke_startup())
    with ShardedSearch([LocalShard.open(paths[0]), RemoteShard(shard_url), LocalShard.open(paths[2])]) as router:
        for url in (f"https://{SHARD_HOSTS[1]}/doc/4.html", f"https://{SHARD_HOSTS[0]}/ref/3.html"):
            expected = like_on_one_index(one, url, per_page=60)
            got = router.more_like_this(url, per_page=60, budget_ms=60_000)
            assert not got.partial and got.total == expected.total == 59 and got.query == expected.query
            assert [r.url for r in got.results] == [r.url for r in expected.results], url
            assert [round(r.score, 6) for r in got.results] == [round(r.score, 6) for r in expected.results], url
            page = asyncio.run(ds.client.get("/search", params={"like": url, "format": "json", "per_page": "60"}))
            doc = page.json()
            assert page.status_code == 200 and doc["mode"] == "semantic" and doc["partial"] is False
            assert [item["url"] for item in doc["list"]] == [r.url for r in expected.results], url
        with pytest.raises(ModeError, match="no searchable page of the shards"):
            router.more_like_this(f"https://{SHARD_HOSTS[1]}/doc/404.html", budget_ms=60_000)
    missing = asyncio.run(ds.client.get("/search", params={"like": "https://nowhere.example/", "format": "json"}))
    assert missing.status_code == 400
    assert missing.json()["message"] == ("'https://nowhere.example/': no searchable page of the shards has that "
                                         "URL or entity generation UUID")
    bad = httpx.get(shard_url + "/-/textpile/shard", params={"op": "like", "page": '{"held": true}'}, timeout=60)
    assert bad.status_code == 400 and bad.json()["error"].startswith("page: expected the answer of op=page")
    # the served shard killed: the pages of the others, flagged partial
    shard.send_signal(signal.SIGKILL)
    shard.wait(60)
    url = f"https://{SHARD_HOSTS[0]}/ref/3.html"
    page = asyncio.run(ds.client.get("/search", params={"like": url, "format": "json", "per_page": "60"}))
    doc = page.json()
    assert page.status_code == 200 and doc["partial"] is True and doc["missing_shards"] == [shard_url]
    assert [item["url"] for item in doc["list"]] == [r.url for r in like_on_one_index(one, url, per_page=60).results
                                                     if SHARD_HOSTS[1] not in r.url]
