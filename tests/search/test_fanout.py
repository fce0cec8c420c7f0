"""One search over shards (textpile.search.fanout): the same pages in one index and split
by site over three shards answer alike; site: goes to one shard; a shard that is down
gives partial results, never an error."""

from __future__ import annotations

import contextlib
import re
import socket
import sqlite3

import pytest

from search.builder import SHARD_HOSTS as HOSTS, like_on_one_index, sharded_sites
from textpile.search.boosts import RankingRule
from textpile.search.fanout import ShardedSearch
from textpile.search.global_bm25 import GlobalBm25, counted_phrases, phrase_documents, phrases_of, table_totals
from textpile.search.rank import DEFAULT_RANKING
from textpile.search.service import search_pages
from textpile.search.shards import LocalShard, RemoteShard, query_stats

QUERIES = ("vacuum", "index table", "query planner", "checkpoint journal lock", "crawl robots sitemap",
           "shard token", "cache page host", "trigger", "backup replica", "rank score snippet",
           "vacuum index", "schema view", "feed origin")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One index of every page and the same pages split by site into three shards."""
    return sharded_sites(tmp_path_factory.mktemp("fanout"))


def _one(path, query, **options):
    shard = LocalShard.open(path)
    try:
        with shard._connect() as conn:
            return search_pages(conn, query, mode="keyword", budget_ms=60_000, **options)
    finally:
        shard.close()


def test_three_shards_rank_as_one_index(corpus):
    one, paths = corpus
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in QUERIES:
            expected = _one(one, query, per_page=10)
            got = router.search(query, mode="keyword", per_page=10, budget_ms=60_000)
            assert [r.url for r in got.results] == [r.url for r in expected.results], query
            assert [round(r.score, 9) for r in got.results] == [round(r.score, 9) for r in expected.results], query
            assert got.total == expected.total and not got.partial and got.missing_shards == []
        # a second page continues the first
        first = router.search("index table", mode="keyword", per_page=5, budget_ms=60_000)
        second = router.search("index table", mode="keyword", page=1, per_page=5, budget_ms=60_000)
        assert [r.url for r in first.results + second.results] == [r.url for r in _one(one, "index table",
                                                                                        per_page=10).results]


def test_summed_statistics_are_the_one_index_statistics(corpus):
    one, paths = corpus
    from textpile.search.shards import summed_stats

    shards = [LocalShard.open(p) for p in paths]
    single = LocalShard.open(one)
    try:
        with single._connect() as conn:
            whole = query_stats(conn, "checkpoint journal")
        summed = summed_stats([s.stats("checkpoint journal") for s in shards])
        assert summed == whole and whole.pages == 60 and set(whole.terms) == {"checkpoint", "journal"}
    finally:
        for s in (*shards, single):
            s.close()


def test_global_bm25_with_own_statistics_is_fts5_bm25(corpus):
    _, paths = corpus
    conn = sqlite3.connect(paths[1])
    weights = DEFAULT_RANKING.page_columns
    expression = '"vacuum" AND ("index" OR "tabl")'
    rows, tokens = table_totals(conn)
    assert rows == 20 and tokens > 20 * 20
    phrases = phrase_documents(conn, phrases_of(expression))
    marks = ", ".join(repr(float(w)) for w in weights)
    fts5 = conn.execute(f"SELECT rowid, -bm25(search_index, {marks}) FROM search_index WHERE search_index MATCH ? "
                        "ORDER BY rowid", [expression]).fetchall()
    assert len(fts5) > 3
    mine = GlobalBm25(conn, rows, tokens, phrases, weights)([(d, 0.0) for d, _ in fts5], expression)
    assert [d for d, _ in mine] == [d for d, _ in fts5]
    for (_, a), (_, b) in zip(mine, fts5):
        assert a == pytest.approx(b, rel=1e-9)
    conn.close()


def test_a_shard_scores_its_scans_only_with_every_shard_statistics(corpus):
    """The pages and sections a shard scans are scored by GlobalBm25 over every shard:
    the scans themselves run no FTS5 bm25 (its own scores would be thrown away), and the
    search still ranks as one index."""
    one, paths = corpus
    statements: list[str] = []
    shards = [LocalShard.open(p) for p in paths]
    try:
        for shard in shards:  # one pooled connection each, traced
            with shard._connect() as conn:
                conn.set_trace_callback(statements.append)
        with ShardedSearch(shards) as router:
            for query in ("vacuum index", "checkpoint journal lock", "trigger"):
                got = router.search(query, mode="keyword", per_page=10, budget_ms=60_000)
                assert [r.url for r in got.results] == [r.url for r in _one(one, query, per_page=10).results]
    finally:
        for shard in shards:
            shard.close()
    # (the pages' scans: these pages have no sections, whose scans are scored the same way)
    scans = [s for s in statements if re.search(r"FROM search_index(_top)? WHERE .* LIMIT", s)]
    rescored = [s for s in statements if re.search(r"bm25\(search_index, .* BETWEEN", s)]
    assert scans and rescored  # the shards scanned, and scored what they scanned
    assert [s for s in scans if "bm25(" in s] == []


def test_global_bm25_scores_the_scanned_rows_only(corpus):
    """Every other row of a phrase's range scored (a scan's rows among others holding its
    phrases): FTS5's bm25 of each of them, and FTS5 asked to score those rows alone."""
    _, paths = corpus
    conn = sqlite3.connect(paths[1])
    weights = DEFAULT_RANKING.page_columns
    expression = '"vacuum" AND ("index" OR "tabl")'
    rows, tokens = table_totals(conn)
    marks = ", ".join(repr(float(w)) for w in weights)
    fts5 = conn.execute(f"SELECT rowid, -bm25(search_index, {marks}) FROM search_index WHERE search_index MATCH ? "
                        "ORDER BY rowid", [expression]).fetchall()[::2]
    assert len(fts5) >= 3
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    mine = GlobalBm25(conn, rows, tokens, phrase_documents(conn, phrases_of(expression)), weights)(
        [(d, 0.0) for d, _ in fts5], expression)
    conn.set_trace_callback(None)
    assert [d for d, _ in mine] == [d for d, _ in fts5]
    for (_, a), (_, b) in zip(mine, fts5):
        assert a == pytest.approx(b, rel=1e-9)
    reads = [s for s in statements if "-bm25(search_index" in s]
    assert len(reads) == 3 and all(f"+rowid IN ({', '.join(str(d) for d, _ in fts5)})" in s for s in reads)
    conn.close()


