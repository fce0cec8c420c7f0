"""Running a crawl: one origin crawler per seed origin, concurrently, and the end report.

Source: unobtanium-documentation.txt, pages "Crawl Loop", "Crawl Delay between Requests",
"Crawler User-Agent and robots.txt", "Crawl exit code", "Your first search engine"
(the statistics report, then tidying the database: no whole-file rewrite).
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import httpx

from textpile.crawl.crawldb.prune import OriginOutcome, prune_origin, reached_urls
from textpile.crawl.crawldb.recovery import ClosedRun, close_unfinished_runs, crawl_lock_path
from textpile.crawl.crawldb.writer import FLUSH_INTERVAL_S, CrawlerDb
from textpile.crawl.fetcher.fetch import ACCEPT, ACCEPT_ENCODING, CrawlClient, FetchLimits, FetchResult
from textpile.crawl.fetcher.pools import PerOriginTransport, keepalive_budget, shared_ssl_context
from textpile.crawl.fetcher.robots import user_agent_token
from textpile.crawl.loop.origin import OriginCrawler, RunState
from textpile.crawl.loop.report import CrawlDisplay
from textpile.crawl.policy.config import CrawlConfig
from textpile.crawl.policy.traps import strip_session_ids
from textpile.crawl.workers.readers import PageReader
from textpile.enums import ExitCode
from textpile.errors import DatabaseError
from textpile.ids import uuid7
from textpile.signals import handlers_replaced
from textpile.store.database import open_crawler_db, sqlite_error, sqlite_errors, tidy
from textpile.store.locks import refuse_when_locked
from textpile.store.urls import parse_url
from textpile.store.watch import WATCH_INTERVAL_S, FileWatch

if TYPE_CHECKING:
    from textpile.shards.handoff import HandOff

def crawl_event_loop() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop factory of a crawl: uvloop's (libuv) where it is installed (a
    dependency on every platform but Windows), else None (asyncio's default loop).

    The crawl's event loop process carries every request of every origin on one core;
    uvloop's sockets, timers and callbacks cost less CPU than asyncio's pure-Python
    selector loop (measured with bench/crawl: see bench/README.md)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_event_loop(main: Any) -> Any:
    """Run the coroutine ``main`` to its end on a new :func:`crawl_event_loop` loop, as
    ``asyncio.run`` does: Ctrl+C cancels it and raises KeyboardInterrupt after.

    So does SIGTERM (the CLI's handler raises KeyboardInterrupt:
    :class:`textpile.signals.TerminateAsInterrupt`), and Ctrl+C when its handler is not
    Python's default (a Dagster step's, :func:`textpile.signals.keyboard_interrupt_on`):
    the first such signal cancels ``main``'s task, which stops the crawl cleanly, and is
    then raised again for its handler once the loop has ended; a second one goes to that
    handler at once. Raised wherever it landed, a KeyboardInterrupt could cut a callback
    of the loop in two (the crawler database's job queue left busy), and the loop then
    waited forever for the write that the crawl's last flush awaited."""
    stop_signals = (signal.SIGTERM,) if signal.getsignal(signal.SIGINT) is signal.default_int_handler \
        else (signal.SIGINT, signal.SIGTERM)  # asyncio.Runner handles a default Ctrl+C so itself
    noted: list[int] = []
    try:
        with asyncio.Runner(loop_factory=crawl_event_loop()) as runner:
            return runner.run(_cancelled_by_signals(main, stop_signals, noted))
    finally:
        for signum in noted:
            signal.raise_signal(signum)  # for the handler of before, given back by now


async def _cancelled_by_signals(main: Any, signums: tuple[int, ...], noted: list[int]) -> Any:
    """Await ``main`` in this task, each of ``signums`` whose handler is a Python function
    cancelling the task the first time (noted in ``noted``) instead (see
    :func:`run_event_loop`). Main thread only; elsewhere nothing changes."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def cancel(previous, signum, frame) -> None:
        if noted:
            previous(signum, frame)  # a second signal: at once
            return
        noted.append(signum)
        task.cancel()
        loop.call_soon_threadsafe(lambda: None)  # wake the loop

    with handlers_replaced(signums, lambda previous: partial(cancel, previous), python_handlers_only=True):
        return await main


#: Requests in flight at once over all origins (each origin has its own connection pool,
#: see :mod:`textpile.crawl.fetcher.pools`, and sends one request at a time).
DEFAULT_MAX_CONNECTIONS = 100


@dataclass
class SlotLimitedOriginCrawler(OriginCrawler):
    """An :class:`OriginCrawler` whose every request first waits out its crawl delay, then
    takes one of the run's ``fetch_slots`` for the request alone.

    The slots are as many as the connection pool has connections, so a request never
    waits inside the pool and its deadline (:class:`FetchLimits` ``deadline_s``, which
    starts when the request is sent) never counts time spent queueing behind other
    origins' requests. The crawl delay is waited before taking a slot, so a sleeping
    origin holds none. ``fetch_slots`` None: no limit.
    """

    fetch_slots: asyncio.Semaphore | None = None

    async def request(self, url: str, *args: Any, **kwargs: Any) -> FetchResult:
        """Wait out the crawl delay, take a slot, then :meth:`OriginCrawler.request` with
        the same arguments (which finds no delay left to wait)."""
        if self.fetch_slots is None:
            return await super().request(url, *args, **kwargs)
        wait = self.delay.wait_s()
        if wait > 0:
            await asyncio.sleep(wait)
        async with self.fetch_slots:
            return await super().request(url, *args, **kwargs)


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
    which says how to allow it. A refused origin stops at once; it is listed there only,
    not in ``out_of_patience_origins``. ``closed_runs`` lists the crawl runs that a killed
    process had left unfinished, which this run closed before it started
    (:func:`textpile.crawl.crawldb.recovery.close_unfinished_runs`). ``failure`` says why the run
    stopped early because of its database, naming the file and the cause (deleted or
    replaced under the run, disk full, read-only, I/O error) and what was kept; None when
    it did not. ``database_error`` is the first error a write of the run met.
    ``answered_origins`` holds the seed origins that gave at least one HTTP answer (any
    status) in this run; ``no_answer_causes`` maps each origin that had a request end
    without an answer (no address, connection refused, timeout ...) to the message of
    its first such crawl log entry (see :meth:`entry_written` and
    :attr:`unreachable_origins`).
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
    closed_runs: list[ClosedRun] = field(default_factory=list)
    failure: str | None = None
    database_error: BaseException | None = None
    answered_origins: set[str] = field(default_factory=set)
    no_answer_causes: dict[str, str] = field(default_factory=dict)
    #: the spread of the run's origins' recrawl intervals after the run
    #: (:meth:`~textpile.crawl.crawldb.sql.CrawlStore.recrawl_spread`; empty without any)
    recrawl_intervals: dict[str, int] = field(default_factory=dict)
    #: how each origin's crawl ended (:class:`~textpile.crawl.crawldb.prune.OriginOutcome`)
    origin_outcomes: dict[str, OriginOutcome] = field(default_factory=dict)
    #: pruning (:mod:`textpile.crawl.crawldb.prune`): the URLs pruned per origin after its
    #: complete and healthy crawl, and why the other origins were not pruned
    pruned: dict[str, list[str]] = field(default_factory=dict)
    not_pruned: dict[str, str] = field(default_factory=dict)
    #: a shard's crawl (:mod:`textpile.shards.handoff`): URLs taken in from each other
    #: shard's outbox before the run, those of them forwarded (their site's shard changed),
    #: the shards whose outbox could not be read (with why), and the URLs this run handed
    #: off to each other shard (empty when the crawl is no shard's)
    handoffs_taken: dict[str, int] = field(default_factory=dict)
    handoffs_forwarded: int = 0
    handoffs_unread: dict[str, str] = field(default_factory=dict)
    handed_off: dict[str, int] = field(default_factory=dict)
    #: outbox rows no longer needed, deleted after the run per shard they were addressed
    #: to (:func:`textpile.shards.handoff.prune_outbox`; only after a run that pruned
    #: every origin it crawled)
    outbox_pruned: dict[str, int] = field(default_factory=dict)
    #: shards whose outbox rows were all kept, with why ("*": the whole outbox)
    outbox_kept: dict[str, str] = field(default_factory=dict)
    #: with the shard table's ``handoff_redis`` (:mod:`textpile.shards.mirror`): the outbox
    #: rows added to and deleted from its mirror after the run ({"added": n, "deleted": n}),
    #: or why the mirror could not be written (the one before stays; the next run writes it)
    handoffs_mirrored: dict[str, int] = field(default_factory=dict)
    handoffs_mirror_error: str | None = None

    def entry_written(self, str_origin: str, entry) -> None:
        """Count a crawl log entry (a :class:`~textpile.crawl.crawldb.records.LogEntry`) of the
        origin ``str_origin`` written by the run: an HTTP answer to any of its requests
        makes the origin answered; requests that all ended without one keep the entry's
        message as the origin's cause (its first one only). Entries without requests
        (blocked before sending) say nothing either way."""
        if any(request.http_status is not None for request in entry.requests):
            self.answered_origins.add(str_origin)
        elif entry.requests and str_origin not in self.no_answer_causes:
            self.no_answer_causes[str_origin] = entry.message or entry.exit_code.name

    @property
    def unreachable_origins(self) -> dict[str, str]:
        """The seed origins that never answered in this run although requests were sent
        to them, each with the cause (``no_answer_causes``); refused origins are in
        ``refused_origins`` instead. In the order of ``origins``."""
        return {origin: self.no_answer_causes[origin] for origin in self.origins
                if origin in self.no_answer_causes and origin not in self.answered_origins
                and origin not in self.refused_origins}

    @property
    def every_origin_refused(self) -> bool:
        """True when the run had seed origins and the SSRF filter refused every one of
        them, so nothing could be crawled."""
        return bool(self.origins) and all(origin in self.refused_origins for origin in self.origins)

    @property
    def nothing_answered(self) -> bool:
        """True when the run had seed origins and not one of them answered: each was
        refused by the SSRF filter or unreachable (:attr:`unreachable_origins`)."""
        unreachable = self.unreachable_origins
        return bool(self.origins) and all(origin in self.refused_origins or origin in unreachable
                                          for origin in self.origins)

    def unreachable_message(self) -> str:
        """One line per unreachable origin, ``"no answer from <origin>: <cause>"`` ("" when
        none); with no seed origin answering, the lines are ``"<origin>: <cause>"``, the
        first starting with "nothing crawled: no seed origin answered: ", and the refused
        origins' refusal messages follow."""
        unreachable = self.unreachable_origins
        if not unreachable:
            return ""
        if not self.nothing_answered:
            return "\n".join(f"no answer from {origin}: {cause}" for origin, cause in unreachable.items())
        lines = [f"{origin}: {cause}" for origin, cause in unreachable.items()]
        lines[0] = "nothing crawled: no seed origin answered: " + lines[0]
        return "\n".join([*lines, *self.refused_origins.values()])

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
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    page_readers: int | None = None,
    handoff: HandOff | None = None,
) -> CrawlReport:
    """Run one crawl run of ``config`` into the crawler database at ``database``.

    ``agent_uuid`` names the run (the Dagster partition key is its hex); a new UUID v7
    when None. ``transport`` replaces the network (tests, offline fetchers); when None
    textpile's own transport is used, which refuses private addresses unless
    ``config.allow_private_addresses``. ``force_recrawl`` makes every candidate due.
    ``limits`` caps each request (body size, decoded size, total deadline).
    ``progress`` shows a live display on stderr. The end report is not printed here:
    :func:`textpile.crawl.loop.report.format_report` formats the returned report.
    ``max_connections`` bounds the requests in flight at once over all origins (also
    with a given ``transport``); a request's deadline starts only when it has its turn.
    textpile's own transport keeps one connection pool per origin, its connection kept
    alive across the crawl delay (:mod:`textpile.crawl.fetcher.pools`; the soft limit of open
    files is raised towards the hard limit when the origins need it).
    ``page_readers`` worker processes decode and read the fetched pages (None: one per
    CPU; 0: a thread of this process), so the event loop only sends requests, schedules
    and writes (:mod:`textpile.crawl.workers.readers`).

    ``handoff`` makes it the crawl of one shard of a sharded deployment (``config``'s seeds
    being that shard's): first the URLs other shards handed to it are taken in as
    candidates (:func:`textpile.shards.handoff.take_handoffs`), then URLs found on sites
    of other shards (``handoff.routes``) go to its outbox, never crawled here (the
    report's ``handoffs_*`` and ``handed_off``).

    One run at a time per database: the run holds an exclusive lock on
    ``<database>.lock`` (created beside it, see :func:`crawl_lock_path`) from start to
    end, released also on errors and Ctrl+C (and by the OS if the process dies).

    The database is created if missing. Crawl runs a killed process left unfinished are
    closed first (``report.closed_runs``, each announced on stderr). The agent row is
    written then and gets its time_finished at the end (also after Ctrl+C). Crawl log
    entries are written whole, in batches at least every 0.25 s
    (:mod:`textpile.crawl.crawldb.writer`) and at the end (also after Ctrl+C), so an interrupted
    run keeps what it did and the next run continues with the candidates still due.
    After a complete run the database is tidied
    (:func:`textpile.store.database.tidy`: statistics where stale, free pages given back
    past a share of the file; never a whole-file rewrite).

    Must be called outside a running event loop (use :func:`crawl_async` inside one).

    Raises:
        DatabaseError: the database cannot be opened as a crawler database, or its lock
            file cannot be created, or (``handoff``) another shard's crawler database
            cannot be read.
        TextpileError: another crawl holds the database's lock: "<database>: another
            crawl is running on this crawler database (lock <database>.lock held by pid N)".
    """
    if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
        raise ValueError(f"max_connections: found {max_connections!r}; expected a whole number >= 1")
    started = time.monotonic()
    report = CrawlReport(agent_uuid=agent_uuid or uuid7())
    conn = open_crawler_db(database)  # first: its errors name a missing folder or a wrong file
    conn.close()
    with refuse_when_locked(crawl_lock_path(database), database,
                            "another crawl is running on this crawler database"):
        _run_locked(config, database, report, worker_name=worker_name, force_recrawl=force_recrawl,
                    transport=transport, progress=progress, limits=limits, max_connections=max_connections,
                    page_readers=page_readers, handoff=handoff)
    report.duration_s = time.monotonic() - started
    return report


