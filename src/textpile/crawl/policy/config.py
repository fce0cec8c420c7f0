"""The crawl configuration: the TOML file documented in the seed, and its policies.

Source: unobtanium-documentation.txt, page "Crawler crawl configuration" (keys, policies,
the ``database_file`` safety check), page "unobtanium-crawler" (the ``crawl`` options that
override keys) and the criterium pages (Criterium Chain, String, Number, Boolean, Url,
Origin; the TOML form of chains is described in :mod:`textpile.crawl.policy.criteria`).

Entry points:

* :func:`load_config` reads a complete configuration file (every required key present).
* :func:`read_config_file` / :func:`read_policy_file` read a file that may lack keys the
  command line supplies, and policy files (``--policy-file``), into :data:`ConfigValues`
  (the checked values the file sets, by :class:`CrawlConfig` field name).
* :func:`apply_overrides` merges command line options into such values (or a complete
  configuration) and builds the one validated model, :class:`CrawlConfig` (pydantic);
  :func:`config_from_options` does all of it for ``textpile crawl``.
* :func:`check_database_file` is the ``database_file`` safety check.
* :meth:`CrawlConfig.policy_verdict` applies ``do_not_crawl`` and ``url_query_paramters``.

One validation: what each setting accepts (type, range, form) is said once, by the type
of its :class:`CrawlConfig` field (the checks of :mod:`textpile.crawl.policy.values`,
whose messages say what was found and what was expected). Reading a file and applying options do not check values again:
they only say where a value came from, so that every problem raises
:class:`textpile.errors.ConfigError` naming the file and the key path
(``do_not_crawl[2].if.url.path.has_prefx``, ``seeds[1]``; array indexes count from 0), or
the option (``--max-commands``), and what was expected. Policies are compiled from their
TOML tables when the file is read (:mod:`textpile.crawl.policy.criteria`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Annotated, Any
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic_core import PydanticCustomError

from textpile.crawl.policy.bounds import (MAX_COMMANDS_PER_RUN, MAX_DEFAULT_DELAY_MS, MAX_DEFAULT_DELAY_WORDS,
                                         MAX_RECRAWL_INTERVAL_S, MAX_RELEVANCE_MIN_WORDS, MAX_URLS_PER_PATTERN)
from textpile.crawl.policy.criteria import CriteriumError, compile_crawl_policy_chain, toml_type_name
from textpile.crawl.policy.traps import DEFAULT_MAX_URLS_PER_PATTERN, DEFAULT_SESSION_PARAMETERS, session_names
from textpile.crawl.policy.values import (boolean, database_path, parameter_names, parse_duration, seed_list,
                                         single_line, site_list, string, whole_number, word_list)
from textpile.errors import ConfigError
from textpile.toml_file import read_toml
from textpile.store.urls import ParsedUrl, parse_url

#: User agent used when none is configured (page "Crawler User-Agent and robots.txt").
UNCONFIGURED_USER_AGENT = "textpile-crawler-unconfigured-ua"
#: The feed recrawl interval when none is configured: a day (atextcrawler: "e.g. daily").
DEFAULT_FEED_RECRAWL_S = 86400
#: Words of visible text a discovered site's start page needs to be relevant by default.
DEFAULT_RELEVANCE_MIN_WORDS = 50
#: The pydantic error type of a setting's value refused by its check (:func:`_setting`).
SETTING_ERROR = "textpile_setting"


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


def _setting(check: Callable[[Any], Any], *, optional: bool = False) -> PlainValidator:
    """The validator of a :class:`CrawlConfig` field whose values ``check`` accepts (None
    too when ``optional``): a value ``check`` refuses (ValueError) is a pydantic error of
    type :data:`SETTING_ERROR` whose context holds ``message`` and ``where``."""
    def validate(value: Any) -> Any:
        if value is None and optional:
            return None
        try:
            return check(value)
        except ValueError as exc:
            raise PydanticCustomError(SETTING_ERROR, "{message}",
                                      {"message": str(exc), "where": getattr(exc, "where", "")}) from None
    return PlainValidator(validate)


class CrawlConfig(BaseModel):
    """A loaded, validated crawl configuration (the one model: from a file, from options or
    from code alike). Durations in ms or s as named (``recrawl_interval_s`` and
    ``feed_recrawl_interval_s`` also take a duration such as ``"4 weeks"``:
    :func:`parse_duration`). Immutable: derive another one with :func:`apply_overrides`.

    Raises (when built directly): ``pydantic.ValidationError`` for a value out of bounds, a
    bad seed or user agent; :func:`apply_overrides` turns that into a ConfigError.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    default_delay_ms: Annotated[int, _setting(whole_number(MAX_DEFAULT_DELAY_MS, f" ms ({MAX_DEFAULT_DELAY_WORDS})"))]
    max_commands_per_run: Annotated[int, _setting(whole_number(MAX_COMMANDS_PER_RUN))]
    recrawl_interval_s: Annotated[int, _setting(parse_duration)]
    seeds: Annotated[list[str], _setting(seed_list)]
    name: Annotated[str | None, _setting(string, optional=True)] = None
    description: Annotated[str | None, _setting(string, optional=True)] = None
    database_file: Annotated[str | None, _setting(database_path, optional=True)] = None
    user_agent: Annotated[str, _setting(single_line)] = UNCONFIGURED_USER_AGENT
    do_not_crawl: list[DoNotCrawlPolicy] = Field(default_factory=list)
    url_query_parameters: list[QueryParameterPolicy] = Field(default_factory=list)
    #: textpile extension, off by default: allow loopback/private/link-local/reserved targets.
    allow_private_addresses: Annotated[bool, _setting(boolean)] = False
    #: textpile extension: session-ID parameter names stripped from every URL before it
    #: becomes a candidate (textpile.crawl.policy.traps; case-insensitive).
    session_parameters: Annotated[tuple[str, ...], _setting(parameter_names)] = DEFAULT_SESSION_PARAMETERS
    #: textpile extension: URLs of one calendar-like path pattern crawled per run (0: no cap).
    max_urls_per_pattern: Annotated[int, _setting(whole_number(MAX_URLS_PER_PATTERN))] = \
        DEFAULT_MAX_URLS_PER_PATTERN
    #: textpile extension: read sitemaps (robots.txt Sitemap: lines, else /sitemap.xml and
    #: /sitemap_index.xml; sitemap indexes; sitemaps found by content).
    sitemaps: Annotated[bool, _setting(boolean)] = True
    #: textpile extension: read feeds (RSS, Atom, JSON Feed) found from pages and sitemaps.
    feeds: Annotated[bool, _setting(boolean)] = True
    #: textpile extension (dead-simple-search "Indexing"): after a complete and healthy crawl
    #: of an origin, its URLs no link, sitemap or feed reaches leave (textpile.crawl.crawldb.prune).
    prune: Annotated[bool, _setting(boolean)] = True
    #: textpile extension: how long a feed waits before it is read again (atextcrawler's
    #: feed_crawl_interval), in seconds; its new entries are crawled then.
    feed_recrawl_interval_s: Annotated[int, _setting(parse_duration)] = DEFAULT_FEED_RECRAWL_S
    #: textpile extension (adaptive recrawl, textpile.crawl.policy.recrawl): the shortest and
    #: longest a page's own recrawl interval gets, in seconds; None: a quarter of and eight
    #: times recrawl_interval (see recrawl_bounds_s).
    min_recrawl_interval_s: Annotated[int | None, _setting(parse_duration, optional=True)] = None
    max_recrawl_interval_s: Annotated[int | None, _setting(parse_duration, optional=True)] = None
    #: textpile extension (atextcrawler's site discovery), off by default: record links to
    #: origins outside the seeds (textpile discovered lists them); nothing there is crawled.
    discover_sites: Annotated[bool, _setting(boolean)] = False
    #: textpile extension (atextcrawler's site annotations): sites admitted as seeds (their
    #: start pages are crawled like seeds) and sites never admitted nor checked (deny wins).
    allow_sites: Annotated[tuple[str, ...], _setting(site_list)] = ()
    deny_sites: Annotated[tuple[str, ...], _setting(site_list)] = ()
    #: textpile extension: what makes a discovered site's start page relevant
    #: (textpile discovered --check): a word count, languages of <html lang>, words it mentions.
    relevance_min_words: Annotated[int, _setting(whole_number(MAX_RELEVANCE_MIN_WORDS))] = \
        DEFAULT_RELEVANCE_MIN_WORDS
    relevance_languages: Annotated[tuple[str, ...], _setting(word_list)] = ()
    relevance_words: Annotated[tuple[str, ...], _setting(word_list)] = ()
    #: the file this configuration was read from, None when built in code.
    source: Path | None = None

    @property
    def crawl_seeds(self) -> list[str]:
        """The URLs a crawl starts from: :attr:`seeds`, then :attr:`allow_sites` (admitted
        sites; one whose origin ``deny_sites`` names is left out)."""
        denied = {parse_url(u).str_origin for u in self.deny_sites}
        return [*self.seeds, *(u for u in self.allow_sites if parse_url(u).str_origin not in denied)]

    @property
    def recrawl_bounds_s(self) -> tuple[int, int]:
        """(shortest, longest) of a page's own recrawl interval in seconds
        (:mod:`textpile.crawl.policy.recrawl`): ``min_recrawl_interval_s`` (default a
        quarter of ``recrawl_interval_s``) and ``max_recrawl_interval_s`` (default eight
        times it, at most :data:`~textpile.crawl.policy.bounds.MAX_RECRAWL_INTERVAL_S`);
        a minimum above the maximum wins (the interval is the minimum)."""
        low = self.recrawl_interval_s // 4 if self.min_recrawl_interval_s is None else self.min_recrawl_interval_s
        high = (min(self.recrawl_interval_s * 8, MAX_RECRAWL_INTERVAL_S) if self.max_recrawl_interval_s is None
                else self.max_recrawl_interval_s)
        return low, max(low, high)

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


