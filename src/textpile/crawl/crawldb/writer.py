"""Writing crawl results into the crawler database (crawler schema 1.0.0), off the event loop.

Sources: unobtanium-documentation.txt, pages "Crawler Database", "Crawl Data Tree",
"Crawl Loop" (crawl candidates, the temporary ignore list kept by the database). A crawl
log entry is always written whole, together with its data tree and the candidate
updates it causes, so an interrupted run leaves only whole entries behind (the SQL is in
:mod:`textpile.crawl.crawldb.sql`).

During a crawl the database work runs in a database process of its own (one
:class:`~textpile.crawl.crawldb.sql.CrawlStore` on its own connection), so that neither
SQLite nor the GIL it would share stop the event loop. :meth:`CrawlerDb.queue_entry`
collects entries; :meth:`CrawlerDb.flush` sends them to be written in one transaction.
The crawl flushes every :data:`FLUSH_INTERVAL_S`, when :data:`MAX_PENDING_ENTRIES` are
queued, before it asks for due candidates (which the database process answers after the
writes before them) and at its end, Ctrl+C included. A kill loses at most the entries not
yet flushed; their URLs stay due, so the next run crawls them again.

Outside the event loop (before and after a crawl, tests) the same methods work on the
caller's connection: :meth:`CrawlerDb.add_candidates`, :meth:`CrawlerDb.write_entry`,
:meth:`CrawlerDb.flush_now`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import BrokenExecutor

from textpile.crawl.crawldb.records import Candidate, FileRecord, LogEntry, RedirectRecord, RequestRecord
from textpile.crawl.crawldb.sql import IGNORE_TABLE, CrawlStore
from textpile.crawl.workers.futures import pass_outcome
from textpile.crawl.workers.process import WorkerProcess, forkserver_context, init_crawl_worker
from textpile.processes import this_process
from textpile.store.urls import ParsedUrl

#: Seconds between flushes of queued crawl log entries during a crawl.
FLUSH_INTERVAL_S = 0.25
#: Queued entries that make the crawl flush at once.
MAX_PENDING_ENTRIES = 200
#: Text and link bytes of queued entries that make them go to the database process at
#: once: a batch is pickled whole in this process and unpickled whole in that one, so
#: this bounds the memory a batch of big pages takes in both.
MAX_PENDING_BYTES = 8 * 1024 * 1024
#: The process name of the crawler database process (``ps``, ``top``).
DATABASE_PROCESS_NAME = "textpile-writer"
#: Links of a page written in one job of the database process (about 20 ms of work).
LINKS_PER_JOB = 2000

#: Called after a queued entry was flushed: ``(entry, None)`` when written, ``(entry,
#: error)`` when the database refused it (nothing of it is kept).
EntryDone = Callable[[LogEntry, "sqlite3.Error | None"], None]

#: The database process's own store (set by its initializer; None in every other process).
_PROCESS_STORE: CrawlStore | None = None


def _open_process_store(path: str, agent_id: int | None, owner_pid: int, owner_started: float | None,
                        routes: dict[str, str] | None = None) -> None:
    """Initializer of the database process: as the page readers' (SIGINT ignored, ends
    when the crawl's process is killed), then open ``path`` with textpile's connection
    settings and keep a CrawlStore on it (handing off URLs of the ``routes`` origins)."""
    global _PROCESS_STORE
    from textpile.store.database import connect

    init_crawl_worker(owner_pid, owner_started, DATABASE_PROCESS_NAME)
    _PROCESS_STORE = CrawlStore(connect(path), agent_id, routes)


def _in_process(method: str, *args):
    """Call ``method`` of the database process's store with ``args``."""
    return getattr(_PROCESS_STORE, method)(*args)


def _database_path(conn: sqlite3.Connection) -> str:
    """The file of ``conn``'s main database ('' for an in-memory or temporary one)."""
    for _seq, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return path or ""
    return ""