def _run_locked(config: CrawlConfig, database: str | Path, report: CrawlReport, *, worker_name: str,
                force_recrawl: bool, transport: httpx.AsyncBaseTransport | None, progress: bool,
                limits: FetchLimits | None, max_connections: int, page_readers: int | None,
                handoff: HandOff | None = None) -> None:
    """The body of :func:`run_crawl`, with the database's lock held."""
    conn = open_crawler_db(database)
    try:
        watch = FileWatch.of(database)
        db = CrawlerDb(conn, routes=None if handoff is None else handoff.routes)
        with sqlite_errors(database):
            report.closed_runs = close_unfinished_runs(conn)
            handoff_start = None if handoff is None else _take_handoffs(db, handoff, report)
            db.start_agent(report.agent_uuid, worker_name, config.user_agent)
        with CrawlDisplay(enabled=progress, total_commands=config.max_commands_per_run) as display:
            for closed in report.closed_runs:
                display.warn(closed.describe())
            try:
                run_event_loop(_crawl(config, db, report, display, force_recrawl=force_recrawl,
                                   transport=transport, limits=limits or FetchLimits(),
                                   max_connections=max_connections, page_readers=page_readers, watch=watch))
            except KeyboardInterrupt:
                report.interrupted = True
            if report.failure is None:
                _finish(conn, db, database, report, display, config, handoff_start, handoff)
    finally:
        conn.close()


