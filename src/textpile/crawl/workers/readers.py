"""The page readers: the worker processes that read the fetched pages off the event loop.

The crawl's event loop only sends requests, schedules and writes; what costs CPU per
page (decoding the body, parsing the HTML, resolving every link:
:func:`textpile.crawl.parser.body.read_body`; reading a sitemap or feed:
:func:`textpile.crawl.discovery.meta.read_meta`) runs in a :class:`PageReader`, a pool
of worker processes, so that both cores work and a big page never holds up another
origin's request.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor

from textpile import processes
from textpile.crawl.discovery.meta import MetaReading, read_meta
from textpile.crawl.parser.body import PageReading, read_body
from textpile.crawl.workers.futures import pass_outcome
from textpile.crawl.workers.process import WorkerProcess, forkserver_context, init_crawl_worker
from textpile.processes import this_process

#: The process name of the page readers (``ps``, ``top``; :func:`textpile.processes.name_this_process`).
READER_PROCESS_NAME = "textpile-reader"

#: Page reader processes at least, also on one CPU (see :func:`default_readers`).
MIN_READERS = 2


def default_readers() -> int:
    """The number of page reader processes by default: the CPUs this process may use,
    at least :data:`MIN_READERS`. With one reader, an origin's small page waits until
    another origin's big page (a second of CPU) is read; with two, one origin's pages
    never hold more than one of them (:class:`PageReader`), and the system shares the
    CPU between the two, so the small page is read at once."""
    return max(MIN_READERS, processes.usable_cpus())


class PageReader:
    """Runs :func:`read_body` in ``processes`` worker processes (0: in one thread of
    this process, for tests and debugging; None: :func:`default_readers`).

    Pages wait in a queue of their own per origin and are handed out round-robin over
    the origins, two per worker at most, and one origin never has more than all
    workers but one (with two or more) handed out, so one origin's big pages never make
    another origin's page wait for a free worker. An origin that can do nothing until a
    page of its own is read (its next candidates are that page's links) says so with
    :meth:`hurry`: such origins get their next page handed out first, in the order they
    asked, so that while the workers are behind, the origins waiting on them resume
    first.
    Each worker is a :class:`~textpile.crawl.workers.process.WorkerProcess` (the event loop
    writes its pages to it and reads the readings back itself, no executor threads); a
    page goes to the worker with the fewest pages handed out, then the fewest body
    bytes, so a small page does not queue behind a big one while another worker has
    less to do.
    Workers are started by :meth:`start` or the first :meth:`read`, from a forkserver
    (no fork of a process with threads and an event loop). They ignore SIGINT, and end
    by themselves when the process owning the reader is killed (their socket closes;
    also :func:`textpile.processes.exit_with_parent`). Use as a context manager or call
    :meth:`close`.

    Raises:
        ValueError: ``processes`` is negative.
    """

    def __init__(self, processes: int | None = None) -> None:
        if processes is None:
            processes = default_readers()
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 0:
            raise ValueError(f"page reader processes: found {processes!r}; expected a whole number >= 0")
        self.processes = processes
        self._executor: ThreadPoolExecutor | None = None
        self._workers: list[WorkerProcess] | None = None
        #: body bytes handed to each worker and not read yet
        self._worker_bytes: dict[WorkerProcess, int] = {}
        #: origin -> pages waiting (arguments, future); the origins in round-robin order
        self._waiting: OrderedDict[str, deque] = OrderedDict()
        self._reading = 0
        self._reading_by_origin: dict[str, int] = {}
        #: origins waiting for a page of their own to be read, in the order they asked
        self._hurried: dict[str, None] = {}
        #: pages of one origin read at once
        self.per_origin = max(1, processes - 1)
        #: pages handed to the workers at once: two per worker, so that a worker finds
        #: its next page at hand when it finishes one
        self.in_flight = 2 * max(1, processes)

    def start(self) -> None:
        """Start the workers now (in the background: a crawl starts them while it
        fetches robots.txt, so its first page does not wait for them)."""
        if not self._started:
            self._start()

    @property
    def _started(self) -> bool:
        return self._executor is not None or self._workers is not None

    def _start(self) -> None:
        if self.processes == 0:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="textpile-page-reader")
            return
        owner = this_process()
        context = forkserver_context()
        self._workers = [WorkerProcess(context, name="page reader", initializer=init_crawl_worker,
                                       initargs=(owner.pid, owner.started_unix, READER_PROCESS_NAME))
                         for _ in range(self.processes)]
        self._worker_bytes = dict.fromkeys(self._workers, 0)
        for worker in self._workers:
            try:
                worker.start()
            except BrokenExecutor:  # closed meanwhile: its pages fail when handed out
                pass

    def _submit(self, function, args: tuple) -> asyncio.Future:
        """Run ``function(*args)`` in the thread, or in the worker process with the least
        to do (see the class doc).

        Raises:
            BrokenExecutor: that worker died or was closed; RuntimeError: the thread's
                executor is shut down.
        """
        if self._workers is None:
            return asyncio.get_running_loop().run_in_executor(self._executor, function, *args)
        loads = self._worker_bytes
        worker = min(self._workers, key=lambda w: (w.calls, loads[w]))
        size = len(args[0]) if args and isinstance(args[0], (bytes, bytearray)) else 0
        work = worker.call(function, *args)
        loads[worker] += size

        def done(_work: asyncio.Future) -> None:
            loads[worker] -= size

        work.add_done_callback(done)
        return work

    async def read(self, body: bytes, essence: str, charset: str | None, url: str, token: str,
                   origins: frozenset[str], origin: str = "",
                   session: frozenset[str] = frozenset()) -> PageReading:
        """:func:`read_body` with these arguments (``session`` its session-ID parameter
        names), in a worker; ``origin`` (the page's ``str_origin``) is the queue it waits in.

        Raises:
            what :func:`read_body` raises, and ``BrokenProcessPool`` when a worker died.
        """
        return await self._queue(origin, read_body, (body, essence, charset, url, token, origins, session))

    async def read_meta(self, body: bytes, url: str, hint: str | None, origins: frozenset[str],
                        session: frozenset[str], now_unix: int, origin: str = "") -> MetaReading | None:
        """:func:`textpile.crawl.discovery.meta.read_meta` with these arguments, in a worker, waiting
        in ``origin``'s queue like :meth:`read`.

        Raises:
            what :func:`~textpile.crawl.discovery.meta.read_meta` raises, and ``BrokenProcessPool``.
        """
        return await self._queue(origin, read_meta, (body, url, hint, origins, session, now_unix))

    async def _queue(self, origin: str, function, args: tuple):
        """Queue ``function(*args)`` in ``origin``'s queue and return its result."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(origin, deque()).append(((function, args), future))
        self._hand_out()
        return await future

    def _hand_out(self) -> None:
        """Give waiting pages to the free workers, one origin after the other."""
        if not self._started:
            self._start()
        skipped = 0  # origins passed over in this round because they read enough already
        while self._waiting and self._reading < self.in_flight and skipped < len(self._waiting):
            origin = self._hurried_origin()
            if origin is not None:
                pages = self._waiting.pop(origin)
            else:
                origin, pages = self._waiting.popitem(last=False)
                if self._reading_by_origin.get(origin, 0) >= self.per_origin:
                    self._waiting[origin] = pages
                    skipped += 1
                    continue
            skipped = 0
            (function, args), future = pages.popleft()
            if pages:
                self._waiting[origin] = pages  # to the end of the round
            if future.done():  # its reader was cancelled
                continue
            try:
                work = self._submit(function, args)
            except (BrokenExecutor, RuntimeError) as exc:  # a worker died, or the pool is shut down
                future.set_exception(exc)
                continue
            self._reading += 1
            self._reading_by_origin[origin] = self._reading_by_origin.get(origin, 0) + 1
            work.add_done_callback(lambda done, future=future, origin=origin: self._finished(done, future, origin))

    def hurry(self, origin: str) -> None:
        """``origin`` (a ``str_origin`` given to :meth:`read`) can do nothing until a page
        of its own is read: hand its next waiting page out before the round-robin's
        (origins that asked earlier first). Nothing happens when none of its pages waits."""
        if origin in self._waiting:
            self._hurried.setdefault(origin, None)
            if self._started:
                self._hand_out()

    def _hurried_origin(self) -> str | None:
        """The first origin that asked to :meth:`hurry`, still has a page waiting and
        may have one more read at once; it leaves the list (it asks again if need be)."""
        for origin in list(self._hurried):
            if origin not in self._waiting:
                del self._hurried[origin]
            elif self._reading_by_origin.get(origin, 0) < self.per_origin:
                del self._hurried[origin]
                return origin
        return None

    def _finished(self, work: asyncio.Future, future: asyncio.Future, origin: str) -> None:
        self._reading -= 1
        count = self._reading_by_origin.pop(origin) - 1
        if count:
            self._reading_by_origin[origin] = count
        if not future.done():
            pass_outcome(work, future)
        if self._started:
            self._hand_out()

    def close(self) -> None:
        """Stop the workers (pages still waiting are cancelled)."""
        for pages in self._waiting.values():
            for _args, future in pages:
                future.cancel()
        self._waiting.clear()
        self._hurried.clear()
        if self._executor is not None:
            executor, self._executor = self._executor, None
            executor.shutdown(wait=True, cancel_futures=True)
        if self._workers is not None:
            workers, self._workers = self._workers, None
            for worker in workers:
                worker.close()

    def __enter__(self) -> "PageReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
