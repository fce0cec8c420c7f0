"""A shard keeps the statistics that depend only on its content between searches
(textpile.search.shard_memo), and counts them again once its content changed."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_a_value_being_computed_is_waited_for_not_computed_again():
    """The first searches after a shard opens arrive together: one computes a value, the
    others wait for it (and compute it themselves when that failed)."""
    import threading

    for fails in (False, True):
        memo, entered, gate, computed, got = ShardMemo(), threading.Event(), threading.Event(), [], {}

        def first():
            entered.set()
            gate.wait()
            computed.append("first")
            if fails:
                raise RuntimeError("interrupted")
            return 1

        def second():
            computed.append("second")
            return 2

        def ask(name, compute):
            try:
                got[name] = memo.kept(("rows_up_to", "search_index", 7), compute)
            except RuntimeError as exc:
                got[name] = str(exc)

        a = threading.Thread(target=ask, args=("a", first), daemon=True)
        a.start()
        entered.wait()  # a is computing
        b = threading.Thread(target=ask, args=("b", second), daemon=True)
        b.start()
        b.join(0.5)
        try:
            assert b.is_alive() and computed == []  # b waits for a's value
        finally:
            gate.set()
        a.join()
        b.join()
        if fails:
            assert computed == ["first", "second"] and got == {"a": "interrupted", "b": 2}
        else:
            assert computed == ["first"] and got == {"a": 1, "b": 1}
        assert memo._computing == {}


def _sqlite_varint(value: int) -> bytes:
    """SQLite's varint (sqlite3PutVarint) of ``value``: big-endian groups of 7 bits, the
    ninth byte (values of 57 bits or more) with 8."""
    if value >= 1 << 56:
        low = value & 0xFF
        value >>= 8
        return bytes(0x80 | ((value >> (7 * n)) & 0x7F) for n in range(7, -1, -1)) + bytes([low])
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 300), st.integers(0, (1 << 64) - 1)), max_size=40))
def test_varints_are_summed_as_decoded_one_by_one(values):
    from textpile.search.global_bm25 import varint_sum, varints

    data = b"".join(_sqlite_varint(v) for v in values)
    assert varints(data) == values
    assert varint_sum(data) == sum(values)


def test_many_long_varints_are_summed_without_overflow():
    from textpile.search.global_bm25 import varint_sum, varints

    data = (b"\xff" * 7 + b"\x7f") * 200  # 200 varints of 2**56 - 1 (a damaged row size): above 64 bits summed
    assert varint_sum(data) == sum(varints(data)) == 200 * (2**56 - 1)


def test_a_value_asked_for_while_computing_it_is_an_error_not_a_wait():
    memo = ShardMemo()
    with pytest.raises(RuntimeError, match="asked for while computing it"):
        memo.kept(("k",), lambda: memo.kept(("k",), lambda: 1))
    assert memo.kept(("k",), lambda: 2) == 2 and memo._computing == {}


def test_a_tier_s_rows_and_tokens_are_its_row_sizes_summed(corpus, tmp_path):
    from textpile.search.global_bm25 import rows_up_to, varints

    with sqlite3.connect(_tiered_copy(corpus[1][0], tmp_path)) as conn:
        for table in ("search_index",):  # (the sections table's row sizes are read by the same statements)
            sizes = conn.execute(f"SELECT id, sz FROM {table}_docsize ORDER BY id").fetchall()
            assert len(sizes) == 20
            for last in (0, sizes[0][0], sizes[len(sizes) // 3][0], sizes[-2][0], sizes[-1][0], 1 << 62):
                kept = [sum(varints(sz)) for docid, sz in sizes if docid <= last]
                assert rows_up_to(conn, last, table) == (len(kept), sum(kept))
    conn.close()


def test_a_shard_s_rounds_after_the_statistics_use_its_kept_counts_too(corpus, tmp_path):
    """The cut and search rounds score with every shard's statistics (GlobalBm25), which
    needs the shard's own totals and phrase counts: the ones the statistics round kept."""
    from textpile.search.fanout import ShardedSearch

    shards = [LocalShard.open(_tiered_copy(path, tmp_path / str(n))) for n, path in enumerate(corpus[1])
              if (tmp_path / str(n)).mkdir() is None]
    try:
        router = ShardedSearch(shards)
        first = router.search(QUERY, mode="keyword")
        statements: list[str] = []
        for shard in shards:
            with shard._connect() as conn:
                conn.set_trace_callback(statements.append)
        again = router.search(QUERY, mode="keyword")
        assert [r.url for r in again.results] == [r.url for r in first.results] and first.total > 0
        assert [s for s in statements if "_data WHERE id = 1" in s or s.startswith("SELECT count(*)")] == []
        assert any("-bm25(" in s for s in statements)  # (the rounds ran: scored with FTS5 per phrase)
    finally:
        for shard in shards:
            with shard._connect() as conn:
                conn.set_trace_callback(None)
            shard.close()


