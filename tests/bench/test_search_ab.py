"""bench/search_ab.py's figures from the times of two versions."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from search_ab import summary  # noqa: E402


def test_each_query_s_best_time_makes_the_figures():
    times = {"before": {"a": [4.0, 2.0], "b": [10.0, 12.0], "c": [6.0, 8.0]},
             "after": {"a": [1.0, 3.0], "b": [5.0, 5.0], "c": [9.0, 6.0]}}
    got = summary(times)
    assert got["before"] == {"p50": 6.0, "p90": 10.0, "p99": 10.0, "mean": 6.0}
    assert got["after"] == {"p50": 5.0, "p90": 6.0, "p99": 6.0, "mean": 4.0}
    assert got["ratio"] == {"median": 0.5, "total": pytest.approx(12 / 18)}  # a 0.5, b 0.5, c 1.0
