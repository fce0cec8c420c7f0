"""The crawl configuration: the TOML file documented in the seed, and its policies.

Source: unobtanium-documentation.txt, page "Crawler crawl configuration" (keys, policies)
and the criterium pages (Criterium Chain, String, Number, Boolean, Url, Origin).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: User agent used when none is configured (page "Crawler User-Agent and robots.txt").
UNCONFIGURED_USER_AGENT = "textpile-crawler-unconfigured-ua"


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


@dataclass
class CrawlConfig:
    """A loaded, validated crawl configuration. Durations in ms or s as named."""

    default_delay_ms: int
    max_commands_per_run: int
    recrawl_interval_s: int
    seeds: list[str]
    name: str | None = None
    description: str | None = None
    database_file: str | None = None
    user_agent: str = UNCONFIGURED_USER_AGENT
    do_not_crawl: list[DoNotCrawlPolicy] = field(default_factory=list)
    url_query_parameters: list[QueryParameterPolicy] = field(default_factory=list)
    #: textpile extension, off by default: allow loopback/private/link-local/reserved targets.
    allow_private_addresses: bool = False
    #: the file this configuration was read from, None when built in code.
    source: Path | None = None