#: What a crawl configuration or policy file sets: :class:`CrawlConfig` field name ->
#: value as the file gives it (checked by the model: :func:`read_config_file`;
#: ``source``: the file), before command line options are merged; keys the file leaves
#: out are absent. :func:`apply_overrides` makes the CrawlConfig.
ConfigValues = dict[str, Any]

_POLICY_KEYS = ("do_not_crawl", "url_query_paramters", "url_query_parameters")
_CONFIG_KEYS = ("name", "description", "database_file", "default_delay_ms", "max_commands_per_run",
                "recrawl_interval", "user_agent", "seeds", "allow_private_addresses", "session_parameters",
                "max_urls_per_pattern", "sitemaps", "feeds", "prune", "feed_recrawl_interval", "min_recrawl_interval",
                "max_recrawl_interval", "discover_sites",
                "allow_sites", "deny_sites", "relevance_min_words", "relevance_languages", "relevance_words",
                *_POLICY_KEYS)
#: The file's keys whose :class:`CrawlConfig` field has another name (a duration read into seconds).
_FIELD_OF_KEY = {"recrawl_interval": "recrawl_interval_s", "feed_recrawl_interval": "feed_recrawl_interval_s",
                 "min_recrawl_interval": "min_recrawl_interval_s", "max_recrawl_interval": "max_recrawl_interval_s"}
