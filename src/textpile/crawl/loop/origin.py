"""The origin crawler: the crawl loop of one seed origin.

Source: unobtanium-documentation.txt, page "Crawl Loop". Each iteration does one of:
[1] fetch robots.txt (when missing, expired after 30 minutes, or unavailable last time),
[2] fill the todo list from due crawl candidates (logging local-policy blocks as 173),
[3] crawl one URL (robots.txt blocks logged as 170). The origin gives up on the rate of
its trouble (5xx answers, an unavailable robots.txt, possible flukes that failed their
immediate retry, unforeseen errors) over its latest crawls, and at once on a database
error (:mod:`textpile.crawl.loop.patience`). Rate-limited (429) and fluke URLs are taken
off the ignore list so they are tried again in the same run (each at most
:data:`MAX_REQUEUES` times), among the other work: after the next
:data:`~textpile.crawl.loop.patience.RETRY_SPACING` candidates, not all at the end.

Pages are read while the loop goes on: a 2xx text answer is handed to the run's page
reader (a worker process) and the origin crawler waits out its delay and sends its next
request meanwhile (at most :data:`MAX_READS_PER_ORIGIN` pages of one origin, and
:func:`~textpile.crawl.loop.backlog.read_backlog_bytes` of all, wait to be read: the read
backlog). Its crawl log entries are still queued in request order (an outbox per
origin). With its todo list empty it waits for its oldest page's links (asking the
readers to hurry: :meth:`PageReader.hurry`), then looks for new candidates, page after
page. What an answer means (its crawl log entry) is the interpreter's business
(:mod:`textpile.crawl.interpret`), and what a robots.txt answer means robots.txt's
(:func:`textpile.crawl.fetcher.robots.robots_answer`).

Hostile sites: whatever handling one robots.txt fetch or one URL raises (other than a
database error, Ctrl+C or cancellation) is logged as that entry's -999 unknown_error
with the exception's message and counts as a failure against patience; the run goes on
(:meth:`OriginCrawler.guarded`, the one safety net). URLs with a user name or password,
or longer than :data:`~textpile.crawl.parser.page.MAX_URL_CHARS`, are never scheduled.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import deque
from dataclasses import dataclass, field

from textpile.crawl.crawldb.prune import OriginOutcome
from textpile.crawl.crawldb.records import Candidate, LogEntry, MetaCandidate
from textpile.crawl.crawldb.writer import CrawlerDb
from textpile.crawl.discovery.sitemaps import WELL_KNOWN_SITEMAPS
from textpile.crawl.fetcher.delay import CrawlDelay, parse_retry_after
from textpile.crawl.fetcher.fetch import (CrawlClient, FetchLimits, FetchResult, exit_code_for_status, fetch, http_date,
                                          is_valid_header_value)
from textpile.crawl.fetcher.robots import (REDIRECT_STATUSES, ROBOTS_EXPIRY_S, ROBOTS_MAX_BYTES, RobotsRules,
                                           robots_answer)
from textpile.crawl.interpret import Interpreter, request_record
from textpile.crawl.loop.backlog import BodyRoom, ReadBacklog
from textpile.crawl.loop.patience import RETRY_SPACING, Patience
from textpile.crawl.parser.page import unusable_reason, usable_link
from textpile.crawl.policy.config import CrawlConfig
from textpile.crawl.policy.traps import calendar_pattern, digit_pattern, url_key
from textpile.crawl.workers.readers import PageReader
from textpile.enums import CrawlType, ExitCode
from textpile.errors import DatabaseError
from textpile.store.urls import ParsedUrl, UrlError, parse_url

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
@dataclass
class RunState:
    """What all origin crawlers of one run share (one asyncio thread, no locks needed).

    ``commands_left`` is the run's remaining max_commands_per_run budget; a command is a
    crawl that sends requests (a file crawl or a robots.txt fetch). ``reader`` reads the
    fetched pages off the event loop (see :mod:`textpile.crawl.workers.readers`).
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
    #: the largest url_id when the run began: URLs up to it were found in an earlier run
    #: (whose pages that link them are not all read again), so never held back as a chain
    known_url_ids: int = 0
    #: the answers' interpreter (:class:`~textpile.crawl.interpret.Interpreter` of
    #: ``config``, ``token``, ``seed_origins`` and ``reader``)
    interpreter: Interpreter = field(init=False)

    def __post_init__(self) -> None:
        self.interpreter = Interpreter(self.config, self.token, self.seed_origins, self.reader)

    def take_command(self) -> bool:
        """Use one command of the budget; False when it is spent."""
        if self.commands_left <= 0:
            self.out_of_commands = True
            return False
        self.commands_left -= 1
        return True


