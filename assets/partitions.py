"""The crawl-run partitions: one dynamic partition per crawl run (agent).

A key is the 32 lowercase hex digits of the run's agent UUID (a UUID v7, so keys sort by
the time they were made). Keys are added by the recrawl schedule, by ``textpile
pipeline`` or by hand (``new_crawl_run_key``), never derived from data.
"""

from __future__ import annotations

import uuid

from dagster import DynamicPartitionsDefinition

from textpile.ids import uuid7

CRAWL_RUNS = "crawl_runs"

crawl_runs_partitions = DynamicPartitionsDefinition(name=CRAWL_RUNS)


def new_crawl_run_key(unix_ms: int | None = None) -> str:
    """A fresh partition key: the hex of a new UUID v7 (``unix_ms``: its time, now when None)."""
    return uuid7(unix_ms).hex


def agent_uuid_of(key: str) -> uuid.UUID:
    """The agent UUID named by partition ``key``.

    Raises:
        ValueError: ``key`` is not 32 lowercase hex digits.
    """
    try:
        value = uuid.UUID(hex=key)
    except ValueError:
        raise ValueError(f"not a crawl-run partition key: {key!r} (expected 32 lowercase hex digits)") from None
    if value.hex != key:
        raise ValueError(f"not a crawl-run partition key: {key!r} (expected 32 lowercase hex digits)")
    return value


def key_unix_ms(key: str) -> int | None:
    """The creation time in unix milliseconds embedded in a UUID v7 key; None for other versions."""
    value = agent_uuid_of(key)
    if value.version != 7:
        return None
    return value.int >> 80