def _take_handoffs(db: CrawlerDb, handoff: HandOff, report: CrawlReport) -> int:
    """Take in the URLs other shards handed to this one (into ``report``); returns the
    largest handoff_id of this database's outbox now, where this run's own hand-offs start."""
    from textpile.shards.handoff import take_handoffs

    taken = take_handoffs(db.store, handoff)
    report.handoffs_taken, report.handoffs_forwarded, report.handoffs_unread = \
        taken.taken, taken.forwarded, taken.unread
    return db.store.last_handoff_id()


def _finish(conn, db: CrawlerDb, database: str | Path, report: CrawlReport, display: CrawlDisplay,
            config: CrawlConfig, handoff_start: int | None = None, handoff: HandOff | None = None) -> None:
    """End the crawl run in the database, count the spread of its origins' recrawl
    intervals (and, for a shard's crawl, its hand-offs past outbox row ``handoff_start``)
    and, after a complete run, tidy it; a database that failed (a write of the run, or
    now) sets ``report.failure``."""
    try:
        with sqlite_errors(database):
            if config.prune:
                _prune(db, report, config, handoff)
            db.finish_agent()
            if handoff_start is not None:
                report.handed_off = db.store.handed_off_since(handoff_start)
            if handoff is not None and handoff.table.handoff_redis and not report.interrupted \
                    and report.database_error is None:
                _mirror(db, handoff, report)
            report.recrawl_intervals = db.store.recrawl_spread(report.origins, config.recrawl_interval_s,
                                                               config.recrawl_bounds_s)
            if not report.interrupted and report.database_error is None:
                display.note("Tidying the database ...")
                tidy(conn)
    except DatabaseError as exc:
        report.database_error = report.database_error or exc
    if report.database_error is not None:
        cause = report.database_error
        text = str(sqlite_error(database, cause)) if isinstance(cause, sqlite3.Error) else str(cause)
        kept = sum(report.exit_code_counts.values())
        report.failure = (f"{text}; the crawl stopped: this run kept {kept} crawl log entries, and the next run "
                          "goes on from there")