def test_counted_phrases_follow_fts5():
    holds = {'"a"', '"b"'}.__contains__
    # an AND group that fails counts none of its phrases; OR keeps the branches that match
    assert counted_phrases('("a" AND "b") OR ("a" AND "c")', holds) == [0, 1]
    assert counted_phrases('"a" AND ("b" OR "c")', holds) == [0, 1]
    assert counted_phrases('("a" AND "c") NOT "b"', holds) == []
    assert counted_phrases('("a" AND "b") NOT "c"', holds) == [0, 1]
    assert counted_phrases('"a" OR "b" AND "c"', holds) == [0]  # AND binds tighter than OR


def test_site_queries_go_to_the_shard_holding_the_site(corpus):
    _, paths = corpus
    asked = []

    class Counting(LocalShard):
        def search(self, *args, **kwargs):
            asked.append(self.name)
            return super().search(*args, **kwargs)

    shards = []
    for p in paths:
        s = LocalShard.open(p)
        s.__class__ = Counting
        shards.append(s)
    with ShardedSearch(shards) as router:
        assert router.route("vacuum site:beta.example.org") == [1]
        assert router.route("vacuum site:example.net") == [2]
        assert router.route("vacuum host:nowhere.example") == []
        assert router.route("vacuum -site:beta.example.org") == [0, 1, 2]
        got = router.search("vacuum site:beta.example.org", mode="keyword", budget_ms=60_000)
        assert asked == [str(paths[1])]
        assert got.results and all(r.url.startswith("https://beta.example.org/") for r in got.results)
        assert not got.partial


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_shard_that_is_down_gives_partial_results(corpus):
    one, paths = corpus
    down = RemoteShard(f"http://127.0.0.1:{_closed_port()}")

    @contextlib.contextmanager
    def broken():
        raise sqlite3.OperationalError("unable to open database file")
        yield  # pragma: no cover

    gone = LocalShard("gone.db", broken)
    with ShardedSearch([LocalShard.open(paths[0]), down, gone, LocalShard.open(paths[2])]) as router:
        got = router.search("vacuum", mode="keyword", per_page=50, budget_ms=5_000)
    assert got.partial and got.missing_shards == sorted([down.name, "gone.db"])
    assert "2 of 4 shards did not answer in time or are down" in got.message
    hosts = {r.url.split("/")[2] for r in got.results}
    assert hosts == {HOSTS[0], HOSTS[2]}


def test_a_late_shard_is_left_out_within_the_budget(corpus):
    import threading
    import time

    _, paths = corpus
    release = threading.Event()

    class Late(LocalShard):
        def search(self, *args, **kwargs):
            release.wait(30)
            return super().search(*args, **kwargs)

    late = LocalShard.open(paths[1])
    late.__class__ = Late
    with ShardedSearch([LocalShard.open(paths[0]), late]) as router:
        started = time.monotonic()
        got = router.search("vacuum", mode="keyword", budget_ms=500)
        took = time.monotonic() - started
        release.set()
    assert got.partial and got.missing_shards == [str(paths[1])]
    assert got.results and all(HOSTS[0] in r.url for r in got.results)
    assert took < 10  # the budget (0.5 s) and the grace, on a loaded machine: not the late shard's 30 s


def test_a_misspelled_word_finds_over_shards_what_it_finds_in_one_index(corpus):
    """No page holds "checkpoinnt": typo tolerance (textpile.search.typos) finds the pages
    holding "checkpoint" in one index and over the shards alike, in the same order with
    the same scores (scored with every shard's statistics), with the same note. (Beside
    other words, the pages only a close word finds are each shard's: not yet one index's.)"""
    one, paths = corpus
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in ("checkpoinnt", "checkpointt"):
            got = router.search(query, mode="keyword", budget_ms=60_000)
            expected = _one(one, query)
            assert [r.url for r in got.results] == [r.url for r in expected.results], query
            assert [round(r.score, 9) for r in got.results] == [round(r.score, 9) for r in expected.results], query
            assert got.total == expected.total and got.message == expected.message, query
        got = router.search("checkpoinnt", mode="keyword", budget_ms=60_000)
    expected = _one(one, "checkpoinnt")
    assert expected.results and expected.results[0].title == "Origin Checkpoint"
    assert got.total == expected.total == 11 and not got.corrected and not expected.corrected
    assert got.message == expected.message == "Pages holding close words follow (“checkpoinnt”: checkpoint)."


class _StatsAsked:
    """A local shard that records the ``near`` of each statistics request."""

    def __init__(self, shard: LocalShard) -> None:
        self._shard, self.near = shard, []
        self.name = shard.name

    def __getattr__(self, name):
        return getattr(self._shard, name)

    def stats(self, *args, **options):
        self.near.append(options.get("near", True))
        return self._shard.stats(*args, **options)


def test_shards_count_close_words_only_when_typo_tolerance_runs(corpus):
    """The close words of typo tolerance (each shard's vocabulary searched, their pages
    counted) are asked for only when few pages of all the shards hold every word: a
    second statistics round then; otherwise one round without them."""
    one, paths = corpus
    shards = [_StatsAsked(LocalShard.open(p)) for p in paths]
    with ShardedSearch(shards) as router:
        for query, rounds in (("vacuum index", [False]), ("checkpoinnt", [False, True]),
                              ("checkpoint journal lock", [False, True])):  # (few pages hold all three)
            for s in shards:
                s.near.clear()
            got = router.search(query, mode="keyword", budget_ms=60_000)
            expected = _one(one, query)
            assert [(r.url, round(r.score, 9)) for r in got.results] == \
                [(r.url, round(r.score, 9)) for r in expected.results], query
            assert got.message == expected.message and got.total == expected.total, query
            assert [s.near for s in shards] == [rounds] * 3, query
    shard = LocalShard.open(paths[0])
    try:
        with shard._connect() as conn:
            with_close = query_stats(conn, "checkpoinnt")
            without = query_stats(conn, "checkpoinnt", near=False)
    finally:
        shard.close()
    assert with_close.terms == {"checkpoint": 4} and with_close.phrases['"checkpoint"'] == 4
    assert without.terms == {} and '"checkpoint"' not in without.phrases


