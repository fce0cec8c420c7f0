"""Scrape results come in the order integration reads them (by URL, then time), whole
chunks to a row group (RESULTS_GROUP_FILES files; two chunks here), and integration reads
them back a row group at a time, each once (its memory holds one row group's results, not
the batch's); results in any other order, such as an older textpile's file_id order, give
the same summary."""

from __future__ import annotations

import sqlite3

import pyarrow.parquet as pq
import pytest

from textpile.errors import TextpileError
from textpile.store.gen2_piles import register_functions
from textpile.summarize.pipeline import integrate_staged, scrape_staged, stage_crawl_log
from textpile.summarize import scrape_stage
from textpile.summarize.scrape_stage import CHUNK_FILES, ScrapedRows
from textpile.summarize.staging import batch_dirs

from .summary_fixtures import CrawlerRows, page, semantic_dump

BASE = "http://site.test"
PAGES = 2 * CHUNK_FILES + 3
RESULTS = ("scrape_file", "scrape_link", "scrape_section")
#: Files per row group in these tests: two chunks (the batch's 20 files: chunks of 8, 8
#: and 4, row groups of 16 and 4).
GROUP_FILES = 2 * CHUNK_FILES


@pytest.fixture(autouse=True)
def two_chunks_a_row_group(monkeypatch):
    monkeypatch.setattr(scrape_stage, "RESULTS_GROUP_FILES", GROUP_FILES)


def build_crawler_db(path):
    """PAGES pages crawled in an order other than their URLs' (integration goes by URL),
    page i with i % 4 links and three sections (its h1 and two h2), and a plain text file."""
    with CrawlerRows(path) as rows:
        agent = rows.agent(started=1000)
        for n, i in enumerate(sorted(range(PAGES), key=lambda i: (i * 7) % PAGES)):
            links = "".join(f'<a href="/p{j}.html">to {j}</a> ' for j in range(i % 4))
            body = (f"<h2 id='a{i}'>First {i}</h2><p>Words of page {i}: lantern{i}. {links}</p>"
                    f"<h2 id='b{i}'>Second {i}</h2><p>More words: kettle{i}.</p>")
            rows.crawl(agent, f"{BASE}/p{i:02d}.html", 1000 + n, html=page(f"Page {i}", body))
        rows.crawl(agent, f"{BASE}/notes.txt", 2000, html="plain\n\ntext", mimetype="text/plain")
    return path


def _scraped_batch(tmp_path, name="stage"):
    crawler = build_crawler_db(tmp_path / f"{name}-crawler.db")
    stage_crawl_log(crawler, tmp_path / name, progress=False)
    scrape_staged(tmp_path / name, progress=False, scrape_processes=0)
    [batch] = batch_dirs(tmp_path / name)
    return batch


def _groups(path):
    """The file_ids of each row group of a scrape-result file."""
    parquet = pq.ParquetFile(path)
    return [parquet.read_row_group(g, columns=["file_id"]).column(0).to_pylist()
            for g in range(parquet.num_row_groups)]


def test_results_are_in_url_order_whole_chunks_to_a_row_group(tmp_path):
    batch = _scraped_batch(tmp_path)
    urls = {row["file_id"]: row["str_url"] for row in pq.read_table(batch / "file.parquet").to_pylist()}
    by_url = sorted(urls, key=urls.get)
    assert [urls[f] for f in by_url[:3]] == [f"{BASE}/notes.txt", f"{BASE}/p00.html", f"{BASE}/p01.html"]
    assert by_url != sorted(urls)  # crawled (file ids given) in another order
    chunks = [by_url[i:i + GROUP_FILES] for i in range(0, len(by_url), GROUP_FILES)]
    assert [len(c) for c in chunks] == [16, 4]
    assert _groups(batch / "scrape_file.parquet") == chunks
    page_of = {f: int(urls[f][-7:-5]) for f in by_url[1:]}  # .../pNN.html
    assert _groups(batch / "scrape_link.parquet") == [
        [f for f in chunk for _ in range(page_of.get(f, 0) % 4)] for chunk in chunks]
    assert _groups(batch / "scrape_section.parquet") == [
        [f for f in chunk if f in page_of for _ in range(3)] for chunk in chunks]
    for name in ("scrape_file", "scrape_link", "scrape_section"):  # RESULTS_COMPRESSION
        metadata = pq.ParquetFile(batch / f"{name}.parquet").metadata
        assert {metadata.row_group(0).column(c).compression for c in range(metadata.num_columns)} == {"LZ4"}


def test_a_row_group_ends_early_when_its_texts_are_long(tmp_path, monkeypatch):
    """Results whose texts reach RESULTS_GROUP_TEXT_CHARS are written before the row group
    has RESULTS_GROUP_FILES files: here every chunk (each page's text is longer than the
    bound) is a row group of its own, and integration reads the same summary."""
    whole = _scraped_batch(tmp_path, "whole")
    monkeypatch.setattr(scrape_stage, "RESULTS_GROUP_TEXT_CHARS", 1)
    early = _scraped_batch(tmp_path, "early")
    ids = [f for group in _groups(whole / "scrape_file.parquet") for f in group]
    assert [len(g) for g in _groups(whole / "scrape_file.parquet")] == [16, 4]
    assert _groups(early / "scrape_file.parquet") == [ids[i:i + CHUNK_FILES] for i in range(0, len(ids), CHUNK_FILES)]
    integrate_staged(tmp_path / "whole.db", tmp_path / "whole", progress=False)
    integrate_staged(tmp_path / "early.db", tmp_path / "early", progress=False)
    assert _content(tmp_path / "early.db") == _content(tmp_path / "whole.db")