@dataclass
class OriginCrawler:
    """The crawl loop of one origin (``str_origin`` as stored in ``origin.str_origin``)."""

    state: RunState
    str_origin: str
    origin_url: str
    patience: Patience = field(default_factory=Patience)
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
    #: digit pattern (calendar-like or not) -> url ids of it crawled in this run
    pattern_urls: dict = field(default_factory=dict)
    #: keys (traps.url_key) of the URLs found on a page of their own digit pattern in this
    #: run (chains), and of those found on a page of another pattern (anchored)
    chained: set = field(default_factory=set)
    anchored: set = field(default_factory=set)
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
        except BaseException:
            self.ended("interrupted")
            raise
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
        asked to hurry (:meth:`~textpile.crawl.workers.readers.PageReader.hurry`)."""
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
            if self.patience.exhausted:
                if self.str_origin in state.report.refused_origins:  # listed there, not as out of patience
                    state.display.note(f"Gave up on {self.str_origin}: its address was refused")
                    self.ended("refused")
                else:
                    state.report.out_of_patience_origins.append(self.str_origin)
                    state.display.note(f"Out of patience with {self.str_origin}")
                    database_error = getattr(state.report, "database_error", None) is not None
                    self.ended("database_error" if database_error else "out_of_patience")
                return
            if self.robots is None or self.robots_unavailable or time.monotonic() >= self.robots_expiry:
                if not state.take_command():
                    state.display.note(f"Ran out of crawl commands on {self.str_origin}")
                    self.ended("out_of_commands")
                    return
                await self.guarded(self.robots_url(), CrawlType.robotstxt_fetch, self.fetch_robots)
                continue
            if not self.todo:
                if self.reads:
                    # The oldest page's links may be the next candidates (its outcome may
                    # end the origin): wait for it alone, asking the readers to hurry,
                    # then look for candidates before waiting for the next one.
                    await self.next_read_done()
                    if not self.patience.exhausted and not state.out_of_commands:
                        await self.fill_todo()
                    continue
                if not await self.fill_todo() and not await self._wait_for_candidates():
                    state.display.note(f"Finished {self.str_origin}")
                    self.ended("out_of_commands" if state.out_of_commands else "finished")
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
                self.ended("out_of_commands")
                return
            await self.guarded(url, CrawlType.file_crawl, lambda: self.crawl(candidate, url))

    def ended(self, how: str) -> None:
        """Record in the report how this origin's crawl ended (``how``: see
        :class:`~textpile.crawl.crawldb.prune.OriginOutcome`), with its failures and
        successes and whether robots.txt was available; pruning reads it."""
        self.state.report.origin_outcomes[self.str_origin] = OriginOutcome(
            how, self.patience.failures, self.patience.successes, not self.robots_unavailable)

    def trapped(self, url_id: int, url: ParsedUrl) -> str | None:
        """Why ``url`` is not crawled in this run as part of a URL trap, or None.

        A URL of a digit pattern (:func:`textpile.crawl.policy.traps.digit_pattern`) that is
        calendar-like (:func:`~textpile.crawl.policy.traps.calendar_pattern`), or was found
        on a page of its own pattern in this run (a chain: ``/cal?m=7`` linking
        ``/cal?m=8``), on none of another and in no earlier run, is crawled only while fewer than
        ``max_urls_per_pattern`` URLs of its pattern were crawled in this run; the others
        are logged as 173 without touching their candidate rows, so they stay due and the
        next run takes the next ones. Every URL of the pattern crawled counts, and URLs of
        it that other pages link to are never held back."""
        cap = self.state.config.max_urls_per_pattern
        if not cap:
            return None
        pattern = digit_pattern(url)
        if pattern is None:
            return None
        crawled = self.pattern_urls.setdefault(pattern, set())
        calendar = calendar_pattern(url) is not None
        if url_id in crawled or len(crawled) < cap or not (calendar or self.chain_only(url_id, url)):
            crawled.add(url_id)
            return None
        if calendar:
            return (f"URL trap: {cap} URLs of the calendar-like pattern {pattern} were crawled in this run "
                    "(max_urls_per_pattern); due again in the next run")
        return (f"URL trap: {cap} URLs of the pattern {pattern} were crawled in this run, and this one was found "
                "on a page of the same pattern (max_urls_per_pattern); due again in the next run")

    def chain_only(self, url_id: int, url: ParsedUrl) -> bool:
        """True when ``url`` was first found in this run, and on pages of its own digit
        pattern only."""
        if url_id <= self.state.known_url_ids:
            return False
        key = url_key(url.str_url)
        return key in self.chained and key not in self.anchored

    async def fill_todo(self) -> bool:
        """[2] Take due candidates, log the ones local policies block; False when the
        database has no due candidates left (the origin is finished)."""
        state = self.state
        self.seen_candidate_writes = state.db.candidate_writes
        try:
            candidates = await state.db.due_candidates(
                self.str_origin, recrawl_interval_s=state.config.recrawl_interval_s,
                force=state.force_recrawl, limit=TODO_CHUNK,
                feed_interval_s=min(state.config.feed_recrawl_interval_s, state.config.recrawl_interval_s),
                bounds_s=state.config.recrawl_bounds_s)
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
        :data:`~textpile.crawl.fetcher.robots.ROBOTS_MAX_BYTES` (see :func:`fetch`)."""
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
        keeps its meaning: this origin stops (gives up at once, a -3 entry when possible).
        Ctrl+C and cancellation pass through. Any other exception is a bug or a hostile
        answer this crawler did not foresee: it is logged as ``url``'s entry with exit
        code -999 unknown_error and the exception's type and message (at most
        :data:`MAX_ERROR_MESSAGE_CHARS` characters), counts as a failure, is not retried
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
        """The -999 entry of an unforeseen exception (see :meth:`guarded`); counts as a
        failure, and a failed robots.txt fetch makes robots.txt unavailable."""
        self.patience.failure()
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
        unreachable: exit 42, nothing allowed for now, a failure. Only the first
        :data:`~textpile.crawl.fetcher.robots.ROBOTS_MAX_BYTES` bytes are read and parsed. The
        last answer is understood by :func:`~textpile.crawl.fetcher.robots.robots_answer`; an
        unavailable robots.txt is a failure against patience, an address the SSRF filter refused
        stops the origin (:meth:`refused`).
        """
        state = self.state
        robots_url = self.robots_url()
        started = time.time()
        t0 = time.monotonic()
        results = await self.request_with_retry(robots_url.str_url)
        hops = 0
        bad_target = None
        while (results[-1].exit_code is None and results[-1].status in REDIRECT_STATUSES
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
        answer = robots_answer(results[-1], bad_target)
        code, message, rules = answer.exit_code, answer.message, answer.rules
        self.robots_unavailable = answer.unavailable
        if answer.refused:
            self.refused(results[-1].message)
        elif answer.unavailable:
            self.patience.failure()
        else:
            self.patience.success()
        self.robots = rules
        self.robots_expiry = time.monotonic() + ROBOTS_EXPIRY_S
        crawl_delay = rules.crawl_delay_s(state.token)
        self.delay.minimum_s = crawl_delay if crawl_delay is not None else state.config.default_delay_ms / 1000.0
        requests = [request_record(r, r.exit_code or exit_code_for_status(r.status)) for r in results]
        requests[-1].exit_code = code
        new_meta = [] if self.robots_unavailable or not state.config.sitemaps else self.sitemaps_of(rules, robots_url)
        self.write(LogEntry(url=robots_url, crawl_type=CrawlType.robotstxt_fetch, time_started_unix=int(started),
                            time_taken_ms=int((time.monotonic() - t0) * 1000), exit_code=code, message=message,
                            requests=requests, update_candidate=False, new_meta=new_meta))

    def sitemaps_of(self, rules: RobotsRules, robots_url: ParsedUrl) -> list[MetaCandidate]:
        """The sitemaps to read for this origin (dead-simple-search "Sitemap discovery"):
        the ``Sitemap:`` lines of its robots.txt that are usable http(s) URLs on a seed
        origin (a sitemap elsewhere is not fetched: only seed origins are crawled), or,
        when robots.txt names none, this origin's :data:`~textpile.crawl.discovery.sitemaps.WELL_KNOWN_SITEMAPS`."""
        named = []
        for line in rules.sitemaps():
            try:
                url = self.state.interpreter.clean(parse_url(line.partition("#")[0], robots_url.str_url))
            except UrlError:
                continue
            if usable_link(url) and self.state.interpreter.is_seed_origin(url):
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
        # A stored validator that is not a valid header value (a hostile ETag) is not sent;
        # none is sent for a page whose links the database does not keep (a 304 would not
        # give them, and pruning needs them: textpile.crawl.crawldb.prune).
        if candidate.links_known and is_valid_header_value(candidate.last_contentful_http_etag):
            headers["If-None-Match"] = candidate.last_contentful_http_etag
        if candidate.links_known and candidate.server_last_modified_unix is not None:
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
                # Read while the loop goes on: never requeued; a success once it is read.
                await self.read_later(url, results, started, t0, candidate)
                return
        finally:
            self.body_room = None
            room.give_back()  # its body, if any, is counted now
        entry = await self.state.interpreter.interpret(url, results, candidate, self.str_origin)
        entry.time_started_unix = int(started)
        entry.time_taken_ms = int((time.monotonic() - t0) * 1000)
        self.write(entry)
        code = entry.exit_code
        if last.blocked_address:
            self.refused(last.message)
        elif code == ExitCode.rate_limited or code.could_be_fluke:
            if code.could_be_fluke:
                self.patience.failure(candidate.url_id)
            count = self.requeues.get(candidate.url_id, 0)
            if count < MAX_REQUEUES:
                # "un-ignored so that it can be recrawled in the same run": its candidate
                # row now says crawled, so it goes back on the todo list directly, after
                # the next RETRY_SPACING candidates (the others have their turn first).
                self.requeues[candidate.url_id] = count + 1
                self.todo.insert(min(len(self.todo), RETRY_SPACING), candidate)
        elif code == ExitCode.server_internal_error:
            self.patience.failure(candidate.url_id)
        elif entry.requests:
            self.patience.success()

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
            entry = await self.state.interpreter.interpret(url, results, candidate, self.str_origin)
            entry.time_started_unix = int(started)
            entry.time_taken_ms = int((time.monotonic() - t0) * 1000)
            self.chained.update(entry.chain_links)
            self.anchored.update(entry.anchored_links)
            self.patience.success()
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

    def refused(self, message: str | None) -> None:
        """The SSRF filter refused this origin's address: stop the origin (give up at once),
        record it in the report and warn once per origin (even without a progress display)."""
        self.patience.give_up()
        refused = self.state.report.refused_origins
        if self.str_origin not in refused:
            refused[self.str_origin] = message or f"refused to connect to {self.str_origin}"
            self.state.display.warn(refused[self.str_origin])

    # -- database -------------------------------------------------------------------

    def write(self, entry: LogEntry) -> None:
        """Queue ``entry`` for the database's next flush (see
        :meth:`~textpile.crawl.crawldb.writer.CrawlerDb.queue_entry`) after this origin's
        earlier entries still being read; :meth:`written` counts it then."""
        if self.outbox:
            self.outbox.append([entry, 0])
            self._send_ready()
        else:
            self.state.db.queue_entry(entry, self.written)

    def written(self, entry: LogEntry, error: sqlite3.Error | None) -> None:
        """``entry`` was flushed: count and show it; on a database error give up and try
        to log -3."""
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
        """Stop this origin (give up at once), remember the run's first database error in the
        report (``database_error``: the run ends with it) and log a database_error entry
        if the database still takes one."""
        self.patience.give_up()
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


