"""Near-duplicates (textpile.summarize.duplicates): pages of one origin with the same title
whose main texts differ only in a little boilerplate are flagged as exact duplicates are
(one original, the others marked; the search index leaves them out), incrementally; API
pages of sibling classes, whose long shared text has different titles, stay apart.

A site on 127.0.0.1 is crawled and summarized for the search results; integration rules
are tested on crawler rows written directly (summary_fixtures.CrawlerRows)."""

from __future__ import annotations

import sqlite3

import pytest

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl
from textpile.search.engine import search
from textpile.store.gen2_piles import register_functions
from textpile.summarize.duplicates import NEAR_DUPLICATE_BITS
from textpile.summarize.pipeline import summarize
from textpile.summarize.scrape.fingerprint import MIN_WORDS, bands, hamming, simhash, title_key, to_signed

from crawl.crawlsite import config
from .summary_fixtures import CrawlerRows

BASE = "http://site.test"
HTML = {"Content-Type": "text/html; charset=utf-8"}

# about 3 KB of text: paragraphs of an article
ARTICLE = "".join(
    f"<p>Paragraph {n} of the field guide explains how the {bird} builds its nest from {stuff}, "
    f"when it lays its eggs and how both parents share the {n + 11} days of brooding in the spring.</p>"
    for n, (bird, stuff) in enumerate([
        ("blackbird", "grass and mud"), ("wren", "moss"), ("swallow", "clay pellets"), ("robin", "dead leaves"),
        ("goldfinch", "thistle down"), ("magpie", "thorny twigs"), ("starling", "straw"),
        ("chaffinch", "lichen and spider silk"), ("nuthatch", "bark flakes"), ("dunnock", "roots"),
        ("blackcap", "fine grass"), ("treecreeper", "wood chips"), ("jay", "sticks"), ("greenfinch", "wool"),
        ("bullfinch", "rootlets"), ("linnet", "hair")]))
FOOTER_A = "<p>Page generated 2024-05-01 12:31:07 UTC, tracking number 88123-4471.</p>"
FOOTER_B = "<p>Page generated 2024-05-02 08:02:55 UTC, tracking number 90877-1209.</p>"


def article(footer: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><title>Nests of garden birds</title></head>"
            f"<body><main><h1>Nests of garden birds</h1>{ARTICLE}{footer}</main></body></html>")


# Two API pages of sibling classes: a short text of their own, then the long list of
# methods both inherit (as rustdoc's iterator pages and javadoc's spliterators have).
INHERITED = "".join(
    f"<h3>fn {name}(self)</h3><p>Provided method {name} of the Iterator trait: consumes the iterator and "
    f"calls the closure on each element, as the standard library documents for every iterator type.</p>"
    for name in ("count", "last", "nth", "step_by", "chain", "zip", "map", "for_each", "filter", "filter_map",
                 "enumerate", "peekable", "skip_while", "take_while", "skip", "take", "scan", "flat_map",
                 "flatten", "fuse", "inspect", "by_ref", "collect", "partition", "fold", "reduce", "all", "any"))


def api_page(name: str, summary: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><title>{name} in std::collections - Rust</title></head>"
            f"<body><main><h1>Struct {name}</h1><p>{summary}</p>{INHERITED}</main></body></html>")


def test_fingerprints_of_a_footer_change_are_near_and_siblings_are_not():
    a, b = simhash(article_text(FOOTER_A)), simhash(article_text(FOOTER_B))
    assert hamming(a, b) <= NEAR_DUPLICATE_BITS
    assert simhash("word " * (MIN_WORDS - 1)) is None
    assert simhash("same words again " * 20) == simhash("Same\twords  AGAIN\n" * 20)  # lower-cased, split at white space
    # blocks: one more than the near-duplicate bits, so neighbours share one
    assert len(bands(a, NEAR_DUPLICATE_BITS + 1)) == NEAR_DUPLICATE_BITS + 1
    flipped = to_signed(a ^ 0b1011)  # three bits apart
    assert hamming(a, flipped) == 3
    assert set(bands(a, 4)) & set(bands(flipped, 4))
    assert title_key(None) == 0 and title_key("x") == title_key("x") != title_key("y")