def test_a_handed_value_is_taken_once_and_the_oldest_dropped_first(monkeypatch):
    monkeypatch.setattr("textpile.search.shard_memo.MAX_HANDED", 2)
    memo = ShardMemo()
    memo.hand(("pages", '"a"', 300), [1, 2])
    assert memo.take(("pages", '"a"', 300)) == [1, 2]
    assert memo.take(("pages", '"a"', 300)) is None  # a later search of the same words scans again
    for n in range(3):
        memo.hand(("pages", f'"{n}"', 300), [n])
    assert [memo.take(("pages", f'"{n}"', 300)) for n in range(3)] == [None, [1], [2]]


def _rounds_traced(shards: list[LocalShard], router, query: str):
    """``router.search(query)`` with the statements each shard's search round ran."""
    rounds: dict[str, list[str]] = {}
    searches = {}
    for shard in shards:
        searches[shard.name] = shard.search

        def search(*args, _shard=shard, **kwargs):
            with _shard._connect() as conn:  # the shard's one pooled connection
                statements: list[str] = []
                conn.set_trace_callback(statements.append)
            try:
                return searches[_shard.name](*args, **kwargs)
            finally:
                conn.set_trace_callback(None)
                rounds[_shard.name] = statements

        shard.search = search
    try:
        return router.search(query, mode="keyword", per_page=20), rounds
    finally:
        for shard in shards:
            shard.search = searches[shard.name]


@pytest.fixture(scope="module")
def heron_shards(tmp_path_factory):
    """Three shards (a, b, c.example) of 20 pages with three sections each, every
    shard with a first tier of 8 pages."""
    from search.fixture_site import html_page, summarized_site

    filler = "Other words fill this paragraph so that the section is of an ordinary length. "
    paths = []
    for h, host in enumerate("abc"):
        folder = tmp_path_factory.mktemp(f"heron-{host}")
        site = {}
        for i in range(20):
            links = "".join(f'<a href="https://{host}.example/p{j}">page {j}</a> ' for j in range(i))
            sections = "".join(f'<h2 id="s{k}">Heron {"nest" if (i + k + h) % 3 else "flight"} {k}</h2>'
                               f"<p>The heron {'nests' if k % 2 else 'flies'} here. "
                               f"{filler * (1 + (i + k) % 3)}</p>" for k in range(3))
            site[f"https://{host}.example/p{i}"] = html_page(f"Page {i}", f"<h1>Page {i}</h1><p>{links}</p>{sections}")
        summarized_site(folder, site).close()
        with sqlite3.connect(folder / "summary.db") as conn:
            update_index(conn, rebuild=True, top_tier_pages=8)
        conn.close()
        paths.append(folder / "summary.db")
    return paths


def _page_scan(statement: str) -> bool:
    """Whether ``statement`` scans the pages of search_index (or its first tier) in prior order."""
    return statement.startswith("SELECT rowid FROM search_index") and " AND rowid > " in statement


@pytest.mark.parametrize("score_postings", [30_000, 1], ids=["rescored", "unscored by every shard"])
def test_the_search_round_takes_the_scans_of_the_cut_round(heron_shards, score_postings, monkeypatch):
    """The cut round's first matches (pages, sections with their scores: over every
    shard, or unscored when bm25 would read too many postings) are handed on to the
    search round of the same search, which scans and scores those sections no more; the
    answer is the one of a search that scans them again."""
    from textpile.search.fanout import ShardedSearch

    monkeypatch.setattr("textpile.search.candidates.SCORE_POSTINGS", score_postings)
    monkeypatch.setattr("textpile.search.global_bm25.SCORE_POSTINGS", score_postings)
    shards = [LocalShard.open(path) for path in heron_shards]
    try:
        router = ShardedSearch(shards)
        handed, rounds = _rounds_traced(shards, router, "heron flight")
        monkeypatch.setattr("textpile.search.shard_memo.MAX_HANDED", 0)  # nothing held: every round scans
        scanned, scanning_rounds = _rounds_traced(shards, router, "heron flight")
        assert handed.total == scanned.total == 60 and not handed.partial
        assert [(r.url, r.score, r.snippet_html) for r in handed.results] == \
            [(r.url, r.score, r.snippet_html) for r in scanned.results]
        assert sum("#s" in r.url for r in handed.results) >= 10  # results linking to their sections
        assert len(rounds) == len(shards)
        for name, statements in rounds.items():
            assert [s for s in statements if "section_search_index MATCH" in s] == []
            # without the hand-off the same round scans them
            assert [s for s in scanning_rounds[name] if "section_search_index MATCH" in s]
            if score_postings > 1:  # pages rescored: their scan handed on too
                assert [s for s in statements if _page_scan(s)] == []
                assert [s for s in scanning_rounds[name] if _page_scan(s)]
    finally:
        for shard in shards:
            shard.close()
