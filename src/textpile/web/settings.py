"""The textpile plugin's Datasette settings (``plugins.textpile`` in Datasette's metadata or
configuration), checked when Datasette starts so that a bad value stops it with a message
naming the setting, instead of failing every search.

``search_time_limit_ms``: the time budget of one search in milliseconds, a whole number
from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS` (default
:data:`textpile.search.budget.DEFAULT_BUDGET_MS`), as the CLI's ``--search-time-limit-ms``.

``results_per_site``: at most this many results of one site on a result page of the
search page when more than one site matches, the others on later pages with a "more
from this site" link (:mod:`textpile.search.grouping`; the JSON API groups only when
the request asks: :mod:`textpile.web.views`); a whole number from 0 (no grouping) to
:data:`textpile.search.results.MAX_PER_PAGE`, default
:data:`textpile.search.grouping.DEFAULT_PER_SITE`.

``ranking_rules``: a list of boosts and demotions, each ``{"if": <crawl policy criterium
chain>, "boost": <number>}`` (the seed's criteria language: ``{"if": {"url": {"path":
{"has_prefix": "/blog/"}}}, "boost": -1}``; :mod:`textpile.search.boosts`), default none.
``textpile serve --ranking-rules FILE`` reads them from a TOML file's ``[[ranking_rules]]``.

``extra``: the template configuration (unobtanium-viewer's ``-e/--extra-config``, read by
``textpile serve`` from a TOML file), a table the templates get as ``extra``; its content
depends on the template. The built-in search page reads ``notice`` (a line of text shown
under the search box) and ``links`` (``[{"title", "url"}]``, shown in the header).

``query_analytics``: true (the default) or false: count queries per day in a database
beside the index (:mod:`textpile.web.analytics`).

``synonyms``: the served index's synonym table, a list of groups of words or phrases that
mean the same (``[["k8s", "kubernetes"]]``, :mod:`textpile.search.synonyms`); none by default.

``shards``: URLs of textpile servers whose summary databases are searched with the
served ones as one index (:mod:`textpile.web.shards`), as the CLI's ``--shard``.
"""

from __future__ import annotations

import functools
import json

import click
from datasette.utils import StartupError

from textpile.crawl.policy.criteria import CriteriumError, compile_crawl_policy_chain, toml_type_name
from textpile.errors import ConfigError
from textpile.search.boosts import RankingRule
from textpile.search.budget import DEFAULT_BUDGET_MS
from textpile.search.grouping import DEFAULT_PER_SITE
from textpile.search.results import MAX_PER_PAGE
from textpile.search.shards import shard_url_problem
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, synonym_table

#: The largest search time limit accepted (the CLI's bound).
MAX_SEARCH_TIME_LIMIT_MS = 1_000_000_000
#: The settings the plugin reads.
KNOWN_SETTINGS = ("search_time_limit_ms", "synonyms", "shards", "results_per_site", "ranking_rules", "extra",
                  "query_analytics")
#: The largest boost (or demotion) a ranking rule may give.
MAX_BOOST = 1000.0


class SettingsError(StartupError, click.ClickException):
    """A bad ``plugins.textpile`` setting, found when Datasette starts (the plugin's
    ``startup`` hook). A :class:`~datasette.utils.StartupError`, as Datasette's own
    start-up errors, and a :class:`click.ClickException`: ``datasette serve``, which runs
    the startup hooks outside its handling of StartupError, prints it as one line
    (``Error: plugins.textpile.synonyms[0]: ...``) and exits with status 1, not a
    traceback."""


def _checked(config: dict | None) -> dict:
    """The plugin ``config`` as a table of known settings ({} when None).

    Raises:
        SettingsError: the config is not a table or names an unknown setting.
    """
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise SettingsError(f"plugins.textpile: expected a table of settings, got {config!r}")
    unknown = sorted(set(config) - set(KNOWN_SETTINGS))
    if unknown:
        raise SettingsError(f"plugins.textpile: unknown setting {unknown[0]!r} (known: {', '.join(KNOWN_SETTINGS)})")
    return config


def search_synonyms(config: dict | None) -> Synonyms:
    """The synonym table of the plugin ``config`` (``datasette.plugin_config("textpile")``):
    :data:`~textpile.search.synonyms.NO_SYNONYMS` when it sets none.

    Raises:
        SettingsError: the config is not a table, names an unknown setting, or the table is
            not a list of groups of words (the message names the entry, as
            :func:`~textpile.search.synonyms.synonym_table`'s).
    """
    config = _checked(config)
    if "synonyms" not in config:
        return NO_SYNONYMS
    try:
        written = json.dumps(config["synonyms"], sort_keys=True)
    except (TypeError, ValueError):  # no JSON value (YAML's dates): the table's check names it
        written = None
    try:
        if written is None:
            return synonym_table(config["synonyms"], "plugins.textpile.synonyms")
        return _synonym_table(written)
    except ConfigError as exc:
        raise SettingsError(str(exc)) from exc


@functools.lru_cache(maxsize=4)
def _synonym_table(written: str) -> Synonyms:
    """The table of the setting written as JSON ``written``, built once: the search page
    reads the setting at every search, and the largest table allowed (1,000 groups of 20)
    takes 25 ms to build, its JSON 1.4 ms to write (the table is only read).

    Raises:
        ConfigError: a bad table (see :func:`~textpile.search.synonyms.synonym_table`).
    """
    return synonym_table(json.loads(written), "plugins.textpile.synonyms")