class _UnderRef:
    """A ranking rule's criterium: the URL's path starts with /ref/."""

    def matches(self, url) -> bool:
        return url.path.startswith("/ref/")


@pytest.mark.parametrize("options", [
    {"facets": True}, {"sort": "date"}, {"sort": "date", "facets": True}, {"per_site": 1},
    {"rules": (RankingRule(_UnderRef(), 1.5),)},
    {"rules": (RankingRule(_UnderRef(), -2.0),), "per_site": 2},
], ids=["facets", "date", "date-facets", "per-site", "boost", "demote-per-site"])
def test_issue_32_options_over_shards_as_one_index(corpus, options):
    """Facets (counts summed over the shards, the lower-bound flag), the date order (undated
    last, equal dates in relevance order), grouping by site (with its "more from this site"
    links) and ranking rules give over three shards what one index gives: the same URLs in
    the same order, scores and facets."""
    one, paths = corpus
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in ("vacuum", "index table", "cache page host", "trigger", "schema view", "checkpoinnt"):
            for page in (0, 1):
                expected = _one(one, query, per_page=5, page=page, **options)
                got = router.search(query, mode="keyword", per_page=5, page=page, budget_ms=60_000, **options)
                assert [r.url for r in got.results] == [r.url for r in expected.results], (query, page)
                assert [round(r.score, 9) for r in got.results] == [round(r.score, 9) for r in expected.results]
                assert [r.more_from_site for r in got.results] == [r.more_from_site for r in expected.results]
                assert got.sort == expected.sort and got.total == expected.total, query
                assert got.results_per_site == expected.results_per_site, query
                if options.get("facets"):
                    assert got.facets.as_json() == expected.facets.as_json(), query
                    assert expected.facets.site and expected.facets.year and expected.facets.path
                else:
                    assert got.facets is None


#: A synonym table over the corpus's words: "compact" and "wal" no page holds, "journal"
#: and "checkpoint" are both common (their summed counts weigh the group), a phrase member.
SYNONYMS = [["compact", "vacuum"], ["wal", "journal", "checkpoint"], ["trigger", "event hook"]]
SYNONYM_QUERIES = ("compact", "wal", "journal lock", "compact index", "trigger view", '"event hook"',
                   "wal -compact", "replica token")


def test_synonyms_over_shards_rank_as_one_index(corpus):
    """The search over three shards with a synonym table gives one index's pages, order,
    scores and totals; the statistics count the members' terms (the summed statistics are
    one index's); a member no page holds finds its group's pages on every shard; the
    empty table changes nothing."""
    from textpile.search.shards import summed_stats
    from textpile.search.synonyms import query_synonyms, synonym_table

    one, paths = corpus
    table = synonym_table(SYNONYMS)
    shards = [LocalShard.open(p) for p in paths]
    single = LocalShard.open(one)
    try:
        part = query_synonyms(table, "wal lock")
        assert part.groups == (("wal", "journal", "checkpoint"),)
        with single._connect() as conn:
            whole = query_stats(conn, "wal lock", synonyms=part)
            assert set(query_stats(conn, "wal lock").terms) == {"lock"}  # terms no page holds are left out
        assert set(whole.terms) == {"journal", "checkpoint", "lock"}
        assert summed_stats([s.stats("wal lock", synonyms=part) for s in shards]) == whole
    finally:
        single.close()
    with ShardedSearch(shards) as router:
        for query in SYNONYM_QUERIES:
            expected = _one(one, query, per_page=10, synonyms=table)
            got = router.search(query, mode="keyword", per_page=10, budget_ms=60_000, synonyms=table)
            assert [r.url for r in got.results] == [r.url for r in expected.results], query
            assert [round(r.score, 9) for r in got.results] == [round(r.score, 9) for r in expected.results], query
            assert got.total == expected.total and not got.partial, query
            plain = router.search(query, mode="keyword", per_page=10, budget_ms=60_000)
            empty = router.search(query, mode="keyword", per_page=10, budget_ms=60_000, synonyms=synonym_table([]))
            assert [(r.url, r.score) for r in empty.results] == [(r.url, r.score) for r in plain.results], query
        assert router.search("compact", mode="keyword", budget_ms=60_000).total == 0
        got = router.search("compact", mode="keyword", per_page=60, budget_ms=60_000, synonyms=table)
        assert got.total == _one(one, "vacuum", per_page=60).total > 3
        assert {r.url.split("/")[2] for r in got.results} == set(HOSTS)
        assert [r.url for r in got.results] == [r.url for r in _one(one, "vacuum", per_page=60).results]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """:func:`sharded_sites` with page and section vectors in every database."""
    from textpile.semantic.embed import embed_summary
    from textpile.semantic.model import load_embedder

    one, paths = sharded_sites(tmp_path_factory.mktemp("fanout_vectors"))
    embedder = load_embedder()
    for path in (one, *paths):
        embed_summary(path, embedder)
    return one, paths


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_vector_modes_merge_as_one_index(embedded, mode):
    one, paths = embedded
    single = LocalShard.open(one)
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in ("vacuum", "index table", "how do I back up a replica", "crawl robots sitemap"):
            with single._connect() as conn:
                expected = search_pages(conn, query, mode=mode, per_page=10, budget_ms=60_000,
                                        semantic=single._semantic().get(conn))
            got = router.search(query, mode=mode, per_page=10, budget_ms=60_000)
            assert got.mode == expected.mode == mode and not got.partial
            assert [r.url for r in got.results] == [r.url for r in expected.results], (mode, query)
            assert [round(r.score, 6) for r in got.results] == [round(r.score, 6) for r in expected.results]
    single.close()



