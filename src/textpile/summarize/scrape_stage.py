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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from textpile.enums import CrawlType, ExitCode
from textpile.errors import TextpileError
from textpile.store.mimetypes import TEXT_TYPES
from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.scrape.result import LOCATION_FLAGS
from textpile.summarize.scrape_pool import ScrapePool
from textpile.summarize.scrape_rows import FILE_COLUMNS, LINK_COLUMNS, SECTION_COLUMNS, ScrapedChunk, scrape_chunk
from textpile.summarize.staging import table_path, temporary_path

# The tables the workers' columns become: the same names, in the same order, as
# textpile.summarize.scrape_rows.FILE_COLUMNS, LINK_COLUMNS and SECTION_COLUMNS.
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
    ("time_updated_source", pa.string()),  # markup, sitemap or last-modified; NULL without time_updated
    ("simhash", pa.int64()),  # the main text's fingerprint (scrape/fingerprint.py); NULL when too short
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
            int(CrawlType.file_crawl), int(ExitCode.file_ingested), sorted(TEXT_TYPES)]  # whose file_text is scraped


@duckdb_interrupts()
def count_files_to_scrape(batch_dir: Path) -> int:
    """How many files :func:`iter_files_to_scrape` gives for the batch (no text read)."""
    con = duckdb.connect()
    try:
        return int(con.execute("SELECT count(*) " + _SCRAPED_FILES_SQL, _scraped_files_params(batch_dir)).fetchone()[0])
    finally:
        con.close()


# Where the file's date came from: the crawler takes a sitemap's lastmod of the URL first
# (crawl/interpret.py), else the answer's Last-Modified; a date that is not the answer's
# Last-Modified header came from a sitemap.
_FILES_TO_SCRAPE_SQL = (
    "SELECT f.file_id, f.str_url, f.mime_essence, f.last_modified_unix_utc, "
    "CASE WHEN f.last_modified_unix_utc IS NOT DISTINCT FROM r.server_last_modified_unix_utc "
    "OR f.request_id IS NULL THEN 'last-modified' ELSE 'sitemap' END AS last_modified_source, "
    "coalesce(r.time_sent_unix_utc, cl.time_started_unix_utc) AS now_unix_utc "
    + _SCRAPED_FILES_SQL + " ORDER BY f.file_id"
)


def iter_files_to_scrape(batch_dir: Path, chunk_size: int) -> Iterator[list[tuple]]:
    """The ``(file_id, str_url, mime_essence, last_modified, last_modified_source, now, text)`` rows of the files
    of a batch to scrape, in chunks of up to ``chunk_size``, in the order of the staged
    ``file_text`` (the order in which integration reads them:
    :func:`textpile.summarize.staging.write_batch`).

    What to scrape and with what URL and times comes from DuckDB (the staged crawl_log,
    file, request and file_text tables joined, no text read); the texts are then read from
    ``file_text.parquet`` one row group at a time (:data:`textpile.summarize.staging.ROW_GROUP_ROWS`),
    so memory holds one row group of texts and the chunks in flight, never the batch's
    texts. Ctrl+C inside a DuckDB call is a KeyboardInterrupt
    (:func:`textpile.summarize.interrupts.duckdb_interrupts`)."""
    with duckdb_interrupts():
        con = duckdb.connect()
        try:
            files = {row[0]: row for row in con.execute(_FILES_TO_SCRAPE_SQL, _scraped_files_params(batch_dir)).fetchall()}
        finally:
            con.close()
    if not files:
        return
    chunk: list[tuple] = []
    texts = pq.ParquetFile(table_path(batch_dir, "file_text"))
    try:
        for group in range(texts.num_row_groups):
            table = texts.read_row_group(group, columns=["file_id", "text"], use_threads=False)
            for file_id, text in zip(table.column(0).to_pylist(), table.column(1).to_pylist()):
                row = files.get(file_id)
                if row is None:
                    continue
                chunk.append((*row, text))
                if len(chunk) >= chunk_size:
                    yield chunk
                    chunk = []
            del table
            # Arrow's allocator keeps the row group's freed buffers (mimalloc: about 4 MiB a
            # row group, never reused by the next one); give them back.
            pa.default_memory_pool().release_unused()
        if chunk:
            yield chunk
    finally:
        texts.close()