_KEY_OF_FIELD = {field: key for key, field in _FIELD_OF_KEY.items()}


def _file_error(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def _unknown_key(path: Path, key_path: str, name: str, allowed: Sequence[str], expected: str) -> ConfigError:
    """The error for the unknown key ``name`` (at ``key_path``) where ``allowed`` are the
    file's keys: the nearest of them by :func:`difflib.get_close_matches` (also matched on
    the :class:`CrawlConfig` field name a key is read into, such as ``recrawl_interval_s``)
    as "did you mean", else ``expected`` (what is allowed)."""
    spelling = {}
    for key in allowed:
        spelling.setdefault(key, key)
        spelling.setdefault(_FIELD_OF_KEY.get(key, key), key)
    near = difflib.get_close_matches(name, list(spelling), n=1)
    if near:
        return ConfigError(f"{path}: unknown key '{key_path}'; did you mean '{spelling[near[0]]}'?")
    return _file_error(path, key_path, f"unknown key; expected {expected}")


def _checked(path: Path, key: str, check: Callable[[Any], Any], value: Any) -> Any:
    """``check(value)``, its refusal a ConfigError naming the file and the key path."""
    try:
        return check(value)
    except ValueError as exc:
        raise _file_error(path, key + getattr(exc, "where", ""), str(exc)) from None


def _policies(path: Path, key: str, value: Any, kind: str) -> list[Any]:
    """The policies of the array of tables ``value`` (``[[do_not_crawl]]`` or
    ``[[url_query_paramters]]``, ``kind``), compiled."""
    if not isinstance(value, list):
        raise _file_error(path, key, f"found {toml_type_name(value)}; expected an array of tables ([[{kind}]])")
    return [_policy(path, f"{key}[{i}]", item, kind) for i, item in enumerate(value)]


def _policy(path: Path, key: str, value: Any, kind: str) -> DoNotCrawlPolicy | QueryParameterPolicy:
    allowed = ("reason", "if") if kind == "do_not_crawl" else ("reason", "allow", "if")
    if not isinstance(value, dict):
        raise _file_error(path, key, f"found {toml_type_name(value)}; expected a table with keys {', '.join(allowed)}")
    for name in value:
        if name not in allowed:
            raise _unknown_key(path, f"{key}.{name}", name, allowed, f"one of {', '.join(allowed)}")
    reason = _checked(path, f"{key}.reason", string, value["reason"]) if "reason" in value else None
    if "if" not in value:
        raise _file_error(path, f"{key}.if", "missing; expected a crawl policy criterium chain "
                                             '(for example if.url.host.equals = "example.org")')
    try:
        criterium = compile_crawl_policy_chain(value["if"], f"{key}.if")
    except CriteriumError as exc:
        raise _file_error(path, exc.key_path, exc.problem) from None
    if kind == "do_not_crawl":
        return DoNotCrawlPolicy(reason, criterium)
    if "allow" not in value:
        raise _file_error(path, f"{key}.allow",
                          'missing; expected an array of query parameter names (allow = ["page"])')
    allow = value["allow"]
    if not isinstance(allow, list):
        raise _file_error(path, f"{key}.allow",
                          f"found {toml_type_name(allow)}; expected an array of query parameter names")
    names = frozenset(_checked(path, f"{key}.allow[{i}]", string, name) for i, name in enumerate(allow))
    return QueryParameterPolicy(reason, names, criterium)


def _refusals(error: ValidationError) -> list[tuple[str, str, str, str]]:
    """The errors of a :class:`CrawlConfig` validation as ``(field, where, message, type)``:
    the field, where in its value, what is wrong (for a check's refusal, its own words) and
    pydantic's error type (``"missing"``, :data:`SETTING_ERROR` ...), in pydantic's order."""
    refusals = []
    for found in error.errors():
        field, *inner = found["loc"]
        if found["type"] == SETTING_ERROR:
            where, message = found["ctx"]["where"], found["ctx"]["message"]
        else:
            where, message = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in inner), found["msg"]
        refusals.append((str(field), where, message, found["type"]))
    return refusals