class CrawlerDb:
    """The crawler database of one crawl run, over the caller's open connection.

    ``routes`` (``str_origin`` -> shard): the sites of other shards, whose URLs found are
    handed off rather than made candidates (:mod:`textpile.shards.handoff`; None: none).

    Raises (constructor): sqlite3.Error when the connection refuses the temporary
    ignore table or the url index.
    """

    def __init__(self, conn: sqlite3.Connection, routes: dict[str, str] | None = None) -> None:
        self.conn = conn
        self.routes = dict(routes or {})
        self.store = CrawlStore(conn, routes=self.routes)
        #: bumped whenever candidates may have been added, so idle origin crawlers can
        #: tell cheaply whether asking the database for due candidates is worth it
        self.candidate_writes = 0
        #: set when MAX_PENDING_ENTRIES are queued (the crawl's flusher waits on it)
        self.full: asyncio.Event | None = None
        self._pending: list[tuple[LogEntry, EntryDone | None]] = []
        #: text and link bytes of the queued entries
        self._pending_bytes = 0
        self._worker: WorkerProcess | None = None
        self._inflight: set[asyncio.Future] = set()
        self._busy = False
        #: entry writes and due-candidate queries, in the order asked for
        self._jobs: deque = deque()
        self._links: OrderedDict[str, deque] = OrderedDict()

    @property
    def agent_id(self) -> int | None:
        """The agent row of this run (see :meth:`start_agent`)."""
        return self.store.agent_id

    def start_agent(self, agent_uuid: uuid.UUID, name: str, http_user_agent: str | None) -> int:
        """Insert the agent row of this run (time_finished NULL) and return its agent_id."""
        return self.store.start_agent(agent_uuid, name, http_user_agent)

    def finish_agent(self) -> None:
        """Write what is still queued, then set the agent's time_finished_unix_utc to now
        (outside the event loop)."""
        self.flush_now()
        self.store.finish_agent()

    def add_candidates(self, urls: list[ParsedUrl]) -> None:
        """Add ``urls`` as crawl candidates (existing rows are kept) and commit, on the
        caller's connection (outside the event loop, or before the crawl's database
        process has work)."""
        self.flush_now()
        if urls:
            self.candidate_writes += 1
        self.store.add_candidates(urls)

    def write_entry(self, entry: LogEntry) -> int:
        """Write what is queued, then ``entry``, on the caller's connection (outside the
        event loop); see :meth:`CrawlStore.write_entry`. Returns the crawl_log_id.

        Raises:
            sqlite3.Error: the database refused the write (nothing of the entry is kept).
        """
        self.flush_now()
        return self.store.write_entry(entry)

    # -- during the crawl ---------------------------------------------------------

    @property
    def pending(self) -> int:
        """Entries queued and not yet flushed."""
        return len(self._pending)

    def queue_entry(self, entry: LogEntry, done: EntryDone | None = None) -> None:
        """Queue ``entry`` for the next flush; ``done`` is called (on the event loop, or
        by :meth:`flush_now`) when it was written or refused. With
        :data:`MAX_PENDING_ENTRIES` queued, :attr:`full` is set (the crawl flushes); with
        :data:`MAX_PENDING_BYTES` of texts and links queued during a crawl, they are sent
        to the database process at once (without waiting for the write)."""
        self._pending.append((entry, done))
        if entry.new_candidates or entry.new_links:
            self.candidate_writes += 1
        self._pending_bytes += len(entry.new_links) + (len(entry.file.text or "") if entry.file is not None else 0)
        if self.full is not None:
            if self._pending_bytes >= MAX_PENDING_BYTES:
                self._send_pending()
            elif len(self._pending) >= MAX_PENDING_ENTRIES:
                self.full.set()

    # The database process does one job at a time, chosen here: entry writes and
    # due-candidate queries in the order they were asked for (a query waits for the
    # writes queued before it, whose candidates it must see, never for later ones; and
    # for the links of its own origin's big pages), then the links of big pages in
    # chunks. So neither a stream of other origins' writes nor one origin's page with
    # 20,000 links keeps an origin waiting for its next candidates.

    def _enqueue(self, lane: str, origin: str, method: str, *args,
                 on_error: Callable[[BaseException], None] | None = None) -> asyncio.Future:
        """Queue ``CrawlStore.<method>(*args)`` for the database process in ``lane``
        (``write`` and ``query`` share one queue; ``links`` has one per ``origin``;
        ``origin`` names a query's origin too)."""
        future = asyncio.get_running_loop().create_future()
        job = (origin if lane != "write" else "", method, args, future, on_error)
        if lane == "links":
            self._links.setdefault(origin, deque()).append(job)
        else:
            self._jobs.append(job)
        self._pump()
        return future

    def _next_job(self):
        for index, job in enumerate(self._jobs):
            # the first write, or query not waiting for its own origin's links (every
            # write before it was taken first)
            if not job[0] or job[0] not in self._links:
                del self._jobs[index]
                return job
        if self._jobs:  # every query waits for links of its own origin: those first
            origin = self._jobs[0][0]
        elif self._links:
            origin = next(iter(self._links))
        else:
            return None
        chunks = self._links[origin]
        job = chunks.popleft()
        if not chunks:
            del self._links[origin]
        return job

    def _pump(self) -> None:
        """Start the next job when the database process is idle."""
        while not self._busy:
            job = self._next_job()
            if job is None:
                return
            _origin, method, args, future, _on_error = job
            loop = asyncio.get_running_loop()
            if self._worker is None:
                path = _database_path(self.conn)
                if not path:  # an in-memory database, which no other process can reach
                    try:
                        future.set_result(getattr(self.store, method)(*args))
                    except sqlite3.Error as exc:
                        future.set_exception(exc)
                    self._job_failed(job)
                    continue
                owner = this_process()
                self._worker = WorkerProcess(forkserver_context(), name="crawler database",
                                             initializer=_open_process_store,
                                             initargs=(path, self.agent_id, owner.pid, owner.started_unix,
                                                       self.routes))
            self._busy = True
            try:
                work = self._worker.call(_in_process, method, *args)
            except BrokenExecutor as exc:  # the database process died: every job fails with it
                work = loop.create_future()
                work.set_exception(exc)
            work.add_done_callback(lambda done, job=job: self._job_done(job, done))

    def _job_done(self, job, work: asyncio.Future) -> None:
        self._busy = False
        if not job[3].done():  # else its caller was cancelled while the job ran: nobody waits for it
            pass_outcome(work, job[3])
            self._job_failed(job)
        self._pump()

    @staticmethod
    def _job_failed(job) -> None:
        """Report a failed links job to its ``on_error`` (other jobs report to their caller)."""
        future, on_error = job[3], job[4]
        if on_error is not None and not future.cancelled() and future.exception() is not None:
            on_error(future.exception())

    def start(self) -> None:
        """Start the database process now (in the background: a crawl starts it while
        it fetches robots.txt). A process that cannot open the database fails every
        job after this one too; those report it (this one's outcome is not needed)."""
        self._enqueue("write", "", "write_batch", []).add_done_callback(
            lambda future: future.cancelled() or future.exception())

    async def flush(self) -> None:
        """Send the queued entries to be written in one transaction (see
        :meth:`CrawlStore.write_batch`), with their pages' links (the links of a page with
        more than :data:`LINKS_PER_JOB` after them, in chunks of that many), and call
        their ``done`` (for a chunk of links the database refused too). Cancelling the caller does not cancel the write: its outcome is
        still delivered (see :meth:`drain`)."""
        future = self._send_pending()
        if future is not None:
            await asyncio.shield(future)

    def _send_pending(self) -> asyncio.Future | None:
        """Queue the write job of the entries queued so far (see :meth:`flush`) and
        return its future; None when nothing is queued."""
        if not self._pending:
            return None
        batch, self._pending = self._pending, []
        self._pending_bytes = 0
        if self.full is not None:
            self.full.clear()
        for entry, done in batch:
            if entry.new_links.count("\n") >= LINKS_PER_JOB:
                # A page with many links: they follow in chunks of their own, so that the
                # write jobs (and the queries behind them) stay short.
                lines = entry.new_links.split("\n")
                entry.new_links = ""
                origin = entry.url.str_origin
                for start in range(0, len(lines), LINKS_PER_JOB):
                    on_error = None if done is None else (lambda exc, entry=entry, done=done: done(entry, exc))
                    self._enqueue("links", origin, "add_links", "\n".join(lines[start:start + LINKS_PER_JOB]),
                                  on_error=on_error)
        future = self._enqueue("write", "", "write_batch", [entry for entry, _ in batch])
        self._inflight.add(future)

        def deliver(done_future: asyncio.Future) -> None:
            self._inflight.discard(done_future)
            if done_future.cancelled():
                return
            error = done_future.exception()
            # A failure of the database process itself fails every entry of the batch.
            _deliver(batch, done_future.result() if error is None else [error] * len(batch))

        future.add_done_callback(deliver)
        return future

    async def due_candidates(self, str_origin: str, *, recrawl_interval_s: int, force: bool,
                             limit: int, now_unix: int | None = None,
                             feed_interval_s: int | None = None,
                             bounds_s: tuple[int, int] | None = None) -> list[Candidate]:
        """Up to ``limit`` due candidates of ``str_origin``, put on the ignore list (see
        :meth:`CrawlStore.due_candidates`), from the database process after the entries
        queued so far and the links of this origin's pages are written (so the
        candidates they add count): the query is queued right behind their write, in
        one round trip.

        Raises:
            sqlite3.Error: the database refused the query.
        """
        self._send_pending()
        return await self._enqueue("query", str_origin, "due_candidates", str_origin, recrawl_interval_s, force,
                                   limit, now_unix, feed_interval_s, bounds_s)

    async def drain(self) -> None:
        """Flush, wait for every job under way, and stop the database process."""
        await self.flush()
        while self._inflight or self._busy or self._jobs or self._links:
            if self._inflight:
                await asyncio.gather(*list(self._inflight), return_exceptions=True)
            else:
                await asyncio.sleep(0.01)
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def flush_now(self) -> None:
        """Write the queued entries on the caller's connection (outside the event loop)."""
        if self._pending:
            batch, self._pending = self._pending, []
            self._pending_bytes = 0
            _deliver(batch, self.store.write_batch([entry for entry, _ in batch]))


def _deliver(batch: list[tuple[LogEntry, EntryDone | None]], outcomes: list[sqlite3.Error | None]) -> None:
    """Call each queued entry's ``done`` with its outcome."""
    for (entry, done), error in zip(batch, outcomes):
        if done is not None:
            done(entry, error)


__all__ = ["IGNORE_TABLE", "Candidate", "CrawlerDb", "EntryDone", "FileRecord", "LogEntry", "RedirectRecord",
           "RequestRecord", "FLUSH_INTERVAL_S", "MAX_PENDING_ENTRIES"]