#: The compression of the scrape-result Parquet files. They live from a batch's scraping
#: to its integration: LZ4 writes and reads them in 0.41 CPU-s for 1,000 documentation
#: pages (the growth benchmark's changed pages at 100K), against 0.66 for zstd (Arrow's
#: default level) and 0.36 uncompressed, in 14.4 MB against 11.3 MB and 29.3 MB of
#: temporary disk.
RESULTS_COMPRESSION = "lz4"
#: Files per chunk handed to a scraping worker (about 0.2 s of work on documentation pages).
CHUNK_FILES = 8
#: Files per row group of the scrape-result files (whole chunks: a row group is written
#: once this many files' rows are at hand, or :data:`RESULTS_GROUP_TEXT_CHARS` of their
#: texts, and at the end). A row group costs Arrow a table, column chunks with their
#: statistics and a write call whatever its rows: the results of the growth benchmark's
#: 1,000 changed pages at 100K are written in 0.30-0.40 CPU-s in row groups of 64 files
#: against 0.53-0.59 in row groups of one chunk (8 files); 64 files of documentation pages
#: are about 2 MB of results.
RESULTS_GROUP_FILES = 64
#: Characters of Gen2 text after which the results at hand are written as a row group
#: before :data:`RESULTS_GROUP_FILES` files are (pages of megabytes of text).
RESULTS_GROUP_TEXT_CHARS = 16 * 1024 * 1024


