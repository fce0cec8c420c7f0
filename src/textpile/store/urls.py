"""URLs and origins: parsing, normalizing, and storing them in the base schema tables.

Source: unobtanium-documentation.txt, pages "URL" and "Base Database" (origin, url).
The origin is scheme, host and port, the port filled with the well known default for
http, https, ws, wss and ftp. The fragment is never part of a stored URL.
"""

from __future__ import annotations

import ipaddress
import posixpath
import sqlite3
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_SPECIAL = set(DEFAULT_PORTS) | {"file"}
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = "/?%:@!$&'()*+,;=-._~"


class UrlError(ValueError):
    """A URL cannot be parsed; the message quotes it."""


@dataclass(frozen=True)
class ParsedUrl:
    """A normalized absolute URL split as the base schema stores it.

    ``str_url`` is the whole URL without fragment; ``fragment`` is kept apart (None when
    absent). ``port`` is the explicit port or the scheme's default (None if neither).
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


def _remove_dot_segments(path: str) -> str:
    if not path:
        return path
    trailing = path.endswith("/") or path.endswith("/.") or path.endswith("/..")
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if trailing and not norm.endswith("/"):
        norm += "/"
    return norm


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


def _encode_host(host: str) -> str:
    """The normalized host of a URL: IPv6 addresses as given (without brackets), names
    percent-decoded, lower case, without trailing dot, IDNA (punycode) encoded and checked.

    Raises:
        UrlError: the host is not a valid IPv6 address or DNS name (see :func:`_check_ascii_host`).
    """
    original = host
    host = host.strip()
    if host.startswith("[") or ":" in host:
        address = host.strip("[]")
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            raise UrlError(f"invalid IPv6 address {original!r}") from None
        return address.lower()
    host = unquote(host).rstrip(".").lower()
    if not host:
        return host
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise UrlError(f"invalid host name {original!r}: {exc}") from None
    _check_ascii_host(host, original)
    return host


def parse_url(url: str, base: str | None = None) -> ParsedUrl:
    """Parse and normalize an absolute URL, or ``url`` relative to ``base``.

    Normalization follows the WHATWG URL standard as far as this needs: lower-case
    scheme and host, IDNA (punycode) hosts, default port dropped from ``str_url``,
    dot segments removed, an empty path of a special scheme becomes ``/``, unsafe
    characters percent-encoded.

    Raises:
        UrlError: the URL is not absolute (after joining), or its host or port is
            invalid: a host that is not a valid IPv6 address or DNS name (labels of 1-63
            characters, 253 in all, no spaces or ``<>"{}|\\^``, ``xn--`` labels valid
            punycode), or port 0 for http(s) and ws(s).
    """
    from urllib.parse import urljoin

    raw = url.strip()
    if base is not None:
        raw = urljoin(base, raw)
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise UrlError(f"invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise UrlError(f"not an absolute URL: {url!r}")
    host = _encode_host(parts.hostname) if parts.hostname is not None else None
    if scheme in _SPECIAL and scheme != "file" and not host:
        raise UrlError(f"URL without host: {url!r}")
    if port == 0 and scheme in ("http", "https", "ws", "wss"):
        raise UrlError(f"invalid port 0 in URL {url!r}")
    username = parts.username or None
    password = parts.password
    path = parts.path
    if scheme in _SPECIAL:
        path = _remove_dot_segments(path) or "/"
    path = quote(path, safe=_PATH_SAFE)
    query = quote(parts.query, safe=_QUERY_SAFE) if (parts.query or raw.split("#", 1)[0].endswith("?")) else None
    fragment = parts.fragment if "#" in raw else None
    effective_port = port if port is not None else DEFAULT_PORTS.get(scheme)
    netloc = ""
    if host is not None:
        userinfo = ""
        if username is not None or password is not None:
            userinfo = (username or "") + (f":{password}" if password is not None else "") + "@"
        shown_host = f"[{host}]" if ":" in host else host
        shown_port = f":{port}" if port is not None and port != DEFAULT_PORTS.get(scheme) else ""
        netloc = f"{userinfo}{shown_host}{shown_port}"
    str_url = urlunsplit((scheme, netloc, path, query or "", ""))
    if query == "":
        str_url += "?"
    return ParsedUrl(scheme, username, password, host, effective_port, path, query, fragment, str_url)


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


def url_string(conn: sqlite3.Connection, url_id: int) -> str:
    """Return ``str_url`` of ``url_id``.

    Raises:
        KeyError: no such url_id.
    """
    row = conn.execute("SELECT str_url FROM url WHERE url_id = ?", (url_id,)).fetchone()
    if row is None:
        raise KeyError(f"no url with url_id {url_id}")
    return row[0]