def test_hybrid_over_shards_keeps_and_counts_one_index_pages(embedded):
    """The hybrid mode over three shards lists one index's whole ranking and counts its
    total: a page that holds no query word and is at the floor of similarity against the
    best page of every shard is dropped, as one index drops it (its shard measured it
    against its own, lower best: "vacuum index" listed 34 pages against 33), and the
    total is the keyword scans' counts summed, at least the pages ranked (it was every
    shard's own ranked list summed: 56 to 60 against 30 to 52)."""
    one, paths = embedded
    single = LocalShard.open(one)
    queries = ("vacuum", "vacuum index", "index table", "how do I back up a replica", "make the database file smaller",
               "keep a copy on another machine", "stop the crawler from reading some pages",
               f"site:{HOSTS[0]}", "lang:en")  # without words: the pages listed are counted
    totals = []
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in queries:
            with single._connect() as conn:
                expected = search_pages(conn, query, mode="hybrid", per_page=100, budget_ms=60_000,
                                        semantic=single._semantic().get(conn))
            got = router.search(query, mode="hybrid", per_page=100, budget_ms=60_000)
            assert got.mode == expected.mode == "hybrid" and not got.partial
            assert [r.url for r in got.results] == [r.url for r in expected.results], query
            assert (got.total, got.total_is_lower_bound) == (expected.total, expected.total_is_lower_bound), query
            totals.append(got.total)
    single.close()
    assert totals == [52, 33, 46, 32, 30, 30, 34, 20, 60]


def test_a_shard_answer_carries_its_keyword_count_through_json():
    """A served shard's answer (its JSON document) keeps the pages its keyword scans counted;
    an answer without it (an older server) has None, and a count that is no whole number
    is an error naming the shard."""
    from textpile.search.shards import ShardAnswer, ShardError, answer_from_json, answer_json

    answer = ShardAnswer([], [], total=40, mode="hybrid", keyword_total=31)
    doc = answer_json(answer)
    assert doc["keyword_total"] == 31
    assert answer_from_json(doc, "s1") == answer
    del doc["keyword_total"]
    assert answer_from_json(doc, "s1").keyword_total is None
    for bad in ("31", 3.5, True):
        with pytest.raises(ShardError, match="^http://shard.test: the answer is no shard answer "):
            answer_from_json({**doc, "keyword_total": bad}, "http://shard.test")


def _snippets(results) -> list[tuple]:
    return [(r.url, r.snippet_html, r.snippet_text, r.description) for r in results]


class _Counting:
    """A local shard that records the snippet sources it is asked to render, and can be
    down for rendering (``render_down``)."""

    def __init__(self, shard: LocalShard, render_down: bool = False) -> None:
        self._shard, self.rendered, self.render_down = shard, [], render_down
        self.name = shard.name

    def __getattr__(self, name):
        return getattr(self._shard, name)

    def render(self, words, sources, timeout_s=None):
        from textpile.search.shards import ShardError

        if self.render_down:
            raise ShardError(f"{self.name}: connection refused")
        self.rendered.append(len(sources))
        return self._shard.render(words, sources, timeout_s)


def test_shards_make_the_snippets_of_the_results_shown_only(corpus):
    """A shard answers its candidates without snippets (each with its source, the answer
    with the words they mark); the shards holding the results shown make those snippets
    alone, and they are one index's."""
    one, paths = corpus
    shards = [_Counting(LocalShard.open(p)) for p in paths]
    with ShardedSearch(shards) as router:
        stats = shards[0].stats("vacuum index")
        answer = shards[0].search("vacuum index", stats, "keyword", 60_000)
        assert len(answer.results) == 14 and answer.snippet_words == [["vacuum", "vacuum"], ["index", "index"]]
        assert {(r.snippet_html, r.snippet_text) for r in answer.results} == {("", "")}
        assert all(r.snippet_source is not None and r.snippet_source.text_pile_id is not None for r in answer.results)
        for query, per_page in (("vacuum index", 10), ("checkpoint journal lock", 5), ("site:" + HOSTS[1], 3),
                                ("trigger", 20)):
            for s in shards:
                s.rendered.clear()
            got = router.search(query, mode="keyword", per_page=per_page, budget_ms=60_000)
            expected = _one(one, query, per_page=per_page)
            assert _snippets(got.results) == _snippets(expected.results) and len(got.results) == per_page, query
            assert all(r.snippet_html and r.snippet_source is None for r in got.results)
            assert sum(sum(s.rendered) for s in shards) == per_page, query  # each shown result once, no other
            assert not got.partial


def test_a_shard_that_cannot_make_its_snippets_leaves_them_out_flagged_partial(corpus):
    one, paths = corpus
    shards = [_Counting(LocalShard.open(p), render_down=i == 1) for i, p in enumerate(paths)]
    with ShardedSearch(shards) as router:
        got = router.search("vacuum index", mode="keyword", per_page=20, budget_ms=60_000)
    expected = _one(one, "vacuum index", per_page=20)
    assert [r.url for r in got.results] == [r.url for r in expected.results]  # every page, none missing
    lacking = [r for r in got.results if HOSTS[1] in r.url]
    assert lacking and all(r.snippet_html == "" for r in lacking)
    assert all(r.snippet_html for r in got.results if HOSTS[1] not in r.url)
    assert got.partial and got.missing_shards == [str(paths[1])]
    assert f"{len(lacking)} results lack their snippet: {paths[1]} did not answer in time or is down." in got.message


def test_snippet_sources_and_words_go_through_json():
    from textpile.search.render import SnippetSource
    from textpile.search.results import SearchResult
    from textpile.search.shards import ShardAnswer, ShardError, answer_from_json, answer_json

    result = SearchResult("T", "https://a.test/x#s", "", "", snippet_source=SnippetSource(7, 3, 4, 10, 90))
    answer = ShardAnswer([result], [{}], total=1, snippet_words=[["vacuum"], ["index", "indexes"]])
    doc = answer_json(answer)
    assert doc["results"][0]["snippet_source"] == {"entity_generation_id": 7, "text_pile_id": 3,
                                                   "text_pile_v0_2_id": 4, "start": 10, "end": 90}
    assert answer_from_json(doc, "s1") == answer
    for bad in ({"entity_generation_id": "7", "text_pile_id": 3, "text_pile_v0_2_id": 4, "start": 10, "end": 90},
                {"entity_generation_id": 7}, [7, 3, 4, 10, 90],
                {"entity_generation_id": None, "text_pile_id": 3, "text_pile_v0_2_id": 4, "start": 1, "end": 9}):
        broken = {**doc, "results": [{**doc["results"][0], "snippet_source": bad}]}
        with pytest.raises(ShardError, match="^s1: the answer is no shard answer .*snippet_source"):
            answer_from_json(broken, "s1")
    for bad in ("vacuum", [["vacuum"], "index"], [[1]]):
        with pytest.raises(ShardError, match="^s1: the answer is no shard answer .*snippet words"):
            answer_from_json({**doc, "snippet_words": bad}, "s1")