def test_integration_reads_each_row_group_once(tmp_path, monkeypatch):
    batch = _scraped_batch(tmp_path)
    read = []
    real = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, i, **kw: read.append((self.reader.metadata.num_columns, i, kw.get("columns")))
                        or real(self, i, **kw))
    integrate_staged(tmp_path / "s.db", tmp_path / "stage", progress=False)
    groups = -(-(PAGES + 1) // GROUP_FILES)
    assert groups == 2
    whole = sorted((columns, i) for columns, i, picked in read if picked is None)
    # scrape_section, scrape_file and scrape_link (7, 23 and 27 columns): each group once
    assert whole == [(n, i) for n in (7, 23, 27) for i in range(groups)]


def test_rows_come_alike_in_any_order(tmp_path):
    batch = _scraped_batch(tmp_path)
    table = pq.read_table(batch / "scrape_link.parquet").to_pylist()
    links = ScrapedRows(batch / "scrape_link.parquet")
    file_ids = sorted({row["file_id"] for row in table}, reverse=True)
    assert len(file_ids) == sum(1 for i in range(PAGES) if i % 4)
    for file_id in file_ids:
        assert links.rows(file_id) == [row for row in table if row["file_id"] == file_id]
    assert links.rows(10**9) == []
    links.close()


def test_results_in_file_id_order_integrate_alike(tmp_path):
    """Results in file_id order (an older textpile's), a row group of 5 files, integrate
    into the same summary as results in integration's order."""
    new = _scraped_batch(tmp_path, "new")
    old = _scraped_batch(tmp_path, "old")
    for name in RESULTS:
        table = pq.read_table(old / f"{name}.parquet").sort_by([("file_id", "ascending")])
        pq.write_table(table, old / f"{name}.parquet", row_group_size=5, compression="zstd")
    assert [len(g) for g in _groups(old / "scrape_file.parquet")] == [5, 5, 5, 5]
    integrate_staged(tmp_path / "new.db", tmp_path / "new", progress=False)
    integrate_staged(tmp_path / "old.db", tmp_path / "old", progress=False)
    content = _content(tmp_path / "new.db")
    assert [len(content[t]) for t in ("pages", "sections", "links")] == [
        PAGES + 1, 3 * PAGES, sum(i % 4 for i in range(PAGES))]
    assert content["pages"][0][:3] == (f"{BASE}/notes.txt", None, "plain\ntext")
    assert content["sections"][:2] == [(f"{BASE}/p00.html", 0, None, "Page 0", 1),
                                       (f"{BASE}/p00.html", 1, "a0", "First 0", 2)]
    assert _content(tmp_path / "old.db") == content
    old_meaning, new_meaning = semantic_dump(tmp_path / "old.db"), semantic_dump(tmp_path / "new.db")
    del old_meaning["crawls"], new_meaning["crawls"]  # two crawler databases: other crawl uuids
    assert old_meaning == new_meaning


def _content(path):
    """What integration stored of each page (text pile, description, sections, links) by URL."""
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        by_url = "FROM entity_generation eg JOIN url u USING (url_id)"
        return {
            "pages": sorted(conn.execute(
                f"SELECT u.str_url, dd.title, tp.text, tp.secondary_text, tp.code_text, dd.primary_language,"
                f" dd.indexiness {by_url} JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id"
                " JOIN document_description dd USING (entity_generation_id)"), key=repr),
            "sections": sorted(conn.execute(
                f"SELECT u.str_url, s.section_index, s.anchor, s.title, s.level {by_url}"
                " JOIN section_summary s USING (entity_generation_id)"), key=repr),
            "links": sorted(conn.execute(
                f"SELECT u.str_url, l.link_to_url, l.text, l.in_main, l.in_paragraph {by_url}"
                " JOIN link_summary l USING (entity_generation_id)"), key=repr),
        }
    finally:
        conn.close()


def test_a_damaged_scrape_result_file_is_named_and_nothing_is_integrated(tmp_path):
    """A scrape-result file cut short (pyarrow's message names no file) stops integration
    with the file's path and what to do; the summary database gets none of the batch, and
    scraping again then integrating gives the whole batch."""
    batch = _scraped_batch(tmp_path)
    damaged = batch / "scrape_link.parquet"
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    with pytest.raises(TextpileError) as caught:
        integrate_staged(tmp_path / "s.db", tmp_path / "stage", progress=False)
    assert str(caught.value).startswith(f"{damaged}: not a readable Parquet file of scrape results (")
    assert str(caught.value).endswith("); scrape the batch again (scrape_staged, or `textpile summarize`)")
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT count(*) FROM entity_generation").fetchone() == (0,)
    scrape_staged(tmp_path / "stage", progress=False, scrape_processes=0)
    integrate_staged(tmp_path / "s.db", tmp_path / "stage", progress=False)
    assert [len(v) for v in _content(tmp_path / "s.db").values()] == [
        PAGES + 1, 3 * PAGES, sum(i % 4 for i in range(PAGES))]