def article_text(footer: str) -> str:
    from textpile.summarize.scrape.document import scrape_document

    return scrape_document(article(footer), BASE + "/a").text_pile.text


def test_footer_only_duplicates_give_one_search_result_and_sibling_api_pages_two(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": Response(200, '<a href="/birds/nests.html">a</a> <a href="/print/birds/nests.html">b</a>'
                           ' <a href="/std/struct.Iter.html">c</a> <a href="/std/struct.IntoIter.html">d</a>', HTML),
        "/birds/nests.html": Response(200, article(FOOTER_A), HTML),
        "/print/birds/nests.html": Response(200, article(FOOTER_B), HTML),
        "/std/struct.Iter.html": Response(200, api_page("Iter", "An iterator over the elements of a deque, "
                                                                "borrowed."), HTML),
        "/std/struct.IntoIter.html": Response(200, api_page("IntoIter", "An owning iterator over the elements "
                                                                        "of a deque, moved out of it."), HTML),
    }
    with SiteServer(routes) as site:
        crawler_db = tmp_path / "crawl.db"
        run_crawl(config(tmp_path, [site.base_url + "/"]), crawler_db, progress=False)
    summary_db = tmp_path / "summary.db"
    report = summarize(crawler_db, summary_db, progress=False)
    assert (report.integration.exact_duplicates, report.integration.near_duplicates) == (0, 1)
    conn = register_functions(sqlite3.connect(summary_db))
    ids = dict(conn.execute("SELECT u.str_url, eg.entity_generation_id FROM entity_generation eg JOIN url u"
                            " USING (url_id) WHERE eg.text_pile_id IS NOT NULL").fetchall())
    short = {gid: url[len(site.base_url):] for url, gid in ids.items()}
    rows = conn.execute("SELECT d.subject_entity_generation_id, d.duplicate_of_entity_generation_id,"
                        " d.duplicate_status_end_unix_utc, n.hamming_distance FROM duplicate_summary d"
                        " JOIN textpile_near_duplicate n USING (subject_entity_generation_id,"
                        " duplicate_of_entity_generation_id)").fetchall()
    distance = hamming(simhash(article_text(FOOTER_A)), simhash(article_text(FOOTER_B)))
    assert [(short[s], short[o], end, d) for s, o, end, d in rows] == [
        ("/print/birds/nests.html", "/birds/nests.html", None, distance)]
    marked = conn.execute("SELECT u.str_url FROM entity_generation eg JOIN url u USING (url_id)"
                          " WHERE eg.marked_duplicate").fetchall()
    assert marked == [(site.base_url + "/print/birds/nests.html",)]
    # the footer's duplicates: one result; the sibling API pages: two
    assert [r.url for r in search(conn, "nest brooding blackbird").results] == [site.base_url + "/birds/nests.html"]
    assert sorted(r.url[len(site.base_url):] for r in search(conn, "iterator trait closure").results) == [
        "/std/struct.IntoIter.html", "/std/struct.Iter.html"]
    sibling = [simhash(conn.execute("SELECT tp.text FROM text_pile tp JOIN entity_generation eg ON"
                                    " eg.text_pile_id = tp.text_pile_id WHERE eg.entity_generation_id = ?",
                                    (ids[site.base_url + path],)).fetchone()[0])
               for path in ("/std/struct.Iter.html", "/std/struct.IntoIter.html")]
    # their main texts are as close as the footer's duplicates: the title keeps them apart
    assert hamming(*sibling) <= NEAR_DUPLICATE_BITS
    conn.close()


@pytest.fixture()
def dbs(tmp_path):
    rows = CrawlerRows(tmp_path / "crawler.db")
    yield rows, rows.agent(), tmp_path / "summary.db"
    rows.close()


def state(summary):
    conn = sqlite3.connect(summary)
    try:
        ids = {gid: url[len(BASE):] for gid, url in conn.execute(
            "SELECT eg.entity_generation_id, u.str_url FROM entity_generation eg JOIN url u USING (url_id)")}
        dup = [(ids[s], ids[o], start, end) for s, o, start, end in conn.execute(
            "SELECT * FROM duplicate_summary ORDER BY rowid")]
        marked = sorted(ids[g] for (g,) in conn.execute(
            "SELECT entity_generation_id FROM entity_generation WHERE marked_duplicate"))
        near = [(ids[s], ids[o]) for s, o, _ in conn.execute("SELECT * FROM textpile_near_duplicate")]
        return dup, marked, near
    finally:
        conn.close()


