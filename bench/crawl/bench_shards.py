"""Crawl benchmark of shards: 2 shard processes beside 1 process, against the same origins.

    python bench/crawl/bench_shards.py [--scenario 400x1000] [--rounds 15] [--repeat 2] [--shards 2]

For each scenario ``NxDELAY_MS`` (N loopback origins serving Debian's python3.11-doc, at
one request per DELAY_MS each: a politeness bound of N / delay requests per second) it
runs, interleaved and repeated, each against a fresh bench/crawl/docserver.py:

- ``1 process``: one textpile crawl (bench/crawl/run_textpile.py) of every origin;
- ``K shards``: K crawls at once, each of the origins a K-shard table assigns it
  (:mod:`textpile.shards.config`, rendezvous hash of the origin), each into its own
  crawler database, as K shard processes of a sharded deployment crawl.

From the server's log it prints per run: requests per second in the steady window (the
run without its first and last two delays), that over the bound, the ratio of the shard
run to the 1-process run of the same round, the shortest gap between two requests to one
origin over the delay (arrival to arrival, and end of the answer to the next arrival),
how many times a request to an origin arrived before the previous one to it was
answered (never two requests to one origin at once: must be 0), CPU ms per request of
the crawlers, and the load average (1 min) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from docs import doc_tree  # noqa: E402

from textpile.shards.config import Shards  # noqa: E402


def steady_rate(rows: list[list], delay_s: float) -> float:
    """Requests per second between the first arrival plus two delays and the last arrival
    minus two delays (the crawl's start and end left out)."""
    arrivals = sorted(row[1] for row in rows)
    start, end = arrivals[0] + 2 * delay_s, arrivals[-1] - 2 * delay_s
    inside = sum(1 for t in arrivals if start <= t <= end)
    return inside / (end - start) if end > start else float("nan")


def politeness(rows: list[list], delay_s: float) -> tuple[float, float, int]:
    """(min gap arrival to arrival / delay, min gap answer to next arrival / delay,
    requests that arrived before the previous one to their origin was answered)."""
    by_origin: dict[int, list[tuple[float, float]]] = {}
    for origin, arrival, answered, _status, _path in rows:
        by_origin.setdefault(origin, []).append((arrival, answered))
    min_gap = min_after = float("inf")
    overlaps = 0
    for times in by_origin.values():
        times.sort()
        for (a0, d0), (a1, _) in zip(times, times[1:]):
            min_gap = min(min_gap, (a1 - a0) / delay_s)
            min_after = min(min_after, (a1 - d0) / delay_s)
            overlaps += a1 < d0
    return min_gap, min_after, overlaps


def run(label: str, groups: list[list[int]], root: Path, origins: int, delay_ms: int, rounds: float,
        work: Path) -> dict:
    """Crawl with one process per group of origin indexes, all at once, against a fresh
    doc server; return the figures of the run."""
    log_path = work / f"log-{label.replace(' ', '-')}.json"
    server = subprocess.Popen([sys.executable, str(HERE / "docserver.py"), "--root", str(root), "--origins",
                               str(origins), "--log", str(log_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        ports = json.loads(server.stdout.readline())["ports"]
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        crawls = [subprocess.Popen(
            [sys.executable, str(HERE / "run_textpile.py"), "--delay-ms", str(delay_ms),
             "--max-commands", str(int(len(group) * rounds)), "--database", str(work / f"{label}-{i}.db"),
             "--ports", ",".join(str(ports[o]) for o in group)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True) for i, group in enumerate(groups)]
        results = []
        for crawl in crawls:
            out, err = crawl.communicate()
            if crawl.returncode != 0:
                raise SystemExit(f"{label} failed ({crawl.returncode}):\n{err[-3000:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
        wall = time.monotonic() - started
        load_after = os.getloadavg()[0]
    finally:
        server.stdin.close()
        server.wait(timeout=120)
    rows = json.loads(log_path.read_text())
    delay_s = delay_ms / 1000
    rate = steady_rate(rows, delay_s)
    min_gap, min_after, overlaps = politeness(rows, delay_s)
    cpu_s = sum(r["cpu_s"] for r in results)
    return {"label": label, "origins": origins, "delay_s": delay_s, "requests": len(rows), "rate": rate,
            "over_bound": rate * delay_s / origins, "min_gap": min_gap, "min_after": min_after, "overlaps": overlaps,
            "cpu_ms": 1000 * cpu_s / max(len(rows), 1), "cores": cpu_s / wall, "wall_s": wall,
            "load": f"{load_before:.1f}-{load_after:.1f}"}


def line(r: dict, ratio: str = "") -> str:
    return (f"{r['label']:<10} {r['origins']:>5} {r['delay_s']:>5g}s {r['requests']:>8} {r['rate']:>8.1f} "
            f"{r['over_bound']:>10.3f} {ratio:>6} {r['min_gap']:>8.3f} {r['min_after']:>10.3f} {r['overlaps']:>8} "
            f"{r['cpu_ms']:>7.2f} {r['cores']:>5.2f} {r['wall_s']:>7.1f} {r['load']:>10}")


HEADER = (f"{'run':<10} {'N':>5} {'delay':>6} {'requests':>8} {'req/s':>8} {'rate/bound':>10} {'ratio':>6} "
          f"{'min gap':>8} {'gap/answer':>10} {'overlaps':>8} {'CPU ms':>7} {'cores':>5} {'wall s':>7} {'load':>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="NxDELAY_MS (repeatable; default 400x1000)")
    parser.add_argument("--rounds", type=float, default=15, help="requests per origin (default 15)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--shards", type=int, default=2, help="shard processes (default 2)")
    args = parser.parse_args()
    root = doc_tree("python3.11-doc")
    lines = [HEADER, "-" * len(HEADER)]
    print(HEADER, flush=True)
    for origins, delay_ms in [tuple(int(x) for x in s.split("x")) for s in (args.scenario or ["400x1000"])]:
        table = Shards(hashed=tuple(f"s{i}" for i in range(args.shards)), root=Path("."))
        # the docserver's origins are its ports, unknown before it starts: shard by origin index
        # through a stand-in origin per index (the hash only needs a stable name per site)
        groups: dict[str, list[int]] = {}
        for index in range(origins):
            groups.setdefault(table.shard_of(f"http://origin{index}.bench:80/"), []).append(index)
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
                one = run("1 process", [list(range(origins))], Path(root), origins, delay_ms, args.rounds, Path(tmp))
                print(line(one), flush=True)
                many = run(f"{args.shards} shards", list(groups.values()), Path(root), origins, delay_ms,
                           args.rounds, Path(tmp))
                ratio = f"{many['rate'] / one['rate']:.2f}x"
                print(line(many, ratio), flush=True)
                lines += [line(one), line(many, ratio)]
    print()
    print(f"shards crawl benchmark ({os.cpu_count()} cores, shared; shard sizes "
          f"{', '.join(str(len(g)) for g in groups.values())} origins)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
