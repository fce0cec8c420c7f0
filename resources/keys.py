"""The format of a ``crawl_runs`` partition key, and the error for a key of another form.

A key is the 32 lowercase hex digits of the crawl run's agent UUID (a UUID v7 made when
the run is started). Kept here, free of asset imports, so that both the staging area
resource and ``assets.partitions`` check keys the same way.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"^[0-9a-f]{32}$")

#: What to do instead of naming a crawl_runs partition by hand (shown in key errors).
HOW_TO_START = (
    "crawl_runs keys are the 32 lowercase hex digits of a UUID v7, made by the crawl_now sensor, "
    "the recrawl sensor or `textpile pipeline`; do not add crawl_runs partitions by hand. To start "
    "a crawl run from the UI: Automation -> crawl_now -> Preview tick result -> Apply requests & commit "
    "tick result (or turn crawl_now on: it starts one crawl run each time it is turned on)"
)


def is_crawl_run_key(key: str) -> bool:
    """Whether ``key`` has the form of a crawl-run partition key (32 lowercase hex digits)."""
    return bool(_KEY.match(key))


def check_crawl_run_key(key: str) -> str:
    """Return ``key`` when it is a crawl-run partition key.

    Raises:
        ValueError: it is not; the message says how crawl runs are started instead.
    """
    if not is_crawl_run_key(key):
        raise ValueError(f"not a crawl-run partition key: {key!r}. {HOW_TO_START}")
    return key
