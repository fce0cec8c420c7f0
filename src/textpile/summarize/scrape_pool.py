"""Scraping on every core: a pool of worker processes that run a function over chunks.

:class:`ScrapePool` hands chunks of staged files to worker processes and gives their
results back in the order of the chunks, with a bounded number of chunks handed out at
once: memory stays bounded by that window (and the batch being scraped), never by the
corpus. The summarizer makes one pool per run and scrapes every batch with it
(:func:`textpile.summarize.scrape_stage.scrape_batch`). The workers live for one
:meth:`ScrapePool.map` (one batch): they end when it is done, so the memory they took
for the batch's pages is given back before the batch is integrated, and a worker's heap
never grows over more than one batch (``max_tasks_per_child`` would do the same, but it
deadlocks ProcessPoolExecutor on Python 3.11, cpython issue 115634).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from typing import TypeVar

from textpile.processes import forkserver_context, init_worker, this_process, usable_cpus
from textpile.signals import interruptions_deferred
from textpile.errors import TextpileError

T = TypeVar("T")
R = TypeVar("R")

#: Modules the scraping workers need, imported once in the forkserver: the scrape and
#: its rows (:mod:`textpile.summarize.scrape_rows`), not pyarrow or DuckDB, which the
#: stage around them uses (about 36 and 20 MiB more resident in every worker).
WORKER_MODULES = ["textpile.summarize.scrape_rows", "textpile.summarize.scrape.document"]

#: Chunks handed to the workers at once, per worker: one being scraped and one at hand.
CHUNKS_PER_WORKER = 2


class ScrapePool:
    """Runs a function over chunks in ``processes`` worker processes (0: in this process,
    for tests and debugging; None: one per usable CPU, :func:`textpile.processes.usable_cpus`,
    or in this process when there is only one).

    Workers come from a forkserver (:func:`textpile.processes.forkserver_context`), are
    started on the first :meth:`map` that has more than one chunk to do (one chunk is
    done in this process: starting workers would cost more than it saves), ignore
    SIGINT, and end by themselves within a second when the owning process is killed.
    Use as a context manager or call :meth:`close`.

    Raises:
        ValueError: ``processes`` is negative or not a whole number.
    """

    def __init__(self, processes: int | None = None) -> None:
        if processes is None:
            processes = usable_cpus()
            processes = 0 if processes == 1 else processes
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 0:
            raise ValueError(f"scraping processes: found {processes!r}; expected a whole number >= 0")
        self.processes = processes
        #: worker processes the last :meth:`map` ran (0: it ran in this process)
        self.workers_used = 0
        self._executor: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            owner = this_process()
            self._executor = ProcessPoolExecutor(
                self.processes, mp_context=forkserver_context(WORKER_MODULES),
                initializer=init_worker, initargs=(owner.pid, owner.started_unix))
        return self._executor

    def map(self, function: Callable[[T], R], chunks: Iterable[T]) -> Iterator[R]:
        """``function(chunk)`` for each chunk, in the order of ``chunks``; ``function``
        must be a module-level function (it is pickled by name) and never see a module
        patched in this process only. At most ``CHUNKS_PER_WORKER`` chunks per worker are
        taken from ``chunks`` ahead of the result being given back. The workers end when
        the last result was given back (or the iterator is closed).

        Raises:
            what ``function`` raises; TextpileError when a worker process died (killed,
            out of memory): nothing of the chunks in flight was given back.
        """
        chunks = iter(chunks)
        self.workers_used = 0
        if self.processes == 0:
            yield from map(function, chunks)
            return
        window = CHUNKS_PER_WORKER * self.processes
        first = next(chunks, None)
        if first is None:
            return
        second = next(chunks, None)
        if second is None:
            yield function(first)
            return
        executor = self._start()
        pending: deque[Future] = deque()
        try:
            for chunk in _chained(first, second, chunks):
                # submit may start a worker: a Ctrl+C inside would lose it (see interruptions_deferred)
                with interruptions_deferred():
                    pending.append(executor.submit(function, chunk))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenExecutor as exc:
            self.close()
            raise TextpileError("a scraping worker process died (killed, or out of memory); the batch being "
                                "scraped was not stored, and the next run scrapes it again") from exc
        finally:
            for future in pending:
                future.cancel()
            if self._executor is not None:
                self.workers_used = len(self._executor._processes)
            self.close()

    def close(self) -> None:
        """Stop the workers (chunks not started are dropped)."""
        if self._executor is not None:
            executor, self._executor = self._executor, None
            executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "ScrapePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _chained(first, second, rest: Iterator) -> Iterator:
    yield first
    yield second
    yield from rest
