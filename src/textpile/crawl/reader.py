"""Reading fetched pages off the event loop: charset decoding, HTML parsing, links.

The crawl's event loop only sends requests, schedules and writes; what costs CPU per
page (decoding the body, parsing the HTML, resolving every link) runs in a
:class:`PageReader`, a pool of worker processes, so that both cores work and a big page
never holds up another origin's request. :func:`read_body` is the work itself, a pure
function of its arguments (it runs in a worker; tests may call it directly).

Sources: unobtanium-documentation.txt, page "Crawl Loop" (links, canonical, robots
directives: see :mod:`textpile.crawl.page`); the charset order of
:mod:`textpile.crawl.charset`.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field

from textpile.crawl.charset import decode_body
from textpile.crawl.page import RobotsDirectives, read_page
from textpile.processes import exit_with_parent, this_process
from textpile.store.urls import ParsedUrl

#: Media types whose text the crawler keeps, and those it reads as HTML.
TEXT_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass
class PageReading:
    """What :func:`read_body` found in one body.

    ``text`` is the decoded text (None unless the media type is one of
    :data:`TEXT_TYPES`). For HTML: ``links`` are the usable links (see
    :func:`textpile.crawl.page.read_page`) whose origin is one of the given origins, in
    document order without duplicates; ``other_links`` counts the usable links left out
    because their origin is not; ``robots`` holds the meta robots directives and
    ``canonical`` the rel=canonical target (any origin), else None.
    """

    text: str | None = None
    links: list[ParsedUrl] = field(default_factory=list)
    other_links: int = 0
    robots: RobotsDirectives = field(default_factory=RobotsDirectives)
    canonical: ParsedUrl | None = None


def read_body(body: bytes, essence: str, charset: str | None, url: str, token: str,
              origins: frozenset[str]) -> PageReading:
    """Decode and read one answer's ``body`` fetched from ``url``.

    ``essence`` is the media type without parameters (``text/html``), ``charset`` the
    Content-Type's charset parameter (None when absent), ``token`` the crawler's robots
    token and ``origins`` the ``str_origin`` values whose links are returned. Never
    raises for any body.

    Raises:
        UrlError: ``url`` is not an absolute URL.
    """
    if essence not in TEXT_TYPES:
        return PageReading()
    is_html = essence in HTML_TYPES
    text = decode_body(body, charset, is_html=is_html).text
    reading = PageReading(text=text)
    if is_html:
        info = read_page(text, url, token)
        reading.robots = info.robots
        reading.canonical = info.canonical
        for link in info.links:
            if link.str_origin in origins:
                reading.links.append(link)
            else:
                reading.other_links += 1
    return reading


def _init_worker(owner_pid: int, owner_started: float | None) -> None:
    """Worker initializer: Ctrl+C is the crawl's to handle (it stops the workers), and a
    worker ends by itself when the crawl's process was killed (SIGKILL)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(owner_pid, owner_started)


def default_readers() -> int:
    """The number of page reader processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class PageReader:
    """Runs :func:`read_body` in ``processes`` worker processes (0: in one thread of
    this process, for tests and debugging; None: :func:`default_readers`).

    Workers are started on the first :meth:`read` (a crawl without pages starts none),
    from a forkserver (no fork of a process with threads and an event loop). They
    ignore SIGINT, and end by themselves within a second when the process owning the
    reader is killed (:func:`textpile.processes.exit_with_parent`). Use as a context
    manager or call :meth:`close`.

    Raises:
        ValueError: ``processes`` is negative.
    """

    def __init__(self, processes: int | None = None) -> None:
        if processes is None:
            processes = default_readers()
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 0:
            raise ValueError(f"page reader processes: found {processes!r}; expected a whole number >= 0")
        self.processes = processes
        self._executor: Executor | None = None

    def _start(self) -> Executor:
        if self.processes == 0:
            return ThreadPoolExecutor(1, thread_name_prefix="textpile-page-reader")
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["textpile.crawl.reader"])
        owner = this_process()
        return ProcessPoolExecutor(self.processes, mp_context=context, initializer=_init_worker,
                                   initargs=(owner.pid, owner.started_unix))

    async def read(self, body: bytes, essence: str, charset: str | None, url: str, token: str,
                   origins: frozenset[str]) -> PageReading:
        """:func:`read_body` with these arguments, in a worker.

        Raises:
            what :func:`read_body` raises, and ``BrokenProcessPool`` when a worker died.
        """
        if self._executor is None:
            self._executor = self._start()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, read_body, body, essence, charset, url, token, origins)

    def close(self) -> None:
        """Stop the workers (pending reads are cancelled)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> "PageReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