def scrape_batch(batch_dir: Path, *, on_file=None, pool: ScrapePool | None = None) -> tuple[int, int, int, int]:
    """Scrape one staged batch folder; return ``(files, links, noindex, errors)``.

    The files go in chunks of :data:`CHUNK_FILES` through ``pool`` (None: a pool of its
    own, one worker per CPU) and their rows are written a row group of
    :data:`RESULTS_GROUP_FILES` files (whole chunks; fewer when their texts reach
    :data:`RESULTS_GROUP_TEXT_CHARS`) at a time, so memory holds one row group of staged
    texts, one of results and the chunks in flight, never every result of the batch. The
    row groups of the three files hold the same files, in the order of the staged texts;
    integration reads them back a row group at a time (:class:`ScrapedRows`).
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
    writers = [pq.ParquetWriter(path, schema, compression=RESULTS_COMPRESSION)
               for path, (_, schema) in zip(temporary, tables)]
    held: list[ScrapedChunk] = []  # the chunks of the next row group

    def write_held() -> None:
        for writer, (_, schema), part in zip(writers, tables, ("files", "links", "sections")):
            parts = [getattr(chunk, part) for chunk in held]
            if any(p["file_id"] for p in parts):
                columns = {name: [v for p in parts for v in p[name]] for name in parts[0]}
                writer.write_table(pa.Table.from_pydict(columns, schema=schema))
        held.clear()

    def held_text() -> int:
        return sum(len(text) for chunk in held for text in chunk.files["gen2_text"] if text is not None)

    try:
        for chunk in pool.map(scrape_chunk, iter_files_to_scrape(batch_dir, CHUNK_FILES)):
            held.append(chunk)
            if sum(c.file_count for c in held) >= RESULTS_GROUP_FILES or held_text() >= RESULTS_GROUP_TEXT_CHARS:
                write_held()
            files += chunk.file_count
            links += chunk.link_count
            noindex += chunk.noindex
            errors += chunk.errors
            if on_file is not None:
                for _ in range(chunk.file_count):
                    on_file()
        write_held()
        for writer in writers:
            writer.close()
        for path, (name, _) in zip(temporary, tables):
            os.replace(path, table_path(batch_dir, name))
    finally:
        for writer, path in zip(writers, temporary):
            writer.close()
            path.unlink(missing_ok=True)
    return files, links, noindex, errors


class ScrapedRows:
    """The rows of one scrape-result Parquet file (``scrape_file``, ``scrape_link`` or
    ``scrape_section`` of a batch) given out by file_id, reading a row group (the rows of
    up to :data:`RESULTS_GROUP_FILES` files, :func:`scrape_batch`) when a file in it is
    asked for and keeping only the last one read: memory holds one row group's results,
    never the batch's. Asked for in the order written (integration's order:
    :func:`textpile.summarize.staging.write_batch`), each row group is read once; any other
    order gives the same rows, reading row groups again.
    The file_id column is read once, on opening.

    Raises:
        TextpileError: ``path`` cannot be read as Parquet (the message names it and the
            reader's reason), on opening or when a row group is read.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with self._reading():
            self._file = pq.ParquetFile(path)
        #: file_id -> its runs of rows: (row group, first row in it, rows)
        self._runs: dict[int, list[tuple[int, int, int]]] = {}
        for group in range(self._file.num_row_groups):
            with self._reading():
                ids = self._file.read_row_group(group, columns=["file_id"], use_threads=False).column(0).to_pylist()
            start = 0
            for file_id, run in groupby(ids):
                count = sum(1 for _ in run)
                self._runs.setdefault(file_id, []).append((group, start, count))
                start += count
        self._group = -1
        self._names: list[str] = []
        self._columns: list[list] = []  # the row group read last, column by column

    def rows(self, file_id: int) -> list[dict]:
        """The rows of ``file_id`` as dicts of column name to value, in the order written
        (none: an empty list)."""
        values = self.values(file_id)
        return [dict(zip(self._names, row)) for row in values]

    def values(self, file_id: int, columns: Sequence[str] | None = None) -> list[tuple]:
        """The rows of ``file_id`` as tuples of the values of ``columns`` (names; None: every
        column, in the file's order), in the order written (none: an empty list). No dict
        is made per row: the 168,829 links of 1,000 changed pages at 100K are stored from
        these tuples.

        Raises:
            ValueError: a name of ``columns`` is not a column of the file.
        """
        out: list[tuple] = []
        for group, start, count in self._runs.get(file_id, ()):
            self._load(group)
            if columns is None:
                picked = self._columns
            else:
                unknown = [name for name in columns if name not in self._names]
                if unknown:
                    raise ValueError(f"{self._path}: no column {', '.join(unknown)} (it has {', '.join(self._names)})")
                picked = [self._columns[self._names.index(name)] for name in columns]
            out.extend(zip(*(column[start:start + count] for column in picked)))
        return out

    def _load(self, group: int) -> None:
        """Make row group ``group`` the one read last (read and converted, when it is not)."""
        if group == self._group:
            return
        self._columns = []  # the row group before is freed before the next is read
        with self._reading():
            table = self._file.read_row_group(group, use_threads=False)
        # converted column by column, once per row group: a table slice's to_pylist()
        # per file took 2.5x as long (the 168,829 links of 1,000 changed pages at
        # 100K: 0.47 against 0.19 CPU-s)
        self._names = table.column_names
        self._columns = [column.to_pylist() for column in table.columns]
        del table
        # Arrow's allocator (mimalloc) would keep the freed buffers of the row
        # groups read: up to 66 MiB over a batch of documentation pages.
        pa.default_memory_pool().release_unused()
        self._group = group

    @contextmanager
    def _reading(self) -> Iterator[None]:
        # pyarrow's messages ("Parquet magic bytes not found in footer...") name no file.
        try:
            yield
        except (OSError, pa.ArrowException) as exc:
            raise TextpileError(f"{self._path}: not a readable Parquet file of scrape results ({exc}); "
                                "scrape the batch again (scrape_staged, or `textpile summarize`)") from exc

    def close(self) -> None:
        """Close the file and free the row group read last."""
        self._columns = []
        self._file.close()
