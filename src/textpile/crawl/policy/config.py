"""The crawl configuration: the TOML file documented in the seed, and its policies.

Source: unobtanium-documentation.txt, page "Crawler crawl configuration" (keys, policies,
the ``database_file`` safety check), page "unobtanium-crawler" (the ``crawl`` options that
override keys) and the criterium pages (Criterium Chain, String, Number, Boolean, Url,
Origin; the TOML form of chains is described in :mod:`textpile.crawl.policy.criteria`).

Entry points:

* :func:`load_config` reads a complete configuration file (every required key present).
* :func:`read_config_file` / :func:`read_policy_file` read a file that may lack keys the
  command line supplies, and policy files (``--policy-file``), into :data:`ConfigValues`
  (the validated values the file sets, by :class:`CrawlConfig` field name).
* :func:`apply_overrides` merges command line options into such values (or a complete
  configuration) and builds the one validated model, :class:`CrawlConfig` (pydantic);
  :func:`config_from_options` does all of it for ``textpile crawl``.
* :func:`check_database_file` is the ``database_file`` safety check.
* :meth:`CrawlConfig.policy_verdict` applies ``do_not_crawl`` and ``url_query_paramters``.

Every problem raises :class:`textpile.errors.ConfigError` naming the file, the key path
(``do_not_crawl[2].if.url.path.has_prefx``; array indexes count from 0) and what was expected.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, field_validator

from textpile.crawl.policy.bounds import (MAX_COMMANDS_PER_RUN, MAX_DEFAULT_DELAY_MS, MAX_DEFAULT_DELAY_WORDS,
                                          MAX_RECRAWL_INTERVAL_S, MAX_RELEVANCE_MIN_WORDS, MAX_URLS_PER_PATTERN)
from textpile.crawl.policy.criteria import CriteriumError, compile_crawl_policy_chain, toml_type_name
from textpile.crawl.policy.traps import DEFAULT_MAX_URLS_PER_PATTERN, DEFAULT_SESSION_PARAMETERS, session_names
from textpile.errors import ConfigError
from textpile.store.urls import ParsedUrl, UrlError, parse_url

#: User agent used when none is configured (page "Crawler User-Agent and robots.txt").
UNCONFIGURED_USER_AGENT = "textpile-crawler-unconfigured-ua"

#: The feed recrawl interval when none is configured: a day (atextcrawler: "e.g. daily").
DEFAULT_FEED_RECRAWL_S = 86400
#: Words of visible text a discovered site's start page needs to be relevant by default.
DEFAULT_RELEVANCE_MIN_WORDS = 50


@dataclass
class DoNotCrawlPolicy:
    """A ``[[do_not_crawl]]`` entry: crawling is inhibited when ``criterium`` matches."""

    reason: str | None
    criterium: Any  # a compiled criterium chain over crawl policy data (see criteria.py)


@dataclass
class QueryParameterPolicy:
    """A ``[[url_query_paramters]]`` entry: allows the parameter names in ``allow``
    (not all need be present) for URLs matching ``criterium``."""

    reason: str | None
    allow: frozenset[str]
    criterium: Any


class CrawlConfig(BaseModel):
    """A loaded, validated crawl configuration (the one model: from a file, from options or
    from code alike). Durations in ms or s as named. Immutable: derive another one with
    :func:`apply_overrides`.

    Raises (when built directly): ``pydantic.ValidationError`` for a value out of bounds, a
    bad seed or user agent; :func:`apply_overrides` turns that into a ConfigError.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    default_delay_ms: Annotated[StrictInt, Field(ge=0, le=MAX_DEFAULT_DELAY_MS)]
    max_commands_per_run: Annotated[StrictInt, Field(ge=0, le=MAX_COMMANDS_PER_RUN)]
    recrawl_interval_s: Annotated[StrictInt, Field(ge=0, le=MAX_RECRAWL_INTERVAL_S)]
    seeds: Annotated[list[str], Field(min_length=1)]
    name: str | None = None
    description: str | None = None
    database_file: str | None = None
    user_agent: str = UNCONFIGURED_USER_AGENT
    do_not_crawl: list[DoNotCrawlPolicy] = Field(default_factory=list)
    url_query_parameters: list[QueryParameterPolicy] = Field(default_factory=list)
    #: textpile extension, off by default: allow loopback/private/link-local/reserved targets.
    allow_private_addresses: StrictBool = False
    #: textpile extension: session-ID parameter names stripped from every URL before it
    #: becomes a candidate (textpile.crawl.policy.traps; case-insensitive).
    session_parameters: tuple[str, ...] = DEFAULT_SESSION_PARAMETERS
    #: textpile extension: URLs of one calendar-like path pattern crawled per run (0: no cap).
    max_urls_per_pattern: Annotated[StrictInt, Field(ge=0, le=MAX_URLS_PER_PATTERN)] = DEFAULT_MAX_URLS_PER_PATTERN
    #: textpile extension: read sitemaps (robots.txt Sitemap: lines, else /sitemap.xml and
    #: /sitemap_index.xml; sitemap indexes; sitemaps found by content).
    sitemaps: StrictBool = True
    #: textpile extension: read feeds (RSS, Atom, JSON Feed) found from pages and sitemaps.
    feeds: StrictBool = True
    #: textpile extension: how long a feed waits before it is read again (atextcrawler's
    #: feed_crawl_interval), in seconds; its new entries are crawled then.
    feed_recrawl_interval_s: Annotated[StrictInt, Field(ge=0, le=MAX_RECRAWL_INTERVAL_S)] = DEFAULT_FEED_RECRAWL_S
    #: textpile extension (atextcrawler's site discovery), off by default: record links to
    #: origins outside the seeds (textpile discovered lists them); nothing there is crawled.
    discover_sites: StrictBool = False
    #: textpile extension (atextcrawler's site annotations): sites admitted as seeds (their
    #: start pages are crawled like seeds) and sites never admitted nor checked (deny wins).
    allow_sites: tuple[str, ...] = ()
    deny_sites: tuple[str, ...] = ()
    #: textpile extension: what makes a discovered site's start page relevant
    #: (textpile discovered --check): a word count, languages of <html lang>, words it mentions.
    relevance_min_words: Annotated[StrictInt, Field(ge=0, le=MAX_RELEVANCE_MIN_WORDS)] = DEFAULT_RELEVANCE_MIN_WORDS
    relevance_languages: tuple[str, ...] = ()
    relevance_words: tuple[str, ...] = ()
    #: the file this configuration was read from, None when built in code.
    source: Path | None = None

    @field_validator("seeds")
    @classmethod
    def _normalized_seeds(cls, seeds: list[str]) -> list[str]:
        return [normalize_seed(seed) for seed in seeds]

    @field_validator("allow_sites", "deny_sites")
    @classmethod
    def _normalized_sites(cls, sites: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(normalize_seed(site) for site in sites)

    @field_validator("user_agent")
    @classmethod
    def _single_line(cls, value: str) -> str:
        if not value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError(f"found {value!r}; expected a non-empty single-line string without control characters")
        return value

    @property
    def crawl_seeds(self) -> list[str]:
        """The URLs a crawl starts from: :attr:`seeds`, then :attr:`allow_sites` (admitted
        sites; one whose origin ``deny_sites`` names is left out)."""
        denied = {parse_url(u).str_origin for u in self.deny_sites}
        return [*self.seeds, *(u for u in self.allow_sites if parse_url(u).str_origin not in denied)]

    @property
    def session_names(self) -> frozenset[str]:
        """:attr:`session_parameters` in lower case, as :func:`textpile.crawl.policy.traps.strip_session_ids` takes them."""
        return session_names(self.session_parameters)

    def policy_verdict(self, url: ParsedUrl) -> str | None:
        """Why the crawl policies forbid crawling ``url``, or None when they allow it.

        Source: page "Crawl Loop", step [2]: a URL matched by a ``do_not_crawl`` policy is
        blocked; a URL with a query is blocked unless one single ``url_query_paramters``
        policy whose ``if`` matches allows every parameter name present (allow lists do
        not combine; not all allowed names need be present). No query, or the empty query
        of a bare ``?``, has no parameters and passes. The crawl loop logs a non-None
        verdict as exit code 173 blocked_url_by_local_policy.

        Returns:
            A human message naming the policy (its index from 0 and its reason), or None.
        """
        for index, policy in enumerate(self.do_not_crawl):
            if policy.criterium.matches(url):
                return f"blocked by do_not_crawl[{index}]: {_reason(policy.reason)}"
        names = query_parameter_names(url.query)
        if not names:
            return None
        applicable = [(i, p) for i, p in enumerate(self.url_query_parameters) if p.criterium.matches(url)]
        if any(names <= policy.allow for _, policy in applicable):
            return None
        shown = ", ".join(sorted(names))
        if not applicable:
            return f"query parameters {shown} not allowed: no url_query_paramters policy applies to this URL"
        rules = "; ".join(f"url_query_paramters[{i}] allows {', '.join(sorted(p.allow)) or 'nothing'} "
                          f"({_reason(p.reason)})" for i, p in applicable)
        return f"query parameters {shown} not allowed by any single policy: {rules}"


def _reason(reason: str | None) -> str:
    return reason if reason else "(no reason given)"


def query_parameter_names(query: str | None) -> frozenset[str]:
    """The set of parameter names in a URL query (percent-decoded, ``+`` as space).

    ``None`` and ``""`` (a bare ``?``) have none; ``a=1&b&a=2`` gives {"a", "b"}.
    """
    if not query:
        return frozenset()
    return frozenset(name for name, _ in parse_qsl(query, keep_blank_values=True))


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


#: What a crawl configuration or policy file sets: :class:`CrawlConfig` field name ->
#: validated value (``source``: the file), before command line options are merged; keys
#: the file leaves out are absent. :func:`apply_overrides` makes the CrawlConfig.
ConfigValues = dict[str, Any]

_POLICY_KEYS = ("do_not_crawl", "url_query_paramters", "url_query_parameters")
_CONFIG_KEYS = ("name", "description", "database_file", "default_delay_ms", "max_commands_per_run",
                "recrawl_interval", "user_agent", "seeds", "allow_private_addresses", "session_parameters",
                "max_urls_per_pattern", "sitemaps", "feeds", "feed_recrawl_interval", "discover_sites",
                "allow_sites", "deny_sites", "relevance_min_words", "relevance_languages", "relevance_words",
                *_POLICY_KEYS)


class _Reader:
    """Validates the TOML values of one file; every error names the file and key path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.path}: {key}: {problem}")

    def load(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read the configuration file: {exc.strerror or exc}") from None
        try:
            text = data.decode("utf-8")
            # A UTF-8 byte order mark (written by some Windows editors) is not TOML; skip it.
            return tomllib.loads(text[1:] if text.startswith("\ufeff") else text)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{self.path}: not UTF-8 text ({exc}); expected a TOML file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{self.path}: invalid TOML: {exc}") from None

    def string(self, key: str, value: Any, *, single_line: bool = False) -> str:
        if not isinstance(value, str):
            raise self.error(key, f"found {toml_type_name(value)}; expected a string")
        if single_line and (not value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value)):
            raise self.error(key, f"found {value!r}; expected a non-empty single-line string without control characters")
        return value

    def count(self, key: str, value: Any, maximum: int, unit: str = "") -> int:
        try:
            return check_count(value, maximum, unit, what=toml_type_name(value))
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def path_string(self, key: str, value: Any) -> str:
        text = self.string(key, value)
        if not text.strip() or "\x00" in text:
            raise self.error(key, f"found {text!r}; expected a database path such as \"data/crawl.db\" "
                                  "(leave the key out to accept any database file)")
        return text

    def boolean(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(key, f"found {toml_type_name(value)} {value!r}; expected true or false")
        return value

    def names(self, key: str, value: Any) -> list[str]:
        """An array of non-empty names without spaces (query parameter names)."""
        if not isinstance(value, list):
            raise self.error(key, f"found {toml_type_name(value)}; expected an array of parameter names")
        names = []
        for i, item in enumerate(value):
            name = self.string(f"{key}[{i}]", item)
            if not name or any(c.isspace() or c in "=&;?#" for c in name):
                raise self.error(f"{key}[{i}]", f"found {name!r}; expected a parameter name without spaces "
                                                "or any of = & ; ? #")
            names.append(name)
        return names

    def seeds(self, key: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not value:
            raise self.error(key, f"found {toml_type_name(value)}; expected a non-empty array of absolute http(s) URLs")
        return [self.seed(f"{key}[{i}]", item) for i, item in enumerate(value)]

    def seed(self, key: str, value: Any) -> str:
        try:
            return normalize_seed(self.string(key, value))
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def policies(self, key: str, value: Any, kind: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(key, f"found {toml_type_name(value)}; expected an array of tables ([[{kind}]])")
        return [self.policy(f"{key}[{i}]", item, kind) for i, item in enumerate(value)]

    def policy(self, key: str, value: Any, kind: str) -> DoNotCrawlPolicy | QueryParameterPolicy:
        allowed = ("reason", "if") if kind == "do_not_crawl" else ("reason", "allow", "if")
        if not isinstance(value, dict):
            raise self.error(key, f"found {toml_type_name(value)}; expected a table with keys {', '.join(allowed)}")
        for name in value:
            if name not in allowed:
                raise self.error(f"{key}.{name}", f"unknown key; expected one of {', '.join(allowed)}")
        reason = self.string(f"{key}.reason", value["reason"]) if "reason" in value else None
        if "if" not in value:
            raise self.error(f"{key}.if", "missing; expected a crawl policy criterium chain "
                                          '(for example if.url.host.equals = "example.org")')
        try:
            criterium = compile_crawl_policy_chain(value["if"], f"{key}.if")
        except CriteriumError as exc:
            raise self.error(exc.key_path, exc.problem) from None
        if kind == "do_not_crawl":
            return DoNotCrawlPolicy(reason, criterium)
        if "allow" not in value:
            raise self.error(f"{key}.allow", 'missing; expected an array of query parameter names (allow = ["page"])')
        allow = value["allow"]
        if not isinstance(allow, list):
            raise self.error(f"{key}.allow", f"found {toml_type_name(allow)}; expected an array of query parameter names")
        names = frozenset(self.string(f"{key}.allow[{i}]", name) for i, name in enumerate(allow))
        return QueryParameterPolicy(reason, names, criterium)

    def read(self, data: dict[str, Any], keys: Sequence[str], what: str) -> ConfigValues:
        """The TOML table ``data`` as :data:`ConfigValues`; every message names the key path."""
        out: ConfigValues = {"source": self.path, "do_not_crawl": [], "url_query_parameters": []}
        for key, value in data.items():
            if key not in keys:
                raise self.error(key, f"unknown key; expected one of {', '.join(keys)} ({what})")
            if key in ("name", "description"):
                out[key] = self.string(key, value)
            elif key == "database_file":
                out[key] = self.path_string(key, value)
            elif key == "user_agent":
                out[key] = self.string(key, value, single_line=True)
            elif key == "default_delay_ms":
                out[key] = self.count(key, value, MAX_DEFAULT_DELAY_MS, f" ms ({MAX_DEFAULT_DELAY_WORDS})")
            elif key == "max_commands_per_run":
                out[key] = self.count(key, value, MAX_COMMANDS_PER_RUN)
            elif key == "recrawl_interval":
                try:
                    out["recrawl_interval_s"] = parse_duration(value)
                except ValueError as exc:
                    raise self.error(key, str(exc)) from None
            elif key == "seeds":
                out[key] = self.seeds(key, value)
            elif key in ("allow_private_addresses", "sitemaps", "feeds", "discover_sites"):
                out[key] = self.boolean(key, value)
            elif key == "feed_recrawl_interval":
                try:
                    out["feed_recrawl_interval_s"] = parse_duration(value)
                except ValueError as exc:
                    raise self.error(key, str(exc)) from None
            elif key == "session_parameters":
                out[key] = tuple(self.names(key, value))
            elif key in ("allow_sites", "deny_sites"):
                if not isinstance(value, list):
                    raise self.error(key, f"found {toml_type_name(value)}; expected an array of absolute http(s) URLs")
                out[key] = tuple(self.seed(f"{key}[{i}]", item) for i, item in enumerate(value))
            elif key in ("relevance_languages", "relevance_words"):
                if not isinstance(value, list):
                    raise self.error(key, f"found {toml_type_name(value)}; expected an array of strings")
                out[key] = tuple(self.string(f"{key}[{i}]", item, single_line=True) for i, item in enumerate(value))
            elif key == "relevance_min_words":
                out[key] = self.count(key, value, MAX_RELEVANCE_MIN_WORDS)
            elif key == "max_urls_per_pattern":
                out[key] = self.count(key, value, MAX_URLS_PER_PATTERN)
            elif key == "do_not_crawl":
                out[key] = self.policies(key, value, "do_not_crawl")
            else:  # url_query_paramters (the documented spelling) or url_query_parameters
                out["url_query_parameters"].extend(self.policies(key, value, "url_query_paramters"))
        return out


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


def read_config_file(path: str | Path) -> ConfigValues:
    """Read and validate a crawl configuration file whose required keys may be missing.

    Keys as on the seed page "Crawler crawl configuration", plus ``allow_private_addresses``
    (bool) and the correct spelling ``url_query_parameters`` next to the documented
    ``url_query_paramters`` (both may appear; their policies are concatenated, documented
    spelling first in file order).

    Raises:
        ConfigError: unreadable file, invalid TOML, unknown key, wrong type, negative
            number, bad seed or bad criterium; the message names file, key path and expectation.
    """
    reader = _Reader(Path(path))
    return reader.read(reader.load(), _CONFIG_KEYS, "crawl configuration keys")


def read_policy_file(path: str | Path) -> ConfigValues:
    """Read a ``--policy-file``: only ``[[do_not_crawl]]`` and ``[[url_query_paramters]]``
    (or ``[[url_query_parameters]]``) tables, in the same notation as the configuration.

    Raises:
        ConfigError: as :func:`read_config_file`; any other key is refused.
    """
    reader = _Reader(Path(path))
    return reader.read(reader.load(), _POLICY_KEYS, "a policy file holds only policies")


def _with_policies(base: ConfigValues, policy_files: Iterable[str | Path]) -> ConfigValues:
    for policy_path in policy_files:
        extra = read_policy_file(policy_path)
        base["do_not_crawl"] = [*base.get("do_not_crawl", []), *extra["do_not_crawl"]]
        base["url_query_parameters"] = [*base.get("url_query_parameters", []), *extra["url_query_parameters"]]
    return base


def load_config(path: str | Path, *, policy_files: Iterable[str | Path] = ()) -> CrawlConfig:
    """Load a complete crawl configuration file, with the policies of ``policy_files`` appended.

    Required keys: default_delay_ms, max_commands_per_run, recrawl_interval, seeds (use
    :func:`config_from_options` when command line options may supply them).

    Raises:
        ConfigError: any problem of :func:`read_config_file` / :func:`read_policy_file`, or
            a missing required key (named, with the file).
    """
    partial = _with_policies(read_config_file(path), policy_files)
    missing = [key for key, name in (("default_delay_ms", "default_delay_ms"),
                                     ("max_commands_per_run", "max_commands_per_run"),
                                     ("recrawl_interval", "recrawl_interval_s"), ("seeds", "seeds"))
               if partial.get(name) is None]
    if missing:
        raise ConfigError(f"{partial['source']}: missing required key(s) {', '.join(missing)}")
    return apply_overrides(partial)


def apply_overrides(
    config: CrawlConfig | Mapping[str, Any] | None,
    *,
    user_agent: str | None = None,
    max_commands: int | None = None,
    default_delay_ms: int | None = None,
    seeds: Sequence[str] | None = None,
    force_recrawl: bool = False,
    allow_private_addresses: bool | None = None,
    recrawl_interval: str | int | None = None,
) -> CrawlConfig:
    """Merge ``textpile crawl`` options into a configuration (options win; None = not given)
    and build the :class:`CrawlConfig`. ``config`` is a complete one, :data:`ConfigValues`
    read from a file, or None (options only); it is not changed.

    ``seeds`` (``--schedule``) replaces the configured seeds; ``force_recrawl`` sets
    ``recrawl_interval_s`` to 0 (every crawled URL is due again) and so also stands in
    for a missing ``recrawl_interval``. ``allow_private_addresses=True`` turns the SSRF
    filter off; None keeps the configured value (default False).

    Raises:
        ConfigError: an option value is invalid (negative, bad URL, bad user agent), or a
            required value is given neither as option nor in the file; the message names
            the option and the key, e.g. "no seeds: give --schedule URL or seeds in --config".
    """
    base: ConfigValues = dict(config) if config is not None else {}
    for name in ("do_not_crawl", "url_query_parameters"):
        base[name] = list(base.get(name) or [])
    source = base.get("source")
    where = f" in {source}" if source else " in --config"

    def option_count(option: str, value: Any, maximum: int, unit: str = "") -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{option}: found {value!r}; expected a whole number >= 0")
        try:
            return check_count(value, maximum, unit)
        except ValueError as exc:
            raise ConfigError(f"{option}: {exc}") from None

    if user_agent is not None:
        if not user_agent.strip() or any(ord(c) < 32 or ord(c) == 127 for c in user_agent):
            raise ConfigError(f"--user-agent: found {user_agent!r}; expected a non-empty single-line string")
        base["user_agent"] = user_agent
    if max_commands is not None:
        base["max_commands_per_run"] = option_count("--max-commands", max_commands, MAX_COMMANDS_PER_RUN)
    if default_delay_ms is not None:
        base["default_delay_ms"] = option_count("--default-delay", default_delay_ms, MAX_DEFAULT_DELAY_MS,
                                                f" ms ({MAX_DEFAULT_DELAY_WORDS})")
    if seeds is not None and len(seeds) > 0:
        checked = []
        for seed in seeds:
            try:
                checked.append(normalize_seed(seed))
            except ValueError as exc:
                raise ConfigError(f"--schedule: {exc}") from None
        base["seeds"] = checked
    if recrawl_interval is not None:
        try:
            base["recrawl_interval_s"] = parse_duration(recrawl_interval)
        except ValueError as exc:
            raise ConfigError(f"recrawl interval option: {exc}") from None
    if force_recrawl:
        base["recrawl_interval_s"] = 0
    if allow_private_addresses is not None:
        base["allow_private_addresses"] = allow_private_addresses

    if not base.get("seeds"):
        raise ConfigError(f"no seeds: give --schedule URL or seeds{where}")
    if base.get("default_delay_ms") is None:
        raise ConfigError(f"no default delay: give --default-delay MILLISECONDS or default_delay_ms{where}")
    if base.get("max_commands_per_run") is None:
        raise ConfigError(f"no command limit: give --max-commands N or max_commands_per_run{where}")
    if base.get("recrawl_interval_s") is None:
        raise ConfigError(f'no recrawl interval: set recrawl_interval (e.g. "4 weeks"){where}, '
                          "or give --force-recrawl")
    try:
        return CrawlConfig(**base)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{source or 'crawl configuration'}: {key}: {first['msg']}") from None


def config_from_options(
    config_path: str | Path | None = None,
    *,
    policy_files: Iterable[str | Path] = (),
    user_agent: str | None = None,
    max_commands: int | None = None,
    default_delay_ms: int | None = None,
    seeds: Sequence[str] | None = None,
    force_recrawl: bool = False,
    allow_private_addresses: bool | None = None,
) -> CrawlConfig:
    """The configuration of one ``textpile crawl`` call: ``--config`` file (optional),
    ``--policy-file`` policies appended, then the options applied (:func:`apply_overrides`).

    Raises:
        ConfigError: from reading the files or from :func:`apply_overrides`.
    """
    base = read_config_file(config_path) if config_path is not None else {}
    _with_policies(base, policy_files)
    return apply_overrides(base, user_agent=user_agent, max_commands=max_commands,
                           default_delay_ms=default_delay_ms, seeds=seeds, force_recrawl=force_recrawl,
                           allow_private_addresses=allow_private_addresses)


def check_database_file(config: CrawlConfig, database_path: str | Path, ignore: bool = False) -> None:
    """The ``database_file`` safety check (page "Crawler crawl configuration").

    When ``config.database_file`` is set (and ``ignore``, the ``--ignore-db-name-from-config``
    option, is false) the absolute, normalized ``database_path`` must end with the same
    path segments: ``database_file = "data/crawl.db"`` accepts ``/srv/data/crawl.db`` but
    not ``/srv/other/crawl.db`` or ``/srv/data/crawl.db.bak``.

    Raises:
        ConfigError: the path does not end with those segments; names both and the option.
    """
    if ignore or config.database_file is None:
        return
    wanted = PurePath(os.path.normpath(config.database_file)).parts
    actual = PurePath(os.path.normpath(os.path.abspath(os.fspath(database_path)))).parts
    if PurePath(config.database_file).is_absolute():
        ok = wanted == actual
    else:
        ok = len(actual) >= len(wanted) and actual[len(actual) - len(wanted):] == wanted
    if not ok:
        source = f" (from {config.source})" if config.source else ""
        raise ConfigError(
            f"database file {os.fspath(database_path)!r} does not match database_file = "
            f"{config.database_file!r}{source}: its path must end with the same path segments; "
            "check that you picked the right database, or give --ignore-db-name-from-config")
