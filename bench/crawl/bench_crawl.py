"""Crawl benchmark: textpile beside Scrapy against N loopback origins serving real docs.

    python bench/crawl/bench_crawl.py [--scenario 200x1000] [--scenario 1000x5000] [--repeat 2]
                                      [--before-src OLD/src] [--no-scrapy]

Each scenario ``NxDELAY_MS`` starts bench/crawl/docserver.py (N ports on 127.0.0.1 serving
Debian's python3.11-doc HTML, every request logged with its CLOCK_MONOTONIC arrival) and
runs each crawler in its own process against it, interleaved and repeated: textpile (this
checkout), optionally an older textpile (``--before-src``), and Scrapy configured as a
polite crawler (bench/crawl/run_scrapy.py). From the server's log it prints per run:

- rate/bound: requests per second in the steady window (the run without its first and
  last two delays) over the politeness bound N / delay;
- min gap/delay: the shortest time between two requests to one origin (arrival to
  arrival) over the delay, and the same measured from the end of the previous answer to
  the next arrival (textpile's rule: it must never be below 1);
- longest silence/delay: the longest time any origin got no request while it was being
  crawled, over the delay (after each run: which origin, when, between which paths);
- CPU per request (ms, the crawler process and its children; the benchmark's own
  sampler left out) and the part of it spent in the crawler's main process (for
  textpile: the event loop, which one core must carry at the politeness bound), for
  textpile the parts spent in its page readers and its crawler database process, the
  cores the crawler kept busy (its CPU seconds over the wall seconds: when that is all
  the doc server leaves of the machine's cores, the crawl is CPU-bound and every origin
  waits on the readers and the read backlog, so rate and silence measure the CPU, not
  the scheduling), peak
  RSS (MiB, summed over the process tree) and peak PSS (shared pages counted once), and
  the load average (1 min) before and after the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from docs import doc_tree  # noqa: E402


@dataclass
class RunFigures:
    """What one crawler run achieved (see the module docstring)."""

    crawler: str
    origins: int
    delay_s: float
    requests: int
    rate_over_bound: float
    min_gap: float
    min_gap_after_answer: float
    longest_silence: float
    cpu_ms_per_request: float
    loop_ms_per_request: float
    readers_ms_per_request: float
    db_ms_per_request: float
    peak_rss_mib: float
    peak_pss_mib: float
    wall_s: float
    load_before: float
    load_after: float
    silence_where: str = ""


def log_figures(rows: list[list], origins: int, delay_s: float) -> dict[str, float]:
    """rate/bound, min gaps and longest silence (all over the delay) from server log rows
    ``[origin, arrival, answered, status, path]``."""
    by_origin: dict[int, list[tuple[float, float, str]]] = {}
    for origin, arrival, answered, _status, path in rows:
        by_origin.setdefault(origin, []).append((arrival, answered, path))
    min_gap = min_after = float("inf")
    longest = 0.0
    silence_where = ""
    first_arrival = min(r[1] for r in rows)
    for origin, times in by_origin.items():
        times.sort()
        for (a0, e0, p0), (a1, _e1, p1) in zip(times, times[1:]):
            min_gap = min(min_gap, a1 - a0)
            min_after = min(min_after, a1 - e0)
            if a1 - a0 > longest:
                longest = a1 - a0
                silence_where = (f"origin {origin}: {a1 - a0:.2f} s from {a0 - first_arrival:.1f} s "
                                 f"(after {p0}, before {p1})")
    arrivals = sorted(r[1] for r in rows)
    start, end = arrivals[0] + 2 * delay_s, arrivals[-1] - 2 * delay_s
    if end - start < 2 * delay_s:
        start, end = arrivals[0], arrivals[-1]
    in_window = sum(1 for t in arrivals if start <= t <= end)
    rate = in_window / (end - start) if end > start else float("nan")
    return {"rate_over_bound": rate / (origins / delay_s), "min_gap": min_gap / delay_s,
            "min_gap_after_answer": min_after / delay_s, "longest_silence": longest / delay_s,
            "silence_where": silence_where}


def run_once(crawler: str, command: list[str], root: Path, origins: int, delay_ms: int,
             work: Path) -> RunFigures:
    """Start a fresh doc server, run ``command`` (+ ``--ports``) against it, return figures."""
    log_path = work / f"log-{crawler}.json"
    server = subprocess.Popen([sys.executable, str(HERE / "docserver.py"), "--root", str(root),
                               "--origins", str(origins), "--log", str(log_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ports = json.loads(server.stdout.readline())["ports"]
        load_before = os.getloadavg()[0]
        done = subprocess.run([*command, "--ports", ",".join(map(str, ports))], capture_output=True, text=True)
        load_after = os.getloadavg()[0]
        if done.returncode != 0:
            raise SystemExit(f"{crawler} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    rows = json.loads(log_path.read_text())
    figures = log_figures(rows, origins, delay_ms / 1000.0)
    return RunFigures(crawler, origins, delay_ms / 1000.0, len(rows), figures["rate_over_bound"],
                      figures["min_gap"], figures["min_gap_after_answer"], figures["longest_silence"],
                      1000 * result["cpu_s"] / max(len(rows), 1),
                      1000 * result.get("cpu_loop_s", float("nan")) / max(len(rows), 1),
                      _role_ms(result, "textpile-reader", len(rows)), _role_ms(result, "textpile-writer", len(rows)),
                      result["peak_rss"] / 2**20, result.get("peak_pss", float("nan")) / 2**20,
                      result["wall_s"], load_before, load_after, figures["silence_where"])


def _role_ms(result: dict, name: str, requests: int) -> float:
    """CPU ms per request of the crawler's child processes named ``name`` (NaN when the
    crawler reports no such role: Scrapy, an older textpile)."""
    by_role = result.get("cpu_by_role") or {}
    return 1000 * by_role[name] / max(requests, 1) if name in by_role else float("nan")


def print_table(runs: list[RunFigures]) -> None:
    header = (f"{'crawler':<16} {'N':>5} {'delay':>6} {'requests':>8} {'rate/bound':>10} {'min gap':>8} "
              f"{'gap/answer':>10} {'silence':>8} {'CPU ms/req':>10} {'main ms/req':>11} {'readers':>7} {'db':>5} {'cores':>5} "
              f"{'RSS MiB':>8} {'PSS MiB':>8} "
              f"{'wall s':>7} {'load':>10}")
    print(header)
    print("-" * len(header))
    for r in runs:
        print(f"{r.crawler:<16} {r.origins:>5} {r.delay_s:>5g}s {r.requests:>8} {r.rate_over_bound:>10.3f} "
              f"{r.min_gap:>8.3f} {r.min_gap_after_answer:>10.3f} {r.longest_silence:>8.2f} "
              f"{r.cpu_ms_per_request:>10.2f} {r.loop_ms_per_request:>11.2f} {r.readers_ms_per_request:>7.2f} "
              f"{r.db_ms_per_request:>5.2f} {r.cpu_ms_per_request * r.requests / 1000 / r.wall_s:>5.2f} "
              f"{r.peak_rss_mib:>8.0f} "
              f"{r.peak_pss_mib:>8.0f} {r.wall_s:>7.1f} "
              f"{r.load_before:>4.1f}-{r.load_after:<4.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append",
                        help="NxDELAY_MS (repeatable; default 200x1000 and 1000x5000)")
    parser.add_argument("--rounds", type=float, default=0,
                        help="requests per origin (default: 25 at 1 s, 8 at 5 s and more)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before-src", type=Path, help="an older checkout's src/, run beside this one")
    parser.add_argument("--no-scrapy", action="store_true")
    args = parser.parse_args()
    root = doc_tree("python3.11-doc")
    scenarios = [tuple(int(x) for x in s.split("x")) for s in (args.scenario or ["200x1000", "1000x5000"])]
    runs: list[RunFigures] = []
    for origins, delay_ms in scenarios:
        rounds = args.rounds or (25 if delay_ms <= 1000 else 8)
        max_commands = int(origins * rounds)
        for repeat in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bench-crawl-") as tmp:
                work = Path(tmp)
                crawlers = [("textpile", None)]
                if args.before_src is not None:
                    crawlers.append(("textpile-before", args.before_src))
                if not args.no_scrapy:
                    crawlers.append(("scrapy", None))
                for name, src in crawlers:
                    if name == "scrapy":
                        command = [sys.executable, str(HERE / "run_scrapy.py"), "--delay-ms", str(delay_ms),
                                   "--max-commands", str(max_commands)]
                    else:
                        command = [sys.executable, str(HERE / "run_textpile.py"), "--delay-ms", str(delay_ms),
                                   "--max-commands", str(max_commands), "--database", str(work / f"{name}.db")]
                        if src is not None:
                            command += ["--textpile-src", str(src)]
                    figures = run_once(name, command, root, origins, delay_ms, work)
                    runs.append(figures)
                    print_table([figures])
                    print(f"  longest silence: {figures.silence_where}")
                    sys.stdout.flush()
    print()
    print(f"crawl benchmark: {len(runs)} runs, python3.11-doc pages, 2 cores shared")
    print_table(runs)


if __name__ == "__main__":
    main()