def _page_url(h: int, n: int) -> str:
    """The URL of page ``n`` of site ``h`` of :func:`sharded_sites`."""
    return f"https://{HOSTS[h]}/{'ref' if n % 3 == 0 else 'doc'}/{n}.html"


def test_more_like_this_over_shards_ranks_as_one_index(embedded):
    """A page of any shard (by URL or by its shard's entity generation UUID): the pages of
    every shard nearest to its vector, itself left out, in one index's order with its
    similarities, over two result pages. (Equal similarities would be ordered by shard,
    then by the shard's generation id; one index orders them by its generation id, which
    :func:`sharded_sites` numbers shard by shard.)"""
    one, paths = embedded
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for h, n in ((0, 1), (1, 4), (2, 9), (2, 0)):
            url = _page_url(h, n)
            expected = like_on_one_index(one, url, per_page=60)
            got = router.more_like_this(url, per_page=60, budget_ms=60_000)
            assert got.mode == expected.mode == "semantic" and not got.partial and got.missing_shards == []
            assert got.query == expected.query and got.total == expected.total == 59, url
            assert [r.url for r in got.results] == [r.url for r in expected.results], url
            assert url not in [r.url for r in got.results]
            assert {r.url.split("/")[2] for r in got.results} == set(HOSTS)
            assert [round(r.score, 6) for r in got.results] == [round(r.score, 6) for r in expected.results], url
            assert len({round(r.score, 6) for r in expected.results}) == 59  # no ties among them
        first = router.more_like_this(_page_url(1, 4), per_page=10, budget_ms=60_000)
        second = router.more_like_this(_page_url(1, 4), page=1, per_page=10, budget_ms=60_000)
        assert first.total == second.total == 59
        assert [r.url for r in first.results + second.results] == [
            r.url for r in like_on_one_index(one, _page_url(1, 4), per_page=20).results]
        conn = sqlite3.connect(paths[2])
        uuid = conn.execute("SELECT hex(entity_generation_uuid) FROM entity_generation eg JOIN url u "
                            "ON u.url_id = eg.url_id WHERE u.str_url = ?", (_page_url(2, 9),)).fetchone()[0]
        conn.close()
        by_uuid = router.more_like_this(str(__import__("uuid").UUID(uuid)), per_page=60, budget_ms=60_000)
        assert [r.url for r in by_uuid.results] == [r.url for r in like_on_one_index(one, _page_url(2, 9),
                                                                             per_page=60).results]


def test_more_like_this_over_shards_names_a_missing_page_and_flags_a_down_shard(embedded, corpus):
    """A page no shard holds is an error naming it; a shard down, or without vectors (of
    the page's model), leaves its pages out, flagged partial."""
    from dataclasses import replace as replaced

    from textpile.search.service import ModeError

    one, paths = embedded
    bare = LocalShard.open(corpus[1][1])  # the same pages as paths[1], without vectors
    with ShardedSearch([LocalShard.open(paths[0]), bare, LocalShard.open(paths[2])]) as router:
        got = router.more_like_this(_page_url(0, 1), per_page=60, budget_ms=60_000)
        assert got.partial and got.missing_shards == [bare.name]
        assert [r.url for r in got.results] == [r.url for r in like_on_one_index(one, _page_url(0, 1), per_page=60).results
                                                if HOSTS[1] not in r.url]
        like = router.shards[0].page(_page_url(0, 1))
        assert like.model and len(like.vector) > 10
        with pytest.raises(ModeError, match="the page's vector is of 'other'"):
            router.shards[2].like(replaced(like, model="other"), None, 10, 60_000.0)
    down = RemoteShard(f"http://127.0.0.1:{_closed_port()}")
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        with pytest.raises(ModeError) as caught:
            router.more_like_this("https://nowhere.example/x.html", budget_ms=60_000)
    assert str(caught.value) == ("'https://nowhere.example/x.html': no searchable page of the shards has that URL "
                                 "or entity generation UUID")
    with ShardedSearch([LocalShard.open(paths[0]), down, LocalShard.open(paths[2])]) as router:
        got = router.more_like_this(_page_url(0, 1), per_page=60, budget_ms=5_000)
        assert got.partial and got.missing_shards == [down.name]
        assert "1 of 3 shards did not answer in time or are down" in got.message
        assert [r.url for r in got.results] == [r.url for r in like_on_one_index(one, _page_url(0, 1), per_page=60).results
                                                if HOSTS[1] not in r.url]
        with pytest.raises(ModeError) as caught:  # the page may be on the shard that is down
            router.more_like_this(_page_url(1, 4), budget_ms=5_000)
    assert str(caught.value) == (f"'{_page_url(1, 4)}': no searchable page of the shards has that URL or entity "
                                 f"generation UUID (1 of 3 shards did not answer: {down.name})")


