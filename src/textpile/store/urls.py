"""URLs and origins: parsing, normalizing, and storing them in the base schema tables.

Source: unobtanium-documentation.txt, pages "URL" and "Base Database" (origin, url).
The origin is scheme, host and port, the port filled with the well known default for
http, https, ws, wss and ftp. The fragment is never part of a stored URL.

Parsing follows the WHATWG URL Standard (https://url.spec.whatwg.org/, what browsers and
the seed's ``url`` crate implement), done by ada through the ``can_ada`` binding: relative
references resolved against a base, dot segments removed (``/a//b`` keeps its empty
segment), host names mapped with UTS 46 (non-transitional: ``faß.de`` is
``xn--fa-hia.de``), IPv4 numbers normalized, unsafe characters percent-encoded. On top of
the standard, textpile normalizes as RFC 3986 6.2.2 allows: percent-encoded unreserved
characters are decoded in path and query (``%7e`` is ``~``) and other percent-encodings
written in upper case (``%2f`` is ``%2F``); a host name loses its trailing dot; and it
refuses host names no DNS name can be (see :func:`parse_url`).
"""

from __future__ import annotations

import ipaddress
import re
import sqlite3
from typing import NamedTuple

import can_ada

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
#: The WHATWG URL Standard's special schemes.
SPECIAL_SCHEMES = frozenset(DEFAULT_PORTS) | {"file"}
#: Characters RFC 3986 calls unreserved: their percent-encodings are decoded.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):")
_AUTHORITY = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}([^/\\?#]*)")


class UrlError(ValueError):
    """A URL cannot be parsed; the message quotes it."""


class ParsedUrl(NamedTuple):
    """A normalized absolute URL split as the base schema stores it.

    ``str_url`` is the whole URL without fragment; ``fragment`` is kept apart (None when
    absent). ``port`` is the explicit port or the scheme's default (None if neither).
    Immutable; a named tuple, so that making, comparing and pickling many of them (a
    page's links, sent back by a page reader process) is cheap.
    """

    scheme: str
    username: str | None
    password: str | None
    host: str | None
    port: int | None
    path: str
    query: str | None
    fragment: str | None
    str_url: str

    @property
    def str_origin(self) -> str:
        """The origin as ``scheme://host:port`` (port always explicit when known)."""
        host = self.host or ""
        if self.host and ":" in self.host:
            host = f"[{self.host}]"
        if self.port is None:
            return f"{self.scheme}://{host}"
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str | None, int | None]:
        """The origin as a (scheme, host, port) tuple; equal tuples are the same origin."""
        return (self.scheme, self.host, self.port)

    @property
    def url_with_fragment(self) -> str:
        """``str_url`` with the fragment appended again, when there is one."""
        return self.str_url if self.fragment is None else f"{self.str_url}#{self.fragment}"


#: Characters never valid in a host (WHATWG URL "forbidden host code points" plus ``%``
#: after percent-decoding, ``"``, ``{``, ``}`` and backquote, which no DNS name carries).
_FORBIDDEN_HOST_CHARS = frozenset(' \t\n\r#/:<>?@[\\]^|{}"%`')
#: The longest DNS label and name in octets (RFC 1035 2.3.4; 253 without the root dot).
MAX_LABEL_OCTETS = 63
MAX_HOST_OCTETS = 253


def _check_ascii_host(host: str, original: str) -> None:
    """Raise UrlError unless ``host`` (ASCII, lower case) is a well-formed DNS name or
    IPv4 address: labels of 1-63 octets, at most 253 octets in all, no forbidden
    characters, every ``xn--`` label valid punycode that encodes back to itself."""
    bad = sorted({c for c in host if c in _FORBIDDEN_HOST_CHARS or ord(c) < 0x20 or ord(c) == 0x7F})
    if bad:
        raise UrlError(f"invalid host name {original!r}: it contains {''.join(bad)!r}")
    if len(host) > MAX_HOST_OCTETS:
        raise UrlError(f"invalid host name {original!r}: longer than {MAX_HOST_OCTETS} characters")
    for label in host.split("."):
        if not label or len(label) > MAX_LABEL_OCTETS:
            raise UrlError(f"invalid host name {original!r}: a label is empty or longer than {MAX_LABEL_OCTETS}")
        if label.startswith("xn--"):
            try:
                decoded = label[4:].encode("ascii").decode("punycode")
                if not decoded or decoded.encode("punycode").decode("ascii") != label[4:]:
                    raise UnicodeError("does not round-trip")
            except UnicodeError:
                raise UrlError(f"invalid host name {original!r}: {label!r} is not a valid punycode label") from None


def _normalize_percent(match: re.Match) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _why_invalid(url: str, base: str | None) -> str:
    """The UrlError message for ``url`` (relative to ``base``) that the WHATWG parser
    refused: the host's defect when one can be named, else what kind of input it is."""
    authority = _AUTHORITY.match(url)
    if authority is None and base is not None and url.lstrip().startswith(("//", "\\\\")):
        authority = re.match(r"\s*[/\\]{2}([^/\\?#]*)", url)
    if authority is not None:
        host = authority.group(1).rpartition("@")[2]
        if host.startswith("["):
            literal, closed, _ = host[1:].partition("]")
            try:
                ipaddress.IPv6Address(literal)
            except ValueError:
                closed = ""
            if not closed:
                return f"invalid IPv6 address in URL {url!r}"
        else:
            name, _, port = host.partition(":")
            if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
                return f"invalid port {port!r} in URL {url!r}"
            try:
                ascii_name = name.encode("idna").decode("ascii") if not name.isascii() else name
            except UnicodeError as exc:
                return f"invalid host name {name!r}: {exc}"
            try:
                _check_ascii_host(ascii_name.lower().rstrip("."), name)
            except UrlError as exc:
                return str(exc)
            return f"invalid host name {name!r} in URL {url!r}"
    if base is None and _SCHEME.match(url) is None:
        return f"not an absolute URL: {url!r}"
    return f"invalid URL {url!r}" + (f" (relative to {base!r})" if base is not None else "")


def _from_whatwg(parsed: can_ada.URL, url: str, checked_hosts: set[str] | None = None) -> ParsedUrl:
    """The :class:`ParsedUrl` of a URL the WHATWG parser accepted, normalized further as
    the module docstring says. Raises UrlError for the hosts and ports refused there.
    ``checked_hosts`` remembers the host names found valid (a page's links share a few)."""
    scheme = parsed.protocol[:-1]
    username = parsed.username or None
    password = parsed.password if parsed.has_password() else None
    query = parsed.search[1:] if parsed.has_search() else None
    fragment = parsed.hash[1:] if parsed.has_hash() else None
    path = parsed.pathname
    host: str | None = parsed.hostname
    port = int(parsed.port) if parsed.port else None
    if scheme not in SPECIAL_SCHEMES:
        # Opaque paths and hosts (mailto:, javascript:, foo://bar/): as the parser gave them.
        href = parsed.href
        if fragment is not None:
            href = href[: len(href) - len(fragment) - 1]
        return ParsedUrl(scheme, username, password, host or None, port, path, query, fragment, href)
    if host.startswith("["):
        host = host[1:-1]
    elif host:
        host = host.rstrip(".")
        if checked_hosts is None or host not in checked_hosts:
            _check_ascii_host(host, parsed.hostname)
            if checked_hosts is not None:
                checked_hosts.add(host)
    if not host:
        if scheme != "file":
            raise UrlError(f"URL without host: {url!r}")
        host = None
    if port == 0 and scheme != "file" and scheme != "ftp":
        raise UrlError(f"invalid port 0 in URL {url!r}")
    if "%" in path:
        path = _PERCENT.sub(_normalize_percent, path)
    if query and "%" in query:
        query = _PERCENT.sub(_normalize_percent, query)
    userinfo = ""
    if username is not None or password is not None:
        userinfo = (username or "") + (f":{password}" if password is not None else "") + "@"
    shown_host = "" if host is None else (f"[{host}]" if ":" in host else host)
    shown_port = f":{port}" if port is not None else ""
    shown_query = f"?{query}" if query is not None else ""
    str_url = f"{scheme}://{userinfo}{shown_host}{shown_port}{path}{shown_query}"
    return ParsedUrl(scheme, username, password, host, port if port is not None else DEFAULT_PORTS.get(scheme),
                     path, query, fragment, str_url)


def parse_url(url: str, base: str | None = None) -> ParsedUrl:
    """Parse and normalize an absolute URL, or ``url`` relative to ``base``.

    Parsing and normalization as the module docstring says: the WHATWG URL Standard
    (lower-case scheme and host, UTS 46 hosts, default port dropped from ``str_url``,
    dot segments removed, an empty path of a special scheme becomes ``/``, unsafe
    characters percent-encoded), then RFC 3986 percent-encoding normalization of path and
    query and no trailing dot on host names. For many links against one base,
    :class:`UrlResolver` parses the base once.

    Raises:
        UrlError: the URL is not absolute (after joining), the WHATWG parser refuses it,
            or its host or port is invalid: a host that is not a valid IPv6 address or DNS
            name (labels of 1-63 characters, 253 in all, no spaces or ``<>"{}|\\^``,
            ``xn--`` labels valid punycode), or port 0 for http(s) and ws(s). The message
            quotes the URL or its host.
    """
    if base is not None:
        return UrlResolver(base).resolve(url)
    try:
        parsed = can_ada.parse(url)
    except ValueError:
        raise UrlError(_why_invalid(url, None)) from None
    return _from_whatwg(parsed, url)


class UrlResolver:
    """Resolves many references against one base URL (a page's links), parsing the base
    once: ``UrlResolver(base).resolve(href)`` equals ``parse_url(href, base)``.

    Raises (constructor):
        UrlError: ``base`` is not an absolute URL the WHATWG parser accepts.
    """

    __slots__ = ("base", "_parsed", "_hosts")

    def __init__(self, base: str) -> None:
        self.base = base
        self._hosts: set[str] = set()
        try:
            self._parsed = can_ada.parse(base)
        except ValueError:
            raise UrlError(f"invalid base URL: {_why_invalid(base, None)}") from None

    def resolve(self, url: str) -> ParsedUrl:
        """``url`` resolved against the base and normalized (see :func:`parse_url`).

        Raises:
            UrlError: as :func:`parse_url`.
        """
        try:
            parsed = self._parsed + url
        except ValueError:
            raise UrlError(_why_invalid(url, self.base)) from None
        return _from_whatwg(parsed, url, self._hosts)


def intern_origin(conn: sqlite3.Connection, url: ParsedUrl) -> int:
    """Return the ``origin_id`` of the URL's origin, inserting the row if needed."""
    row = conn.execute("SELECT origin_id FROM origin WHERE str_origin = ?", (url.str_origin,)).fetchone()
    if row:
        return row[0]
    cur = conn.execute(
        "INSERT INTO origin(port, scheme, host, str_origin) VALUES (?, ?, ?, ?)",
        (url.port, url.scheme, url.host, url.str_origin),
    )
    return cur.lastrowid


def intern_url(conn: sqlite3.Connection, url: str | ParsedUrl) -> int:
    """Return the ``url_id`` of ``url`` (fragment ignored), inserting url/origin rows if needed.

    Raises:
        UrlError: ``url`` is a string that cannot be parsed.
    """
    parsed = parse_url(url) if isinstance(url, str) else url
    row = conn.execute("SELECT url_id FROM url WHERE str_url = ?", (parsed.str_url,)).fetchone()
    if row:
        return row[0]
    origin_id = intern_origin(conn, parsed)
    cur = conn.execute(
        "INSERT INTO url(origin_id, path, query, username, password, str_url) VALUES (?, ?, ?, ?, ?, ?)",
        (origin_id, parsed.path or None, parsed.query, parsed.username, parsed.password, parsed.str_url),
    )
    return cur.lastrowid