def _mirror(db: CrawlerDb, handoff: HandOff, report: CrawlReport) -> None:
    """Mirror this shard's outbox and read positions for the shards on other hosts
    (:func:`textpile.shards.mirror.publish`) into ``report``; a Redis database that cannot
    be reached is reported, not raised (the rows wait in the outbox).

    Raises:
        sqlite3.Error: this crawler database could not be read.
    """
    from textpile.shards.mirror import MirrorError, connect, publish

    url = handoff.table.handoff_redis
    others = [name for name in handoff.table.names if name != handoff.shard]
    try:
        done = publish(connect(url), url, db.store, handoff.shard, others)
    except MirrorError as exc:
        report.handoffs_mirror_error = str(exc)
        return
    report.handoffs_mirrored = {"added": done.added, "deleted": done.deleted}


def _prune(db: CrawlerDb, report: CrawlReport, config: CrawlConfig, handoff: HandOff | None = None) -> None:
    """Prune each origin of the run whose crawl was complete and healthy
    (:mod:`textpile.crawl.crawldb.prune`) into ``report.pruned``; the others' reasons go
    to ``report.not_pruned``. In a shard's crawl (``handoff``), every URL another shard's
    outbox addresses to this one is reached too (its linking page is in that shard's
    database), and nothing is pruned while another shard's outbox could not be read; when
    every origin of the run was pruned, the outbox rows no longer needed are deleted
    (:func:`textpile.shards.handoff.prune_outbox`, into ``report.outbox_pruned``).

    Raises:
        sqlite3.Error: the database refused the pruning of an origin (nothing of it is kept).
    """
    seeds = [strip_session_ids(parse_url(seed), config.session_names).str_url for seed in config.crawl_seeds]
    unread = None
    if handoff is not None:
        from textpile.shards.handoff import handed_in_urls

        handed_in, unread_shards = handed_in_urls(handoff, db.store)
        seeds += sorted(handed_in)
        if unread_shards:
            unread = (f"the outbox of shard {min(unread_shards)} could not be read "
                      f"({unread_shards[min(unread_shards)]}): pages it handed here may still be linked")
    reached = None  # found once, when an origin is to be pruned (prune_origin)
    for str_origin in report.origins:
        outcome = report.origin_outcomes.get(str_origin, OriginOutcome("interrupted"))
        why = outcome.not_complete_or_healthy(interrupted=report.interrupted, out_of_commands=any(
            o.ended == "out_of_commands" for o in report.origin_outcomes.values()),
            failed=report.database_error is not None or report.failure is not None)
        if why is None and unread is not None:
            why = unread
        if why is None:
            reached = reached or reached_urls(db.store, seeds)
            result = prune_origin(db.store, str_origin, seeds, report.agent_uuid.hex, reached)
            why = result.skipped
            if why is None:
                report.pruned[str_origin] = result.pruned
                if result.pruned:
                    counts = report.exit_code_counts
                    counts[ExitCode.pruned.name] = counts.get(ExitCode.pruned.name, 0) + len(result.pruned)
        if why is not None:
            report.not_pruned[str_origin] = why
    if handoff is not None and not report.not_pruned and (report.pruned or not report.origins) \
            and not report.interrupted and report.database_error is None and report.failure is None:
        # every origin crawled was pruned, or the shard has none (its sites all moved away)
        from textpile.shards.handoff import prune_outbox

        outbox = prune_outbox(db.store, handoff, (reached or reached_urls(db.store, seeds))[0])
        report.outbox_pruned, report.outbox_kept = outbox.pruned, outbox.kept


