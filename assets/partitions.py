"""The crawl-run partitions: one dynamic partition per crawl run (agent).

A key is the 32 lowercase hex digits of the run's agent UUID (a UUID v7, so keys sort by
the time they were made). Keys are added by the ``crawl_now`` sensor (a crawl run started
from the UI), the ``recrawl`` sensor and ``textpile pipeline`` (all through
``new_crawl_run_key``), never typed by hand nor derived from data.
"""

from __future__ import annotations

import uuid

from dagster import DynamicPartitionsDefinition

from textpile_dagster.resources.keys import check_crawl_run_key, is_crawl_run_key
from textpile.ids import uuid7

CRAWL_RUNS = "crawl_runs"

crawl_runs_partitions = DynamicPartitionsDefinition(name=CRAWL_RUNS)


def new_crawl_run_key(unix_ms: int | None = None) -> str:
    """A fresh partition key: the hex of a new UUID v7 (``unix_ms``: its time, now when None)."""
    return uuid7(unix_ms).hex


def agent_uuid_of(key: str) -> uuid.UUID:
    """The agent UUID named by partition ``key``.

    Raises:
        ValueError: ``key`` is not 32 lowercase hex digits; the message says how crawl runs
            are started instead (see ``resources.keys.HOW_TO_START``).
    """
    return uuid.UUID(hex=check_crawl_run_key(key))


def key_unix_ms(key: str) -> int | None:
    """The creation time in unix milliseconds embedded in a UUID v7 key; None for other
    versions and for keys that are no crawl-run keys (e.g. a partition added by hand)."""
    if not is_crawl_run_key(key):
        return None
    value = uuid.UUID(hex=key)
    if value.version != 7:
        return None
    return value.int >> 80