def test_the_semantic_merge_keeps_one_index_nearest_pages():
    """One index ranks its SEMANTIC_DEPTH nearest pages: over shards, each shard's nearest
    ones merged by similarity are cut there too (the total is one index's, not the sum)."""
    from textpile.search.fanout import merge
    from textpile.search.nearest import SEMANTIC_DEPTH
    from textpile.search.results import SearchResult
    from textpile.search.shards import ShardAnswer

    answers = {}
    for shard in range(3):
        sims = [1.0 - (shard + 3 * n) / 1000 for n in range(60)]  # shards interleaved
        answers[shard] = ShardAnswer([SearchResult(f"t{s}", f"https://{shard}.example/{n}", "", "", score=s)
                                      for n, s in enumerate(sims)],
                                     [{"features": {"semantic": s}, "raw": {"semantic": s}} for s in sims],
                                     total=60, mode="semantic")
    got = merge("q", answers, 4, 25, "semantic")
    assert got.total == SEMANTIC_DEPTH == 100 and len(got.results) == 0
    got = merge("q", answers, 3, 25, "semantic")
    assert [r.url for r in got.results[-2:]] == ["https://2.example/32", "https://0.example/33"]  # ranks 98, 99
    assert got.results[-1].score == pytest.approx(1.0 - 99 / 1000)


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_synonyms_in_the_vector_modes_over_shards_rank_as_one_index(embedded, mode):
    """With a synonym table, hybrid and semantic over three shards rank one index's pages
    with its scores (the query's vector is of the words typed: the members are not sent
    as query words)."""
    from textpile.search.synonyms import synonym_table

    one, paths = embedded
    table = synonym_table(SYNONYMS)
    single = LocalShard.open(one)
    with ShardedSearch([LocalShard.open(p) for p in paths]) as router:
        for query in ("compact", "wal", "journal lock", "trigger view"):
            with single._connect() as conn:
                expected = search_pages(conn, query, mode=mode, per_page=10, budget_ms=60_000,
                                        semantic=single._semantic().get(conn), synonyms=table)
            got = router.search(query, mode=mode, per_page=10, budget_ms=60_000, synonyms=table)
            assert got.mode == expected.mode == mode and not got.partial and expected.results
            assert [r.url for r in got.results] == [r.url for r in expected.results], (mode, query)
            assert [round(r.score, 6) for r in got.results] == [round(r.score, 6) for r in expected.results]
    single.close()


def test_scans_are_cut_in_one_index_prior_order():
    """cut_scans merges the shards' first matches by prior key (a docid's bits above the
    generation id), then shard, then docid, and cuts where one index's scan ends; the best
    sections keep their floor (score, then section id) per shard."""
    from textpile.search.cuts import LAST_ROWID, ScanKeys, cut_scans

    def page(key: int, eg_id: int) -> int:
        return (key << 28) | eg_id

    def section(key: int, eg_id: int, position: int) -> int:
        return page(key, eg_id) * (1 << 15) + position

    keys = {0: ScanKeys([page(1, 5), page(2, 9), page(3, 1)], [(section(1, 5, 0), 3.0, 50), (section(2, 9, 1), 2.0, 51)]),
            1: ScanKeys([page(2, 4), page(2, 7)], [(section(2, 4, 0), 2.0, 7), (section(3, 3, 0), 9.0, 8)]),
            2: ScanKeys([page(0, 8)], [])}
    cuts = cut_scans(keys, 4, 3, 2, depth=30)
    # one index: (0,2,8) (1,0,5) (2,0,9) (2,1,4) | (2,1,7) (3,0,1): shard 1 up to page(2, 4)
    assert [cuts[s].last_page for s in (0, 1, 2)] == [page(2, 9), page(2, 4), page(0, 8)]
    assert all(c.cut_pages and c.few and c.depth == 30 for c in cuts.values())  # 6 pages hold every word: few
    # sections: (1,0) (2,0) (2,1) kept, (3,1) cut; best 2 of 3.0, 2.0 (shard 0, id 51), 2.0 (shard 1, id 7)
    assert [cuts[s].last_section for s in (0, 1)] == [section(2, 9, 1), section(2, 4, 0)]
    assert cuts[0].section_floor == (2.0, 51, section(2, 9, 1)) and cuts[1].section_floor == (2.0, -1, section(2, 4, 0))
    # fewer matches than one index scans: nothing is cut
    whole = cut_scans(keys, 10, 10, 10)
    assert all(c.last_page == c.last_section == LAST_ROWID and not c.cut_pages and c.few for c in whole.values())


def test_the_first_tier_is_one_index_prefix_of_the_shards_prior_order():
    """tier_shares takes one index's first tier (its first pages in docid order) from the
    shards' pages per prior key: by prior key, then shard; none when the pages fit."""
    from textpile.search.shards import tier_shares

    priors = {0: {1: 3, 5: 2}, 1: {1: 2, 3: 4}, 2: {0: 1}}
    # (0, shard 2): 1, (1, shard 0): 3, (1, shard 1): 1 of 2
    assert tier_shares(priors, top=5) == {0: 3, 1: 1, 2: 1}
    assert tier_shares(priors, top=11) == {0: 4, 1: 6, 2: 1}  # then (3, shard 1): 4, (5, shard 0): 1 of 2
    assert tier_shares(priors, top=12) == {}  # 12 pages: one index has no first tier


def test_shards_count_one_index_first_tier(corpus, tmp_path):
    """The shards' parts of one index's first tier (tier_shares, query_stats with
    tier_pages) sum to the rows, tokens and phrase counts of its first tier's tables."""
    import shutil

    from textpile.index.update import update_index
    from textpile.search.shards import prior_pages, summed_stats, tier_shares

    one, paths = corpus
    tiered = tmp_path / "tiered.db"
    shutil.copy(one, tiered)
    conn = sqlite3.connect(tiered)
    assert update_index(conn, rebuild=True, top_tier_pages=25).top_tier_pages == 25
    shards = [LocalShard.open(p) for p in paths]
    try:
        shares = tier_shares({i: s.priors() for i, s in enumerate(shards)}, top=25)
        assert sum(shares.values()) == 25 and len([n for n in shares.values() if n]) >= 2
        query = "vacuum index"
        parts = [s.stats(query, None, None, shares[i]) for i, s in enumerate(shards)]
        tier = summed_stats(parts).tier
        last = conn.execute("SELECT last_docid FROM search_top_tier").fetchone()[0]
        pages = ("SELECT u.str_url FROM search_page sp JOIN entity_generation eg USING (entity_generation_id) "
                 "JOIN url u USING (url_id) WHERE sp.docid <= ?")
        in_shards = []
        for shard, part in zip(shards, parts):
            with shard._connect() as c:
                in_shards += [u for u, in c.execute(pages, (part.tier_last,))]
        assert sorted(in_shards) == sorted(u for u, in conn.execute(pages, (last,))) and len(in_shards) == 25
        assert (tier.pages, tier.tokens) == table_totals(conn, "search_index_top")
        assert (tier.sections, tier.section_tokens) == table_totals(conn, "section_search_index_top")
        assert tier.phrases == phrase_documents(conn, list(tier.phrases), "search_index_top")
        assert tier.section_phrases == phrase_documents(conn, list(tier.section_phrases), "section_search_index_top")
        assert {'"vacuum"', '"index"'} <= set(tier.phrases) and 0 < tier.phrases['"vacuum"'] < 25
        assert prior_pages(conn) == {k: sum(s.priors().get(k, 0) for s in shards)
                                     for k in set().union(*(s.priors() for s in shards))}
    finally:
        conn.close()
        for s in shards:
            s.close()