async def crawl_async(config: CrawlConfig, db: CrawlerDb, report: CrawlReport, *, force_recrawl: bool = False,
                      transport: httpx.AsyncBaseTransport | None = None, limits: FetchLimits | None = None,
                      display: CrawlDisplay | None = None,
                      max_connections: int = DEFAULT_MAX_CONNECTIONS, page_readers: int | None = None) -> None:
    """The crawl loop of every seed origin on the running event loop, writing into
    ``db`` (an agent already started) and counting into ``report``. Cancellation stops
    every origin crawler; what was queued is written, what was committed stays and
    ``report.interrupted`` is set. ``max_connections`` and ``page_readers`` as in
    :func:`run_crawl`. Takes no database lock (the caller's business, see
    :func:`crawl_lock_path`)."""
    await _crawl(config, db, report, display or CrawlDisplay(enabled=False, total_commands=0),
                 force_recrawl=force_recrawl, transport=transport, limits=limits or FetchLimits(),
                 max_connections=max_connections, page_readers=page_readers)


async def _crawl(config: CrawlConfig, db: CrawlerDb, report: CrawlReport, display: CrawlDisplay, *,
                 force_recrawl: bool, transport: httpx.AsyncBaseTransport | None, limits: FetchLimits,
                 max_connections: int, page_readers: int | None, watch: FileWatch | None = None) -> None:
    names = config.session_names
    seeds = [strip_session_ids(parse_url(seed), names) for seed in config.crawl_seeds]
    # a shard's crawl reads the links of other shards' sites too: its database hands them off
    linked = frozenset(db.routes)
    db.add_candidates(seeds)  # before the database thread has work
    origins: dict[str, str] = {}
    for seed in seeds:
        origins.setdefault(seed.str_origin, parse_url("/", seed.str_url).str_url)
    report.origins = list(origins)
    if transport is None:
        transport = _origin_pools(config, len(origins), display)
    headers = {"User-Agent": config.user_agent, "Accept": ACCEPT, "Accept-Encoding": ACCEPT_ENCODING}
    async with CrawlClient(transport, headers=headers, timeout=httpx.Timeout(limits.deadline_s)) as client:
        with PageReader(page_readers) as reader:
            state = RunState(config=config, db=db, client=client, token=user_agent_token(config.user_agent),
                             seed_origins=frozenset(origins) | linked, commands_left=config.max_commands_per_run,
                             force_recrawl=force_recrawl, limits=limits, display=display, report=report,
                             reader=reader, known_url_ids=db.store.last_url_id())
            slots = asyncio.Semaphore(max_connections)
            crawlers = [SlotLimitedOriginCrawler(state, str_origin, root, fetch_slots=slots)
                        for str_origin, root in origins.items()]
            db.start()
            reader.start()
            tasks = [asyncio.create_task(c.run(), name=f"crawl {c.str_origin}") for c in crawlers]
            db.full = asyncio.Event()
            flusher = asyncio.create_task(_flush_regularly(db), name="flush crawl log entries")
            watcher = asyncio.create_task(_watch_database(watch, report, tasks), name="watch the database file")
            try:
                await asyncio.gather(*tasks)
            except asyncio.CancelledError:
                report.interrupted = report.failure is None  # else the database stopped it
                await _stop(tasks)
            except BaseException:
                await _stop(tasks)
                raise
            finally:
                watcher.cancel()
                flusher.cancel()
                await db.drain()
                db.full = None


