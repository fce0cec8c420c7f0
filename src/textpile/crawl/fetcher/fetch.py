"""Fetching one URL: the request, its headers, content decoding, size caps and a deadline.

Source: unobtanium-documentation.txt, page "Crawl exit code" (what each failure is
called). Redirects are never followed here (the client is made with
``follow_redirects=False``). The body is read raw and decoded by this module so that
``x-gzip`` (which httpx does not know) works and the decompressed size is capped.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from textpile.crawl.fetcher import sniff
from textpile.crawl.fetcher.ssrf import BlockedAddressError
from textpile.enums import ExitCode

#: Content codings this crawler asks for and decodes.
ACCEPT_ENCODING = "gzip, deflate"
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"


@dataclass(frozen=True)
class FetchLimits:
    """Caps of one request: raw body bytes, bytes after content decoding, and the total
    time in seconds for sending the request and reading the whole answer."""

    max_body_bytes: int = 10 * 1024 * 1024
    max_decoded_bytes: int = 32 * 1024 * 1024
    deadline_s: float = 30.0


@dataclass
class FetchResult:
    """The outcome of one HTTP request.

    ``exit_code`` is set when no usable answer came (connection failed, timeout, read
    error, undecodable or too big); otherwise None and ``status``/``headers`` hold the
    answer. ``body`` is the decoded body for 2xx answers, else None; ``truncated`` says
    that only its first ``truncate_at`` bytes were kept (see :func:`fetch`). ``note`` says
what was recovered from an answer that was not what it claimed (a plain body behind a
false Content-Encoding), else None. Times: ``time_sent``
    unix seconds (float), ``duration_s`` seconds from sending to the end of reading,
    less ``room_wait_s``, the seconds :func:`fetch` waited for room for the body (its
    ``room`` argument) before reading on.
    """

    url: str
    time_sent: float
    duration_s: float
    status: int | None = None
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    body: bytes | None = None
    raw_size: int = 0
    exit_code: ExitCode | None = None
    message: str | None = None
    blocked_address: bool = False
    truncated: bool = False
    note: str | None = None
    room_wait_s: float = 0.0


class BodyTooLarge(Exception):
    """The body exceeds a cap of :class:`FetchLimits`."""


class UndecodableBody(Exception):
    """The body's Content-Encoding is unknown or its data is corrupt."""


class TruncatedBody(Exception):
    """A compressed body ends before its compressed stream does: the answer was cut off."""


def _decompress(data: bytes, wbits: int, cap: int, truncate: bool, coding: str) -> bytes:
    dec = zlib.decompressobj(wbits)
    out = dec.decompress(data, cap + 1)
    if len(out) > cap:
        if truncate:
            return out[:cap]
        raise BodyTooLarge(f"decoded body exceeds {cap} bytes")
    out += dec.flush()[: cap + 1 - len(out)]
    if not dec.eof and not truncate and len(out) <= cap:
        raise TruncatedBody(f"the {coding} stream ends early: {len(data)} bytes received, "
                            f"{len(out)} decoded, no end of stream")
    return out


def _undo_coding(data: bytes, coding: str, cap: int, truncate: bool) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return _decompress(data, 16 + zlib.MAX_WBITS, cap, truncate, coding)
    try:
        return _decompress(data, zlib.MAX_WBITS, cap, truncate, coding)
    except zlib.error:
        return _decompress(data, -zlib.MAX_WBITS, cap, truncate, coding)