def test_a_scan_one_index_ends_in_its_first_tier_is_cut_with_its_scores():
    """cut_scans says whether one index's page and section scans end in its first tier
    (enough of the shards' first matches are in it) and, when its section scan does,
    takes the best sections by their bm25 over the tier."""
    from textpile.search.cuts import ScanKeys, cut_scans

    def page(key: int, eg_id: int) -> int:
        return (key << 28) | eg_id

    def section(key: int, eg_id: int, position: int) -> int:
        return page(key, eg_id) * (1 << 15) + position

    keys = {0: ScanKeys([page(1, 5), page(2, 9), page(3, 1)],
                        [(section(1, 5, 0), 3.0, 50), (section(2, 9, 1), 2.0, 51)], section_tier=[4.0, 1.0]),
            1: ScanKeys([page(2, 4), page(2, 7)], [(section(2, 4, 0), 2.0, 7), (section(3, 3, 0), 9.0, 8)],
                        section_tier=[2.5, 9.5]),
            2: ScanKeys([page(0, 8)], [], section_tier=[])}
    # one index's first tier: (0, 2, 8) (1, 0, 5) (2, 0, 9): shard 1 holds none of it
    tier_last = {0: page(2, 9), 1: 0, 2: page(0, 8)}
    cuts = cut_scans(keys, 3, 2, 1, tier_last=tier_last)
    assert all(c.tier_pages and c.tier_sections for c in cuts.values())
    assert cuts[0].section_floor == (4.0, 50, section(1, 5, 0)) and cuts[1].section_floor == (4.0, -1, 0)  # the tier's
    outside = cut_scans(keys, 4, 3, 1, tier_last=tier_last)  # the 4th page and 3rd section are past it
    assert not any(c.tier_pages or c.tier_sections for c in outside.values())
    assert outside[0].section_floor == (3.0, 50, section(1, 5, 0))  # every shard's bm25
    assert not any(c.tier_pages for c in cut_scans(keys, 3, 2, 1).values())  # no first tier


def test_equal_sections_are_cut_first_by_prior_order_then_by_id():
    """Of sections with equal bm25, one index keeps the first SECTION_SPARE more than it
    asks for in prior order (section_candidates), then those with the smallest ids; with
    filters, no spare: the smallest ids of all."""
    from textpile.search.cuts import LAST_ROWID, ScanKeys, cut_scans

    def section(key: int, eg_id: int) -> int:
        return ((key << 28) | eg_id) * (1 << 15)

    # 13 equal sections, in prior order with falling ids (100 - key)
    keys = {0: ScanKeys([], [(section(k, 1), 1.0, 100 - k) for k in range(1, 14)]), 1: ScanKeys([], [])}
    cuts = cut_scans(keys, 100, 100, 2)
    assert cuts[0].section_floor == (1.0, 89, section(12, 1))  # the first 12, then ids 88 and 89
    assert cuts[1].section_floor == (1.0, -1, 0)
    filtered = cut_scans(keys, 100, 100, 2, filtered=True)
    assert filtered[0].section_floor == (1.0, 88, LAST_ROWID)  # ids 87 and 88


def test_the_router_says_how_many_partial_levels_one_index_searches():
    """One index stops adding partial-match levels once PARTIAL_BELOW (10) pages are found:
    the pages holding every word and each level's matches within its cut scan."""
    from textpile.search.cuts import ScanKeys, cut_scans

    def page(key: int, eg_id: int) -> int:
        return (key << 28) | eg_id

    keys = {0: ScanKeys([page(1, 1), page(1, 2)], [], levels=[[page(1, 1), page(2, 4)], [page(2, 7), page(2, 8)],
                                                               [page(3, 9)]]),
            1: ScanKeys([page(1, 3)], [], levels=[[page(1, 5), page(1, 6)], [page(2, 6), page(3, 1), page(3, 2)],
                                                  [page(3, 3)]])}
    # every word: 3 pages; level 0: 3 new (6); level 1: 5 new (11): its pages are enough
    assert {c.levels for c in cut_scans(keys, 100, 100, 10).values()} == {2}
    # scans of 4 matches: level 1 without (3, 1, 2): 6 + 4 = 10 all the same
    assert {c.levels for c in cut_scans(keys, 4, 100, 10).values()} == {2}
    # scans of 3: level 0 without (2, 0, 4): 5; level 1 without (3, 1, 1) and (3, 1, 2): 8; level 2: 10
    assert {c.levels for c in cut_scans(keys, 3, 100, 10).values()} == {3}


def test_equal_page_candidates_are_kept_in_one_index_prior_order():
    """Of page candidates with equal bm25 (an unscored scan gives them all 0), the merge
    keeps those one index's scan takes first: by prior key, then shard, then docid."""
    from textpile.search.fanout import _as_one_index, _Candidate
    from textpile.search.results import SearchResult

    def candidate(shard: int, order: int, key: int, eg_id: int, level: float = 1.0) -> _Candidate:
        raw = {"bm25": 0.0, "level": level, "docid": (key << 28) | eg_id}
        if level < 1.0:
            raw["level_0"] = 0.0
        return _Candidate(shard, order, SearchResult("t", f"https://s{shard}.test/{eg_id}", "", ""),
                          {"features": {}, "raw": raw})

    full = [candidate(0, 0, 2, 1), candidate(1, 0, 2, 9), candidate(1, 1, 1, 5)]
    assert [c.result.url for c in _as_one_index(full, 2)] == ["https://s1.test/5", "https://s0.test/1"]
    partial = [candidate(0, 0, 3, 1, 0.5), candidate(0, 1, 1, 7, 0.5), candidate(1, 0, 2, 4, 0.5)]
    kept = _as_one_index(partial, 2)
    assert [c.result.url for c in kept] == ["https://s0.test/7", "https://s1.test/4"]


