"""Running a crawl: one origin crawler per seed origin, concurrently, and the end report.

Source: unobtanium-documentation.txt, pages "Crawl Loop", "Crawl Delay between Requests",
"Crawler User-Agent and robots.txt", "Crawl exit code", "Your first search engine"
(the statistics report, then optimizing and vacuuming the database).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from textpile.crawl.config import CrawlConfig
from textpile.crawl.crawldb import CrawlerDb
from textpile.crawl.fetch import ACCEPT, ACCEPT_ENCODING, FetchLimits
from textpile.crawl.origin import OriginCrawler, RunState
from textpile.crawl.report import CrawlDisplay
from textpile.crawl.robots import user_agent_token
from textpile.ids import uuid7
from textpile.store.database import open_crawler_db, optimize_and_vacuum
from textpile.store.urls import parse_url


@dataclass
class CrawlReport:
    """What one crawl run did (the seed's "Crawl_Statistics_Report", plus figures).

    ``exit_code_counts`` maps exit code names to counts of crawl log entries written
    (robots.txt fetches included). ``total_requests`` counts HTTP requests sent (fluke
    retries and robots.txt redirects included); ``ingested_files`` counts file crawls
    with exit 20; ``bytes_received`` counts body bytes as sent (before content decoding);
    ``interrupted`` is True when Ctrl+C or cancellation stopped the run.
    ``origins`` lists the run's seed origins (``str_origin``); ``refused_origins`` maps
    each origin the SSRF filter refused to connect to (its address is loopback, private,
    link-local or reserved and ``allow_private_addresses`` is off) to the refusal message,
    which says how to allow it. A refused origin stops at once (patience 0), so it is in
    ``out_of_patience_origins`` too.
    """

    agent_uuid: uuid.UUID
    out_of_patience_origins: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    refused_origins: dict[str, str] = field(default_factory=dict)
    total_requests: int = 0
    ingested_files: int = 0
    exit_code_counts: dict[str, int] = field(default_factory=dict)
    bytes_received: int = 0
    duration_s: float = 0.0
    interrupted: bool = False

    @property
    def every_origin_refused(self) -> bool:
        """True when the run had seed origins and the SSRF filter refused every one of
        them, so nothing could be crawled."""
        return bool(self.origins) and all(origin in self.refused_origins for origin in self.origins)

    def refusal_message(self) -> str:
        """The refusal messages, one line per refused origin ("" when none); with every
        origin refused it starts with "nothing crawled: every seed origin was refused: "."""
        lines = list(self.refused_origins.values())
        if not lines:
            return ""
        if self.every_origin_refused:
            lines[0] = "nothing crawled: every seed origin was refused: " + lines[0]
        return "\n".join(lines)


def run_crawl(
    config: CrawlConfig,
    database: str | Path,
    *,
    worker_name: str = "ant",
    agent_uuid: uuid.UUID | None = None,
    force_recrawl: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: bool = True,
    limits: FetchLimits | None = None,
) -> CrawlReport:
    """Run one crawl run of ``config`` into the crawler database at ``database``.

    ``agent_uuid`` names the run (the Dagster partition key is its hex); a new UUID v7
    when None. ``transport`` replaces the network (tests, offline fetchers); when None
    textpile's own transport is used, which refuses private addresses unless
    ``config.allow_private_addresses``. ``force_recrawl`` makes every candidate due.
    ``limits`` caps each request (body size, decoded size, total deadline).
    ``progress`` shows a live display on stderr. The end report is not printed here:
    :func:`textpile.crawl.report.format_report` formats the returned report.

    The database is created if missing. The agent row is written first and gets its
    time_finished at the end (also after Ctrl+C). Every crawl log entry is committed on
    its own, so an interrupted run keeps what it did and the next run continues with
    the candidates still due. After a complete run the database is optimized and
    vacuumed.

    Must be called outside a running event loop (use :func:`crawl_async` inside one).

    Raises:
        DatabaseError: the database cannot be opened as a crawler database.
    """
    started = time.monotonic()
    report = CrawlReport(agent_uuid=agent_uuid or uuid7())
    conn = open_crawler_db(database)
    try:
        db = CrawlerDb(conn)
        db.start_agent(report.agent_uuid, worker_name, config.user_agent)
        with CrawlDisplay(enabled=progress, total_commands=config.max_commands_per_run) as display:
            try:
                asyncio.run(_crawl(config, db, report, display, force_recrawl=force_recrawl,
                                   transport=transport, limits=limits or FetchLimits()))
            except KeyboardInterrupt:
                report.interrupted = True
            db.finish_agent()
            if not report.interrupted:
                display.note("Optimizing and vacuuming the database ...")
                optimize_and_vacuum(conn)
    finally:
        conn.close()
    report.duration_s = time.monotonic() - started
    return report


async def crawl_async(config: CrawlConfig, db: CrawlerDb, report: CrawlReport, *, force_recrawl: bool = False,
                      transport: httpx.AsyncBaseTransport | None = None, limits: FetchLimits | None = None,
                      display: CrawlDisplay | None = None) -> None:
    """The crawl loop of every seed origin on the running event loop, writing into
    ``db`` (an agent already started) and counting into ``report``. Cancellation stops
    every origin crawler; what was committed stays and ``report.interrupted`` is set."""
    await _crawl(config, db, report, display or CrawlDisplay(enabled=False, total_commands=0),
                 force_recrawl=force_recrawl, transport=transport, limits=limits or FetchLimits())


async def _crawl(config: CrawlConfig, db: CrawlerDb, report: CrawlReport, display: CrawlDisplay, *,
                 force_recrawl: bool, transport: httpx.AsyncBaseTransport | None, limits: FetchLimits) -> None:
    seeds = [parse_url(seed) for seed in config.seeds]
    db.add_candidates(seeds)
    origins: dict[str, str] = {}
    for seed in seeds:
        origins.setdefault(seed.str_origin, parse_url("/", seed.str_url).str_url)
    report.origins = list(origins)
    if transport is None:
        from textpile.crawl.ssrf import make_transport

        transport = make_transport(allow_private_addresses=config.allow_private_addresses)
    headers = {"User-Agent": config.user_agent, "Accept": ACCEPT, "Accept-Encoding": ACCEPT_ENCODING}
    async with httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False,
                                 headers=headers, timeout=httpx.Timeout(limits.deadline_s)) as client:
        state = RunState(config=config, db=db, client=client, token=user_agent_token(config.user_agent),
                         seed_origins=frozenset(origins), commands_left=config.max_commands_per_run,
                         force_recrawl=force_recrawl, limits=limits, display=display, report=report)
        crawlers = [OriginCrawler(state, str_origin, root) for str_origin, root in origins.items()]
        tasks = [asyncio.create_task(c.run(), name=f"crawl {c.str_origin}") for c in crawlers]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            report.interrupted = True
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
