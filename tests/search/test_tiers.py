"""The search index's first tier (search_index_top): built only for a large index, the
pages found through it are the pages the whole index gives, and matches past it are
read from the whole index, scored or (when scoring them would read long lists) not."""

import sqlite3

from search.fixture_site import html_page, summarized_site
from textpile.search import candidates, engine
from textpile.search.engine import search
from textpile.search.index import rebuild_search_index
from textpile.store.gen2_piles import register_functions

FILLER = "Other words fill this paragraph so that the page is of an ordinary length for a page. "


def pages():
    """30 pages; page i is linked from the 30 - i pages after it, so docids follow i."""
    out = {}
    for i in range(30):
        links = "".join(f'<a href="https://a.example/p{j}">page {j}</a> ' for j in range(i))
        word = "heron" if i >= 25 else "egret"  # herons only on the least linked pages
        out[f"https://a.example/p{i}"] = html_page(
            f"Page {i}", f"<h1>Page {i}</h1><p>The {word} of page {i}. {FILLER * (1 + i % 3)}</p><p>{links}</p>")
    return out


def urls(results):
    return [r.url for r in results.results]


def tiered(tmp_path, top_tier_pages: int = 10) -> sqlite3.Connection:
    """The site's summary database with its search index rebuilt with a first tier."""
    with register_functions(sqlite3.connect(tmp_path / "summary.db")) as conn:
        report = rebuild_search_index(conn, top_tier_pages=top_tier_pages)
    assert report.pages == 30 and report.top_tier_pages == top_tier_pages
    return register_functions(sqlite3.connect(f"file:{tmp_path / 'summary.db'}?mode=ro", uri=True))


def test_the_first_tier_is_built_only_for_a_large_index(tmp_path):
    conn = summarized_site(tmp_path, pages())
    sections = conn.execute("SELECT count(*) FROM search_section").fetchone()[0]
    assert candidates.search_tiers(conn) == candidates.Tiers(30, sections, 0, 0)  # 30 pages: no tier
    assert conn.execute("SELECT count(*) FROM search_index_top").fetchone()[0] == 0
    conn = tiered(tmp_path)
    tiers = candidates.search_tiers(conn)
    assert tiers.last_docid == 10
    assert [r[0] for r in conn.execute("SELECT rowid FROM search_index_top")] == list(range(1, 11))
    top_sections = conn.execute("SELECT max(t.docid) FROM search_section t JOIN section_summary s "
                                "ON s.section_summary_id = t.section_summary_id JOIN search_page p "
                                "ON p.entity_generation_id = s.entity_generation_id WHERE p.docid <= 10").fetchone()[0]
    assert tiers == candidates.Tiers(30, sections, 10, top_sections)
    assert [r[0] for r in conn.execute("SELECT rowid FROM section_search_index_top")] == list(range(1, top_sections + 1))


def test_pages_found_through_the_first_tier_are_the_whole_index_pages(tmp_path, monkeypatch):
    conn = summarized_site(tmp_path, pages())
    monkeypatch.setattr(engine, "PAGE_SCAN", 8)
    monkeypatch.setattr(engine, "RERANK_DEPTH", 5)
    whole = search(conn, "egret", per_page=5)
    conn = tiered(tmp_path)
    tiered_results = search(conn, "egret", per_page=5)
    # 25 pages hold "egret"; the scan stops after the 8 likeliest (docids 1-8, all in the tier)
    assert whole.total == tiered_results.total == 8 and tiered_results.total_is_lower_bound
    assert sorted(urls(tiered_results)) == sorted(urls(whole))
    assert {u.rsplit("p", 1)[1] for u in urls(tiered_results)} <= {str(i) for i in range(8)}


def test_matches_past_the_first_tier_are_read_from_the_whole_index(tmp_path, monkeypatch):
    summarized_site(tmp_path, pages())
    conn = tiered(tmp_path)
    herons = [f"https://a.example/p{i}" for i in range(25, 30)]
    found = search(conn, "heron")  # only on pages past the tier: scored over the whole index
    assert found.total == 5 and not found.total_is_lower_bound and sorted(urls(found)) == sorted(herons)
    assert all(r.score != 0 for r in found.results)
    seen = []
    real = candidates._scored_scan
    monkeypatch.setattr(candidates, "_scored_scan", lambda conn, table, *a, **k: seen.append(table) or real(
        conn, table, *a, **k))
    monkeypatch.setattr(candidates, "SCORE_POSTINGS", 4)  # scoring the 5 herons would read too much
    rows, count, complete = candidates.page_candidates(
        conn, '"heron"', (1.0,) * 9, 50, 300, tiers=candidates.search_tiers(conn))
    assert seen == ["search_index_top"] and count == 5 and complete
    assert [score for _, score in rows] == [0.0] * 5  # in prior order, unscored
    assert urls(search(conn, "heron")) and sorted(urls(search(conn, "heron"))) == sorted(herons)


def test_a_rebuilt_index_is_merged_into_one_segment_per_table(tmp_path, monkeypatch):
    import pytest

    from textpile.search import index
    from textpile.summarize.fts import rebuild_fts_in

    conn = summarized_site(tmp_path, pages())
    conn.close()
    with register_functions(sqlite3.connect(tmp_path / "summary.db")) as conn:
        for word in ("one", "two", "three"):  # each commit writes a segment
            with conn:
                conn.execute("INSERT INTO search_index(rowid, title) VALUES (?, ?)", (1000 + len(word), word))
        segments = "SELECT count(DISTINCT segid) FROM search_index_idx"
        assert conn.execute(segments).fetchone()[0] >= 3
        index.optimize_fts(conn, "search_index")
        assert conn.execute(segments).fetchone()[0] == 1
        assert [r[0] for r in conn.execute("SELECT rowid FROM search_index WHERE search_index MATCH 'three'")] == [1005]
        with pytest.raises(ValueError, match="not an FTS5 table"):
            index.optimize_fts(conn, "search_page")
        merged = []
        real = index.optimize_fts
        monkeypatch.setattr(index, "optimize_fts", lambda c, table: (merged.append(table), real(c, table)))
        rebuild_fts_in(conn)
    assert sorted(merged) == sorted(index.FTS_TABLES)
