"""The read backlog: the memory admission of the crawl's requests.

Fetched bodies wait to be read by the page readers (worker processes) and their text to
be written by the crawler database process; meanwhile every origin crawler goes on
sending requests. :class:`ReadBacklog` bounds the bytes so held (with the bytes reserved
for requests under way) to :func:`read_backlog_bytes`, fair to every origin, and
:class:`BodyRoom` is one request's share of it, grown on demand while its body arrives
(:func:`textpile.crawl.fetcher.fetch.fetch` awaits it). One asyncio thread: no locks.
"""

from __future__ import annotations

import asyncio
from collections import deque

from textpile import processes

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
    :func:`~textpile.crawl.fetcher.fetch.fetch` does before it reads a body, with its declared
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
