"""Stage 2 of the summarizer: staged file texts to scrape-result Parquet.

For each staged batch folder, every file that can carry a text pile (crawl_type 0
file_crawl, exit code 20 file_ingested, an HTML or plain text media type, a file_text)
is scraped once with :func:`textpile.summarize.scrape.document.scrape_document`. The
results go beside the staged tables as ``scrape_file.parquet`` (one row per scraped
file: both text piles, the document description, noindex, or the scrape error) and
``scrape_link.parquet`` (one row per link) and ``scrape_section.parquet`` (one row per
section: heading or definition term with its anchor and span). Scraping is deterministic for a staged
batch: "now" is the request's time sent, so re-scraping gives the same rows.
Source: unobtanium-documentation.txt, page "Summarizing" (Deriving Content).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from textpile.enums import CrawlType, ExitCode
from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.scrape_pool import ScrapePool
from textpile.summarize.scrape_rows import (  # noqa: F401 - the stage's tables, made in the workers
    SCRAPE_FILE_SCHEMA, SCRAPE_LINK_SCHEMA, SCRAPE_SECTION_SCHEMA, ScrapedChunk, scrape_chunk,
)
from textpile.summarize.staging import table_path, temporary_path

# Media types whose file_text is scraped into text piles.
SCRAPED_MEDIA_TYPES = ("text/html", "application/xhtml+xml", "text/plain")

_SCRAPED_FILES_SQL = """
    FROM read_parquet(?) f
    JOIN read_parquet(?) cl ON cl.crawl_log_id = f.crawl_log_id
    JOIN read_parquet(?) ft ON ft.file_id = f.file_id
    LEFT JOIN read_parquet(?) r ON r.request_id = f.request_id
    WHERE cl.crawl_type = ? AND cl.exit_code = ? AND list_contains(?, f.mime_essence)
"""


def _scraped_files_params(batch_dir: Path) -> list:
    return [str(table_path(batch_dir, "file")), str(table_path(batch_dir, "crawl_log")),
            str(table_path(batch_dir, "file_text")), str(table_path(batch_dir, "request")),
            int(CrawlType.file_crawl), int(ExitCode.file_ingested), list(SCRAPED_MEDIA_TYPES)]


@duckdb_interrupts()
def count_files_to_scrape(batch_dir: Path) -> int:
    """How many files :func:`iter_files_to_scrape` gives for the batch (no text read)."""
    con = duckdb.connect()
    try:
        return int(con.execute("SELECT count(*) " + _SCRAPED_FILES_SQL, _scraped_files_params(batch_dir)).fetchone()[0])
    finally:
        con.close()


_FILES_TO_SCRAPE_SQL = (
    "SELECT f.file_id, f.str_url, f.mime_essence, f.last_modified_unix_utc, "
    "coalesce(r.time_sent_unix_utc, cl.time_started_unix_utc) AS now_unix_utc, ft.text "
    + _SCRAPED_FILES_SQL + " ORDER BY f.file_id"
)


def iter_files_to_scrape(batch_dir: Path, chunk_size: int) -> Iterator[list[tuple]]:
    """The ``(file_id, str_url, mime_essence, last_modified, now, text)`` rows of the files
    of a batch to scrape, in chunks of up to ``chunk_size`` (file_id order), fetched from
    DuckDB chunk by chunk (the staged crawl_log, file, request and file_text tables joined). Ctrl+C inside a DuckDB call is a KeyboardInterrupt
    (:func:`textpile.summarize.interrupts.duckdb_interrupts`)."""
    with duckdb_interrupts():
        con = duckdb.connect()
    try:
        with duckdb_interrupts():
            result = con.execute(_FILES_TO_SCRAPE_SQL, _scraped_files_params(batch_dir))
        while True:
            with duckdb_interrupts():
                rows = result.fetchmany(chunk_size)
            if not rows:
                return
            yield rows
    finally:
        con.close()


#: Files per chunk handed to a scraping worker (about 0.2 s of work on documentation pages).
CHUNK_FILES = 8


def scrape_batch(batch_dir: Path, *, on_file=None, pool: ScrapePool | None = None) -> tuple[int, int, int, int]:
    """Scrape one staged batch folder; return ``(files, links, noindex, errors)``.

    The files go in chunks of :data:`CHUNK_FILES` through ``pool`` (None: a pool of its
    own, one worker per CPU) and their rows are written chunk by chunk, so memory holds
    the batch's staged texts and the chunks in flight, never every result of the batch.
    The three Parquet files appear when the whole batch is scraped (written to temporary
    files, then renamed; an interrupted batch leaves none).
    A file whose scraping raises is recorded with its error message in ``scrape_error``
    (counted in the report and printed by the CLI) instead of stopping the whole run;
    integration then stores it as a generation with a file_summary but no text pile.
    ``on_file`` is called after each file (progress), chunk by chunk.

    Raises:
        TextpileError: a scraping worker process died (:meth:`ScrapePool.map`).
    """
    if pool is None:
        with ScrapePool() as own:
            return scrape_batch(batch_dir, on_file=on_file, pool=own)
    tables = (("scrape_file", SCRAPE_FILE_SCHEMA), ("scrape_link", SCRAPE_LINK_SCHEMA),
              ("scrape_section", SCRAPE_SECTION_SCHEMA))
    temporary = [temporary_path(table_path(batch_dir, name)) for name, _ in tables]
    files = links = noindex = errors = 0
    writers = [pq.ParquetWriter(path, schema, compression="zstd") for path, (_, schema) in zip(temporary, tables)]
    try:
        for chunk in pool.map(scrape_chunk, iter_files_to_scrape(batch_dir, CHUNK_FILES)):
            for writer, table in zip(writers, (chunk.files, chunk.links, chunk.sections)):
                if table.num_rows:
                    writer.write_table(table)
            files += chunk.files.num_rows
            links += chunk.links.num_rows
            noindex += chunk.noindex
            errors += chunk.errors
            if on_file is not None:
                for _ in range(chunk.files.num_rows):
                    on_file()
        for writer in writers:
            writer.close()
        for path, (name, _) in zip(temporary, tables):
            os.replace(path, table_path(batch_dir, name))
    finally:
        for writer, path in zip(writers, temporary):
            writer.close()
            path.unlink(missing_ok=True)
    return files, links, noindex, errors