def decode_content(data: bytes, content_encoding: str | None, cap: int, *, truncate: bool = False,
                   notes: list[str] | None = None) -> bytes:
    """Undo the Content-Encoding codings of ``data`` (last applied first).

    Supports identity, gzip, x-gzip and deflate (zlib-wrapped or raw). With
    ``truncate`` a body longer than ``cap`` is cut to ``cap`` bytes instead of refused,
    and ``data`` may be the start of a compressed stream (what it holds is decoded).

    A coding the data does not carry is skipped when that is unambiguous: the data
    neither starts like that coding's stream (:func:`textpile.crawl.fetcher.sniff.is_coded`)
    nor holds a single binary data byte, so it is a plain body behind a false
    Content-Encoding header; a sentence saying so is appended to ``notes``.

    Raises:
        UndecodableBody: an unknown coding, or corrupt data of a known one.
        TruncatedBody: a gzip or deflate stream that ends early (not with ``truncate``).
        BodyTooLarge: the decoded body exceeds ``cap`` bytes (not with ``truncate``).
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    for coding in reversed(codings):
        if coding in ("identity", ""):
            continue
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise UndecodableBody(f"unsupported Content-Encoding {coding!r}")
        if not sniff.is_coded(data, coding) and sniff.looks_plain(data):
            if notes is not None:
                notes.append(f"Content-Encoding says {coding}, but the body is plain text: read as it is")
            continue
        try:
            data = _undo_coding(data, coding, cap, truncate)
        except zlib.error as exc:
            raise UndecodableBody(f"corrupt {coding} body: {exc}") from None
    if len(data) > cap:
        if truncate:
            return data[:cap]
        raise BodyTooLarge(f"decoded body exceeds {cap} bytes")
    return data


def http_date(unix_s: float) -> str:
    """``unix_s`` as an HTTP date (IMF-fixdate), for If-Modified-Since."""
    return email.utils.formatdate(unix_s, usegmt=True)


def parse_http_date(value: str | None) -> int | None:
    """An HTTP date header value as unix seconds, or None when absent or unreadable."""
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    try:
        if when.tzinfo is None:
            return int(when.replace(tzinfo=datetime.timezone.utc).timestamp())
        return int(when.timestamp())
    except (ValueError, OverflowError, OSError):
        return None


def is_valid_header_value(value: str | None) -> bool:
    """True when ``value`` can be sent as an HTTP header value as it is: visible ASCII
    and spaces/tabs only (RFC 9110 5.5 field-value without obs-text), not empty, no
    leading or trailing whitespace. A stored ETag from a hostile server may be none of
    these; such a validator is not sent."""
    if not value or value != value.strip(" \t"):
        return False
    return all(c == "\t" or 0x20 <= ord(c) < 0x7F for c in value)


class RefusedUrl(Exception):
    """The HTTP client will not send a request to this URL (too long, invalid for it, or
    carrying credentials)."""


#: Message prefix httpx uses when a redirect answer's Location is not a URL.
_HTTPX_INVALID_LOCATION = "Invalid URL in location header"


def _build_request(client: "httpx.AsyncClient | CrawlClient", url: str, headers: dict[str, str]) -> httpx.Request:
    """The GET request for ``url``, with everything httpx checks lazily checked now.

    Raises:
        RefusedUrl: httpx refuses the URL (too long, invalid host, ...) or it carries a
            user name or password (the crawler never sends credentials).
    """
    try:
        request = client.build_request("GET", url, headers=headers)
        request.url.host  # noqa: B018 - decodes an IDNA host, which may raise
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise RefusedUrl(f"the HTTP client refuses this URL: {type(exc).__name__}: {exc}") from None
    if request.url.userinfo:
        raise RefusedUrl("URLs with a user name or password are never fetched")
    return request


#: Waits until a body may hold the given number of bytes (see :func:`fetch`).
BodyRoom = Callable[[int], Awaitable[None]]


async def fetch(client: "httpx.AsyncClient | CrawlClient", url: str, *, headers: dict[str, str] | None = None,
                limits: FetchLimits = FetchLimits(), truncate_at: int | None = None,
                room: BodyRoom | None = None) -> FetchResult:
    """GET ``url`` with ``client`` (an ``httpx.AsyncClient``, or the crawl's
    :class:`CrawlClient`) and return what happened; never raises for network
    trouble or a hostile answer (that becomes ``exit_code``), only for cancellation.

    Every answer's body is read (so the connection can be reused, within the caps) but
    only a 2xx answer's body is content-decoded and returned. Header values that are not
    valid (see :func:`is_valid_header_value`) are not sent. With ``truncate_at`` (bytes)
    a 2xx body is read only that far and kept, cut to ``truncate_at`` decoded bytes,
    instead of being refused as too large (robots.txt: RFC 9309 2.5); ``truncated`` then
    says whether anything was cut. With ``room``, a 2xx body is read only after
    ``await room(n)`` for its declared Content-Length (within the cap), and again for
    twice as much whenever more arrives (the crawl's read backlog, which bounds the
    memory of bodies waiting to be read); that wait counts neither against the deadline
    nor in ``duration_s`` (it is ``room_wait_s``).
    Exit codes: connection errors 100 connection_failed (172 blocked_origin_by_local_policy
    when the SSRF filter refused the address), the deadline or an httpx timeout 101
    request_timeout, a broken connection while reading or a gzip/deflate body whose
    stream ends early 102 error_reading_response, a protocol error, a redirect whose
    Location is not a usable URL, an undecodable or too large body 42
    did_not_understand_answer, a URL the HTTP client refuses (over httpx's
    length limit, an invalid host, user name or password in it) 173
    blocked_url_by_local_policy, without sending anything.
    """
    time_sent = time.time()
    start = time.monotonic()
    result = FetchResult(url=url, time_sent=time_sent, duration_s=0.0)
    sendable = {k: v for k, v in (headers or {}).items() if is_valid_header_value(v)}
    try:
        request = _build_request(client, url, sendable)
        async with asyncio.timeout(limits.deadline_s) as deadline:
            response = await client.send(request, stream=True)
            try:
                await _read(response, result, limits, truncate_at, room, deadline)
            finally:
                await response.aclose()
    except RefusedUrl as exc:
        result.exit_code = ExitCode.blocked_url_by_local_policy
        result.message = str(exc)
    except TimeoutError:
        result.exit_code = ExitCode.request_timeout
        result.message = f"no complete answer within {limits.deadline_s:g} s"
    except httpx.TimeoutException as exc:
        result.exit_code = ExitCode.request_timeout
        result.message = f"{type(exc).__name__}: {exc}"
    except httpx.ConnectError as exc:
        _connection_failure(result, exc, ExitCode.connection_failed)
    except httpx.RemoteProtocolError as exc:
        if str(exc).startswith(_HTTPX_INVALID_LOCATION):
            # A redirect answer with a Location that is not a URL: a hostile or broken
            # answer, not a fluke of the connection.
            result.exit_code = ExitCode.did_not_understand_answer
            result.message = f"redirect with an unusable Location header: {exc}"
        else:
            result.exit_code = ExitCode.error_reading_response
            result.message = f"{type(exc).__name__}: {exc}"
    except (httpx.ReadError, httpx.WriteError, httpx.CloseError, TruncatedBody) as exc:
        result.exit_code = ExitCode.error_reading_response
        result.message = f"{type(exc).__name__}: {exc}"
    except (httpx.LocalProtocolError, httpx.DecodingError, httpx.UnsupportedProtocol,
            UndecodableBody, BodyTooLarge) as exc:
        result.exit_code = ExitCode.did_not_understand_answer
        result.message = f"{type(exc).__name__}: {exc}"
    except (httpx.InvalidURL, UnicodeError) as exc:
        # Raised while httpx reads a redirect answer's Location (an invalid IDNA host):
        # the request URL itself was checked by _build_request.
        result.exit_code = ExitCode.did_not_understand_answer
        result.message = f"redirect with an unusable Location header: {type(exc).__name__}: {exc}"
    except httpx.TransportError as exc:
        _connection_failure(result, exc, ExitCode.unknown_error)
    except OSError as exc:
        _connection_failure(result, exc, ExitCode.connection_failed)
    result.duration_s = time.monotonic() - start - result.room_wait_s
    if result.exit_code is not None:
        result.body = None
    return result


async def _wait_for_room(room: BodyRoom, total: int, result: FetchResult, deadline: asyncio.Timeout) -> None:
    """``await room(total)`` with the deadline stopped meanwhile, then moved on by the
    time waited (counted in ``result.room_wait_s``)."""
    started = time.monotonic()
    when = deadline.when()
    deadline.reschedule(None)  # stopped while waiting
    try:
        await room(total)
    finally:
        waited = time.monotonic() - started
        result.room_wait_s += waited
        if when is not None:
            deadline.reschedule(when + waited)


async def _read(response: httpx.Response, result: FetchResult, limits: FetchLimits,
                truncate_at: int | None, room: BodyRoom | None = None,
                deadline: asyncio.Timeout | None = None) -> None:
    """Read ``response`` into ``result`` within the size caps, waiting for ``room`` (see
    :func:`fetch`)."""
    result.status = response.status_code
    result.headers = response.headers
    ok = 200 <= response.status_code < 300
    declared = response.headers.get("content-length", "")
    if (ok and truncate_at is None and declared.isascii() and declared.isdigit()
            and int(declared) > limits.max_body_bytes):
        raise BodyTooLarge(f"Content-Length {declared} exceeds {limits.max_body_bytes} bytes")
    if not ok or truncate_at is not None or deadline is None:
        room = None  # only a 2xx body read whole is held for the page readers
    asked = 0
    if room is not None and declared.isascii() and declared.isdigit():
        asked = int(declared)
        await _wait_for_room(room, asked, result, deadline)
    # Every body is read, so that the connection can be reused; a non-2xx body beyond
    # the cap is simply not read further.
    chunks = []
    size = 0
    async for chunk in response.aiter_raw():
        if room is not None and size + len(chunk) > asked:
            asked = min(max(size + len(chunk), 2 * asked), limits.max_body_bytes + len(chunk))
            await _wait_for_room(room, asked, result, deadline)
        if ok and truncate_at is not None and size + len(chunk) > truncate_at:
            chunks.append(chunk[: truncate_at - size])
            size = truncate_at
            result.truncated = True
            break
        size += len(chunk)
        if size > limits.max_body_bytes:
            if ok:
                raise BodyTooLarge(f"body exceeds {limits.max_body_bytes} bytes")
            break
        chunks.append(chunk)
    result.raw_size = size
    if ok:
        encoding = response.headers.get("content-encoding")
        notes: list[str] = []
        if truncate_at is None:
            result.body = decode_content(b"".join(chunks), encoding, limits.max_decoded_bytes, notes=notes)
        else:
            body = decode_content(b"".join(chunks), encoding, truncate_at + 1, truncate=True, notes=notes)
            result.truncated = result.truncated or len(body) > truncate_at
            result.body = body[:truncate_at]
        result.note = "; ".join(notes) or None


def _blocked_address(exc: BaseException) -> BlockedAddressError | None:
    """The SSRF filter's :class:`~textpile.crawl.fetcher.ssrf.BlockedAddressError` in ``exc``'s
    cause chain (``exc`` itself included), or None."""
    seen = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BlockedAddressError):
            return current
        current = current.__cause__ or current.__context__
    return None


def _connection_failure(result: "FetchResult", exc: BaseException, otherwise: ExitCode) -> None:
    """Record a failed connection: 172 when the SSRF filter refused the address (the
    message then is the filter's own: what was refused and how to allow it), else
    ``otherwise`` with the exception's type and text."""
    blocked = _blocked_address(exc)
    if blocked is not None:
        result.exit_code = ExitCode.blocked_origin_by_local_policy
        result.blocked_address = True
        result.message = str(blocked)
    else:
        result.exit_code = otherwise
        result.message = f"{type(exc).__name__}: {exc}"


def exit_code_for_status(status: int) -> ExitCode:
    """The exit code of an HTTP answer by its status alone (page "Crawl exit code").

    2xx gives file_ingested (the caller refines it by content), 301/308
    permanent_redirect, 302/303/307 redirect, 304 file_did_not_change, 404
    file_not_found, 410 file_gone, 429 rate_limited, other 4xx server_blamed_client,
    5xx server_internal_error, anything else did_not_understand_answer.
    """
    if 200 <= status < 300:
        return ExitCode.file_ingested
    if status in (301, 308):
        return ExitCode.permanent_redirect
    if status in (302, 303, 307):
        return ExitCode.redirect
    if status == 304:
        return ExitCode.file_did_not_change
    if status == 404:
        return ExitCode.file_not_found
    if status == 410:
        return ExitCode.file_gone
    if status == 429:
        return ExitCode.rate_limited
    if 400 <= status < 500:
        return ExitCode.server_blamed_client
    if 500 <= status < 600:
        return ExitCode.server_internal_error
    return ExitCode.did_not_understand_answer


class CrawlClient:
    """The crawl's HTTP client: every request goes straight to ``transport`` with the
    ``headers`` every request carries (a request's own headers win) and the
    ``timeout``; redirects are never followed and no cookies are kept or sent.

    It offers what :func:`fetch` uses of ``httpx.AsyncClient`` (``build_request``,
    ``send``, ``aclose``, ``async with``) without the client's per-request layers (auth
    and redirect flows, cookie jar, event hooks, URL merging), none of which a polite
    crawler uses: at one core carrying every origin's requests, that is a quarter of a
    request's CPU in the crawl's event loop (bench/crawl). Exceptions are the
    transport's: httpx's exception classes.
    """

    def __init__(self, transport: httpx.AsyncBaseTransport, *, headers: dict[str, str],
                 timeout: httpx.Timeout) -> None:
        self.transport = transport
        self.headers = httpx.Headers({"Connection": "keep-alive", **headers})
        self._timeout = timeout.as_dict()

    def build_request(self, method: str, url: str, *, headers: dict[str, str] | None = None) -> httpx.Request:
        """An ``httpx.Request`` of ``method`` to the absolute ``url`` with the client's
        headers, ``headers`` added over them.

        Raises:
            httpx.InvalidURL, UnicodeError, ValueError: httpx refuses ``url``.
        """
        merged = self.headers.copy()
        if headers:
            merged.update(headers)
        return httpx.Request(method, url, headers=merged, extensions={"timeout": self._timeout})

    async def send(self, request: httpx.Request, *, stream: bool = False) -> httpx.Response:
        """Send ``request`` through the transport; with ``stream`` the body is left to
        the caller (``aiter_raw``, then ``aclose``), else it is read."""
        response = await self.transport.handle_async_request(request)
        response.request = request
        if not stream:
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response

    async def aclose(self) -> None:
        """Close the transport (its connections)."""
        await self.transport.aclose()

    async def __aenter__(self) -> "CrawlClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
