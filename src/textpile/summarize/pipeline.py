"""The summarizer's stages, each reading only what the previous one wrote.

crawler DB --stage_crawl_log--> staging Parquet --scrape_staged--> scrape-result Parquet
--integrate_staged--> summary DB --rebuild_fts--> FTS5 index. :func:`summarize` runs them
all in batches of up to 1000 crawl log entries (the CLI); the Dagster assets call the
stages one by one per crawl-run partition.
Source: unobtanium-documentation.txt, pages "Summarizing", "Database Batching".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class StageReport:
    """What :func:`stage_crawl_log` wrote: batch folders and row counts per table."""

    batches: list[Path] = field(default_factory=list)
    crawl_log_entries: int = 0
    files: int = 0
    bytes_of_text: int = 0


@dataclass
class ScrapeReport:
    """What :func:`scrape_staged` wrote."""

    files_scraped: int = 0
    links: int = 0
    noindex: int = 0
    seconds: float = 0.0


@dataclass
class IntegrationReport:
    """What :func:`integrate_staged` changed in the summary database."""

    crawls_integrated: int = 0
    crawls_skipped: int = 0
    self_duplicates: int = 0
    exact_duplicates: int = 0
    generations_opened: int = 0
    generations_closed: int = 0
    seconds: float = 0.0


@dataclass
class SummaryReport:
    """What a whole :func:`summarize` run did (the seed's end report, plus figures)."""

    pages_processed: int = 0
    integration: IntegrationReport = field(default_factory=IntegrationReport)
    fts_rows: int = 0
    seconds: float = 0.0
    interrupted: bool = False


def stage_crawl_log(crawler_db: str | Path, staging_dir: str | Path, *, agent_uuid: uuid.UUID | None = None,
                    summary_db: str | Path | None = None, batch_size: int = 1000, progress: bool = True) -> StageReport:
    """Write crawl log entries (of one agent, or all) not yet in ``summary_db`` to Parquet."""
    raise NotImplementedError("staging: issue 3")


def scrape_staged(staging_dir: str | Path, *, progress: bool = True) -> ScrapeReport:
    """Scrape every staged file under ``staging_dir`` into scrape-result Parquet beside it."""
    raise NotImplementedError("scraping stage: issue 3")


def integrate_staged(summary_db: str | Path, staging_dir: str | Path, *, progress: bool = True) -> IntegrationReport:
    """Integrate staged crawl logs and scrape results into the summary database."""
    raise NotImplementedError("integration: issue 3")


def rebuild_fts(summary_db: str | Path) -> int:
    """(Re)build full_text_entity_index from open, non-duplicate generations; return rows."""
    raise NotImplementedError("fts: issue 3")


def summarize(crawler_db: str | Path, summary_db: str | Path, *, work_dir: str | Path | None = None,
              batch_size: int = 1000, progress: bool = True) -> SummaryReport:
    """Summarize every not yet integrated crawl log entry of ``crawler_db`` into ``summary_db``."""
    raise NotImplementedError("summarize: issue 3")
