"""A shard keeps the statistics that depend only on its content between searches
(textpile.search.shard_memo), and counts them again once its content changed."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from search.builder import sharded_sites, word_site
from textpile.index.update import update_index
from textpile.publish import publish
from textpile.search.shard_memo import ShardMemo
from textpile.search.shards import LocalShard, query_stats
from textpile.web.app import build_datasette
from web.client import get

QUERY = "vacuum index"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return sharded_sites(tmp_path_factory.mktemp("memo"))


def _traced_stats(shard: LocalShard, tier_pages: int) -> tuple[object, list[str]]:
    """``shard.stats`` of QUERY on the shard's one pooled connection, with the statements it ran."""
    statements: list[str] = []
    with shard._connect() as conn:
        conn.set_trace_callback(statements.append)
    try:
        return shard.stats(QUERY, None, None, tier_pages), statements
    finally:
        with shard._connect() as conn:
            conn.set_trace_callback(None)


def _tiered_copy(path, tmp_path):
    copy = tmp_path / "shard.db"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as conn:
        update_index(conn, rebuild=True, top_tier_pages=8)
    conn.close()
    return copy


def test_a_shard_counts_its_content_statistics_once(corpus, tmp_path):
    copy = _tiered_copy(corpus[1][0], tmp_path)
    shard = LocalShard.open(copy)
    try:
        first, counted = _traced_stats(shard, tier_pages=5)
        again, kept = _traced_stats(shard, tier_pages=5)
        with sqlite3.connect(copy) as conn:
            assert first == again == query_stats(conn, QUERY, None, 5)  # the same as counted without a memo
        conn.close()
        assert first.tier.pages == 5 and first.tier.phrases['"vacuum"'] > 0
        assert first.tier_last > 0 and first.tier.tokens < first.tokens
        for statements in (counted, kept):  # (the trace is of the pooled connection: a search uses it)
            assert any("FROM search_term" in s for s in statements)  # each term's pages: read for every query
        # the second search reads no row sizes, no tier end and no phrase count again
        assert [s for s in counted if "_docsize" in s or "OFFSET" in s]
        assert [s for s in kept if "_docsize" in s or "OFFSET" in s or "count(*)" in s] == []
        # another tier share is counted, then kept too
        other, counted = _traced_stats(shard, tier_pages=3)
        assert other.tier.pages == 3 and [s for s in counted if "OFFSET" in s]
    finally:
        shard.close()


def test_a_shard_counts_again_once_its_content_changed(corpus, tmp_path):
    copy = _tiered_copy(corpus[1][0], tmp_path)
    shard = LocalShard.open(copy)
    try:
        before = shard.stats(QUERY, None, None, 5)
        memo = shard._watch.memo()
        with sqlite3.connect(copy) as conn:  # the page first in prior order leaves the index
            conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = 1 WHERE entity_generation_id = "
                         "(SELECT entity_generation_id FROM search_page ORDER BY docid LIMIT 1)")
            conn.commit()
            update_index(conn, top_tier_pages=8)
            expected = query_stats(conn, QUERY, None, 5)
        conn.close()
        after = shard.stats(QUERY, None, None, 5)
        assert shard._watch.memo() is not memo
        assert after == expected and after.pages == before.pages - 1
        assert after.tier_last != before.tier_last and after.tier.tokens != before.tier.tokens
    finally:
        shard.close()


def test_phrase_counts_kept_are_bounded_least_recent_first(corpus):
    memo = ShardMemo(max_phrases=2)
    statements: list[str] = []
    a, b, c = '"vacuum index"', '"index table"', '"query planner"'
    with sqlite3.connect(corpus[1][0]) as conn:
        expected = {p: conn.execute("SELECT count(*) FROM search_index WHERE search_index MATCH ?", [p]).fetchone()[0]
                    for p in (a, b, c)}
        conn.set_trace_callback(statements.append)

        def counted(phrases: list[str]) -> list[str]:
            statements.clear()
            assert memo.phrase_documents(conn, phrases) == {p: expected[p] for p in phrases}
            return sorted(p for s in statements if s.startswith("SELECT count(*)") for p in (a, b, c) if p in s)

        assert counted([a, b]) == sorted([a, b])
        assert counted([a]) == []  # kept, and now the most recent
        assert counted([c]) == [c]  # b, the least recent, is dropped
        assert counted([a, c]) == []
        assert counted([b]) == [b]
    conn.close()
    with pytest.raises(ValueError, match="max_phrases"):
        ShardMemo(max_phrases=-1)


def test_a_served_shard_counts_again_after_a_publish_in_place(tmp_path):
    for n, word in ((3, "alpha"), (5, "beta")):
        word_site(tmp_path / f"{word}.db", n, word)
    work, served = tmp_path / "summary.db", tmp_path / "published" / "summary.db"
    shutil.copy(tmp_path / "alpha.db", work)
    assert publish(work, served).whole
    ds = build_datasette(served)
    path = "/-/textpile/shard?op=stats&search=alpha&tier_pages=2"
    first = get(ds, path).json()
    assert (first["pages"], first["phrases"]['"alpha"'], first["tier"]["pages"], first["tier"]["phrases"]['"alpha"']) \
        == (3, 3, 2, 2)
    assert get(ds, path).json() == first
    shutil.copy(tmp_path / "beta.db", work)
    assert not publish(work, served).whole  # written in place
    second = get(ds, path).json()
    assert second["tier_last"] == first["tier_last"]  # the same tier end: only new counts tell the new content
    assert (second["pages"], second["phrases"]['"alpha"'], second["tier"]["pages"],
            second["tier"]["phrases"]['"alpha"']) == (5, 0, 2, 0)


def test_values_kept_are_bounded_least_recent_first(monkeypatch):
    """A served shard is asked for any tier share: what is kept per share stays bounded."""
    import textpile.search.shard_memo as shard_memo

    monkeypatch.setattr(shard_memo, "MAX_KEPT", 3)
    memo, computed = ShardMemo(), []

    def value(n):
        return memo.kept(("tier_last", n), lambda: computed.append(n) or n * 10)

    assert [value(n) for n in (1, 2, 3, 1, 4)] == [10, 20, 30, 10, 40]  # 2, the least recent, dropped for 4
    assert computed == [1, 2, 3, 4]
    assert [value(n) for n in (1, 3, 4, 2)] == [10, 30, 40, 20] and computed == [1, 2, 3, 4, 2]