def _read(path: Path, keys: Sequence[str], what: str) -> ConfigValues:
    """The TOML file at ``path`` as :data:`ConfigValues`: keys other than ``keys`` are
    refused (``what`` says which are allowed), policies compiled, every other value
    checked by :class:`CrawlConfig` (missing keys are the caller's business); the first
    problem in the file's order raises a ConfigError naming the file and the key path."""
    data = read_toml(path, "configuration file")
    settings = {_FIELD_OF_KEY.get(key, key): value for key, value in data.items()
                if key in keys and key not in _POLICY_KEYS}
    problems: dict[str, tuple[str, str]] = {}
    try:
        CrawlConfig.model_validate(settings)
    except ValidationError as exc:
        for field, where, message, kind in _refusals(exc):
            if kind != "missing":
                problems.setdefault(field, (where, message))
    out: ConfigValues = {"source": path, "do_not_crawl": [], "url_query_parameters": []}
    for key, value in data.items():
        if key not in keys:
            raise _unknown_key(path, key, key, keys, f"one of {', '.join(keys)} ({what})")
        if key == "do_not_crawl":
            out[key] = _policies(path, key, value, "do_not_crawl")
        elif key in _POLICY_KEYS:  # url_query_paramters (the documented spelling) or url_query_parameters
            out["url_query_parameters"].extend(_policies(path, key, value, "url_query_paramters"))
        else:
            field = _FIELD_OF_KEY.get(key, key)
            if field in problems:
                where, message = problems[field]
                raise _file_error(path, key + where, message)
            out[field] = value
    return out


def read_config_file(path: str | Path) -> ConfigValues:
    """Read and check a crawl configuration file whose required keys may be missing.

    Keys as on the seed page "Crawler crawl configuration", plus ``allow_private_addresses``
    (bool) and the correct spelling ``url_query_parameters`` next to the documented
    ``url_query_paramters`` (both may appear; their policies are concatenated, documented
    spelling first in file order).

    Raises:
        ConfigError: unreadable file, invalid TOML, unknown key, wrong type, negative
            number, bad seed or bad criterium; the message names file, key path and expectation.
    """
    return _read(Path(path), _CONFIG_KEYS, "crawl configuration keys")


