"""Fit textpile's rerank feature weights to dumped benchmark candidates (coordinate ascent).

    python bench/relevance --dump-candidates cands.json     # writes the candidates
    python bench/relevance/tune.py cands.json [--rounds 4]

Each query's candidates carry their features and whether they are relevant; a weight
vector ranks them by the weighted sum (missing words cost score through the ``held``
and ``all_terms`` features: no sort key), and the objective is the mean RR@10 over every query. The search starts
from textpile's current weights (textpile.search.rank.FEATURE_WEIGHTS) and changes one
weight at a time by a set of steps, keeping a change only when it helps. It prints the
fitted weights, the objective before and after, and a leave-one-site-out check: weights
fitted without a site, scored on that site (how well the fit carries to unseen sites),
over all of the site's queries and over its everyday and natural ones (the queries that
describe what the user wants), for every site in the dump (the benchmark's eleven sites
when it ran them all).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from textpile.search.rank import FEATURE_WEIGHTS, HYBRID_FEATURE_WEIGHTS

STEPS = (-1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0)
#: The query classes that describe what the user wants (everyday.py, natural.py).
DESCRIBED = ("everyday", "natural")


def load(path: Path, system: str = "textpile", features: tuple[str, ...] = tuple(FEATURE_WEIGHTS)):
    """Queries of ``system`` (dumps without a system name: every query) as (site, class,
    X features matrix, held vector, relevant vector)."""
    out = []
    for q in json.loads(path.read_text()):
        if q.get("system", system) != system:
            continue
        cands = q["candidates"]
        if not cands:
            out.append((q["site"], q["class"], np.zeros((0, len(features))), np.zeros(0), np.zeros(0, bool)))
            continue
        x = np.array([[c["features"].get(f, 0.0) for f in features] for c in cands])
        out.append((q["site"], q["class"], x, np.array([c["held"] for c in cands]),
                    np.array([c["relevant"] for c in cands])))
    return out


def mrr(queries, w: np.ndarray) -> float:
    total = 0.0
    for _, _, x, held, rel in queries:
        if not len(rel) or not rel.any():
            continue
        score = x @ w
        order = np.argsort(-score, kind="stable")
        ranks = np.nonzero(rel[order])[0]
        if len(ranks) and ranks[0] < 10:
            total += 1.0 / (ranks[0] + 1)
    return total / max(1, len(queries))


def fit(queries, start: np.ndarray, rounds: int) -> np.ndarray:
    w = start.copy()
    best = mrr(queries, w)
    for _ in range(rounds):
        improved = False
        for i in range(len(w)):
            for step in STEPS:
                trial = w.copy()
                trial[i] += step
                value = mrr(queries, trial)
                if value > best + 1e-9:
                    best, w, improved = value, trial, True
        if not improved:
            break
    return w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidates", type=Path)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--system", default="textpile",
                        help="whose candidates to fit: textpile (the default mode), textpile-keyword, textpile-hybrid")
    args = parser.parse_args()
    hybrid = args.system in ("textpile", "textpile-hybrid")
    weights = HYBRID_FEATURE_WEIGHTS if hybrid else FEATURE_WEIGHTS
    names = tuple(weights)
    queries = load(args.candidates, args.system, names)
    start = np.array([weights[f] for f in names])
    fitted = fit(queries, start, args.rounds)
    print(f"{args.system}: {len(queries)} queries")
    print(f"MRR@10 (candidates' ceiling aside): current {mrr(queries, start):.4f}, fitted {mrr(queries, fitted):.4f}")
    print("fitted weights:")
    for f, a, b in zip(names, start, fitted):
        print(f"  {f:<16} {a:6.2f} -> {b:6.2f}")
    by_site = defaultdict(list)
    for q in queries:
        by_site[q[0]].append(q)
    print(f"\nleave-one-site-out over {len(by_site)} sites (fit on the others, score the site), MRR@10:")
    print(f"  {'':<12} {'all classes':^28}   {'everyday and natural':^28}")
    print(f"  {'site':<12} {'current':>8} {'all-fit':>8} {'held-out':>9}   {'current':>8} {'all-fit':>8} {'held-out':>9}"
          f" {'n':>5}")
    pooled: dict[str, list[float]] = defaultdict(list)
    for site, own in sorted(by_site.items()):
        others = [q for q in queries if q[0] != site]
        held_out = fit(others, start, args.rounds)
        described = [q for q in own if q[1] in DESCRIBED]
        row = (mrr(own, start), mrr(own, fitted), mrr(own, held_out),
               mrr(described, start), mrr(described, fitted), mrr(described, held_out))
        for key, value, n in zip(("all-current", "all-fit", "all-held", "d-current", "d-fit", "d-held"), row,
                                 (len(own),) * 3 + (len(described),) * 3):
            pooled[key].append((value, n))
        print(f"  {site:<12} {row[0]:8.4f} {row[1]:8.4f} {row[2]:9.4f}   {row[3]:8.4f} {row[4]:8.4f} {row[5]:9.4f}"
              f" {len(described):5d}")

    def mean(key: str) -> float:
        total = sum(n for _, n in pooled[key])
        return sum(v * n for v, n in pooled[key]) / total if total else 0.0

    print(f"  {'all sites':<12} {mean('all-current'):8.4f} {mean('all-fit'):8.4f} {mean('all-held'):9.4f}   "
          f"{mean('d-current'):8.4f} {mean('d-fit'):8.4f} {mean('d-held'):9.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
