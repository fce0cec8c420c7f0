"""Reciprocal rank fusion of rankings (Cormack, Clarke and Büttcher, SIGIR 2009).

A document's fused score is the sum over the rankings that hold it of
``weight / (k + rank)``, ranks counted from 1; documents missing from a ranking get
nothing from it. ``k`` = 60 is the paper's constant.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

FUSION_K = 60


def reciprocal_rank_fusion(rankings: Sequence[tuple[Sequence[Hashable], float]], k: float = FUSION_K) -> dict:
    """Return ``{document: fused score}`` for ``rankings``, a sequence of (documents best
    first, weight). A document listed twice in one ranking counts at its first rank.

    Example: ``reciprocal_rank_fusion([(["a", "b"], 1.0), (["b"], 1.0)], k=1)`` gives
    ``{"a": 0.5, "b": 1/3 + 1/2}``.

    Raises:
        ValueError: ``k`` is negative (a rank-1 document would then outweigh every other).
    """
    if k < 0:
        raise ValueError(f"rank fusion constant k must be >= 0, got {k}")
    out: dict = {}
    for documents, weight in rankings:
        seen = set()
        for rank, doc in enumerate(documents, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            out[doc] = out.get(doc, 0.0) + weight / (k + rank)
    return out
