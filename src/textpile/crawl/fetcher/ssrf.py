"""An httpx transport that refuses to connect to private, loopback and reserved addresses.

Source: dead-simple-search-how-it-works.txt, SSRF: "Every DNS resolution passes through an
SSRF filter that drops private, loopback, link-local and reserved addresses. Because it sits
at the resolver, it covers robots.txt, sitemap probes and page fetches alike, and re-checks
on each resolution rather than trusting an earlier answer."

How: :func:`make_transport` builds an ``httpx.AsyncHTTPTransport`` whose connection pool
uses :class:`FilteringNetworkBackend`. Every new TCP connection resolves its host afresh
(``loop.getaddrinfo``, or an injected resolver), drops refused addresses (see
:func:`refusal_reason`) and connects to the first remaining address that answers, by IP,
so the address checked is the address connected to (no second resolution to rebind).
TLS still verifies and sends SNI for the host name (httpcore passes it to ``start_tls``).
Pooled keep-alive connections are reused only for the origin they were opened for.

When every address is refused the request fails with :class:`BlockedAddressError`, a
subclass of ``httpx.ConnectError`` naming the host and the refused addresses with their
reasons. A crawl loop that maps ``httpx.ConnectError`` to connection_failed keeps working;
one that wants a distinct verdict catches ``BlockedAddressError`` first (it is not a fluke:
retrying will not help). Resolution failures are plain ``httpx.ConnectError``.

Use the transport directly in ``httpx.AsyncClient(transport=...)``: httpx then ignores
proxy environment variables, so nothing routes around the filter. Timeouts stay on the
client (``httpx.Timeout``); the connect timeout bounds resolution plus connecting.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import typing
from collections.abc import Awaitable, Callable, Iterable

import anyio
import httpcore
import httpx
from httpcore._backends.anyio import AnyIOStream
from httpcore._utils import is_socket_readable

#: Resolver signature: (host, port) -> IP address strings, in preference order.
Resolver = Callable[[str, int], Awaitable[list[str]]]

_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 carrier-grade NAT
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix, embeds IPv4


def refusal_reason(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an IP address must not be connected to, or None when it is public.

    Refused: unspecified, loopback, private (RFC 1918, ULA fc00::/7 ...), link-local,
    shared address space 100.64.0.0/10, multicast, reserved, IPv6 site-local, and any
    other address Python does not consider globally reachable. IPv4-mapped (``::ffff:a.b.c.d``),
    6to4 (2002::/16) and NAT64 (64:ff9b::/96) IPv6 addresses are judged by the IPv4
    address they carry. An IPv6 scope id (``fe80::1%eth0``) is ignored for the check.

    Raises:
        ValueError: ``address`` is not an IP address.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            inner = refusal_reason(embedded)
            return None if inner is None else f"{inner} (embedded in {ip})"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_ADDRESS_SPACE:
        return "shared address space"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "site-local"
    if not ip.is_global:
        return "not globally reachable"
    return None


#: How to allow what the SSRF filter refuses; ends every :class:`BlockedAddressError` message.
ALLOW_HINT = ("crawling loopback, private, link-local or reserved addresses needs "
              "allow_private_addresses = true in the configuration or --allow-private-addresses")


def describe_refusal(address: str, reason: str) -> str:
    """One refused address in words: ``describe_refusal("127.0.0.1", "loopback")`` is
    "127.0.0.1 is a loopback address"; ``reason`` as :func:`refusal_reason` gives it."""
    inner, sep, _ = reason.partition(" (embedded in ")
    if sep:
        return f"{describe_refusal(address, inner)} (an IPv4 address embedded in IPv6)"
    if reason.startswith("not "):
        return f"{address} is {reason}"
    if reason == "shared address space":
        return f"{address} is in the shared address space (100.64.0.0/10)"
    article = "an" if reason[0] in "aeiou" else "a"
    return f"{address} is {article} {reason} address"


class BlockedAddressError(httpx.ConnectError):
    """Every address of ``host`` was refused by the SSRF filter; nothing was sent.

    ``refused`` lists (address, reason) pairs; ``port`` is the TCP port asked for (None
    when unknown). A subclass of ``httpx.ConnectError``. Its message says what was refused
    and how to allow it, e.g. "refused to connect to 127.0.0.1:8099: 127.0.0.1 is a
    loopback address; crawling loopback, ... needs allow_private_addresses = true in the
    configuration or --allow-private-addresses" (see :data:`ALLOW_HINT`).
    """

    def __init__(self, host: str, refused: list[tuple[str, str]], *, request: httpx.Request | None = None,
                 port: int | None = None) -> None:
        where = host if port is None else (f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        if len(refused) == 1 and refused[0][0] == host:
            what = describe_refusal(*refused[0])
        elif refused:
            what = f"{host} resolves only to refused addresses: " + ", ".join(
                describe_refusal(addr, why) for addr, why in refused)
        else:
            what = f"{host} has no addresses"
        super().__init__(f"refused to connect to {where}: {what}; {ALLOW_HINT}", request=request)
        self.host = host
        self.port = port
        self.refused = refused


class _Blocked(httpcore.ConnectError):
    """Raised inside httpcore; the transport turns it into BlockedAddressError."""

    def __init__(self, host: str, port: int, refused: list[tuple[str, str]]) -> None:
        super().__init__(f"refused to connect to {host}:{port}")
        self.host = host
        self.port = port
        self.refused = refused


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver (``loop.getaddrinfo``), TCP addresses,
    duplicates removed, in the order returned. Raises OSError (socket.gaierror) on failure."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


#: The most a read of a connection asks for at once, in bytes. httpcore asks for 64 KiB;
#: the event loop hands over what arrived (up to its read buffer, 256 KiB for uvloop),
#: and every read passes through httpcore, h11 and anyio once: a 2.5 MB page cost
#: 9-12 ms of the event loop's CPU in 64 KiB reads, 5.5-6 ms in whole chunks.
READ_CHUNK_BYTES = 1024 * 1024


class CrawlStream(httpcore.AsyncNetworkStream):
    """A connection's stream (httpcore's anyio stream inside) whose reads take whatever
    arrived, up to :data:`READ_CHUNK_BYTES` at once; also after TLS starts.

    Its raw socket is looked up once: httpcore asks whether an idle connection is
    readable (the server closed it) before every request it could take, and anyio's
    typed attributes build their whole mapping for each lookup."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self.stream = stream
        self._socket = stream.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.stream.read(max(max_bytes, READ_CHUNK_BYTES), timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return CrawlStream(await self.stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":
            return is_socket_readable(self._socket)
        if info == "socket":
            return self._socket
        return self.stream.get_extra_info(info)


class FilteringNetworkBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that resolves every connection's host itself and
    connects only to addresses :func:`refusal_reason` accepts (all when ``allow_private``)."""

    def __init__(self, *, allow_private: bool, resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.resolver = resolver or system_resolver

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                stream = await self._connect(host, port, local_address)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"timed out resolving or connecting to {host}:{port}") from None
        for option in socket_options or ():
            stream.extra(anyio.abc.SocketAttribute.raw_socket).setsockopt(*option)
        return CrawlStream(AnyIOStream(stream))

    async def _connect(self, host: str, port: int, local_address: str | None) -> anyio.abc.SocketStream:
        try:
            addresses = await self.resolver(host.strip("[]"), port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        refused: list[tuple[str, str]] = []
        allowed: list[str] = []
        for address in addresses:
            reason = None if self.allow_private else refusal_reason(address)
            (allowed.append(address) if reason is None else refused.append((address, reason)))
        if not allowed:
            if refused:
                raise _Blocked(host.strip("[]"), port, refused)
            raise httpcore.ConnectError(f"cannot resolve {host}: no addresses")
        errors: list[str] = []
        for address in allowed:
            try:
                return await anyio.connect_tcp(address, port, local_host=local_address)
            except OSError as exc:
                errors.append(f"{address}: {exc.strerror or exc}")
        raise httpcore.ConnectError(f"cannot connect to {host}:{port}: {'; '.join(errors)}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the crawler")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class SsrfSafeTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` over :class:`FilteringNetworkBackend`; see the module doc.

    Raises from ``handle_async_request``: :class:`BlockedAddressError` when the filter
    refused every address, otherwise what ``httpx.AsyncHTTPTransport`` raises.
    """

    def __init__(
        self,
        *,
        allow_private_addresses: bool,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0),
        http2: bool = False,
        retries: int = 0,
        local_address: str | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        super().__init__(verify=verify, limits=limits, http2=http2, retries=retries,
                         local_address=local_address, trust_env=False)
        self.allow_private_addresses = allow_private_addresses
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=http2,
            retries=retries,
            local_address=local_address,
            network_backend=FilteringNetworkBackend(allow_private=allow_private_addresses, resolver=resolver),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await super().handle_async_request(request)
        except httpx.ConnectError as exc:
            cause = exc.__cause__
            if isinstance(cause, _Blocked):
                raise BlockedAddressError(cause.host, cause.refused, request=request, port=cause.port) from None
            raise


def make_transport(
    *,
    allow_private_addresses: bool,
    verify: ssl.SSLContext | bool = True,
    limits: httpx.Limits | None = None,
    http2: bool = False,
    retries: int = 0,
    local_address: str | None = None,
    resolver: Resolver | None = None,
) -> SsrfSafeTransport:
    """The crawler's network transport: an ``httpx.AsyncHTTPTransport`` whose every DNS
    resolution passes the SSRF address filter unless ``allow_private_addresses``.

    ``limits`` (httpx.Limits) defaults to 100 connections / 20 keep-alive / 5 s expiry;
    ``resolver`` replaces the system resolver (tests); ``retries`` are httpcore connect
    retries (0: the crawl loop decides about retrying). Timeouts belong to the client.
    """
    kwargs: dict[str, typing.Any] = {}
    if limits is not None:
        kwargs["limits"] = limits
    return SsrfSafeTransport(allow_private_addresses=allow_private_addresses, verify=verify, http2=http2,
                             retries=retries, local_address=local_address, resolver=resolver, **kwargs)
