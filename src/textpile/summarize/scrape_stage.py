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
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from textpile.enums import CrawlType, ExitCode
from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.scrape.result import LOCATION_FLAGS, ScrapeResult
from textpile.summarize.scrape_pool import ScrapePool
from textpile.summarize.staging import table_path, temporary_path

# Media types whose file_text is scraped into text piles.
SCRAPED_MEDIA_TYPES = ("text/html", "application/xhtml+xml", "text/plain")

SCRAPE_FILE_SCHEMA = pa.schema([
    ("file_id", pa.int64()),
    ("scrape_error", pa.string()),  # NULL when scraping worked
    ("noindex", pa.bool_()),
    ("gen1_digest", pa.binary()), ("gen1_text", pa.string()), ("gen1_secondary_text", pa.string()),
    ("gen1_big_headlines", pa.string()), ("gen1_small_headlines", pa.string()),
    ("gen1_code_text", pa.string()), ("gen1_quote_text", pa.string()),
    ("gen2_digest", pa.binary()), ("gen2_text", pa.string()), ("gen2_metadata", pa.binary()),
    ("gen2_segmentation_cache", pa.binary()),
    ("title", pa.string()), ("primary_headline", pa.string()), ("description", pa.string()),
    ("primary_language", pa.string()), ("time_created_unix_utc", pa.int64()),
    ("time_updated_unix_utc", pa.int64()), ("indexiness", pa.int64()),
])
SCRAPE_LINK_SCHEMA = pa.schema(
    [("file_id", pa.int64()), ("link_index", pa.int64()), ("to_url", pa.string()), ("fragment", pa.string()),
     ("rel_nofollow", pa.bool_()), ("rel_me", pa.bool_()), ("rel_tag", pa.bool_())]
    + [(flag, pa.bool_()) for flag in LOCATION_FLAGS]
    + [("contains_headline", pa.bool_()), ("destination_type", pa.int64()), ("link_locality", pa.int64()),
       ("html_tag_name", pa.string()), ("text", pa.string())]
)

SCRAPE_SECTION_SCHEMA = pa.schema([
    ("file_id", pa.int64()), ("section_index", pa.int64()), ("anchor", pa.string()), ("title", pa.string()),
    ("level", pa.int64()), ("start_offset", pa.int64()), ("end_offset", pa.int64()),
])


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


def _file_row(file_id: int, result: ScrapeResult) -> dict:
    tp, tp2, d = result.text_pile, result.text_pile_v0_2, result.description
    return {
        "file_id": file_id, "scrape_error": None, "noindex": bool(result.noindex),
        "gen1_digest": tp.blake2b512_digest, "gen1_text": tp.text, "gen1_secondary_text": tp.secondary_text,
        "gen1_big_headlines": tp.big_headlines, "gen1_small_headlines": tp.small_headlines,
        "gen1_code_text": tp.code_text, "gen1_quote_text": tp.quote_text,
        "gen2_digest": tp2.blake2b512_digest, "gen2_text": tp2.text, "gen2_metadata": tp2.metadata,
        "gen2_segmentation_cache": tp2.segmentation_cache,
        "title": d.title, "primary_headline": d.primary_headline, "description": d.description,
        "primary_language": d.primary_language, "time_created_unix_utc": d.time_created_unix_utc,
        "time_updated_unix_utc": d.time_updated_unix_utc, "indexiness": int(d.indexiness),
    }


def _error_row(file_id: int, error: str) -> dict:
    row = {name: None for name in SCRAPE_FILE_SCHEMA.names}
    row.update(file_id=file_id, scrape_error=error, noindex=False)
    return row


def _link_rows(file_id: int, result: ScrapeResult) -> list[dict]:
    rows = []
    for index, link in enumerate(result.links):
        row = {
            "file_id": file_id, "link_index": index, "to_url": link.to_url, "fragment": link.fragment,
            "rel_nofollow": link.rel_nofollow, "rel_me": link.rel_me, "rel_tag": link.rel_tag,
            "contains_headline": link.contains_headline, "destination_type": link.destination_type,
            "link_locality": int(link.link_locality), "html_tag_name": link.html_tag_name, "text": link.text,
        }
        for flag in LOCATION_FLAGS:
            row[flag] = flag in link.location
        rows.append(row)
    return rows


def _section_rows(file_id: int, result: ScrapeResult) -> list[dict]:
    return [{"file_id": file_id, "section_index": i, "anchor": sec.anchor, "title": sec.title, "level": sec.level,
             "start_offset": sec.start, "end_offset": sec.end} for i, sec in enumerate(result.sections)]


#: Files per chunk handed to a scraping worker (about 0.2 s of work on documentation pages).
CHUNK_FILES = 8


@dataclass
class ScrapedChunk:
    """What :func:`scrape_chunk` made of a chunk of files: the rows of the three
    scrape-result tables, as Arrow tables, and counts."""

    files: pa.Table
    links: pa.Table
    sections: pa.Table
    noindex: int = 0
    errors: int = 0


def scrape_chunk(rows: list[tuple]) -> ScrapedChunk:
    """Scrape the files of ``rows`` (as :func:`iter_files_to_scrape` gives them), in order.

    Runs in a scraping worker process (:class:`textpile.summarize.scrape_pool.ScrapePool`).
    A file whose scraping raises is a row with its error message in ``scrape_error``
    (counted in ``errors``) instead of stopping the whole run.
    """
    from textpile.summarize.scrape.document import scrape_document

    file_rows: list[dict] = []
    link_rows: list[dict] = []
    section_rows: list[dict] = []
    noindex = errors = 0
    for file_id, url, essence, last_modified, now, text in rows:
        try:
            result = scrape_document(text, url, mime_type=essence, last_modified_unix_utc=last_modified,
                                     now_unix_utc=now)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded per file, counted and reported
            file_rows.append(_error_row(file_id, f"{type(exc).__name__}: {exc}"))
            errors += 1
        else:
            file_rows.append(_file_row(file_id, result))
            link_rows.extend(_link_rows(file_id, result))
            section_rows.extend(_section_rows(file_id, result))
            noindex += bool(result.noindex)
    return ScrapedChunk(pa.Table.from_pylist(file_rows, schema=SCRAPE_FILE_SCHEMA),
                        pa.Table.from_pylist(link_rows, schema=SCRAPE_LINK_SCHEMA),
                        pa.Table.from_pylist(section_rows, schema=SCRAPE_SECTION_SCHEMA), noindex, errors)


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
