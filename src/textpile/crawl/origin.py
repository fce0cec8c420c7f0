"""The origin crawler: the crawl loop of one seed origin.

Source: unobtanium-documentation.txt, page "Crawl Loop". Each iteration does one of:
[1] fetch robots.txt (when missing, expired after 30 minutes, or unavailable last time),
[2] fill the todo list from due crawl candidates (logging local-policy blocks as 173),
[3] crawl one URL (robots.txt blocks logged as 170). Patience starts at 5; persisting
trouble (5xx answers, an unavailable robots.txt, possible flukes that failed their
immediate retry while the origin gave no answer since the last such failure: see
:meth:`OriginCrawler.fluke_failed`) decrements it and the origin gives up at 0; a
database error sets it to 0 at once. Rate-limited (429) and fluke URLs are taken off
the ignore list so they are tried again in the same run (each at most
:data:`MAX_REQUEUES` times).

Pages are read while the loop goes on: a 2xx text answer is handed to the run's page
reader (a worker process) and the origin crawler waits out its delay and sends its next
request meanwhile (at most :data:`MAX_READS_PER_ORIGIN` pages of one origin, and
:func:`read_backlog_bytes` of all, wait to be read). Its crawl log entries are still
queued in request order (an outbox per origin). With its todo list empty it waits for
its oldest page's links (asking the readers to hurry: :meth:`PageReader.hurry`), then
looks for new candidates, page after page.

Hostile sites: whatever handling one robots.txt fetch or one URL raises (other than a
database error, Ctrl+C or cancellation) is logged as that entry's -999 unknown_error
with the exception's message and costs one patience; the run goes on
(:meth:`OriginCrawler.guarded`, the one safety net). URLs with a user name or password,
or longer than :data:`~textpile.crawl.page.MAX_URL_CHARS`, are never scheduled.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from collections import deque
from dataclasses import dataclass, field

from textpile.crawl.charset import codec_for_label
from textpile.crawl.config import CrawlConfig
from textpile.crawl.crawldb import Candidate, CrawlerDb, FileRecord, LogEntry, RedirectRecord, RequestRecord
from textpile.crawl.meta import MetaReading, maybe_meta
from textpile.crawl.packed import unpack_links
from textpile.crawl.records import Listing, MetaCandidate, SiteLinks
from textpile.crawl.sitemaps import MAX_SITEMAP_DEPTH, WELL_KNOWN_SITEMAPS
from textpile.crawl.delay import CrawlDelay, parse_retry_after
from textpile.crawl.fetch import (CrawlClient, FetchLimits, FetchResult, exit_code_for_status, fetch, http_date,
                                  is_valid_header_value, parse_http_date)
from textpile.crawl.headers import header_canonical, header_feeds, header_refresh, parse_link_header, x_robots_tag
from textpile.crawl.page import MAX_URL_CHARS, RobotsDirectives, usable_link
from textpile.crawl.reader import TEXT_TYPES, PageReader, PageReading
from textpile.crawl.refresh import MAX_REDIRECT_DELAY_S
from textpile.crawl.robots import ROBOTS_EXPIRY_S, ROBOTS_MAX_BYTES, RobotsRules, looks_like_html
from textpile.crawl.sniff import mislabeled_text_type
from textpile.crawl.traps import calendar_pattern, strip_session_ids
from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.errors import DatabaseError
from textpile.store.mimetypes import parse_media_type
from textpile.store.urls import ParsedUrl, UrlError, parse_url
from textpile import processes

#: Patience of an origin crawler (page "Crawl Loop").
INITIAL_PATIENCE = 5
#: Candidates taken from the database per todo-list fill.
TODO_CHUNK = 64
#: How often one URL may be put back for another try in the same run (429, flukes).
MAX_REQUEUES = 2
#: Redirects followed for robots.txt (RFC 9309 2.3.1.2: at least five).
MAX_ROBOTS_REDIRECTS = 5
#: Seconds between looks for new candidates while other origin crawlers still work.
IDLE_POLL_S = 0.05
#: The longest exception message kept in a -999 unknown_error entry, in characters.
MAX_ERROR_MESSAGE_CHARS = 500
#: Pages of one origin waiting to be read (or being read) before it sends no more requests.
MAX_READS_PER_ORIGIN = 4
#: Body bytes of all origins waiting to be read, or read and their text waiting to be
#: written, before origins send no more requests (the memory bound,
#: :func:`read_backlog_bytes`): this share of the memory the crawl may use, within
#: these bounds.
READ_BACKLOG_SHARE = 1 / 32
MIN_READ_BACKLOG_BYTES = 128 * 1024 * 1024
MAX_READ_BACKLOG_BYTES = 1024 * 1024 * 1024


def read_backlog_bytes(memory: int | None = None) -> int:
    """The read backlog's limit in bytes for a crawl that may use ``memory`` bytes (None:
    :func:`textpile.processes.usable_memory_bytes`): :data:`READ_BACKLOG_SHARE` of it,
    at least :data:`MIN_READ_BACKLOG_BYTES` and at most :data:`MAX_READ_BACKLOG_BYTES`
    (128 MiB up to 4 GiB of memory, 768 MiB with 24 GiB, 1 GiB from 32 GiB). More room
    lets the origins go on fetching while the page readers are behind: when 200 origins
    fetch the same 2.5 MB table of contents within a second (the crawl benchmark),
    128 MiB holds 50 of them and every origin waited up to 7 delays for room."""
    if memory is None:
        memory = processes.usable_memory_bytes()
    return int(min(MAX_READ_BACKLOG_BYTES, max(MIN_READ_BACKLOG_BYTES, memory * READ_BACKLOG_SHARE)))


class ReadBacklog:
    """The body bytes fetched and not yet both read by the page readers and written
    (their text) by the crawler database process, and the bytes reserved for the
    requests under way. A request waits for room before it is sent, so memory stays
    near ``limit`` (plus the answers bigger than their reservation), also while the
    database process is behind; one asyncio thread: no locks.

    Requests get room in the order they asked for it (first come, first served), each
    reserving the mean size of the bodies seen so far (:meth:`estimate`) until its own
    body is counted: when the readers are behind, room freed by a page read and written
    goes to the origins that waited longest, a few requests at a time, so every origin
    slows down alike instead of all stopping until the backlog is drained.

    Fair to origins with small pages: an origin that has pages of its own waiting to be
    read gets room only below :data:`FAIR_SHARE` of the limit, so the rest of it stays
    for the origins that have none waiting, and one origin's big pages (a run of them on
    many origins at once) do not silence every other origin. When nothing is held or
    reserved, a request always gets room (one body bigger than the limit still passes).

    A body bigger than its reservation (a Content-Length above it, or more bytes
    arriving) waits for room for the rest before it is read (:meth:`grow`), before
    every request waiting for room: without that, every origin fetching the same big
    page at once (a site's table of contents) holds one in memory per request in flight,
    far beyond the limit.
    """

    #: the share of the limit at which origins with pages of their own waiting stop
    FAIR_SHARE = 0.75
    #: the body size reserved for a request before any body was counted, in bytes
    FIRST_ESTIMATE = 64 * 1024

    def __init__(self, limit: int | None = None) -> None:
        self.limit = read_backlog_bytes() if limit is None else limit
        #: bytes of bodies held (waiting to be read, or read and waiting to be written)
        self.size = 0
        #: bytes reserved for requests under way
        self.reserved = 0
        self._bodies = 0
        self._body_bytes = 0
        self._order = 0
        #: waiting requests per class (True: their origin has pages waiting), in order:
        #: [order, future]
        self._waiting: dict[bool, deque] = {False: deque(), True: deque()}
        #: bytes reserved by :meth:`grow` and not given back
        self._grown = 0
        #: requests under way waiting in :meth:`grow`, in order: [extra bytes, future]
        self._growing: deque = deque()

    def estimate(self) -> int:
        """The bytes a request reserves: the mean size of the bodies counted so far
        (:meth:`add`), :data:`FIRST_ESTIMATE` before the first."""
        return self._body_bytes // self._bodies if self._bodies else self.FIRST_ESTIMATE

    def _fits(self, reading: bool, amount: int) -> bool:
        held = self.size + self.reserved
        return held == 0 or held + amount <= (self.FAIR_SHARE * self.limit if reading else self.limit)

    async def room(self, reading: bool = False) -> int:
        """Wait until one more request's body fits (with ``reading``, the caller's origin
        has pages waiting to be read: below :data:`FAIR_SHARE` of the limit), after the
        requests that asked before; reserve :meth:`estimate` bytes for it and return the
        amount, which the caller gives back with :meth:`unreserve` once its body is
        counted with :meth:`add` (or the request failed). Cancelled while waiting, it
        reserves nothing."""
        amount = self.estimate()
        if (not self._waiting[False] and not self._waiting[True] and not self._growing
                and self._fits(reading, amount)):
            self.reserved += amount
            return amount
        future = asyncio.get_running_loop().create_future()
        self._order += 1
        entry = [self._order, future]
        self._waiting[reading].append(entry)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.unreserve(future.result())  # room was given, then the caller was cancelled
            else:
                try:
                    self._waiting[reading].remove(entry)
                except ValueError:
                    pass
                self._admit()
            raise

    def _grow_fits(self, extra: int) -> bool:
        return self.size + self.reserved + extra <= self.limit or (self.size == 0 and self._grown == 0)

    async def grow(self, extra: int) -> None:
        """Wait until a request under way, whose body is bigger than what it reserved,
        may hold ``extra`` bytes more, and reserve them (given back by :meth:`unreserve`).
        Such requests go first, oldest first, before any request waiting in :meth:`room`
        (they hold a connection); one goes on when ``extra`` more bytes fit the limit, or
        when no body is held and no other growth is reserved (a body bigger than the
        limit still passes, one at a time). Cancelled while waiting, it reserves nothing."""
        if not self._growing and self._grow_fits(extra):
            self.reserved += extra
            self._grown += extra
            return
        future = asyncio.get_running_loop().create_future()
        entry = [extra, future]
        self._growing.append(entry)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.unreserve(0, extra)  # room was given, then the caller was cancelled
            else:
                try:
                    self._growing.remove(entry)
                except ValueError:
                    pass
                self._admit()
            raise

    def _admit(self) -> None:
        """Give room to the waiting requests that fit, oldest first: requests under way
        that grow first (:meth:`grow`); the others only when none of those waits."""
        growing = self._growing
        while growing:
            extra, future = growing[0]
            if future.done():  # cancelled
                growing.popleft()
                continue
            if not self._grow_fits(extra):
                return
            growing.popleft()
            self.reserved += extra
            self._grown += extra
            future.set_result(None)
        waiting = self._waiting
        while True:
            for queue in waiting.values():
                while queue and queue[0][1].done():  # cancelled
                    queue.popleft()
            heads = [(queue[0][0], reading) for reading, queue in waiting.items()
                     if queue and self._fits(reading, self.estimate())]
            if not heads:
                return
            _order, reading = min(heads)
            _order, future = waiting[reading].popleft()
            amount = self.estimate()
            self.reserved += amount
            future.set_result(amount)

    def add(self, size: int) -> None:
        """A body of ``size`` bytes waits to be read (it counts towards :meth:`estimate`)."""
        self.size += size
        self._bodies += 1
        self._body_bytes += size

    def unreserve(self, amount: int, grown: int = 0) -> None:
        """Give back ``amount`` bytes :meth:`room` reserved and ``grown`` bytes
        :meth:`grow` reserved for the same request."""
        self.reserved -= amount + grown
        self._grown -= grown
        self._admit()

    def release(self, size: int) -> None:
        """``size`` bytes were read and written."""
        self.size -= size
        self._admit()


class BodyRoom:
    """The room one request's body has in a :class:`ReadBacklog`: ``amount`` bytes
    :meth:`ReadBacklog.room` reserved, grown on demand. Awaiting ``room(total)`` (what
    :func:`~textpile.crawl.fetch.fetch` does before it reads a body, with its declared
    length, and while the body arrives) waits until the body may hold ``total`` bytes;
    :meth:`give_back` returns all of it once the body is counted."""

    __slots__ = ("backlog", "amount", "grown")

    def __init__(self, backlog: ReadBacklog, amount: int) -> None:
        self.backlog = backlog
        self.amount = amount
        self.grown = 0

    async def __call__(self, total: int) -> None:
        extra = total - self.amount - self.grown
        if extra > 0:
            await self.backlog.grow(extra)
            self.grown += extra

    def give_back(self) -> None:
        """Give back everything reserved (once)."""
        self.backlog.unreserve(self.amount, self.grown)
        self.amount = self.grown = 0


@dataclass
class RunState:
    """What all origin crawlers of one run share (one asyncio thread, no locks needed).

    ``commands_left`` is the run's remaining max_commands_per_run budget; a command is a
    crawl that sends requests (a file crawl or a robots.txt fetch). ``reader`` reads the
    fetched pages off the event loop (see :mod:`textpile.crawl.reader`).
    """

    config: CrawlConfig
    db: CrawlerDb
    client: CrawlClient
    token: str
    seed_origins: frozenset[str]
    commands_left: int
    force_recrawl: bool
    limits: FetchLimits
    display: object
    report: object
    reader: PageReader = field(default_factory=lambda: PageReader(0))
    backlog: ReadBacklog = field(default_factory=ReadBacklog)
    out_of_commands: bool = False
    #: origin crawlers still working (not idle waiting for candidates from others)
    busy: int = 0

    def take_command(self) -> bool:
        """Use one command of the budget; False when it is spent."""
        if self.commands_left <= 0:
            self.out_of_commands = True
            return False
        self.commands_left -= 1
        return True

    @functools.cached_property
    def session(self) -> frozenset[str]:
        """The session-ID parameter names stripped from every URL found (lower case)."""
        return self.config.session_names

    def clean(self, url: ParsedUrl | None) -> ParsedUrl | None:
        """``url`` without its session-ID parameters (:func:`textpile.crawl.traps.strip_session_ids`)."""
        return None if url is None else strip_session_ids(url, self.session)

    def is_seed_origin(self, url: ParsedUrl) -> bool:
        """True when ``url`` is http(s) and shares its origin with a seed."""
        return url.scheme in ("http", "https") and url.str_origin in self.seed_origins


@dataclass
class OriginCrawler:
    """The crawl loop of one origin (``str_origin`` as stored in ``origin.str_origin``)."""

    state: RunState
    str_origin: str
    origin_url: str
    patience: int = INITIAL_PATIENCE
    robots: RobotsRules | None = None
    robots_expiry: float = 0.0
    robots_unavailable: bool = False
    delay: CrawlDelay = field(default_factory=lambda: CrawlDelay(0.0))
    todo: deque = field(default_factory=deque)
    requeues: dict = field(default_factory=dict)
    #: True while robots.txt is fetched (its requests keep only the first
    #: ROBOTS_MAX_BYTES of the body); one origin crawler does one thing at a time.
    reading_robots: bool = False
    #: the database's candidate_writes when the last todo fill started
    seen_candidate_writes: int = -1
    #: pages of this origin being read, in request order
    reads: deque = field(default_factory=deque)
    #: crawl log entries in request order: [entry] when ready, [None] while its page is read
    outbox: deque = field(default_factory=deque)
    #: True after a file crawl failed as a possible fluke, until an answer comes
    fluke_streak: bool = False
    #: url ids whose persisting fluke failures cost a patience in this run
    fluke_charged: set = field(default_factory=set)
    #: calendar-like path pattern -> url ids of it crawled in this run
    pattern_urls: dict = field(default_factory=dict)
    #: the read backlog's room for the body of the file crawl under way (None otherwise)
    body_room: BodyRoom | None = None

    def __post_init__(self) -> None:
        self.delay = CrawlDelay(self.state.config.default_delay_ms / 1000.0)

    # -- the loop -------------------------------------------------------------------

    async def run(self) -> None:
        """Crawl until done, out of commands or out of patience.

        An origin without due candidates waits while other origin crawlers still work,
        because they may discover URLs of this origin (links between seed sites); it
        finishes when every origin crawler is idle or gone.
        """
        self.state.busy += 1
        try:
            await self._loop()
            await self.reads_done()
        finally:
            if self.reads:  # cancelled: stop reading, keep the entries that are ready
                for task in self.reads:
                    task.cancel()
                await asyncio.gather(*self.reads, return_exceptions=True)
                self.reads.clear()
                for entry, held in self.outbox:
                    if entry is not None:
                        self.state.db.queue_entry(entry, self._done_callback(held))
                self.outbox.clear()
            self.state.busy -= 1

    async def reads_done(self) -> None:
        """Wait until this origin's pages are read and their entries queued."""
        while self.reads:
            await asyncio.gather(*list(self.reads), return_exceptions=True)

    async def next_read_done(self) -> None:
        """Wait until the oldest page of this origin being read is read, its readers
        asked to hurry (:meth:`~textpile.crawl.reader.PageReader.hurry`)."""
        if self.reads:
            self.state.reader.hurry(self.str_origin)
            await asyncio.wait([self.reads[0]])

    async def _wait_for_candidates(self) -> bool:
        """Idle until a due candidate appears (True) or every crawler is idle (False)."""
        state = self.state
        state.busy -= 1
        # Only other crawlers' new links can make a candidate due here; ask the database
        # again only after some were queued since the caller's empty fill_todo started
        # (entries queued while it waited for the database count: none can be missed).
        seen = self.seen_candidate_writes
        try:
            while True:
                if state.busy == 0 or state.out_of_commands:
                    return False
                if state.db.candidate_writes == seen:
                    await asyncio.sleep(IDLE_POLL_S)
                    continue
                seen = state.db.candidate_writes
                if await self.fill_todo():
                    return True
        finally:
            state.busy += 1

    async def _loop(self) -> None:
        state = self.state
        while True:
            if self.reads:
                # Wait out the delay before deciding what is next, so that the pages read
                # meanwhile count (their links, their failures against patience).
                wait = self.delay.wait_s()
                if wait > 0:
                    await asyncio.sleep(wait)
            if self.patience <= 0:
                if self.str_origin in state.report.refused_origins:  # listed there, not as out of patience
                    state.display.note(f"Gave up on {self.str_origin}: its address was refused")
                else:
                    state.report.out_of_patience_origins.append(self.str_origin)
                    state.display.note(f"Out of patience with {self.str_origin}")
                return
            if self.robots is None or self.robots_unavailable or time.monotonic() >= self.robots_expiry:
                if not state.take_command():
                    state.display.note(f"Ran out of crawl commands on {self.str_origin}")
                    return
                await self.guarded(self.robots_url(), CrawlType.robotstxt_fetch, self.fetch_robots)
                continue
            if not self.todo:
                if self.reads:
                    # The oldest page's links may be the next candidates (its outcome may
                    # end the origin): wait for it alone, asking the readers to hurry,
                    # then look for candidates before waiting for the next one.
                    await self.next_read_done()
                    if self.patience > 0 and not state.out_of_commands:
                        await self.fill_todo()
                    continue
                if not await self.fill_todo() and not await self._wait_for_candidates():
                    state.display.note(f"Finished {self.str_origin}")
                    return
                continue
            candidate = self.todo.popleft()
            url = parse_url(candidate.str_url)
            if not self.robots.can_fetch(url.str_url, state.token):
                self.write(LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=int(time.time()),
                                    time_taken_ms=0, exit_code=ExitCode.blocked_by_robots_txt,
                                    message=f"disallowed by {self.origin_url}robots.txt for {state.token}"))
                continue
            trap = self.trapped(candidate.url_id, url)
            if trap is not None:
                self.write(LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=int(time.time()),
                                    time_taken_ms=0, exit_code=ExitCode.blocked_url_by_local_policy,
                                    message=trap, update_candidate=False))
                continue
            if not state.take_command():
                state.display.note(f"Ran out of crawl commands on {self.str_origin}")
                return
            await self.guarded(url, CrawlType.file_crawl, lambda: self.crawl(candidate, url))

    def trapped(self, url_id: int, url: ParsedUrl) -> str | None:
        """Why ``url`` is not crawled in this run as part of a URL trap, or None.

        A calendar-like URL (:func:`textpile.crawl.traps.calendar_pattern`) is crawled
        only while fewer than ``max_urls_per_pattern`` URLs of its pattern were crawled
        in this run; the others are logged as 173 without touching their candidate
        rows, so they stay due and the next run takes the next ones."""
        cap = self.state.config.max_urls_per_pattern
        if not cap:
            return None
        pattern = calendar_pattern(url)
        if pattern is None:
            return None
        crawled = self.pattern_urls.setdefault(pattern, set())
        if url_id in crawled or len(crawled) < cap:
            crawled.add(url_id)
            return None
        return (f"URL trap: {cap} URLs of the calendar-like pattern {pattern} were crawled in this run "
                "(max_urls_per_pattern); due again in the next run")

    async def fill_todo(self) -> bool:
        """[2] Take due candidates, log the ones local policies block; False when the
        database has no due candidates left (the origin is finished)."""
        state = self.state
        self.seen_candidate_writes = state.db.candidate_writes
        try:
            candidates = await state.db.due_candidates(
                self.str_origin, recrawl_interval_s=state.config.recrawl_interval_s,
                force=state.force_recrawl, limit=TODO_CHUNK,
                feed_interval_s=min(state.config.feed_recrawl_interval_s, state.config.recrawl_interval_s))
        except sqlite3.Error as exc:
            self.database_error(None, exc)
            return True
        if not candidates:
            return False
        for candidate in candidates:
            try:
                url = parse_url(candidate.str_url)
            except UrlError as exc:
                # Stored by an older version; it stays on the ignore list for this run.
                state.display.note(f"Skipped a crawl candidate that is not a valid URL: {exc}")
                continue
            verdict = state.config.policy_verdict(url) or unusable_reason(url)
            if verdict is not None:
                self.write(LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=int(time.time()),
                                    time_taken_ms=0, exit_code=ExitCode.blocked_url_by_local_policy,
                                    message=verdict))
            else:
                self.todo.append(candidate)
        return True

    # -- requests -------------------------------------------------------------------

    async def request(self, url: str, headers: dict[str, str] | None = None) -> FetchResult:
        """Send one request after waiting out the crawl delay; record its timing and, when
        it was sent (not refused by the SSRF filter or the HTTP client), count it.
        While :attr:`reading_robots`, a 2xx body is kept only up to
        :data:`~textpile.crawl.robots.ROBOTS_MAX_BYTES` (see :func:`fetch`)."""
        wait = self.delay.wait_s()
        if wait > 0:
            await asyncio.sleep(wait)
        truncate_at = ROBOTS_MAX_BYTES if self.reading_robots else None
        result = await fetch(self.state.client, url, headers=headers, limits=self.state.limits,
                             truncate_at=truncate_at, room=self.body_room)
        retry_after = None
        if result.status in (429, 503):
            retry_after = parse_retry_after(result.headers.get("retry-after"))
        self.delay.response_received(result.duration_s, rate_limited=result.status == 429,
                                     retry_after_s=retry_after)
        if result.blocked_address or result.exit_code is ExitCode.blocked_url_by_local_policy:
            return result  # refused before anything was sent (SSRF filter, a URL the client refuses)
        report = self.state.report
        report.total_requests += 1
        report.bytes_received += result.raw_size
        self.state.display.request()
        return result

    async def request_with_retry(self, url: str, headers: dict[str, str] | None = None) -> list[FetchResult]:
        """One request, and a second one when the first ended in a possible fluke."""
        first = await self.request(url, headers)
        if first.exit_code is not None and first.exit_code.could_be_fluke:
            return [first, await self.request(url, headers)]
        return [first]

    # -- the safety net -------------------------------------------------------------

    async def guarded(self, url: ParsedUrl, crawl_type: CrawlType, step) -> None:
        """Run ``step()`` (a coroutine function: one robots.txt fetch or one file crawl of
        ``url``) so that no answer can stop the run.

        A database error (``sqlite3.Error``, :class:`~textpile.errors.DatabaseError`)
        keeps its meaning: this origin stops (patience 0, a -3 entry when possible).
        Ctrl+C and cancellation pass through. Any other exception is a bug or a hostile
        answer this crawler did not foresee: it is logged as ``url``'s entry with exit
        code -999 unknown_error and the exception's type and message (at most
        :data:`MAX_ERROR_MESSAGE_CHARS` characters), costs one patience, is not retried
        in this run, and the crawl goes on. A robots.txt fetch that fails so counts as
        unavailable (nothing allowed until the next fetch).
        """
        started = time.time()
        t0 = time.monotonic()
        try:
            await step()
        except (sqlite3.Error, DatabaseError) as exc:
            self.database_error(url, exc)
        except Exception as exc:  # noqa: BLE001 - the one safety net, logged as -999
            self.write(self.unknown_error(url, crawl_type, exc, started, t0))

    def unknown_error(self, url: ParsedUrl, crawl_type: CrawlType, exc: Exception, started: float,
                      t0: float) -> LogEntry:
        """The -999 entry of an unforeseen exception (see :meth:`guarded`); costs one
        patience, and a failed robots.txt fetch makes robots.txt unavailable."""
        self.patience -= 1
        if crawl_type == CrawlType.robotstxt_fetch:
            self.robots = RobotsRules.unavailable()
            self.robots_unavailable = True
            self.robots_expiry = time.monotonic() + ROBOTS_EXPIRY_S
        text = f"{type(exc).__name__}: {exc}"
        if len(text) > MAX_ERROR_MESSAGE_CHARS:
            text = text[: MAX_ERROR_MESSAGE_CHARS - 1] + "\u2026"
        self.state.display.note(f"Unexpected error on {url.str_url[:200]}: {text}")
        return LogEntry(url=url, crawl_type=crawl_type, time_started_unix=int(started),
                        time_taken_ms=int((time.monotonic() - t0) * 1000),
                        exit_code=ExitCode.unknown_error, message=f"unexpected error: {text}",
                        update_candidate=crawl_type == CrawlType.file_crawl)

    # -- [1] robots.txt -------------------------------------------------------------

    def robots_url(self) -> ParsedUrl:
        """This origin's /robots.txt."""
        return parse_url("/robots.txt", self.origin_url)

    async def fetch_robots(self) -> None:
        """Fetch, parse and remember /robots.txt; log it as a robotstxt_fetch entry
        (see :meth:`_fetch_robots`)."""
        self.reading_robots = True
        try:
            await self._fetch_robots()
        finally:
            self.reading_robots = False

    async def _fetch_robots(self) -> None:
        """Fetch, parse and remember /robots.txt; log it as a robotstxt_fetch entry.

        Redirects are followed up to :data:`MAX_ROBOTS_REDIRECTS` hops (more: unavailable,
        everything allowed). A redirect whose target cannot be used (not a URL, an
        invalid host, not http(s), a user name or password in it) makes robots.txt
        unreachable: exit 42, nothing allowed for now, one patience. Only the first
        :data:`~textpile.crawl.robots.ROBOTS_MAX_BYTES` bytes are read and parsed.
        """
        state = self.state
        robots_url = self.robots_url()
        started = time.time()
        t0 = time.monotonic()
        results = await self.request_with_retry(robots_url.str_url)
        hops = 0
        message = None
        bad_target = None
        while (results[-1].exit_code is None and results[-1].status in (301, 302, 303, 307, 308)
               and hops < MAX_ROBOTS_REDIRECTS):
            location = results[-1].headers.get("location") or ""
            try:
                target = parse_url(location, results[-1].url)
            except UrlError as exc:
                bad_target = f"robots.txt redirects to an unusable Location ({exc}): nothing allowed for now"
                break
            reason = "is not http(s)" if target.scheme not in ("http", "https") else unusable_reason(target)
            if reason is not None:
                bad_target = f"robots.txt redirects to a URL that {reason}: nothing allowed for now"
                break
            hops += 1
            results.extend(await self.request_with_retry(target.str_url))
        last = results[-1]
        rules: RobotsRules
        self.robots_unavailable = False
        if bad_target is not None:
            code = ExitCode.did_not_understand_answer
            message = bad_target
            rules = RobotsRules.unavailable()
            self.robots_unavailable = True
            self.patience -= 1
        elif last.exit_code is not None:
            code = last.exit_code
            message = last.message
            rules = RobotsRules.unavailable()
            self.robots_unavailable = True
            if last.blocked_address:
                self.refused(last.message)
            else:
                self.patience -= 1
        else:
            code = exit_code_for_status(last.status)
            if 200 <= last.status < 300:
                body = last.body or b""
                if looks_like_html(last.headers.get("content-type"), body):
                    code = ExitCode.file_of_unknown_type
                    message = "robots.txt answered with an HTML page: no rules, everything allowed"
                    rules = RobotsRules.allow_all()
                else:
                    rules = RobotsRules.parse(body, truncated=last.truncated)
                    if last.truncated:
                        message = f"robots.txt longer than {ROBOTS_MAX_BYTES} bytes: only its start was parsed"
            elif last.status in (301, 302, 303, 307, 308):
                message = "robots.txt redirects too often or to nowhere: treated as unavailable (4xx), everything allowed"
                rules = RobotsRules.allow_all()
            elif last.status == 429 or last.status >= 500:
                message = "robots.txt unavailable: nothing allowed for now"
                rules = RobotsRules.unavailable()
                self.robots_unavailable = True
                self.patience -= 1
            elif 400 <= last.status < 500:
                message = "no robots.txt rules (4xx): everything allowed"
                rules = RobotsRules.allow_all()
            else:
                message = "robots.txt answer not understood: everything allowed"
                rules = RobotsRules.allow_all()
        self.robots = rules
        self.robots_expiry = time.monotonic() + ROBOTS_EXPIRY_S
        crawl_delay = rules.crawl_delay_s(state.token)
        self.delay.minimum_s = crawl_delay if crawl_delay is not None else state.config.default_delay_ms / 1000.0
        requests = [self.request_record(r, r.exit_code or exit_code_for_status(r.status)) for r in results]
        requests[-1].exit_code = code
        new_meta = [] if self.robots_unavailable or not state.config.sitemaps else self.sitemaps_of(rules, robots_url)
        self.write(LogEntry(url=robots_url, crawl_type=CrawlType.robotstxt_fetch, time_started_unix=int(started),
                            time_taken_ms=int((time.monotonic() - t0) * 1000), exit_code=code, message=message,
                            requests=requests, update_candidate=False, new_meta=new_meta))

    def sitemaps_of(self, rules: RobotsRules, robots_url: ParsedUrl) -> list[MetaCandidate]:
        """The sitemaps to read for this origin (dead-simple-search "Sitemap discovery"):
        the ``Sitemap:`` lines of its robots.txt that are usable http(s) URLs on a seed
        origin (a sitemap elsewhere is not fetched: only seed origins are crawled), or,
        when robots.txt names none, this origin's :data:`~textpile.crawl.sitemaps.WELL_KNOWN_SITEMAPS`."""
        named = []
        for line in rules.sitemaps():
            try:
                url = self.state.clean(parse_url(line.partition("#")[0], robots_url.str_url))
            except UrlError:
                continue
            if usable_link(url) and self.state.is_seed_origin(url):
                named.append(MetaCandidate(url, "sitemap", "robots.txt"))
        if named or rules.names_sitemaps():
            return named
        return [MetaCandidate(parse_url(path, self.origin_url), "sitemap", "well-known") for path in WELL_KNOWN_SITEMAPS]

    # -- [3] crawling one URL -------------------------------------------------------

    async def crawl(self, candidate: Candidate, url: ParsedUrl) -> None:
        """Crawl ``url`` with a conditional request when the candidate allows one, and
        log the outcome with its data tree. Waits first for room in the run's read
        backlog (:class:`ReadBacklog`: its turn, and less room while pages of this origin
        wait to be read), holding that room (grown for a bigger body before it is read:
        :class:`BodyRoom`) until the answer's body is counted."""
        headers = {}
        # A stored validator that is not a valid header value (a hostile ETag) is not sent.
        if is_valid_header_value(candidate.last_contentful_http_etag):
            headers["If-None-Match"] = candidate.last_contentful_http_etag
        if candidate.server_last_modified_unix is not None:
            # The stored Last-Modified of the last contentful answer (RFC 9110 13.1.3),
            # never the time of the crawl.
            headers["If-Modified-Since"] = http_date(candidate.server_last_modified_unix)
        backlog = self.state.backlog
        self.body_room = room = BodyRoom(backlog, await backlog.room(reading=bool(self.reads)))
        try:
            started = time.time()
            t0 = time.monotonic()
            results = await self.request_with_retry(url.str_url, headers)
            last = results[-1]
            if last.exit_code is None and 200 <= last.status < 300:
                # Read while the loop goes on: a 2xx answer changes neither patience nor requeues.
                self.fluke_streak = False
                await self.read_later(url, results, started, t0, candidate)
                return
        finally:
            self.body_room = None
            room.give_back()  # its body, if any, is counted now
        entry = await self.interpret(url, results, candidate)
        entry.time_started_unix = int(started)
        entry.time_taken_ms = int((time.monotonic() - t0) * 1000)
        self.write(entry)
        code = entry.exit_code
        if not code.could_be_fluke:
            self.fluke_streak = False
        if last.blocked_address:
            self.refused(last.message)
        elif code == ExitCode.rate_limited or code.could_be_fluke:
            if code.could_be_fluke:
                self.fluke_failed(candidate.url_id)
            count = self.requeues.get(candidate.url_id, 0)
            if count < MAX_REQUEUES:
                # "un-ignored so that it can be recrawled in the same run": its candidate
                # row now says crawled, so it goes back on the todo list directly.
                self.requeues[candidate.url_id] = count + 1
                self.todo.append(candidate)
        elif code == ExitCode.server_internal_error:
            self.patience -= 1

    def fluke_failed(self, url_id: int) -> None:
        """A crawl of ``url_id`` ended in a possible fluke although it was retried at once
        (page "Crawl Loop": such a URL is un-ignored and tried again in this run, which
        costs no patience). Patience is only lost when the trouble persists: when no
        answer came from the origin since its previous such failure, and at most once
        per URL and run. So two URLs that keep failing on an origin that answers
        otherwise cost at most two patience, and an origin that stopped answering gives
        up after a few URLs."""
        if self.fluke_streak and url_id not in self.fluke_charged:
            self.fluke_charged.add(url_id)
            self.patience -= 1
        self.fluke_streak = True

    async def read_later(self, url: ParsedUrl, results: list[FetchResult], started: float, t0: float,
                         candidate: Candidate | None = None) -> None:
        """Start reading the 2xx answer ``results[-1]`` of ``url`` in a task of its own
        and reserve its place in the outbox; wait first while this origin has
        :data:`MAX_READS_PER_ORIGIN` pages being read."""
        while len(self.reads) >= MAX_READS_PER_ORIGIN:
            await self.next_read_done()
        size = len(results[-1].body or b"")
        self.state.backlog.add(size)
        slot: list = [None, size]  # [its entry when read, bytes it holds in the backlog]
        self.outbox.append(slot)
        task = asyncio.create_task(self._read(slot, url, results, started, t0, size, candidate),
                                   name=f"read {url.str_url[:100]}")
        self.reads.append(task)
        task.add_done_callback(self.reads.remove)

    async def _read(self, slot: list, url: ParsedUrl, results: list[FetchResult], started: float, t0: float,
                    size: int, candidate: Candidate | None = None) -> None:
        """Read one page into its outbox ``slot`` (the safety net of :meth:`guarded`
        applies), then queue the entries that are ready. The page's ``size`` stays in
        the read backlog until its entry (its text) is written (see :class:`ReadBacklog`)."""
        try:
            entry = await self.interpret(url, results, candidate)
            entry.time_started_unix = int(started)
            entry.time_taken_ms = int((time.monotonic() - t0) * 1000)
        except (sqlite3.Error, DatabaseError) as exc:
            self.state.backlog.release(size)
            self.outbox.remove(slot)
            self.database_error(url, exc)
            self._send_ready()
            return
        except Exception as exc:  # noqa: BLE001 - the one safety net, logged as -999
            entry = self.unknown_error(url, CrawlType.file_crawl, exc, started, t0)
        except BaseException:  # cancelled
            self.state.backlog.release(size)
            raise
        slot[0] = entry
        self._send_ready()

    def _send_ready(self) -> None:
        """Queue the outbox's leading ready entries, in request order."""
        outbox = self.outbox
        while outbox and outbox[0][0] is not None:
            entry, held = outbox.popleft()
            self.state.db.queue_entry(entry, self._done_callback(held))

    def _done_callback(self, held: int):
        """:meth:`written`, releasing ``held`` bytes of the read backlog first (none: as it is)."""
        if not held:
            return self.written

        def written(entry: LogEntry, error: sqlite3.Error | None) -> None:
            self.state.backlog.release(held)
            self.written(entry, error)

        return written

    def request_record(self, result: FetchResult, code: ExitCode) -> RequestRecord:
        """The request row of ``result`` with exit code ``code``."""
        return RequestRecord(
            url=parse_url(result.url), time_sent_unix=int(result.time_sent),
            duration_ms=int(result.duration_s * 1000), exit_code=code,
            server_last_modified_unix=parse_http_date(result.headers.get("last-modified")),
            http_status=result.status, http_etag=result.headers.get("etag"),
        )

    async def interpret(self, url: ParsedUrl, results: list[FetchResult],
                        candidate: Candidate | None = None) -> LogEntry:
        """Turn the answers to a file crawl of ``candidate`` into a log entry (times
        filled by the caller)."""
        state = self.state
        last = results[-1]
        entry = LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=0, time_taken_ms=0,
                         exit_code=ExitCode.unknown_error)
        entry.requests = [self.request_record(r, r.exit_code or exit_code_for_status(r.status)) for r in results]
        index = len(results) - 1
        if last.exit_code is not None:
            entry.exit_code = last.exit_code
            entry.message = last.message
            return entry
        code = exit_code_for_status(last.status)
        headers = last.headers
        modified = parse_http_date(headers.get("last-modified"))
        file_modified = None if modified is not None and modified == parse_http_date(headers.get("date")) else modified
        if code in (ExitCode.permanent_redirect, ExitCode.redirect):
            location = headers.get("location")
            target = None
            if location:
                try:
                    target = parse_url(location, url.str_url)
                except UrlError:
                    target = None
            reason = unusable_reason(target) if target is not None and target.scheme in ("http", "https") else None
            if target is None or target.scheme not in ("http", "https"):
                code = ExitCode.did_not_understand_answer
                entry.message = f"redirect without a usable http(s) Location: {location[:200]!r}"
            elif reason is not None:
                # Neither stored nor followed: credentials stay out of the database.
                entry.message = f"redirect target {reason}: not recorded, not followed"
            else:
                target = state.clean(target)
                entry.redirect = RedirectRecord(index, target, code == ExitCode.permanent_redirect, file_modified)
                if state.is_seed_origin(target):
                    entry.new_candidates.append(target)
        elif code == ExitCode.file_ingested:
            code = await self.read_file(url, last, entry, index, file_modified, candidate)
        entry.exit_code = code
        entry.requests[-1].exit_code = code
        return entry

    async def read_file(self, url: ParsedUrl, result: FetchResult, entry: LogEntry, index: int,
                        file_modified: int | None, candidate: Candidate | None = None) -> ExitCode:
        """Read a 2xx answer into ``entry``: file and text rows, discovered candidates,
        noindex / canonical decisions. Returns the exit code. The body is decoded and
        read by the run's page reader (a worker process), not on the event loop.

        A body labelled as text that is binary (:func:`~textpile.crawl.sniff.mislabeled_text_type`,
        which looks at its first 1445 bytes only) is stored with its real media type and no
        text: 29 file_of_unknown_type, the message naming the label and the real type.

        A sitemap or feed (:mod:`textpile.crawl.meta`) is read for its URLs
        (:meth:`read_listing`). A file a sitemap dated (``candidate.sitemap_lastmod``) gets
        that date as its last modification, before the Last-Modified header
        (dead-simple-search "Page dates": the sitemap's lastmod, then the header).
        Feeds the page announces become feed candidates; its links to origins outside
        the seeds are recorded when site discovery is on."""
        state = self.state
        config = state.config
        body = result.body or b""
        media_type = parse_media_type(result.headers.get("content-type"))
        directives = x_robots_tag(result.headers.get_list("x-robots-tag"), state.token)
        header_links = parse_link_header(result.headers.get_list("link"))
        reading = PageReading()
        entry.message = result.note
        if candidate is not None and candidate.sitemap_lastmod is not None:
            file_modified = candidate.sitemap_lastmod
        if media_type.essence in TEXT_TYPES:
            utf16 = (codec_for_label(media_type.charset) or "").startswith("utf-16")
            real_type = mislabeled_text_type(body, utf16_declared=utf16)
            if real_type is not None:
                entry.message = (f"labelled {media_type.essence}, but the content is {real_type} "
                                 "(binary bytes; WHATWG MIME sniffing)")
                media_type = parse_media_type(real_type)
        hint = candidate.meta_kind if candidate is not None else None
        if (config.sitemaps or config.feeds) and maybe_meta(body, media_type.essence, hint):
            meta = await state.reader.read_meta(body, url.str_url, hint, state.seed_origins, state.session,
                                                int(time.time()), self.str_origin)
            if meta is not None:
                depth = candidate.meta_depth if candidate is not None and candidate.meta_depth is not None else 0
                return self.read_listing(entry, FileRecord(index, media_type, len(body), file_modified),
                                         meta, depth, directives.nofollow)
        if media_type.essence in TEXT_TYPES:
            reading = await state.reader.read(body, media_type.essence, media_type.charset, url.str_url,
                                              state.token, state.seed_origins, self.str_origin, state.session)
            directives = directives | reading.robots
        if not directives.nofollow:
            entry.new_links = reading.links
            if config.feeds:
                feeds = reading.feeds + [state.clean(f) for f in header_feeds(header_links, url.str_url)]
                entry.new_meta = [MetaCandidate(feed, "feed", "link") for feed in dict.fromkeys(feeds)
                                  if state.is_seed_origin(feed) and feed.str_url != url.str_url]
            if config.discover_sites and reading.other_origins:
                entry.site_links = SiteLinks(reading.other_origins)
        if directives.noindex:
            entry.message = "the page asked not to be indexed (noindex)"
            return ExitCode.blocked_at_request_of_remote
        refresh, source = header_refresh(result.headers.get("refresh"), url.str_url), InformationSource.response_header
        if refresh is not None and refresh[1] is not None:
            refresh = (refresh[0], state.clean(refresh[1]))
        if refresh is None:
            refresh, source = reading.refresh, InformationSource.file_body
        if refresh is not None and refresh[0] <= MAX_REDIRECT_DELAY_S and refresh[1] is not None \
                and refresh[1].str_url != url.str_url:
            # A client-side redirect to a stub page: recorded as a redirect (read from the
            # file's body, or from a Refresh header), not indexed; the target is
            # scheduled like a redirect's.
            delay, target = refresh
            permanent = delay == 0  # an instant refresh redirects for good, as search engines treat it
            entry.redirect = RedirectRecord(index, target, permanent, file_modified, information_source=source)
            what = "meta refresh" if source == InformationSource.file_body else "Refresh header"
            entry.message = f"{what} after {delay} s to {target.str_url}: a client-side redirect, not indexed"
            if state.is_seed_origin(target):
                entry.new_candidates.append(target)
            return ExitCode.permanent_redirect if permanent else ExitCode.redirect
        canonical = reading.canonical or state.clean(header_canonical(header_links, url.str_url))
        if canonical is not None and canonical.str_url != url.str_url:
            entry.message = f"canonical URL is {canonical.str_url}"
            if state.is_seed_origin(canonical):
                entry.new_candidates.append(canonical)
            return ExitCode.not_canonical
        text = body if reading.text_is_body else reading.text
        entry.file = FileRecord(request_index=index, media_type=media_type, size=len(body),
                                last_modified_unix=file_modified, canonical_url=canonical, text=text)
        return ExitCode.file_ingested if text is not None else ExitCode.file_of_unknown_type

    def read_listing(self, entry: LogEntry, file: FileRecord, meta: MetaReading, depth: int,
                     nofollow: bool) -> ExitCode:
        """Fill ``entry`` for a sitemap or feed ``meta`` read at sitemap index ``depth``:
        its file row without text, its listing (the listed URLs become candidates, a
        sitemap index's sitemaps become sitemap candidates one level deeper, up to
        :data:`~textpile.crawl.sitemaps.MAX_SITEMAP_DEPTH`) and a message counting what it
        listed. 20 file_ingested. Sitemaps while ``sitemaps`` is off, feeds while
        ``feeds`` is off, and any listing whose answer said nofollow list nothing."""
        config = self.state.config
        kind = "feed" if meta.kind == "feed" else "sitemap"
        label = {"sitemap": "sitemap", "sitemapindex": "sitemap index", "feed": "feed"}[meta.kind]
        entry.file = file
        notes = list(meta.notes)
        links, modified = meta.links, meta.modified
        if nofollow:
            links, modified = "", []
            notes.append("the answer said nofollow: its URLs are not followed")
        elif (kind == "sitemap" and not config.sitemaps) or (kind == "feed" and not config.feeds):
            links, modified = "", []
            notes.append(f"{kind}s are off (the {kind}s setting): its URLs are not followed")
        elif meta.kind == "sitemapindex":
            if depth + 1 > MAX_SITEMAP_DEPTH:
                notes.append(f"at sitemap index depth {depth}: its sitemaps (depth {depth + 1}) are beyond "
                             f"the depth of {MAX_SITEMAP_DEPTH} and not read")
                links, modified = "", []
            else:
                entry.new_meta = [MetaCandidate(parse_url(row[3]), "sitemap", "sitemap index", depth + 1)
                                  for row in unpack_links(links)]
        entry.listing = Listing(kind, links, modified, meta.lastmod_kept)
        parts = [f"{label}: {_counted(meta.listed, 'entry', 'entries')}, "
                 f"{_counted(meta.link_count, 'URL', 'URLs')} on seed origins"]
        if meta.off_seed:
            parts.append(f"{meta.off_seed} on other origins (not crawled)")
        if meta.unusable:
            parts.append(f"{meta.unusable} not usable as http(s) URLs")
        entry.message = "; ".join([", ".join(parts), *notes])
        return ExitCode.file_ingested

    def refused(self, message: str | None) -> None:
        """The SSRF filter refused this origin's address: stop the origin (patience 0),
        record it in the report and warn once per origin (even without a progress display)."""
        self.patience = 0
        refused = self.state.report.refused_origins
        if self.str_origin not in refused:
            refused[self.str_origin] = message or f"refused to connect to {self.str_origin}"
            self.state.display.warn(refused[self.str_origin])

    # -- database -------------------------------------------------------------------

    def write(self, entry: LogEntry) -> None:
        """Queue ``entry`` for the database's next flush (see
        :meth:`~textpile.crawl.crawldb.CrawlerDb.queue_entry`) after this origin's
        earlier entries still being read; :meth:`written` counts it then."""
        if self.outbox:
            self.outbox.append([entry, 0])
            self._send_ready()
        else:
            self.state.db.queue_entry(entry, self.written)

    def written(self, entry: LogEntry, error: sqlite3.Error | None) -> None:
        """``entry`` was flushed: count and show it; on a database error set patience to
        0 and try to log -3."""
        if error is not None:
            self.database_error(entry.url, error)
            return
        report = self.state.report
        name = entry.exit_code.name
        report.exit_code_counts[name] = report.exit_code_counts.get(name, 0) + 1
        if entry.exit_code == ExitCode.file_ingested and entry.crawl_type == CrawlType.file_crawl:
            report.ingested_files += 1
        report.entry_written(self.str_origin, entry)
        self.state.display.entry(entry.exit_code, entry.url.str_url,
                                 robots=entry.crawl_type == CrawlType.robotstxt_fetch)

    def database_error(self, url: ParsedUrl | None, exc: sqlite3.Error) -> None:
        """Stop this origin (patience 0), remember the run's first database error in the
        report (``database_error``: the run ends with it) and log a database_error entry
        if the database still takes one."""
        self.patience = 0
        if getattr(self.state.report, "database_error", None) is None:
            self.state.report.database_error = exc
        self.state.display.note(f"Database error on {self.str_origin}: {exc}")
        if url is None:
            return
        self.state.db.queue_entry(LogEntry(url=url, crawl_type=CrawlType.file_crawl,
                                           time_started_unix=int(time.time()), time_taken_ms=0,
                                           exit_code=ExitCode.database_error, message=f"database error: {exc}",
                                           update_candidate=False), self._database_error_written)

    def _database_error_written(self, entry: LogEntry, error: sqlite3.Error | None) -> None:
        """Count a database_error entry the database took (one it refused is dropped)."""
        if error is None:
            counts = self.state.report.exit_code_counts
            counts["database_error"] = counts.get("database_error", 0) + 1


def _counted(count: int, one: str, many: str) -> str:
    """``"1 entry"``, ``"3 entries"``."""
    return f"{count} {one if count == 1 else many}"


def unusable_reason(url: ParsedUrl) -> str | None:
    """Why the crawler never crawls ``url`` (it carries a user name or password, or is
    longer than :data:`~textpile.crawl.page.MAX_URL_CHARS`), or None when it may."""
    if url.username is not None or url.password is not None:
        return "carries a user name or password"
    if len(url.str_url) > MAX_URL_CHARS:
        return f"is longer than {MAX_URL_CHARS} characters"
    return None


__all__ = ["OriginCrawler", "RunState", "RobotsDirectives", "TEXT_TYPES", "unusable_reason"]