def test_near_duplicates_follow_changes_and_batches_agree(dbs, tmp_path):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/copy/nests.html", 100, html=article(FOOTER_A))
    rows.crawl(agent, f"{BASE}/nests.html", 110, html=article(FOOTER_B))
    rows.conn.commit()
    report = summarize(rows.path, summary, progress=False)
    assert (report.integration.exact_duplicates, report.integration.near_duplicates) == (0, 1)
    assert state(summary) == ([("/copy/nests.html", "/nests.html", 110, None)], ["/copy/nests.html"],
                              [("/copy/nests.html", "/nests.html")])
    # the original changes into something else: the copy is searchable again
    rows.crawl(agent, f"{BASE}/nests.html", 200, html=article(FOOTER_B).replace(ARTICLE, "<p>" + "moved " * 60))
    rows.conn.commit()
    report = summarize(rows.path, summary, progress=False)
    assert (report.integration.near_duplicates, report.integration.duplicates_ended) == (0, 1)
    assert state(summary) == ([("/copy/nests.html", "/nests.html", 110, 200)], [],
                              [("/copy/nests.html", "/nests.html")])
    # and back: the same pair again (a new row), and a third copy joins as near-duplicate
    rows.crawl(agent, f"{BASE}/nests.html", 300, html=article(FOOTER_A))
    rows.crawl(agent, f"{BASE}/a/b/c/nests.html", 300, html=article(FOOTER_B))
    rows.conn.commit()
    report = summarize(rows.path, summary, progress=False)
    assert (report.integration.exact_duplicates, report.integration.near_duplicates) == (1, 1)
    dup, marked, _ = state(summary)
    assert dup[1:] == [("/copy/nests.html", "/nests.html", 300, None), ("/a/b/c/nests.html", "/nests.html", 300, None)]
    assert marked == ["/a/b/c/nests.html", "/copy/nests.html"]
    # the same crawls summarized in one batch give the same marks
    whole = tmp_path / "whole.db"
    summarize(rows.path, whole, progress=False)
    assert state(whole)[1] == marked


def test_the_date_source_is_stored(dbs):
    rows, agent, summary = dbs
    markup = '<meta property="article:modified_time" content="2023-04-05T06:07:08Z">'
    text = "<p>" + "words about the page " * 12 + "</p>"
    head_page = "<!DOCTYPE html><html><head><title>T</title>{}</head><body><main>{}</main></body></html>"
    rows.crawl(agent, f"{BASE}/markup", 1_700_000_000, html=head_page.format(markup, text),
               last_modified=1_690_000_000)
    rows.crawl(agent, f"{BASE}/header", 1_700_000_000, html=head_page.format("", text + "<p>two</p>"),
               last_modified=1_690_000_000)
    # the crawler gave the file a sitemap's lastmod: not the answer's Last-Modified
    rows.crawl(agent, f"{BASE}/sitemap", 1_700_000_000, html=head_page.format("", text + "<p>three</p>"),
               last_modified=1_680_000_000)
    rows.conn.execute("UPDATE request SET server_last_modified_unix_utc = 1690000000 WHERE crawl_log_id ="
                      " (SELECT max(crawl_log_id) FROM crawl_log)")
    rows.crawl(agent, f"{BASE}/undated", 1_700_000_000, html=head_page.format("", text + "<p>four</p>"))
    rows.conn.commit()
    summarize(rows.path, summary, progress=False)
    conn = sqlite3.connect(summary)
    got = conn.execute("SELECT u.str_url, d.time_updated_unix_utc, p.time_updated_source FROM document_description d"
                       " JOIN entity_generation eg USING (entity_generation_id) JOIN url u USING (url_id)"
                       " LEFT JOIN textpile_page_date p USING (entity_generation_id) ORDER BY u.str_url").fetchall()
    conn.close()
    assert got == [(f"{BASE}/header", 1_690_000_000, "last-modified"),
                   (f"{BASE}/markup", 1680674828, "markup"),
                   (f"{BASE}/sitemap", 1_680_000_000, "sitemap"),
                   (f"{BASE}/undated", None, None)]