async def _watch_database(watch: FileWatch | None, report: CrawlReport, tasks: list[asyncio.Task]) -> None:
    """Every :data:`~textpile.store.watch.WATCH_INTERVAL_S`, check that the database file
    is still the one the run opened; when it was deleted or replaced, set
    ``report.failure`` and stop the origin crawlers."""
    if watch is None:
        return
    while True:
        await asyncio.sleep(WATCH_INTERVAL_S)
        problem = watch.problem("crawl")
        if problem is not None:
            report.failure = problem
            for task in tasks:
                task.cancel()
            return


async def _stop(tasks: list[asyncio.Task]) -> None:
    """Cancel ``tasks`` and wait until they are done."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _flush_regularly(db: CrawlerDb) -> None:
    """Flush the queued crawl log entries every :data:`FLUSH_INTERVAL_S` seconds, and at
    once when the queue is full."""
    while True:
        try:
            await asyncio.wait_for(db.full.wait(), FLUSH_INTERVAL_S)
        except TimeoutError:
            pass
        await db.flush()


def _origin_pools(config: CrawlConfig, origins: int, display: CrawlDisplay) -> PerOriginTransport:
    """textpile's own transport: SSRF filtered (unless ``allow_private_addresses``), one
    connection pool per origin sharing one TLS context (:mod:`textpile.crawl.fetcher.pools`)."""
    from textpile.crawl.fetcher.ssrf import make_transport

    context = shared_ssl_context()
    keepalive = keepalive_budget(origins)
    if not keepalive:
        display.note(f"Too few open files allowed for {origins} kept-alive connections: "
                     "each connection is closed after its answer")
    return PerOriginTransport(
        lambda pool_limits: make_transport(allow_private_addresses=config.allow_private_addresses,
                                           verify=context, limits=pool_limits),
        delay_s=config.default_delay_ms / 1000.0, keepalive=keepalive)
