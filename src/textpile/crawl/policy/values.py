"""What each crawl configuration setting accepts: the checks of one value.

Each check returns the value (normalized: a seed as ``parse_url`` writes it, a duration in
seconds, an array as a tuple) or raises ValueError whose message says what was found and
what was expected (TOML's names for types: "found a string '1000'; expected a whole
number >= 0"); :class:`InvalidValue` also says where inside the value (``[2]``). They are
the types of :class:`textpile.crawl.policy.config.CrawlConfig`'s fields, the one
validation of a configuration, whether it comes from a file, options or code.

Sources: unobtanium-documentation.txt, page "Crawler crawl configuration"
(``recrawl_interval``, seeds); the WHATWG URL standard (hosts and ports of seeds).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from textpile.crawl.policy.bounds import MAX_RECRAWL_INTERVAL_S
from textpile.crawl.policy.criteria import toml_type_name
from textpile.store.urls import UrlError, parse_url


class InvalidValue(ValueError):
    """A value a setting refuses. The message says what was found and what was expected;
    ``where`` locates the refused part inside the value (``"[2]"``, the third item of an
    array; ``""``, the value itself)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


def check_count(value: Any, maximum: int, unit: str = "", *, what: str | None = None) -> int:
    """``value`` if it is a whole number from 0 to ``maximum`` (bools refused).

    ``unit`` is appended to the maximum in the message (" ms (an hour)"); ``what`` names
    the value's type in the message (default: the Python type name).

    Raises:
        ValueError: "found <what> <value>; expected a whole number >= 0", "found negative
            number -1; expected a whole number >= 0" or "found <value>, which is too
            large; expected at most <maximum><unit>".
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"found {what or type(value).__name__} {value!r}; expected a whole number >= 0")
    if value < 0:
        raise ValueError(f"found negative number {value}; expected a whole number >= 0")
    if value > maximum:
        raise ValueError(f"found {value}, which is too large; expected at most {maximum}{unit}")
    return value


def whole_number(maximum: int, unit: str = "") -> Callable[[Any], int]:
    """The check of a whole number from 0 to ``maximum`` (:func:`check_count`)."""
    return lambda value: check_count(value, maximum, unit, what=toml_type_name(value))


def string(value: Any) -> str:
    """A string (``name``, ``description``, a policy's ``reason``)."""
    if not isinstance(value, str):
        raise InvalidValue(f"found {toml_type_name(value)}; expected a string")
    return value


def single_line(value: Any) -> str:
    """A non-empty single-line string without control characters (a user agent: it
    becomes an HTTP header)."""
    text = string(value)
    if not text.strip() or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InvalidValue(f"found {text!r}; expected a non-empty single-line string without control characters")
    return text


def database_path(value: Any) -> str:
    """A non-blank path without NUL (``database_file``)."""
    text = string(value)
    if not text.strip() or "\x00" in text:
        raise InvalidValue(f"found {text!r}; expected a database path such as \"data/crawl.db\" "
                           "(leave the key out to accept any database file)")
    return text


def boolean(value: Any) -> bool:
    """true or false (TOML booleans only: no 0/1, no "yes")."""
    if not isinstance(value, bool):
        raise InvalidValue(f"found {toml_type_name(value)} {value!r}; expected true or false")
    return value


def _items(value: Any, expected: str, check: Callable[[Any], Any], *, non_empty: bool = False) -> tuple:
    """``value``, an array (a list or tuple), with ``check`` applied to each item; the
    message of a refused item says which (``where``)."""
    if not isinstance(value, (list, tuple)) or (non_empty and not value):
        raise InvalidValue(f"found {toml_type_name(value)}; expected {expected}")
    checked = []
    for i, item in enumerate(value):
        try:
            checked.append(check(item))
        except ValueError as exc:
            raise InvalidValue(str(exc), f"[{i}]") from None
    return tuple(checked)


def seed(value: Any) -> str:
    """An absolute http(s) URL, normalized (:func:`normalize_seed`)."""
    return normalize_seed(string(value))


def seed_list(value: Any) -> list[str]:
    """A non-empty array of seeds (``seeds``, ``--schedule``)."""
    return list(_items(value, "a non-empty array of absolute http(s) URLs", seed, non_empty=True))


def site_list(value: Any) -> tuple[str, ...]:
    """An array of seeds (``allow_sites``, ``deny_sites``)."""
    return _items(value, "an array of absolute http(s) URLs", seed)


def word_list(value: Any) -> tuple[str, ...]:
    """An array of single-line strings (``relevance_languages``, ``relevance_words``)."""
    return _items(value, "an array of strings", single_line)


def parameter_name(value: Any) -> str:
    """A query parameter name: not empty, no spaces, none of ``= & ; ? #``."""
    name = string(value)
    if not name or any(c.isspace() or c in "=&;?#" for c in name):
        raise InvalidValue(f"found {name!r}; expected a parameter name without spaces or any of = & ; ? #")
    return name


def parameter_names(value: Any) -> tuple[str, ...]:
    """An array of query parameter names (``session_parameters``)."""
    return _items(value, "an array of parameter names", parameter_name)


#: Seconds per duration unit. "month" is 30 days and "year" 365 days.
_UNIT_SECONDS = {
    "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1,
    "minute": 60, "minutes": 60, "min": 60, "mins": 60,
    "hour": 3600, "hours": 3600, "h": 3600,
    "day": 86400, "days": 86400, "d": 86400,
    "week": 7 * 86400, "weeks": 7 * 86400, "w": 7 * 86400,
    "month": 30 * 86400, "months": 30 * 86400,
    "year": 365 * 86400, "years": 365 * 86400,
}
_DURATION_PART = re.compile(r"\s*(\d+)\s*([A-Za-z]+)\s*")


def parse_duration(value: str | int) -> int:
    """A ``recrawl_interval`` as whole seconds.

    Accepts a non-negative integer (seconds) or a string of one or more ``<number> <unit>``
    parts that are added up: ``"1 week"``, ``"4 weeks"``, ``"30 minutes"``,
    ``"1 day 12 hours"``. Units (singular or plural, any case): second, minute, hour, day,
    week, month (30 days), year (365 days); short forms s, sec, min, h, d, w also work.
    Source: page "Crawler crawl configuration", ``recrawl_interval``.

    Raises:
        ValueError: anything else; the message says what was expected.
    """
    expected = ('expected a duration such as "4 weeks", "30 minutes" or "1 day 12 hours" '
                "(units second, minute, hour, day, week, month, year) or a whole number of seconds")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"found {type(value).__name__} {value!r}; {expected}")
    too_long = (f"found {value!r}, which is more than 100 years ({MAX_RECRAWL_INTERVAL_S} seconds); "
                f"expected at most 100 years")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"found negative number {value}; {expected}")
        if value > MAX_RECRAWL_INTERVAL_S:
            raise ValueError(too_long)
        return value
    text = value.strip()
    total, pos = 0, 0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if not match or match.group(2).lower() not in _UNIT_SECONDS:
            raise ValueError(f"cannot read {value!r}; {expected}")
        digits = match.group(1).lstrip("0") or "0"
        if len(digits) > 20:  # also keeps int() away from its 4300-digit limit
            raise ValueError(too_long)
        total += int(digits) * _UNIT_SECONDS[match.group(2).lower()]
        if total > MAX_RECRAWL_INTERVAL_S:
            raise ValueError(too_long)
        pos = match.end()
    if pos == 0:
        raise ValueError(f"found an empty string; {expected}")
    return total


