"""Two versions of textpile's search side by side, in lockstep: CPU time per query, before and after.

    python bench/search_ab.py --before-src OLD/src [--after-src NEW/src] [--data-dir DIR]
                              [--mode keyword|hybrid|shards] [--passes 4] [--queries 600]

The corpus and queries are bench_search.py's (its cached 100K-page corpus under
``DIR/search-speed``, built by it; for ``shards`` its 3 shards, for ``hybrid`` its
embedded copy; ``--pages 1000000 --mode shards``: the 3 shards that
``bench_search.py --pages 1000000 --without-one-index`` built, with no corpus beside them). Two worker processes, one per version (``PYTHONPATH`` set to each
``src``: e.g. a ``git worktree`` of the older commit), open it as a server does; the
driver hands each query to both in turn, the order alternating, after one unmeasured
pass. So a machine whose speed drifts between minutes (a shared 2-core machine does by
tens of percent) slows both alike. Each query's figure is its best of ``--passes`` (CPU
ms of the worker process: for shards, every shard's thread). Prints p50/p90/p99/mean of
both, the median of the per-query ratios (after / before), the ratio of the totals, the
slowest queries of each, and the load average after each pass.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MODES = ("keyword", "hybrid", "shards")


def summary(times: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """``{version: {"p50", "p90", "p99", "mean"}}`` of each query's best time, and under
    ``"ratio"`` the ``"median"`` of the per-query ratios after/before and the ratio of the
    ``"total"`` times, from ``times`` (``{"before" | "after": {query: [ms, ...]}}``, the same
    queries in both). Percentiles are nearest-rank on the sorted best times."""
    best = {name: {q: min(v) for q, v in per_query.items()} for name, per_query in times.items()}

    def pct(values: list[float], p: float) -> float:
        values = sorted(values)
        return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

    out: dict[str, dict[str, float]] = {}
    for name, per_query in best.items():
        values = list(per_query.values())
        out[name] = {"p50": pct(values, 50), "p90": pct(values, 90), "p99": pct(values, 99),
                     "mean": statistics.mean(values)}
    ratios = [best["after"][q] / best["before"][q] for q in best["before"]]
    out["ratio"] = {"median": statistics.median(ratios),
                    "total": sum(best["after"].values()) / sum(best["before"].values())}
    return out


def _worker(mode: str, data_dir: Path, pages: int) -> int:
    """Answer queries from stdin (one JSON string a line) with the CPU ms of each search."""
    import bench_search as bench

    db = data_dir / "search-speed" / f"summary-{pages}.db"
    if mode == "shards":
        sources = [data_dir / "index" / name / "summary.db" for name in bench.CORPUS_SITES]
        system = bench.TextpileShards(bench.shard_corpora(db, sources, pages, 3))
    elif mode == "hybrid":
        system = bench.TextpileHybrid(bench.embedded_corpus(db))
    else:
        system = bench.Textpile(db)
    print("ready", flush=True)
    for line in sys.stdin:
        query = json.loads(line)
        c0 = time.process_time()
        system.search(query)
        print(f"{(time.process_time() - c0) * 1000:.4f}", flush=True)
    return 0


class _Version:
    """A worker process of one version of textpile."""

    def __init__(self, src: Path, mode: str, data_dir: Path, pages: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(src))
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", mode, "--data-dir", str(data_dir),
             "--pages", str(pages)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"search_ab: the worker of {src} did not start (exit {self.process.wait()})")

    def search(self, query: str) -> float:
        self.process.stdin.write(json.dumps(query) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit(f"search_ab: a worker stopped on {query!r} (exit {self.process.wait()})")
        return float(answer)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", type=Path, help="the src folder of the version before (a git worktree's)")
    parser.add_argument("--after-src", type=Path, default=HERE.parent / "src", help="default: this checkout's")
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--mode", choices=MODES, default="keyword")
    parser.add_argument("--passes", type=int, default=4, help="measured passes over the queries (each query's best)")
    parser.add_argument("--queries", type=int, default=600, help="judged queries sampled (besides the fixed ones)")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    if args.worker:
        return _worker(args.worker, data_dir, args.pages)
    if args.before_src is None:
        parser.error("--before-src is required")
    for name in ("before_src", "after_src"):
        if not (getattr(args, name) / "textpile" / "__init__.py").exists():
            parser.error(f"--{name.replace('_', '-')}: {getattr(args, name)} holds no textpile package")
    if args.passes < 1:
        parser.error(f"--passes: expected 1 or more, got {args.passes}")
    corpus = data_dir / "search-speed" / f"summary-{args.pages}.db"
    shards = [corpus.with_name(f"{corpus.stem}-shard{k}of3.db") for k in (1, 2, 3)]
    if not corpus.exists() and not (args.mode == "shards" and all(p.exists() for p in shards)):
        parser.error(f"no corpus of {args.pages} pages under {data_dir} (for shards: nor its 3 shards, as "
                     "bench_search.py --without-one-index builds them): run python bench/bench_search.py first")
    import bench_search as bench

    queries = [text for _, text in bench.speed_queries(data_dir, args.queries)]
    versions = {"before": _Version(args.before_src.resolve(), args.mode, data_dir, args.pages),
                "after": _Version(args.after_src.resolve(), args.mode, data_dir, args.pages)}
    try:
        for query in queries:  # one unmeasured pass: both read a warm page cache
            for version in versions.values():
                version.search(query)
        times: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        loads = [os.getloadavg()[0]]
        for k in range(args.passes):
            for i, query in enumerate(queries):
                for name in (("before", "after") if (i + k) % 2 == 0 else ("after", "before")):
                    times[name].setdefault(query, []).append(versions[name].search(query))
            loads.append(os.getloadavg()[0])
            print(f"   pass {k + 1} of {args.passes}: {len(queries)} queries x 2", file=sys.stderr)
    finally:
        for version in versions.values():
            version.close()
    figures = summary(times)
    print(f"\n{args.mode}, {len(queries)} queries, best of {args.passes} passes, CPU ms per query")
    print(f"{'version':8} {'p50':>8} {'p90':>8} {'p99':>8} {'mean':>8}")
    for name in ("before", "after"):
        f = figures[name]
        print(f"{name:8} {f['p50']:8.2f} {f['p90']:8.2f} {f['p99']:8.2f} {f['mean']:8.2f}")
    print(f"after/before: median per-query ratio {figures['ratio']['median']:.3f}, "
          f"total {figures['ratio']['total']:.3f}")
    best = {name: {q: min(v) for q, v in per_query.items()} for name, per_query in times.items()}
    print("slowest before -> after:")
    for query in sorted(queries, key=lambda q: -best["before"][q])[:8]:
        print(f"  {best['before'][query]:7.1f} -> {best['after'][query]:7.1f}  {query[:70]!r}")
    print("load average after each pass: " + " ".join(f"{x:.2f}" for x in loads) + " (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
