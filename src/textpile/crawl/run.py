"""Running a crawl: one origin crawler per seed origin, concurrently, and the end report.

Source: unobtanium-documentation.txt, pages "Crawl Loop", "Crawl Delay between Requests",
"Crawler User-Agent and robots.txt", "Crawl exit code".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from textpile.crawl.config import CrawlConfig


@dataclass
class CrawlReport:
    """What one crawl run did (the seed's "Crawl_Statistics_Report", plus figures).

    ``exit_code_counts`` maps exit code names to counts of crawl log entries written.
    """

    agent_uuid: uuid.UUID
    out_of_patience_origins: list[str] = field(default_factory=list)
    total_requests: int = 0
    ingested_files: int = 0
    exit_code_counts: dict[str, int] = field(default_factory=dict)
    bytes_received: int = 0
    duration_s: float = 0.0
    interrupted: bool = False


def run_crawl(
    config: CrawlConfig,
    database: str | Path,
    *,
    worker_name: str = "ant",
    agent_uuid: uuid.UUID | None = None,
    force_recrawl: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: bool = True,
) -> CrawlReport:
    """Run one crawl run of ``config`` into the crawler database at ``database``.

    ``agent_uuid`` names the run (the Dagster partition key is its hex); a new UUID v7
    when None. ``transport`` replaces the network (tests, offline fetchers); when None
    textpile's own transport is used, which refuses private addresses unless
    ``config.allow_private_addresses``.
    """
    raise NotImplementedError("crawl loop: issue 2")