#: Characters that may appear in a registered host name (before IDNA encoding, which
#: also admits any non-ASCII letter): letters, digits, hyphen, underscore, dot.
_HOST_CHARS = re.compile(r"[A-Za-z0-9._-]+")


def _check_seed_authority(url: str) -> None:
    """Refuse what ``parse_url`` may let through in a seed's host and port: spaces and
    other forbidden characters, empty labels, an IPvFuture or malformed ``[...]``
    literal, port 0 (WHATWG URL standard, "host parsing" and "port state").

    Raises:
        ValueError: names the bad host or port.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid URL {url!r}: {exc}") from None
    netloc = parts.netloc.rpartition("@")[2]
    if netloc.startswith("["):
        literal = netloc[1:].partition("]")[0]
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            raise ValueError(f"invalid IPv6 address [{literal}] in {url!r}") from None
    else:
        host = parts.hostname or ""
        ascii_part = "".join(c for c in host if ord(c) < 128)
        if ascii_part and not _HOST_CHARS.fullmatch(ascii_part) or any(c.isspace() for c in host):
            raise ValueError(f"invalid host {host!r} in {url!r}: a host name holds only letters, "
                             "digits, hyphens and dots")
        if host and any(label == "" for label in host.rstrip(".").split(".")):
            raise ValueError(f"invalid host {host!r} in {url!r}: empty label")
    if port == 0:
        raise ValueError(f"invalid port 0 in {url!r}: expected a port from 1 to 65535")


def normalize_seed(url: str) -> str:
    """A seed URL, checked and normalized (``parse_url(url).str_url``, fragment dropped).

    Raises:
        ValueError: not an absolute http or https URL, or an invalid host or port; the
            message quotes it.
    """
    try:
        parsed = parse_url(url)
    except UrlError as exc:
        raise ValueError(f"{exc}; expected an absolute http(s) URL") from None
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"found {url!r}; expected an absolute http(s) URL")
    _check_seed_authority(url)
    return parsed.str_url
