"""The search index updated by what changed equals the index rebuilt whole.

A site of 36 pages is crawled five times. Between the crawls pages change their words,
go away (404), become copies of another page, appear, and change their links; a heading
without an anchor turns into boilerplate and back; the first tier (5 pages here) moves.
After each summarize, which updates the index, every derived table and every FTS5 row
(read back term by term through fts5vocab) must equal those of a copy rebuilt whole.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing

import pytest

from textpile.index import tier
from textpile.index.update import update_index
from textpile.search.engine import search
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import register_functions
from textpile.summarize.pipeline import summarize

from summarize.summary_fixtures import CrawlerRows, page

BASE = "https://site.example"
FTS = ("full_text_entity_index", "search_index", "section_search_index", "search_index_top", "section_search_index_top")
TABLES = ("search_page", "search_section", "search_language", "search_term", "search_word", "search_top_tier",
          "search_link", "search_inlink", "search_origin", "search_heading")
WORDS = ("heron egret crane stork ibis spoonbill bittern pelican cormorant gannet puffin tern gull plover "
         "curlew dunlin sanderling avocet stilt godwit").split()


def dump(path) -> dict[str, list[tuple]]:
    """Every derived table's rows and every FTS5 table's (term, rowid, column, offset)."""
    with closing(register_functions(sqlite3.connect(path))) as conn:
        out = {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in TABLES}
        for table in FTS:
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, 'instance')")
            out[table] = conn.execute(f"SELECT term, doc, col, offset FROM temp.v_{table} "
                                      "ORDER BY term, doc, col, offset").fetchall()
        out["build"] = conn.execute("SELECT version FROM search_index_build").fetchall()
    return out


def site_page(n: int, round_: int, *, see_also: bool, links: list[int], word: str, copy_of: int | None = None) -> str:
    """Page ``n`` as served in ``round_``: a boilerplate "Navigation" heading on every page,
    an anchorless "See also" heading on some, sections with anchors, links to others."""
    if copy_of is not None:
        n = copy_of
    nav = "".join(f'<li><a href="{BASE}/p{j}.html">Page {j} of the site</a></li>' for j in links)
    also = f'<h2>See also</h2><p>Related {word} notes.</p>' if see_also else ""
    body = (f'<h2>Navigation</h2><ul>{nav}</ul>'
            f'<h2 id="usage-{n}">Usage of ThreadPool{n}</h2><p>The {word} of page {n} runs tasks on a pool.</p>'
            f'<h2 id="notes-{n}">Notes</h2><p>More about the {word} and <a href="{BASE}/p0.html#usage-0">usage</a>.</p>'
            f'{also}<p>Ordinary words fill the page number {n} of this site.</p>')
    return page(f"Page {n} about the {word}", body)


def rounds():
    """Per crawl: {page number: (html or None for a 404)}."""
    state = {n: dict(see_also=n < 18, links=[0, (n + 1) % 36, (n + 7) % 36], word=WORDS[n % len(WORDS)])
             for n in range(36)}
    yield {n: site_page(n, 0, **s) for n, s in state.items()}
    # 2: three pages change words; two more get "See also" (20 of 36: boilerplate now); one 404
    for n in (3, 20, 21):
        state[n]["word"] = "albatross"
    for n in (20, 21):
        state[n]["see_also"] = True
    changed = {n: site_page(n, 1, **state[n]) for n in (3, 20, 21)}
    changed[30] = None
    yield changed
    # 3: five new pages without it (20 of 40: not boilerplate again); a link moves
    for n in range(36, 41):
        state[n] = dict(see_also=False, links=[0, 1], word="kestrel")
    state[5]["links"] = [0, 9]
    yield {**{n: site_page(n, 2, **state[n]) for n in range(36, 41)}, 5: site_page(5, 2, **state[5])}
    # 4: page 7 becomes a copy of page 8; page 30 comes back; page 0 (linked from all) changes
    state[0]["word"] = "osprey"
    yield {7: site_page(7, 3, **state[8], copy_of=8), 30: site_page(30, 3, **state[30]),
           0: site_page(0, 3, **state[0])}
    # 5: nothing new at all
    yield {}


def test_the_updated_index_equals_the_rebuilt_one_after_every_kind_of_change(tmp_path, monkeypatch):
    monkeypatch.setattr(tier, "TOP_TIER_PAGES", 5)
    crawler, summary = tmp_path / "c.db", tmp_path / "s.db"
    t = 1_700_000_000
    for number, served in enumerate(rounds()):
        with CrawlerRows(crawler) as rows:
            agent = rows.agent(started=t)
            for n, html in sorted(served.items()):
                t += 10
                if html is None:
                    rows.crawl(agent, f"{BASE}/p{n}.html", t, 44)
                else:
                    rows.crawl(agent, f"{BASE}/p{n}.html", t, html=html)
        report = summarize(crawler, summary, progress=False, embeddings=False)
        assert report.failure is None
        index = report.index
        assert index.rebuilt == (number == 0), index.rebuild_reason
        if number == 4:
            assert (index.pages_added, index.pages_removed, index.pages_reindexed) == (0, 0, 0)
        rebuilt = tmp_path / f"rebuilt-{number}.db"
        shutil.copy(summary, rebuilt)
        with closing(open_summary_db(rebuilt)) as conn:
            assert update_index(conn, rebuild=True).rebuilt
        assert dump(summary) == dump(rebuilt), f"after crawl {number + 1}"
        with closing(open_summary_db(summary, read_only=True)) as conn, \
                closing(open_summary_db(rebuilt, read_only=True)) as whole:
            for query in ("albatross", "heron tasks", "see also", "navigation", "osprey", "kestrel", "threadpool3"):
                assert [r.url for r in search(conn, query).results] == [r.url for r in search(whole, query).results]


def test_what_each_crawl_changed(tmp_path, monkeypatch):
    """The exact pages each update touched: new and changed pages enter, 404s and copies
    leave, pages linked from them and pages whose headings turn boilerplate are indexed again."""
    monkeypatch.setattr(tier, "TOP_TIER_PAGES", 5)
    crawler, summary = tmp_path / "c.db", tmp_path / "s.db"
    t = 1_700_000_000
    seen = []
    for served in rounds():
        with CrawlerRows(crawler) as rows:
            agent = rows.agent(started=t)
            for n, html in sorted(served.items()):
                t += 10
                rows.crawl(agent, f"{BASE}/p{n}.html", t, *((44,) if html is None else ()),
                           **({} if html is None else {"html": html}))
        index = summarize(crawler, summary, progress=False, embeddings=False).index
        with closing(sqlite3.connect(summary)) as conn:
            heading = conn.execute("SELECT pages FROM search_heading WHERE title = 'See also'").fetchone()
            origin = conn.execute("SELECT pages FROM search_origin").fetchone()
            top = conn.execute("SELECT top_pages FROM search_top_tier").fetchone()
        seen.append((index.pages, index.pages_added, index.pages_removed, heading[0], origin[0], top[0]))

    assert seen == [
        (36, 36, 0, 18, 36, 5),
        (35, 3, 4, 20, 35, 5),  # 3 changed pages in (and out), the 404 out
        (40, 6, 1, 20, 40, 5),  # 5 new pages and page 5's new links in, page 5's old generation out
        (40, 3, 3, 19, 40, 5),  # page 0 changed, page 30 back; page 7 a copy of page 8: one of them stays
        (40, 0, 0, 19, 40, 5),
    ]
    with closing(open_summary_db(summary, read_only=True)) as conn:
        assert sorted(r.url for r in search(conn, "albatross").results) == [f"{BASE}/p{n}.html" for n in (20, 21, 3)]
        # a page that changed is found by its new words and not its old ones
        assert f"{BASE}/p0.html" in [r.url for r in search(conn, "osprey").results]
        assert f"{BASE}/p0.html" not in [r.url for r in search(conn, WORDS[0]).results]
        # of a page and its copy, one stays in the index
        found = [r.url for r in search(conn, "page 8").results]
        assert (f"{BASE}/p7.html" in found) != (f"{BASE}/p8.html" in found)
        assert conn.execute("SELECT count(*) FROM search_page sp JOIN entity_generation eg USING (entity_generation_id) "
                            "JOIN url u USING (url_id) WHERE u.str_url IN (?, ?)",
                            (f"{BASE}/p7.html", f"{BASE}/p8.html")).fetchone()[0] == 1


@pytest.mark.parametrize("table", ["search_page"])
def test_an_index_whose_rows_do_not_match_its_counts_is_rebuilt(tmp_path, table):
    crawler, summary = tmp_path / "c.db", tmp_path / "s.db"
    served = next(rounds())
    with CrawlerRows(crawler) as rows:
        agent = rows.agent()
        for n, html in sorted(served.items()):
            rows.crawl(agent, f"{BASE}/p{n}.html", 1_700_000_000 + n, html=html)
    summarize(crawler, summary, progress=False, embeddings=False)
    expected = dump(summary)
    with closing(sqlite3.connect(summary)) as conn:
        conn.execute("UPDATE search_page SET in_links = in_links + 1 WHERE docid = (SELECT min(docid) FROM search_page)")
        conn.commit()
    with CrawlerRows(crawler) as rows:  # a change that touches every page (all link to page 0)
        rows.crawl(rows.agent(), f"{BASE}/p0.html", 1_800_000_000,
                   html=site_page(0, 1, see_also=True, links=[0, 1, 7], word="osprey"))
    index = summarize(crawler, summary, progress=False, embeddings=False).index
    assert index.rebuilt and "does not match" in index.rebuild_reason
    assert dump(summary)["search_page"] != expected["search_page"]  # page 0 changed
    rebuilt = tmp_path / "rebuilt.db"
    shutil.copy(summary, rebuilt)
    with closing(open_summary_db(rebuilt)) as conn:
        update_index(conn, rebuild=True)
    assert dump(summary) == dump(rebuilt)


def test_a_page_that_only_loses_a_link_keeps_its_rows_and_gets_its_counts(tmp_path):
    """A hub linked from the navigation of N pages, N chosen so that N and N - 1 links give
    its prior the same key: when one of them goes away (404), the hub's docid and anchor
    texts stay, so it is not indexed again; only its in-link counts change, as a rebuild
    would write them."""
    from textpile.index.docids import page_prior, prior_key

    n = next(n for n in range(20, 200) if prior_key(page_prior(n, 0, 0.0)) == prior_key(page_prior(n - 1, 0, 0.0)))
    crawler, summary = tmp_path / "c.db", tmp_path / "s.db"
    with CrawlerRows(crawler) as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/hub.html", 1_700_000_000, html=page("The hub", "<p>Everything starts here.</p>"))
        for i in range(n):
            rows.crawl(agent, f"{BASE}/p{i}.html", 1_700_000_001 + i, html=page(
                f"Page {i}", f'<nav><a href="{BASE}/hub.html">Hub</a></nav><p>The {WORDS[i % len(WORDS)]} of page {i}.</p>'))
    summarize(crawler, summary, progress=False, embeddings=False)
    with closing(sqlite3.connect(summary)) as conn:
        before = conn.execute("SELECT docid, in_links, content_in_links FROM search_page sp "
                              "JOIN entity_generation eg USING (entity_generation_id) JOIN url u USING (url_id) "
                              "WHERE u.str_url = ?", (f"{BASE}/hub.html",)).fetchone()
    assert before[1:] == (n, 0)
    with CrawlerRows(crawler) as rows:
        rows.crawl(rows.agent(started=1_800_000_000), f"{BASE}/p0.html", 1_800_000_001, 44)
    index = summarize(crawler, summary, progress=False, embeddings=False).index
    assert (index.pages_removed, index.pages_added, index.pages_reindexed, index.pages_recounted) == (1, 0, 0, 1)
    with closing(sqlite3.connect(summary)) as conn:
        after = conn.execute("SELECT docid, in_links, content_in_links FROM search_page sp "
                             "JOIN entity_generation eg USING (entity_generation_id) JOIN url u USING (url_id) "
                             "WHERE u.str_url = ?", (f"{BASE}/hub.html",)).fetchone()
    assert after == (before[0], n - 1, 0)
    rebuilt = tmp_path / "rebuilt.db"
    shutil.copy(summary, rebuilt)
    with closing(open_summary_db(rebuilt)) as conn:
        update_index(conn, rebuild=True)
    assert dump(summary) == dump(rebuilt)


def test_a_page_whose_anchor_texts_change_keeps_its_section_rows(tmp_path):
    """A hub with two sections, linked from the navigation of N pages (N chosen as above);
    one of them links to it with another text: the hub is indexed again for its anchor
    texts, with the same docid, so its section rows stay as they are (not deleted and
    inserted), and the index equals a rebuild: the new text finds the hub."""
    from textpile.index.docids import SECTIONS_PER_PAGE, page_prior, prior_key

    n = next(n for n in range(20, 200) if prior_key(page_prior(n, 0, 0.0)) == prior_key(page_prior(n - 1, 0, 0.0)))
    crawler, summary = tmp_path / "c.db", tmp_path / "s.db"

    def linking(i: int, text: str) -> str:
        return page(f"Page {i}", f'<nav><a href="{BASE}/hub.html">{text}</a></nav>'
                                 f'<p>The {WORDS[i % len(WORDS)]} of page {i}.</p>')

    with CrawlerRows(crawler) as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/hub.html", 1_700_000_000, html=page("The hub", (
            '<p>Everything starts here.</p><h2 id="usage">Usage</h2><p>How to use the hub.</p>'
            '<h2 id="notes">Notes</h2><p>What to know about the hub.</p>')))
        for i in range(n):
            rows.crawl(agent, f"{BASE}/p{i}.html", 1_700_000_001 + i, html=linking(i, "Hub"))
    summarize(crawler, summary, progress=False, embeddings=False)
    sections_sql = (f"SELECT ss.section_summary_id, ss.docid FROM search_section ss JOIN search_page sp "
                    f"ON ss.docid / {SECTIONS_PER_PAGE} = sp.docid JOIN entity_generation eg USING (entity_generation_id) "
                    "JOIN url u USING (url_id) WHERE u.str_url = ? ORDER BY 1")
    with closing(sqlite3.connect(summary)) as conn:
        sections = conn.execute(sections_sql, (f"{BASE}/hub.html",)).fetchall()
    assert len(sections) >= 2
    with CrawlerRows(crawler) as rows:
        rows.crawl(rows.agent(started=1_800_000_000), f"{BASE}/p0.html", 1_800_000_001,
                   html=linking(0, "Central switchboard"))
    index = summarize(crawler, summary, progress=False, embeddings=False).index
    assert (index.pages_removed, index.pages_added, index.pages_reindexed) == (1, 1, 1)
    assert index.pages_sections_kept == 1
    with closing(open_summary_db(summary)) as conn:
        assert conn.execute(sections_sql, (f"{BASE}/hub.html",)).fetchall() == sections
        assert f"{BASE}/hub.html" in [r.url for r in search(conn, "switchboard").results]
    rebuilt = tmp_path / "rebuilt.db"
    shutil.copy(summary, rebuilt)
    with closing(open_summary_db(rebuilt)) as conn:
        update_index(conn, rebuild=True)
    assert dump(summary) == dump(rebuilt)
