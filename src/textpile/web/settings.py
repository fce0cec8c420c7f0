"""The textpile plugin's Datasette settings (``plugins.textpile`` in Datasette's metadata or
configuration), checked when Datasette starts so that a bad value stops it with a message
naming the setting, instead of failing every search.

``search_time_limit_ms``: the time budget of one search in milliseconds, a whole number
from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS` (default
:data:`textpile.search.budget.DEFAULT_BUDGET_MS`), as the CLI's ``--search-time-limit-ms``.

``synonyms``: the served index's synonym table, a list of groups of words or phrases that
mean the same (``[["k8s", "kubernetes"]]``, :mod:`textpile.search.synonyms`); none by default.

``shards``: URLs of textpile servers whose summary databases are searched with the
served ones as one index (:mod:`textpile.web.shards`), as the CLI's ``--shard``.
"""

from __future__ import annotations

from datasette.utils import StartupError

from textpile.errors import ConfigError
from textpile.search.budget import DEFAULT_BUDGET_MS
from textpile.search.synonyms import NO_SYNONYMS, Synonyms, synonym_table

#: The largest search time limit accepted (the CLI's bound).
MAX_SEARCH_TIME_LIMIT_MS = 1_000_000_000
#: The settings the plugin reads.
KNOWN_SETTINGS = ("search_time_limit_ms", "synonyms", "shards")


def _checked(config: dict | None) -> dict:
    """The plugin ``config`` as a table of known settings ({} when None).

    Raises:
        StartupError: the config is not a table or names an unknown setting.
    """
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise StartupError(f"plugins.textpile: expected a table of settings, got {config!r}")
    unknown = sorted(set(config) - set(KNOWN_SETTINGS))
    if unknown:
        raise StartupError(f"plugins.textpile: unknown setting {unknown[0]!r} (known: {', '.join(KNOWN_SETTINGS)})")
    return config


def search_synonyms(config: dict | None) -> Synonyms:
    """The synonym table of the plugin ``config`` (``datasette.plugin_config("textpile")``):
    :data:`~textpile.search.synonyms.NO_SYNONYMS` when it sets none.

    Raises:
        StartupError: the config is not a table, names an unknown setting, or the table is
            not a list of groups of words (the message names the entry, as
            :func:`~textpile.search.synonyms.synonym_table`'s).
    """
    config = _checked(config)
    if "synonyms" not in config:
        return NO_SYNONYMS
    try:
        return synonym_table(config["synonyms"], "plugins.textpile.synonyms")
    except ConfigError as exc:
        raise StartupError(str(exc)) from exc


def search_time_limit_ms(config: dict | None) -> int:
    """The search time limit of the plugin ``config`` (``datasette.plugin_config("textpile")``).

    Raises:
        StartupError: the config is not a table, names an unknown setting, or the value is
            not a whole number from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS`.
    """
    config = _checked(config)
    value = config.get("search_time_limit_ms", DEFAULT_BUDGET_MS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEARCH_TIME_LIMIT_MS:
        raise StartupError("plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                           f"{MAX_SEARCH_TIME_LIMIT_MS}, got {value!r}")
    return value


def remote_shards(config: dict | None) -> list[str]:
    """The ``shards`` URLs of the plugin ``config`` (none when unset).

    Raises:
        StartupError: the config is not a table, names an unknown setting, or ``shards``
            is not a list of http(s) URLs.
    """
    config = _checked(config)
    if "shards" not in config:
        return []
    value = config["shards"]
    if not isinstance(value, list) or not all(isinstance(u, str) and u.lower().startswith(("http://", "https://"))
                                              for u in value):
        raise StartupError(f"plugins.textpile.shards: expected a list of http(s) URLs, got {value!r}")
    return list(value)