def search_time_limit_ms(config: dict | None) -> int:
    """The search time limit of the plugin ``config`` (``datasette.plugin_config("textpile")``).

    Raises:
        SettingsError: the config is not a table, names an unknown setting, or the value is
            not a whole number from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS`.
    """
    config = _checked(config)
    value = config.get("search_time_limit_ms", DEFAULT_BUDGET_MS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEARCH_TIME_LIMIT_MS:
        raise SettingsError("plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                            f"{MAX_SEARCH_TIME_LIMIT_MS}, got {value!r}")
    return value


def remote_shards(config: dict | None) -> list[str]:
    """The ``shards`` URLs of the plugin ``config`` (none when unset).

    Raises:
        SettingsError: the config is not a table, names an unknown setting, or ``shards``
            is not a list of http(s) URLs.
    """
    config = _checked(config)
    if "shards" not in config:
        return []
    value = config["shards"]
    if not isinstance(value, list):
        raise SettingsError(f"plugins.textpile.shards: expected a list of http(s) URLs, got {value!r}")
    for i, url in enumerate(value):
        problem = shard_url_problem(url)
        if problem is not None:
            raise SettingsError(f"plugins.textpile.shards[{i}]: {problem}, got {url!r}")
    return list(value)


def results_per_site(config: dict | None) -> int:
    """The ``results_per_site`` of the plugin ``config`` (checked as :func:`search_time_limit_ms`
    checks the config).

    Raises:
        SettingsError: a bad config (see :func:`search_time_limit_ms`), or the value is not
            a whole number from 0 to :data:`MAX_PER_PAGE`.
    """
    search_time_limit_ms(config)
    value = (config or {}).get("results_per_site", DEFAULT_PER_SITE)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PER_PAGE:
        raise SettingsError(f"plugins.textpile.results_per_site: expected a whole number from 0 to {MAX_PER_PAGE}, "
                            f"got {value!r}")
    return value


def compile_ranking_rules(value, path: str = "ranking_rules") -> tuple[RankingRule, ...]:
    """The :class:`RankingRule` s of ``value``: a list of tables ``{"if": chain, "boost":
    number}`` (as TOML's ``[[ranking_rules]]`` or the plugin setting give them).

    Raises:
        ConfigError: not a list of such tables, an unknown key, a boost that is not a
            number from -:data:`MAX_BOOST` to :data:`MAX_BOOST`, or a chain that does not
            compile (:class:`textpile.crawl.policy.criteria.CriteriumError`, naming the key path).
    """
    if not isinstance(value, list):
        raise ConfigError(f"{path}: expected a list of rules, got {toml_type_name(value)}")
    rules = []
    for i, rule in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(rule, dict):
            raise ConfigError(f"{where}: expected a table with 'if' and 'boost', got {toml_type_name(rule)}")
        unknown = sorted(set(rule) - {"if", "boost"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (expected 'if' and 'boost')")
        if "if" not in rule or "boost" not in rule:
            raise ConfigError(f"{where}: needs both 'if' (a criterium chain) and 'boost' (a number)")
        boost = rule["boost"]
        if isinstance(boost, bool) or not isinstance(boost, (int, float)) or not -MAX_BOOST <= boost <= MAX_BOOST:
            raise ConfigError(f"{where}.boost: expected a number from -{MAX_BOOST:g} to {MAX_BOOST:g}, got {boost!r}")
        rules.append(RankingRule(compile_crawl_policy_chain(rule["if"], f"{where}.if"), float(boost)))
    return tuple(rules)


def ranking_rules(config: dict | None) -> tuple[RankingRule, ...]:
    """The ranking rules of the plugin ``config`` (none when it has none).

    Raises:
        SettingsError: a bad config (see :func:`search_time_limit_ms`) or a bad rule
            (:func:`compile_ranking_rules`'s message, under ``plugins.textpile``).
    """
    search_time_limit_ms(config)
    try:
        return compile_ranking_rules((config or {}).get("ranking_rules", []), "plugins.textpile.ranking_rules")
    except (ConfigError, CriteriumError) as exc:
        raise SettingsError(str(exc)) from exc


def extra_config(config: dict | None) -> dict:
    """The template configuration of the plugin ``config`` (``{}`` when it has none).

    Raises:
        SettingsError: a bad config (see :func:`search_time_limit_ms`), ``extra`` is not a
            table, or the built-in template's ``notice`` is not text or its ``links`` not
            a list of tables with a text ``title`` and ``url``.
    """
    search_time_limit_ms(config)
    extra = (config or {}).get("extra", {})
    if not isinstance(extra, dict):
        raise SettingsError(f"plugins.textpile.extra: expected a table, got {extra!r}")
    if "notice" in extra and not isinstance(extra["notice"], str):
        raise SettingsError(f"plugins.textpile.extra.notice: expected text, got {extra['notice']!r}")
    links = extra.get("links", [])
    if not isinstance(links, list) or not all(isinstance(link, dict) and isinstance(link.get("title"), str)
                                              and isinstance(link.get("url"), str) for link in links):
        raise SettingsError("plugins.textpile.extra.links: expected a list of tables with a text title and url, "
                            f"got {links!r}")
    return extra


def query_analytics(config: dict | None) -> bool:
    """The ``query_analytics`` of the plugin ``config`` (default true).

    Raises:
        SettingsError: a bad config (see :func:`search_time_limit_ms`) or a value that is
            not true or false.
    """
    search_time_limit_ms(config)
    value = (config or {}).get("query_analytics", True)
    if not isinstance(value, bool):
        raise SettingsError(f"plugins.textpile.query_analytics: expected true or false, got {value!r}")
    return value
