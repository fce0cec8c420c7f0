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
from dataclasses import dataclass, field

import httpx

from textpile.crawl.ssrf import BlockedAddressError
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
    answer. ``body`` is the decoded body for 2xx answers, else None. Times: ``time_sent``
    unix seconds (float), ``duration_s`` seconds from sending to the end of reading.
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


class BodyTooLarge(Exception):
    """The body exceeds a cap of :class:`FetchLimits`."""


class UndecodableBody(Exception):
    """The body's Content-Encoding is unknown or its data is corrupt."""


def _decompress(data: bytes, wbits: int, cap: int) -> bytes:
    dec = zlib.decompressobj(wbits)
    out = dec.decompress(data, cap + 1)
    if len(out) > cap:
        raise BodyTooLarge(f"decoded body exceeds {cap} bytes")
    return out + dec.flush()[: cap + 1 - len(out)]


def decode_content(data: bytes, content_encoding: str | None, cap: int) -> bytes:
    """Undo the Content-Encoding codings of ``data`` (last applied first).

    Supports identity, gzip, x-gzip and deflate (zlib-wrapped or raw).

    Raises:
        UndecodableBody: an unknown coding or corrupt data.
        BodyTooLarge: the decoded body exceeds ``cap`` bytes.
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    for coding in reversed(codings):
        try:
            if coding in ("identity", ""):
                continue
            if coding in ("gzip", "x-gzip"):
                data = _decompress(data, 16 + zlib.MAX_WBITS, cap)
            elif coding == "deflate":
                try:
                    data = _decompress(data, zlib.MAX_WBITS, cap)
                except zlib.error:
                    data = _decompress(data, -zlib.MAX_WBITS, cap)
            else:
                raise UndecodableBody(f"unsupported Content-Encoding {coding!r}")
        except zlib.error as exc:
            raise UndecodableBody(f"corrupt {coding} body: {exc}") from None
    if len(data) > cap:
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
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        return int(when.replace(tzinfo=datetime.timezone.utc).timestamp())
    return int(when.timestamp())


async def fetch(client: httpx.AsyncClient, url: str, *, headers: dict[str, str] | None = None,
                limits: FetchLimits = FetchLimits()) -> FetchResult:
    """GET ``url`` with ``client`` and return what happened; never raises for network
    trouble (that becomes ``exit_code``), only for cancellation.

    Every answer's body is read (so the connection can be reused, within the caps) but
    only a 2xx answer's body is content-decoded and returned.
    Exit codes: connection errors 100 connection_failed (172 blocked_origin_by_local_policy
    when the SSRF filter refused the address), the deadline or an httpx timeout 101
    request_timeout, a broken connection while reading 102 error_reading_response, a
    protocol error, undecodable or too large body 42 did_not_understand_answer.
    """
    time_sent = time.time()
    start = time.monotonic()
    result = FetchResult(url=url, time_sent=time_sent, duration_s=0.0)
    try:
        async with asyncio.timeout(limits.deadline_s):
            async with client.stream("GET", url, headers=headers or {}) as response:
                result.status = response.status_code
                result.headers = response.headers
                ok = 200 <= response.status_code < 300
                declared = response.headers.get("content-length", "")
                if ok and declared.isdigit() and int(declared) > limits.max_body_bytes:
                    raise BodyTooLarge(f"Content-Length {declared} exceeds {limits.max_body_bytes} bytes")
                # Every body is read, so that the connection can be reused; a non-2xx
                # body beyond the cap is simply not read further.
                chunks = []
                size = 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    if size > limits.max_body_bytes:
                        if ok:
                            raise BodyTooLarge(f"body exceeds {limits.max_body_bytes} bytes")
                        break
                    chunks.append(chunk)
                result.raw_size = size
                if ok:
                    result.body = decode_content(b"".join(chunks), response.headers.get("content-encoding"),
                                                 limits.max_decoded_bytes)
    except TimeoutError:
        result.exit_code = ExitCode.request_timeout
        result.message = f"no complete answer within {limits.deadline_s:g} s"
    except httpx.TimeoutException as exc:
        result.exit_code = ExitCode.request_timeout
        result.message = f"{type(exc).__name__}: {exc}"
    except httpx.ConnectError as exc:
        _connection_failure(result, exc, ExitCode.connection_failed)
    except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.CloseError) as exc:
        result.exit_code = ExitCode.error_reading_response
        result.message = f"{type(exc).__name__}: {exc}"
    except (httpx.LocalProtocolError, httpx.DecodingError, httpx.UnsupportedProtocol,
            UndecodableBody, BodyTooLarge) as exc:
        result.exit_code = ExitCode.did_not_understand_answer
        result.message = f"{type(exc).__name__}: {exc}"
    except httpx.TransportError as exc:
        _connection_failure(result, exc, ExitCode.unknown_error)
    except OSError as exc:
        _connection_failure(result, exc, ExitCode.connection_failed)
    result.duration_s = time.monotonic() - start
    if result.exit_code is not None:
        result.body = None
    return result


def _blocked_address(exc: BaseException) -> BlockedAddressError | None:
    """The SSRF filter's :class:`~textpile.crawl.ssrf.BlockedAddressError` in ``exc``'s
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
