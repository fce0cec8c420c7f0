"""Ranking metrics of one result list against a query's relevant pages.

``ranked`` holds page paths, best first, already reduced to one entry per page (a page's
sections count once, where the page first appears).
"""

from __future__ import annotations

import math
from statistics import mean
from urllib.parse import urlsplit


def first_relevant_rank(ranked: list[str], relevant: frozenset[str]) -> int | None:
    """1-based rank of the first relevant page, or None."""
    for i, page in enumerate(ranked, start=1):
        if page in relevant:
            return i
    return None


def reciprocal_rank(ranked: list[str], relevant: frozenset[str], k: int = 10) -> float:
    """RR@k: 1/rank of the first relevant page within the first k, else 0."""
    r = first_relevant_rank(ranked[:k], relevant)
    return 1.0 / r if r else 0.0


def success_at(ranked: list[str], relevant: frozenset[str], k: int = 1) -> float:
    """1.0 when a relevant page is within the first k, else 0.0."""
    return 1.0 if first_relevant_rank(ranked[:k], relevant) else 0.0


def ndcg(ranked: list[str], relevant: frozenset[str], k: int = 10) -> float:
    """NDCG@k with binary gains (each relevant page once)."""
    dcg = sum(1.0 / math.log2(i + 1) for i, page in enumerate(ranked[:k], start=1) if page in relevant)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def summarize_scores(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """Means of (RR@10, success@1, NDCG@10) rows; zeros when empty."""
    if not rows:
        return (0.0, 0.0, 0.0)
    return tuple(mean(r[i] for r in rows) for i in range(3))


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100, nearest rank) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


def page_path(url: str) -> str:
    """A result URL as a page path relative to its site root (no fragment)."""
    path = urlsplit(url).path.lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path


def dedupe_pages(urls: list[str]) -> list[str]:
    """The page paths of ``urls`` in order, each once (a page's sections are one page)."""
    seen, out = set(), []
    for url in urls:
        page = page_path(url)
        if page not in seen:
            seen.add(page)
            out.append(page)
    return out
