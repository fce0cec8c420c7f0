"""Connections of a crawl: one small connection pool per origin.

httpcore's connection pool looks at every connection it holds on every request (expiry,
idle count, a readability poll per idle connection), so one pool shared by hundreds of
origins costs CPU in proportion to the origins on each request, and a pool smaller than
the number of origins closes a connection of one origin to open one to another.
:class:`PerOriginTransport` gives each origin (scheme, host, port) its own pool: one
request at a time per origin needs one connection, kept alive across the crawl delay
(:func:`keepalive_expiry_s`). Requests in flight over all origins are bounded by the
crawl's fetch slots (:mod:`textpile.crawl.loop.run`), not here.
"""

from __future__ import annotations

import resource
import ssl
from collections.abc import Callable

import httpx

#: Connections per origin: one in use, one more while a closed one is replaced.
CONNECTIONS_PER_ORIGIN = 2
#: The longest a connection is kept idle, in seconds (servers close theirs sooner).
MAX_KEEPALIVE_S = 120.0
#: File descriptors kept free for everything else (databases, worker pipes, DNS).
RESERVED_FDS = 256


def keepalive_expiry_s(delay_s: float) -> float:
    """How long an idle connection is kept: across one crawl delay and 5 s more (so the
    next request to the origin reuses it), at least 5 s, at most :data:`MAX_KEEPALIVE_S`."""
    return min(max(5.0, delay_s + 5.0), MAX_KEEPALIVE_S)


def keepalive_budget(origins: int) -> bool:
    """Make room for one kept-alive connection per origin: raise this process's soft
    limit of open files towards its hard limit when ``origins`` + :data:`RESERVED_FDS`
    do not fit. True when they fit (then connections are kept alive), False when even
    the hard limit is too low (then each connection is closed after its answer)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = origins * CONNECTIONS_PER_ORIGIN + RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return False
        soft = target
    return soft == resource.RLIM_INFINITY or soft >= needed


class PerOriginTransport(httpx.AsyncBaseTransport):
    """An httpx transport that sends each request through its origin's own transport,
    made on first use by ``factory(keepalive)``; closes them all on :meth:`aclose`."""

    def __init__(self, factory: Callable[[httpx.Limits], httpx.AsyncBaseTransport], *, delay_s: float,
                 keepalive: bool = True) -> None:
        self.factory = factory
        self.limits = httpx.Limits(max_connections=CONNECTIONS_PER_ORIGIN,
                                   max_keepalive_connections=1 if keepalive else 0,
                                   keepalive_expiry=keepalive_expiry_s(delay_s))
        self.transports: dict[tuple[str, str, int | None], httpx.AsyncBaseTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        key = (url.scheme, url.host, url.port)
        transport = self.transports.get(key)
        if transport is None:
            transport = self.transports[key] = self.factory(self.limits)
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        transports, self.transports = list(self.transports.values()), {}
        for transport in transports:
            await transport.aclose()


def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for all pools of a crawl (loading the CA certificates
    once, not once per origin)."""
    return httpx.create_ssl_context(verify=True, trust_env=False)
