"""The rows of the scrape-result tables, made in the scraping workers.

:func:`scrape_chunk` scrapes a chunk of staged files with
:func:`textpile.summarize.scrape.document.scrape_document` and gives back the rows of
``scrape_file``, ``scrape_link`` and ``scrape_section`` as Arrow tables (their schemas
are here). It is what a scraping worker process runs
(:class:`textpile.summarize.scrape_pool.ScrapePool`), so this module imports only what
that needs: pyarrow and the scrape, not DuckDB (the workers' memory,
:data:`textpile.summarize.scrape_pool.WORKER_MODULES`). The stage around it is
:mod:`textpile.summarize.scrape_stage`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from textpile.summarize.scrape.result import LOCATION_FLAGS, ScrapeResult

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