def test_proximity_is_kept_for_one_index_first_candidates_those_found_by_a_section_too():
    """One index measures proximity for its first PROXIMITY_DEPTH reranked candidates by
    the score without it, the pages only a section found among them; the shards measured
    it for every candidate. A page only a section found, ranked below them, loses its
    shard's proximity as a page candidate would (before, it kept it: "async OR
    asynchronous function" over the relevance sites ranked such a page 10th instead of
    11th); in hybrid mode a page only the vectors found keeps it (one index measures it)."""
    from textpile.search.fanout import _as_one_index, _Candidate, _score
    from textpile.search.proximity import PROXIMITY_DEPTH
    from textpile.search.results import SearchResult

    def candidate(n: int, raw: dict) -> _Candidate:
        features = {"bm25": 0.0, "all_terms": 1.0, "held": 1.0, "proximity": 1.0, "section_cover": 0.0}
        return _Candidate(0, n, SearchResult("t", f"https://s.test/{n}", "", ""), {"features": features, "raw": raw})

    pages = [candidate(n, {"bm25": 10.0 - n / 10, "level": 1.0, "docid": n}) for n in range(PROXIMITY_DEPTH + 1)]
    section_only = candidate(50, {"section": 5.0, "section_id": 1, "section_held": 1.0})
    kept = _as_one_index([*pages, section_only], 30)
    _score(kept, "keyword")
    assert [c.features["proximity"] for c in pages] == [1.0] * PROXIMITY_DEPTH + [0.0]
    assert section_only.reranked and section_only.features["proximity"] == 0.0
    vector_only = candidate(60, {"semantic": 0.9})
    kept = _as_one_index([*[candidate(n, {"bm25": 10.0 - n / 10, "level": 1.0, "docid": n, "semantic": 0.1})
                            for n in range(PROXIMITY_DEPTH + 1)], vector_only], 30)
    _score(kept, "hybrid")
    assert not vector_only.reranked and vector_only.features["proximity"] == 1.0


def test_a_shard_scans_and_scores_its_sections_once_for_both_statistics(tmp_path):
    """The cut round scores a shard's first matching sections with every shard's
    statistics and with those of one index's first tier: one scan of the sections and
    one read of each phrase's scores serve both, and each gives what it gives alone."""
    from search.fixture_site import html_page, summarized_site
    from textpile.index.update import update_index
    from textpile.search.candidates import scored_sections, search_tiers, sections_scored_by
    from textpile.search.global_bm25 import section_rescorer

    filler = "Other words fill this paragraph so that the section is of an ordinary length. "
    site = {}
    for i in range(30):
        links = "".join(f'<a href="https://a.example/p{j}">page {j}</a> ' for j in range(i))
        sections = "".join(f'<h2 id="s{k}">Heron {"nest" if (i + k) % 3 else "flight"} {k}</h2>'
                           f"<p>The heron {'nests' if k % 2 else 'flies'} here. {filler * (1 + (i + k) % 3)}</p>"
                           for k in range(3))
        site[f"https://a.example/p{i}"] = html_page(f"Page {i}", f"<h1>Page {i}</h1><p>{links}</p>{sections}")
    summarized_site(tmp_path, site).close()
    conn = sqlite3.connect(tmp_path / "summary.db")
    update_index(conn, rebuild=True, top_tier_pages=10)
    conn.close()
    conn = sqlite3.connect(f"file:{tmp_path / 'summary.db'}?mode=ro", uri=True)
    stats = query_stats(conn, "heron flight", None, 12)  # one index's first tier: 12 of its pages here
    assert stats.tier is not None and stats.tier.sections > 0 and stats.sections > 60
    weights, expr, tiers = DEFAULT_RANKING.section_columns, '"heron" AND "flight"', search_tiers(conn)
    scorers = [section_rescorer(conn, stats, weights, in_tier) for in_tier in (False, True)]
    statements: dict[str, list[str]] = {"alone": [], "together": []}
    conn.set_trace_callback(statements["alone"].append)
    alone = [scored_sections(conn, expr, weights, 300, tiers, rescore=r, every_shard=d) for r, d in scorers]
    conn.set_trace_callback(statements["together"].append)
    together = sections_scored_by(conn, expr, weights, 300, scorers, tiers)
    conn.set_trace_callback(None)
    assert together == alone and len(together[0]) > 20 and together[0] != together[1]
    scans, reads, sizes = {}, {}, {}
    for name, traced in statements.items():
        scans[name] = [s for s in traced if s.startswith("SELECT rowid FROM section_search_index")]
        reads[name] = [s for s in traced if "-bm25(section_search_index" in s and "BETWEEN" in s]
        sizes[name] = [s for s in traced if "FROM section_search_index_docsize" in s]
    # the scan (the first tier's matches, then the others), each phrase's scores and the rows' sizes once
    assert len(scans["together"]) == 2 and scans["alone"] == scans["together"] * 2
    assert len(reads["together"]) == 2 and reads["alone"] == reads["together"] * 2
    assert len(sizes["together"]) == 1 and sizes["alone"] == sizes["together"] * 2
    conn.close()


def test_a_shard_missing_in_two_rounds_is_one_shard_missing(corpus):
    from textpile.search.results import SearchResults

    with ShardedSearch([LocalShard.open(p) for p in corpus[1]]) as router:
        out = SearchResults(query="q", page=0, per_page=10)
        router._flag_missing(out, ["s2", "s2"], {})
    assert out.partial and out.missing_shards == ["s2"]
    assert out.notes == ["1 of 3 shards did not answer in time or are down (s2): their pages are missing from these "
                         "results."]
