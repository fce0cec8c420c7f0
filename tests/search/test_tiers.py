"""The search index's first tier (search_index_top): built only for a large index, the
pages found through it are the pages the whole index gives, and matches past it are
read from the whole index, scored or (when scoring them would read long lists) not."""

import sqlite3

from search.fixture_site import html_page, summarized_site
from textpile.search import candidates, engine
from textpile.search.engine import search
from textpile.index.docids import last_section_docid
from textpile.index.update import update_index
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
    conn = register_functions(sqlite3.connect(tmp_path / "summary.db"))
    report = update_index(conn, rebuild=True, top_tier_pages=top_tier_pages)
    conn.close()
    assert report.pages == 30 and report.top_tier_pages == top_tier_pages
    return register_functions(sqlite3.connect(f"file:{tmp_path / 'summary.db'}?mode=ro", uri=True))


def test_the_first_tier_is_built_only_for_a_large_index(tmp_path):
    conn = summarized_site(tmp_path, pages())
    sections = conn.execute("SELECT count(*) FROM search_section").fetchone()[0]
    assert candidates.search_tiers(conn) == candidates.Tiers(30, sections, 0, 0, 0, 0)  # 30 pages: no tier
    assert conn.execute("SELECT count(*) FROM search_index_top").fetchone()[0] == 0
    conn = tiered(tmp_path)
    tiers = candidates.search_tiers(conn)
    first = [r[0] for r in conn.execute("SELECT docid FROM search_page ORDER BY docid LIMIT 10")]
    assert tiers.last_docid == first[-1]
    assert [r[0] for r in conn.execute("SELECT rowid FROM search_index_top")] == first
    top_sections = [r[0] for r in conn.execute("SELECT t.docid FROM search_section t JOIN section_summary s "
                                               "ON s.section_summary_id = t.section_summary_id JOIN search_page p "
                                               "ON p.entity_generation_id = s.entity_generation_id "
                                               "WHERE p.docid <= ? ORDER BY t.docid", (first[-1],))]
    assert top_sections and max(top_sections) <= tiers.last_section_docid == last_section_docid(first[-1])
    assert tiers == candidates.Tiers(30, sections, first[-1], last_section_docid(first[-1]), 10, len(top_sections))
    assert [r[0] for r in conn.execute("SELECT rowid FROM section_search_index_top")] == top_sections
    # the sections past the tier all have greater docids: the tier is a prefix of both orders
    assert conn.execute("SELECT min(docid) FROM search_section WHERE docid > ?", (tiers.last_section_docid,)
                        ).fetchone()[0] == min(d for d in [r[0] for r in conn.execute("SELECT docid FROM search_section")]
                                               if d not in top_sections)


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

    from textpile.index import schema, update

    conn = summarized_site(tmp_path, pages())
    conn.close()
    with register_functions(sqlite3.connect(tmp_path / "summary.db")) as conn:
        for word in ("one", "two", "three"):  # each commit writes a segment
            with conn:
                conn.execute("INSERT INTO search_index(rowid, title) VALUES (?, ?)", (1000 + len(word), word))
        segments = "SELECT count(DISTINCT segid) FROM search_index_idx"
        assert conn.execute(segments).fetchone()[0] >= 3
        schema.optimize_fts(conn, "search_index")
        assert conn.execute(segments).fetchone()[0] == 1
        assert [r[0] for r in conn.execute("SELECT rowid FROM search_index WHERE search_index MATCH 'three'")] == [1005]
        with pytest.raises(ValueError, match="not an FTS5 table"):
            schema.optimize_fts(conn, "search_page")
        merged = []
        real = schema.optimize_fts
        monkeypatch.setattr(update, "optimize_fts", lambda c, table: (merged.append(table), real(c, table)))
        update.update_index(conn, rebuild=True)
    assert sorted(merged) == sorted(schema.FTS_TABLES)
