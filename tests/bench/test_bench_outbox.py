"""bench/crawl/bench_outbox.py's run: the outbox and the owner's pages follow today's links."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "crawl"))

from bench_outbox import simulate  # noqa: E402


def test_the_outbox_and_the_owners_pages_follow_todays_links():
    got = simulate(days=3, per_day=5)
    # today's 5 links are in a's outbox and b's candidates (with y's start page); the 10
    # pages of the two days before were pruned from b
    assert {k: got[k] for k in ("outbox", "candidates", "pruned")} == {"outbox": 5, "candidates": 6, "pruned": 10}
