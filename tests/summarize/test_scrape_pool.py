"""Scraping in worker processes: the same rows as in one process, a bounded window of
chunks in flight, a dead worker is a clear error and leaves no scrape results."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from textpile.errors import TextpileError
from textpile.summarize.pipeline import scrape_staged, stage_crawl_log, summarize
from textpile.summarize.scrape_pool import CHUNKS_PER_WORKER, ScrapePool
from textpile.summarize.scrape_stage import CHUNK_FILES, scrape_batch
from textpile.summarize.staging import batch_dirs

from .summary_fixtures import CrawlerRows, dump_db, page, semantic_dump

BASE = "http://site.test"
PAGES = 3 * CHUNK_FILES + 5  # four chunks, the last one short


def build_crawler_db(path):
    with CrawlerRows(path) as rows:
        agent = rows.agent(started=1000)
        for i in range(PAGES):
            links = "".join(f'<a href="/p{j}.html">page {j}</a> ' for j in range(i, i + 3))
            rows.crawl(agent, f"{BASE}/p{i}.html", 1000 + i,
                       html=page(f"Page {i}", f"<p>Words of page {i}: lantern{i} kettle.</p><nav>{links}</nav>"))
        rows.crawl(agent, f"{BASE}/notes.txt", 2000, html="plain\n\ntext", mimetype="text/plain")
    return path


def _results(batch_dir):
    return {name: pq.read_table(batch_dir / f"{name}.parquet").to_pylist()
            for name in ("scrape_file", "scrape_link", "scrape_section")}


def test_workers_write_the_same_rows_as_one_process(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db")
    stage_crawl_log(crawler, tmp_path / "stage", progress=False)
    [batch] = batch_dirs(tmp_path / "stage")
    with ScrapePool(0) as pool:
        inline = scrape_batch(batch, pool=pool)
    alone = _results(batch)
    with ScrapePool(2) as pool:
        pooled = scrape_batch(batch, pool=pool)
        assert pool.workers_used == 2  # workers did the work
        assert pool._executor is None  # and ended with the batch: their memory is free for integration
    assert inline == pooled == (PAGES + 1, PAGES * 3, 0, 0)
    assert _results(batch) == alone
    files = alone["scrape_file"]
    urls = {row["file_id"]: row["str_url"] for row in pq.read_table(batch / "file.parquet").to_pylist()}
    assert [urls[r["file_id"]] for r in files] == sorted(urls.values())  # integration's order: by URL
    assert files[0]["gen1_text"] == "plain\ntext" and files[1]["title"] == "Page 0" and files[-1]["title"] == "Page 9"
    assert sorted(os.listdir(batch)) == sorted(["crawl_log.parquet", "file.parquet", "file_text.parquet",
                                                "redirect.parquet", "request.parquet", "scrape_file.parquet",
                                                "scrape_link.parquet", "scrape_section.parquet"])


def test_texts_are_staged_and_read_in_small_row_groups(tmp_path, monkeypatch):
    """file_text is written ROW_GROUP_ROWS files to a row group, and the scrape reads it
    row group by row group: no more texts in memory than a row group and the chunks."""
    from textpile.summarize import scrape_stage, staging

    monkeypatch.setitem(staging.ROW_GROUP_ROWS, "file_text", 4)
    crawler = build_crawler_db(tmp_path / "c.db")
    stage_crawl_log(crawler, tmp_path / "stage", progress=False)
    [batch] = batch_dirs(tmp_path / "stage")
    texts = pq.ParquetFile(batch / "file_text.parquet")
    assert [texts.metadata.row_group(i).num_rows for i in range(texts.num_row_groups)] == [4] * 7 + [2]
    urls = {row["file_id"]: row["str_url"] for row in pq.read_table(batch / "file.parquet").to_pylist()}
    assert [urls[i] for i in texts.read().column("file_id").to_pylist()] == sorted(urls.values())
    read = []
    real = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, i, **kw: read.append(i) or real(self, i, **kw))
    chunks = scrape_stage.iter_files_to_scrape(batch, 3)
    first = next(chunks)
    assert len(first) == 3 and first[0][1] == f"{BASE}/notes.txt" and read == [0]  # one row group read so far
    rest = list(chunks)
    assert read == list(range(8)) and sum(map(len, rest)) == PAGES + 1 - 3
    assert [row[0] for chunk in [first, *rest] for row in chunk] == texts.read().column("file_id").to_pylist()


def test_worker_columns_are_the_tables_columns():
    """The workers' rows (no pyarrow there, nor DuckDB or numpy: each is resident memory in
    every worker) come in the order of the tables' schemas."""
    import subprocess
    import sys

    from textpile.summarize import scrape_rows
    from textpile.summarize.scrape_stage import SCRAPE_FILE_SCHEMA, SCRAPE_LINK_SCHEMA, SCRAPE_SECTION_SCHEMA

    assert tuple(SCRAPE_FILE_SCHEMA.names) == scrape_rows.FILE_COLUMNS
    assert tuple(SCRAPE_LINK_SCHEMA.names) == scrape_rows.LINK_COLUMNS
    assert tuple(SCRAPE_SECTION_SCHEMA.names) == scrape_rows.SECTION_COLUMNS
    imported = subprocess.run(
        [sys.executable, "-c", "import sys; from textpile.summarize.scrape_pool import WORKER_MODULES\n"
         "for m in WORKER_MODULES: __import__(m)\n"
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyarrow', 'duckdb', 'numpy'}))"],
        capture_output=True, text=True, check=True).stdout
    assert imported == "[]\n"


def test_summaries_are_the_same_with_and_without_workers(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db")
    summarize(crawler, tmp_path / "one.db", progress=False, scrape_processes=0)
    summarize(crawler, tmp_path / "two.db", progress=False, scrape_processes=2)
    assert semantic_dump(tmp_path / "two.db") == semantic_dump(tmp_path / "one.db")
    one, two = dump_db(tmp_path / "one.db"), dump_db(tmp_path / "two.db")
    for table in ("url", "text_pile", "text_pile_v0_2", "document_description", "link_summary"):
        assert two[table] == one[table], table
    assert len(one["link_summary"]) == PAGES * 3
    assert scrape_staged(tmp_path / "nothing-staged", progress=False, scrape_processes=2).files_scraped == 0


def test_chunks_in_flight_are_bounded():
    taken = []

    def chunks():
        for i in range(20):
            taken.append(i)
            yield [i] * (i + 1)

    with ScrapePool(2) as pool:
        results = pool.map(len, chunks())
        assert next(results) == 1
        assert len(taken) == CHUNKS_PER_WORKER * 2  # not the 20 chunks
        assert list(results) == list(range(2, 21))
    assert len(taken) == 20


def test_one_chunk_is_scraped_without_workers():
    with ScrapePool(2) as pool:
        assert list(pool.map(len, [[1, 2, 3]])) == [3]
        assert pool._executor is None and pool.workers_used == 0


def test_a_dead_worker_is_a_clear_error(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db")
    stage_crawl_log(crawler, tmp_path / "stage", progress=False)
    [batch] = batch_dirs(tmp_path / "stage")
    with ScrapePool(2) as pool:
        with pytest.raises(TextpileError, match="a scraping worker process died"):
            list(pool.map(os._exit, [3, 3, 3]))
    # A batch whose scraping fails leaves no scrape result, not even a temporary one.
    with ScrapePool(2) as pool:
        pool.map = lambda function, chunks: (_ for _ in ()).throw(TextpileError("a scraping worker process died"))
        with pytest.raises(TextpileError):
            scrape_batch(batch, pool=pool)
    assert not any(name.startswith("scrape_") for name in os.listdir(batch))


def test_bad_process_counts_are_refused():
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="scraping processes"):
            ScrapePool(bad)
