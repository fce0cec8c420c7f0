"""The textpile plugin's Datasette settings (``plugins.textpile`` in Datasette's metadata or
configuration), checked when Datasette starts so that a bad value stops it with a message
naming the setting, instead of failing every search.

``search_time_limit_ms``: the time budget of one search in milliseconds, a whole number
from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS` (default
:data:`textpile.search.budget.DEFAULT_BUDGET_MS`), as the CLI's ``--search-time-limit-ms``.

``results_per_site``: at most this many results of one site on a result page when more
than one site matches, the others on later pages with a "more from this site" link
(:mod:`textpile.search.grouping`); a whole number from 0 (no grouping) to
:data:`textpile.search.results.MAX_PER_PAGE`, default
:data:`textpile.search.grouping.DEFAULT_PER_SITE`.
"""

from __future__ import annotations

from datasette.utils import StartupError

from textpile.search.budget import DEFAULT_BUDGET_MS
from textpile.search.grouping import DEFAULT_PER_SITE
from textpile.search.results import MAX_PER_PAGE

#: The largest search time limit accepted (the CLI's bound).
MAX_SEARCH_TIME_LIMIT_MS = 1_000_000_000
#: The settings the plugin reads.
KNOWN_SETTINGS = ("search_time_limit_ms", "results_per_site")


def search_time_limit_ms(config: dict | None) -> int:
    """The search time limit of the plugin ``config`` (``datasette.plugin_config("textpile")``).

    Raises:
        StartupError: the config is not a table, names an unknown setting, or the value is
            not a whole number from 1 to :data:`MAX_SEARCH_TIME_LIMIT_MS`.
    """
    if config is None:
        return DEFAULT_BUDGET_MS
    if not isinstance(config, dict):
        raise StartupError(f"plugins.textpile: expected a table of settings, got {config!r}")
    unknown = sorted(set(config) - set(KNOWN_SETTINGS))
    if unknown:
        raise StartupError(f"plugins.textpile: unknown setting {unknown[0]!r} (known: {', '.join(KNOWN_SETTINGS)})")
    value = config.get("search_time_limit_ms", DEFAULT_BUDGET_MS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEARCH_TIME_LIMIT_MS:
        raise StartupError("plugins.textpile.search_time_limit_ms: expected a whole number from 1 to "
                           f"{MAX_SEARCH_TIME_LIMIT_MS}, got {value!r}")
    return value


def results_per_site(config: dict | None) -> int:
    """The ``results_per_site`` of the plugin ``config`` (checked as :func:`search_time_limit_ms`
    checks the config).

    Raises:
        StartupError: a bad config (see :func:`search_time_limit_ms`), or the value is not
            a whole number from 0 to :data:`MAX_PER_PAGE`.
    """
    search_time_limit_ms(config)
    value = (config or {}).get("results_per_site", DEFAULT_PER_SITE)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PER_PAGE:
        raise StartupError(f"plugins.textpile.results_per_site: expected a whole number from 0 to {MAX_PER_PAGE}, "
                           f"got {value!r}")
    return value
