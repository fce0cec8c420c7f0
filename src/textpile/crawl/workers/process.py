"""A worker process that the crawl's event loop talks to over one socket, without threads.

The page readers and the crawler database process each run calls the event loop sends
them (a function and its arguments, pickled), one after the other, and send back each
outcome. ``concurrent.futures.ProcessPoolExecutor`` does that with two threads in the
calling process (its manager thread, and a queue feeder thread that pickles and writes
the calls) and a pipe write to wake the manager for every call; on a crawl at the
politeness bound, those threads and their hand-overs of the GIL cost the event loop's
process more CPU per page than the page's requests through httpx (bench/crawl: 0.3-0.6 ms
per call with a 147 KB body, 0.15 ms over a socket the loop reads and writes itself).

:class:`WorkerProcess` is one process from a forkserver context and a Unix socket pair:
the loop writes each call with a non-blocking send (what does not fit waits for the
socket to be writable, watched by the loop), reads the outcomes when the socket is
readable, and completes the call's future in order. Messages are framed as
``multiprocessing.connection.Connection`` frames them (4-byte big-endian length; -1
then an 8-byte length beyond 2 GiB), so the worker uses a plain ``Connection``.

The worker ends when its socket closes: :meth:`WorkerProcess.close`, or the owning
process's death (the kernel closes its end). A worker that dies fails its calls under
way and every later call with ``BrokenProcessPool``, as a process pool does.

The crawl's workers come from one forkserver (:func:`forkserver_context`) and start with
:func:`init_crawl_worker`.
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from textpile import processes
from textpile.processes import init_worker, keep_freed_memory

#: Heap blocks below this size and freed heap up to twice it stay with a worker process
#: (:func:`textpile.processes.keep_freed_memory`): each page's tree reuses the memory of
#: the one before, instead of faulting it in again.
WORKER_HEAP_BYTES = 32 * 1024 * 1024
#: The most bytes read from a worker's socket at once.
READ_CHUNK_BYTES = 1024 * 1024
#: Seconds :meth:`WorkerProcess.close` waits for the worker to end before it is killed.
CLOSE_TIMEOUT_S = 10.0

_SHORT = struct.Struct("!i")
_LONG = struct.Struct("!Q")


def _frame(payload: bytes) -> bytes:
    """The header ``Connection.send_bytes`` puts before ``payload``."""
    if len(payload) > 0x7FFFFFFF:
        return _SHORT.pack(-1) + _LONG.pack(len(payload))
    return _SHORT.pack(len(payload))


def _serve(conn, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """The worker's loop: run each call received on ``conn`` and send back
    ``(True, result)`` or ``(False, exception, remote traceback text)``, until ``conn``
    closes."""
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            function, args = pickle.loads(data)
            outcome: tuple = (True, function(*args))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the caller
            outcome = (False, exc, traceback.format_exc())
        try:
            payload = pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an outcome that cannot be pickled
            payload = pickle.dumps((False, RuntimeError(f"the worker's outcome cannot be sent: "
                                                        f"{type(exc).__name__}: {exc}"), ""))
        try:
            conn.send_bytes(payload)
        except OSError:
            return


class WorkerProcess:
    """One worker process running the calls of :meth:`call` in order (see the module
    doc). The process starts on the first call (or :meth:`start`), from ``context`` (a
    multiprocessing context; forkserver or spawn: the worker must not be a fork of an
    event loop's process), running ``initializer(*initargs)`` first. ``name`` says what
    the worker is in error messages ("page reader"). Must be used from the thread of one
    running event loop."""

    def __init__(self, context: multiprocessing.context.BaseContext, *, name: str,
                 initializer: Callable[..., None] | None = None, initargs: tuple = ()) -> None:
        self.context = context
        self.name = name
        self.initializer = initializer
        self.initargs = initargs
        self.process: multiprocessing.process.BaseProcess | None = None
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: futures of the calls sent, in order
        self._calls: deque[asyncio.Future] = deque()
        self._out: deque[memoryview] = deque()
        self._in = bytearray()
        self._broken: str | None = None

    @property
    def calls(self) -> int:
        """Calls sent and not yet answered."""
        return len(self._calls)

    def start(self) -> None:
        """Start the worker process now (it then runs ``initializer`` while the caller goes on).

        Raises:
            BrokenProcessPool: the worker died, or was closed.
        """
        if self._broken is not None:
            raise BrokenProcessPool(self._broken)
        if self.process is not None:
            return
        loop = asyncio.get_running_loop()
        ours, theirs = self.context.Pipe(duplex=True)
        process = self.context.Process(target=_serve, args=(theirs, self.initializer, self.initargs),
                                       name=f"textpile {self.name}", daemon=True)
        try:
            process.start()
        finally:
            theirs.close()
        sock = socket.socket(fileno=os.dup(ours.fileno()))
        ours.close()
        sock.setblocking(False)
        self.process, self._sock, self._loop = process, sock, loop
        loop.add_reader(sock.fileno(), self._readable)

    def call(self, function: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Send ``function(*args)`` (both picklable; ``function`` importable in the worker)
        and return the future of its result or exception.

        Raises:
            BrokenProcessPool: the worker died, or was closed.
        """
        self.start()
        payload = pickle.dumps((function, args), pickle.HIGHEST_PROTOCOL)
        future = self._loop.create_future()
        self._calls.append(future)
        self._send(_frame(payload))
        self._send(payload)
        return future

    # -- the socket ---------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        if not self._out:
            try:
                sent = self._sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                self._fail(f"the {self.name} process cannot be reached: {exc}")
                return
            if sent == len(data):
                return
            self._loop.add_writer(self._sock.fileno(), self._writable)
            data = memoryview(data)[sent:]
        self._out.append(memoryview(data))

    def _writable(self) -> None:
        out = self._out
        while out:
            try:
                sent = self._sock.send(out[0])
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._fail(f"the {self.name} process cannot be reached: {exc}")
                return
            if sent < len(out[0]):
                out[0] = out[0][sent:]
                return
            out.popleft()
        self._loop.remove_writer(self._sock.fileno())

    def _readable(self) -> None:
        try:
            data = self._sock.recv(READ_CHUNK_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fail(f"the {self.name} process ended its connection: {exc}")
            return
        if not data:
            self._fail(f"a {self.name} process died (exit code {self._exitcode()})")
            return
        buffer = self._in
        buffer += data
        while True:
            if len(buffer) < 4:
                return
            size = _SHORT.unpack_from(buffer)[0]
            start = 4
            if size == -1:
                if len(buffer) < 12:
                    return
                size, start = _LONG.unpack_from(buffer, 4)[0], 12
            if len(buffer) < start + size:
                return
            outcome = pickle.loads(memoryview(buffer)[start:start + size])
            del buffer[:start + size]
            self._deliver(outcome)

    def _deliver(self, outcome: tuple) -> None:
        future = self._calls.popleft()
        if future.done():  # its caller was cancelled
            return
        if outcome[0]:
            future.set_result(outcome[1])
        else:
            exc = outcome[1]
            if outcome[2]:
                exc.add_note(f"in the {self.name} process:\n{outcome[2].rstrip()}")
            future.set_exception(exc)

    def _exitcode(self) -> int | None:
        if self.process is None:
            return None
        self.process.join(0.1)
        return self.process.exitcode

    def _fail(self, why: str) -> None:
        """The worker is gone: fail its calls under way, and every later one, with ``why``."""
        self._broken = self._broken or why
        self._unwatch()
        calls, self._calls = self._calls, deque()
        for future in calls:
            if not future.done():
                future.set_exception(BrokenProcessPool(why))

    def _unwatch(self) -> None:
        if self._sock is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._sock.fileno())
            self._loop.remove_writer(self._sock.fileno())
        self._out.clear()

    def close(self) -> None:
        """Cancel the calls not answered yet, close the socket (the worker ends after its
        current call) and wait for the process to end (killed after
        :data:`CLOSE_TIMEOUT_S`). Later calls raise ``BrokenProcessPool``."""
        self._broken = self._broken or f"the {self.name} process was closed"
        self._unwatch()
        calls, self._calls = self._calls, deque()
        for future in calls:
            future.cancel()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self.process is not None:
            self.process.join(CLOSE_TIMEOUT_S)
            if self.process.exitcode is None:
                self.process.kill()
                self.process.join()


#: Modules the crawl's worker processes need, imported once in the forkserver.
WORKER_MODULES = ["textpile.crawl.parser.body", "textpile.crawl.discovery.meta", "textpile.crawl.crawldb.sql",
                  "textpile.store.database"]


def forkserver_context() -> multiprocessing.context.BaseContext:
    """The multiprocessing context of the crawl's worker processes
    (:func:`textpile.processes.forkserver_context` preloading :data:`WORKER_MODULES`)."""
    return processes.forkserver_context(WORKER_MODULES)


def init_crawl_worker(owner_pid: int, owner_started: float | None, name: str) -> None:
    """Initializer of the crawl's worker processes (page readers, the crawler database
    process): :func:`textpile.processes.init_worker` with the process ``name``, SIGTERM
    ignored as Ctrl+C is, their freed memory kept for the next page
    (:data:`WORKER_HEAP_BYTES`), and :data:`WORKER_MODULES` imported now, before the
    first call. The forkserver imported them already, unless another pool of this
    process started it first (summarize's, in a Dagster run or a test session): without
    this, a page reader would import its parsers with its first page, a second late while
    the crawl waits for that page's links, and the crawl's order would depend on which
    pool came first.

    A service manager's stop (systemd sends SIGTERM to every process of the service) is
    the owner's to handle, as a Ctrl+C to the terminal's process group is: the owner
    writes its last crawl log entries through the crawler database process and then
    closes its workers (:meth:`WorkerProcess.close`, which kills
    one that does not end). A worker that died of it lost those entries (exit code -3)."""
    init_worker(owner_pid, owner_started, name)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    keep_freed_memory(WORKER_HEAP_BYTES, 2 * WORKER_HEAP_BYTES)
    for module in WORKER_MODULES:
        importlib.import_module(module)