def read_policy_file(path: str | Path) -> ConfigValues:
    """Read a ``--policy-file``: only ``[[do_not_crawl]]`` and ``[[url_query_paramters]]``
    (or ``[[url_query_parameters]]``) tables, in the same notation as the configuration.

    Raises:
        ConfigError: as :func:`read_config_file`; any other key is refused.
    """
    return _read(Path(path), _POLICY_KEYS, "a policy file holds only policies")


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


#: The required settings, in the order a missing one is named (when neither option nor
#: file gives it), each with the start of its message: what to give, option or file key.
_MISSING = (("seeds", "no seeds: give --schedule URL or seeds"),
            ("default_delay_ms", "no default delay: give --default-delay MILLISECONDS or default_delay_ms"),
            ("max_commands_per_run", "no command limit: give --max-commands N or max_commands_per_run"),
            ("recrawl_interval_s", 'no recrawl interval: set recrawl_interval (e.g. "4 weeks")'))


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
    and build the :class:`CrawlConfig`, whose field types check every value. ``config`` is
    a complete one, :data:`ConfigValues` read from a file, or None (options only); it is
    not changed.

    ``seeds`` (``--schedule``) replaces the configured seeds; ``force_recrawl`` sets
    ``recrawl_interval_s`` to 0 (every crawled URL is due again) and so also stands in
    for a missing ``recrawl_interval``. ``allow_private_addresses=True`` turns the SSRF
    filter off; None keeps the configured value (default False).

    Raises:
        ConfigError: an option value is invalid (negative, bad URL, bad user agent): the
            message names the option (``--max-commands: found negative number -1; ...``);
            or a required value is given neither as option nor in the file: it names the
            option and the key, e.g. "no seeds: give --schedule URL or seeds in --config".
    """
    base: ConfigValues = dict(config) if config is not None else {}
    for name in ("do_not_crawl", "url_query_parameters"):
        base[name] = list(base.get(name) or [])
    source = base.get("source")
    options: dict[str, str] = {}  # field -> the option that gave its value, in the order given

    def given(field: str, option: str, value: Any) -> None:
        base[field] = value
        options[field] = option

    if user_agent is not None:
        given("user_agent", "--user-agent", user_agent)
    if max_commands is not None:
        given("max_commands_per_run", "--max-commands", max_commands)
    if default_delay_ms is not None:
        given("default_delay_ms", "--default-delay", default_delay_ms)
    if seeds is not None and len(seeds) > 0:
        given("seeds", "--schedule", list(seeds))
    if recrawl_interval is not None:
        given("recrawl_interval_s", "recrawl interval option", recrawl_interval)
    elif force_recrawl:
        base["recrawl_interval_s"] = 0
    if allow_private_addresses is not None:
        given("allow_private_addresses", "--allow-private-addresses", allow_private_addresses)
    try:
        built = CrawlConfig(**base)
    except ValidationError as exc:
        raise _override_error(exc, options, source) from None
    if force_recrawl and built.recrawl_interval_s != 0:  # a recrawl interval option given too
        built = built.model_copy(update={"recrawl_interval_s": 0})
    return built


def _override_error(error: ValidationError, options: Mapping[str, str], source: Path | None) -> ConfigError:
    """The ConfigError of the validation :func:`apply_overrides` failed: a refused option
    value first (the first option given), then any other refused value (naming the file
    and key), then the first missing setting of :data:`_MISSING`."""
    refusals = _refusals(error)
    refused = [r for r in refusals if r[3] != "missing"]
    if refused:
        order = list(options)
        field, where, message, _kind = min(refused, key=lambda r: order.index(r[0]) if r[0] in order else len(order))
        if field in options:
            return ConfigError(f"{options[field]}: {message}")
        return ConfigError(f"{source or 'crawl configuration'}: {_KEY_OF_FIELD.get(field, field)}{where}: {message}")
    missing = {r[0] for r in refusals}
    where = f" in {source}" if source else " in --config"
    for field, message in _MISSING:
        if field in missing:
            extra = ", or give --force-recrawl" if field == "recrawl_interval_s" else ""
            return ConfigError(f"{message}{where}{extra}")
    return ConfigError(f"{source or 'crawl configuration'}: {error.errors()[0]['msg']}")


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
