"""The rows of the scrape-result tables, made in the scraping workers.

:func:`scrape_chunk` scrapes a chunk of staged files with
:func:`textpile.summarize.scrape.document.scrape_document` and gives back the rows of
``scrape_file``, ``scrape_link`` and ``scrape_section`` as columns (a dict of column name
to a list of Python values, one per row). It is what a scraping worker process runs
(:class:`textpile.summarize.scrape_pool.ScrapePool`), so this module imports only what
that needs: the scrape, not pyarrow or DuckDB (the workers' memory: pyarrow alone is
about 36 MiB resident in every worker and in the forkserver,
:data:`textpile.summarize.scrape_pool.WORKER_MODULES`). The stage around it,
:mod:`textpile.summarize.scrape_stage`, makes Arrow tables of the columns (their
schemas are there) and writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from textpile.summarize.scrape.result import LOCATION_FLAGS, ScrapeResult

#: The columns of a ``scrape_file`` row, in the order of its schema.
FILE_COLUMNS = (
    "file_id", "scrape_error", "noindex",
    "gen1_digest", "gen1_text", "gen1_secondary_text", "gen1_big_headlines", "gen1_small_headlines",
    "gen1_code_text", "gen1_quote_text",
    "gen2_digest", "gen2_text", "gen2_metadata", "gen2_segmentation_cache",
    "title", "primary_headline", "description", "primary_language", "time_created_unix_utc",
    "time_updated_unix_utc", "indexiness", "time_updated_source", "simhash",
)
#: The columns of a ``scrape_link`` row: one per link, in the order of the page.
LINK_COLUMNS = ("file_id", "link_index", "to_url", "fragment", "rel_nofollow", "rel_me", "rel_tag",
                *LOCATION_FLAGS, "contains_headline", "destination_type", "link_locality", "html_tag_name", "text")
#: The columns of a ``scrape_section`` row.
SECTION_COLUMNS = ("file_id", "section_index", "anchor", "title", "level", "start_offset", "end_offset")


def _file_row(file_id: int, result: ScrapeResult) -> tuple:
    tp, tp2, d = result.text_pile, result.text_pile_v0_2, result.description
    return (file_id, None, bool(result.noindex),
            tp.blake2b512_digest, tp.text, tp.secondary_text, tp.big_headlines, tp.small_headlines,
            tp.code_text, tp.quote_text,
            tp2.blake2b512_digest, tp2.text, tp2.metadata, tp2.segmentation_cache,
            d.title, d.primary_headline, d.description, d.primary_language, d.time_created_unix_utc,
            d.time_updated_unix_utc, int(d.indexiness), d.time_updated_source, result.fingerprint)


def _error_row(file_id: int, error: str) -> tuple:
    return (file_id, error, False) + (None,) * (len(FILE_COLUMNS) - 3)


def _link_rows(file_id: int, result: ScrapeResult) -> list[tuple]:
    rows = []
    # a page's links share a few location signatures: each one's flag columns made once
    flag_columns: dict[frozenset[str], tuple[bool, ...]] = {}
    for index, link in enumerate(result.links):
        location = link.location
        flags = flag_columns.get(location)
        if flags is None:
            flags = flag_columns[location] = tuple([flag in location for flag in LOCATION_FLAGS])
        rows.append((file_id, index, link.to_url, link.fragment, link.rel_nofollow, link.rel_me, link.rel_tag,
                     *flags, link.contains_headline,
                     link.destination_type, int(link.link_locality), link.html_tag_name, link.text))
    return rows


def _section_rows(file_id: int, result: ScrapeResult) -> list[tuple]:
    return [(file_id, i, sec.anchor, sec.title, sec.level, sec.start, sec.end) for i, sec in enumerate(result.sections)]


def _columns(names: tuple[str, ...], rows: list[tuple]) -> dict[str, list]:
    if not rows:
        return {name: [] for name in names}
    return {name: list(values) for name, values in zip(names, zip(*rows))}


@dataclass
class ScrapedChunk:
    """What :func:`scrape_chunk` made of a chunk of files: the rows of the three
    scrape-result tables as columns (:data:`FILE_COLUMNS`, :data:`LINK_COLUMNS`,
    :data:`SECTION_COLUMNS` to lists of values), and counts."""

    files: dict[str, list]
    links: dict[str, list]
    sections: dict[str, list]
    noindex: int = 0
    errors: int = 0

    @property
    def file_count(self) -> int:
        """Rows of ``scrape_file`` (files scraped, errors included)."""
        return len(self.files["file_id"])

    @property
    def link_count(self) -> int:
        """Rows of ``scrape_link``."""
        return len(self.links["file_id"])


def scrape_chunk(rows: list[tuple]) -> ScrapedChunk:
    """Scrape the files of ``rows`` (as :func:`iter_files_to_scrape` gives them), in order.

    Runs in a scraping worker process (:class:`textpile.summarize.scrape_pool.ScrapePool`).
    A file whose scraping raises is a row with its error message in ``scrape_error``
    (counted in ``errors``) instead of stopping the whole run.
    """
    from textpile.summarize.scrape.document import scrape_document

    file_rows: list[tuple] = []
    link_rows: list[tuple] = []
    section_rows: list[tuple] = []
    noindex = errors = 0
    for file_id, url, essence, last_modified, last_modified_source, now, text in rows:
        try:
            result = scrape_document(text, url, mime_type=essence, last_modified_unix_utc=last_modified,
                                     now_unix_utc=now, last_modified_source=last_modified_source)
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
    return ScrapedChunk(_columns(FILE_COLUMNS, file_rows), _columns(LINK_COLUMNS, link_rows),
                        _columns(SECTION_COLUMNS, section_rows), noindex, errors)
