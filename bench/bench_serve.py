"""Serving throughput with one and with several server processes (``--request-workers``).

    python bench/bench_serve.py -s summary.db [--workers 1,2] [--clients 20] [--seconds 20]
                                [--rounds 2] [--queries 200] [--load-generator threads|wrk]

Starts ``textpile serve --request-workers N`` for each N of ``--workers``, in rounds
(1, 2, 1, 2, ...: the machine's other load is shared alike), and has ``--clients``
threads search its JSON API for ``--seconds`` each, with queries made of two words of
the titles of the index's pages (``--queries`` of them, seeded). Prints per N: queries/s,
errors (non-200 answers and transport errors), latency p50/p99, the ratio to the first
N's queries/s, and the memory of the server's processes after the load (RSS and PSS
summed over the supervisor and its workers, and the PSS a worker adds), with the load
average before and after.

The clients share the machine with the server. ``--load-generator threads`` (the
default) is ``--clients`` Python threads with httpx, each taking about 16 ms of CPU per
query: on 2 cores they take most of a core from the servers. ``--load-generator wrk``
is Debian's ``wrk`` (``apt-get install wrk``): ``--clients`` connections on one thread
in C, going through the same queries in turn (a Lua script), so that the servers get
the machine's cores; its non-200 answers and socket errors are the errors, its latency
percentiles those printed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_queries(db: Path, n: int, seed: int = 28) -> list[str]:
    """``n`` queries of two words of the titles of ``db``'s pages."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    titles = [t for t, in conn.execute("SELECT title FROM document_description WHERE title IS NOT NULL")]
    conn.close()
    rnd = random.Random(seed)
    out = []
    while len(out) < n and titles:
        words = [w for w in rnd.choice(titles).split() if w.isalpha() and len(w) > 2]
        if len(words) >= 2:
            out.append(" ".join(rnd.sample(words, 2)).lower())
    return out


def start(db: Path, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    exe = str(Path(sys.executable).parent / "textpile")
    proc = subprocess.Popen([exe, "serve", "-s", str(db), "-l", f"127.0.0.1:{port}",
                             "--request-workers", str(workers)], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            # every worker answers once the supervisor's health checks pass; ask a few times
            if all(httpx.get(base + "/search?format=json&search=warm", timeout=60).status_code == 200
                   for _ in range(4 * workers)):
                return proc, base
        except httpx.TransportError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"textpile serve --request-workers {workers} did not start")


def load(base: str, queries: list[str], clients: int, seconds: float) -> tuple[int, int, list[float]]:
    """(answers, errors, latencies in ms) of ``clients`` threads searching for ``seconds``."""
    done, errors, latency = [0], [0], []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(i: int) -> None:
        rnd = random.Random(i)
        with httpx.Client(timeout=60) as http:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    ok = http.get(base + "/search", params={"format": "json", "search": rnd.choice(queries)}
                                  ).status_code == 200
                except httpx.HTTPError:
                    ok = False
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    if ok:
                        done[0] += 1
                        latency.append(ms)
                    else:
                        errors[0] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0], errors[0], latency


#: wrk's script: the queries in turn, and at the end one line of what the summary counted.
_WRK_SCRIPT = """
local paths = {%s}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %%d %%d %%d %%d\\n", summary.requests - e.status, e.connect + e.read + e.write +
    e.timeout + e.status, latency:percentile(50), latency:percentile(99)))
end
"""


def load_wrk(base: str, queries: list[str], clients: int, seconds: float, folder: Path) -> tuple[int, int, list[float]]:
    """As :func:`load`, with Debian's wrk (one thread, ``clients`` connections); the
    latencies are wrk's p50 and p99 (ms), each once.

    Raises:
        RuntimeError: wrk is not installed, or printed no result.
    """
    from urllib.parse import quote

    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("--load-generator wrk: no wrk on PATH (apt-get install wrk)")
    script = folder / "queries.lua"
    paths = ", ".join('"/search?format=json&search=%s"' % quote(q) for q in queries)
    script.write_text(_WRK_SCRIPT % paths, "utf-8")
    out = subprocess.run([wrk, "-t1", f"-c{clients}", f"-d{seconds:g}s", "--timeout", "60s", "-s", str(script), base],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("RESULT "):
            ok, errors, p50_us, p99_us = (int(v) for v in line.split()[1:])
            return ok, errors, [p50_us / 1000, p99_us / 1000]
    raise RuntimeError(f"wrk printed no result: {out[-500:]}")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux: /proc/PID/task/TID/children)."""
    out = [pid]
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            children = Path(f"/proc/{pid}/task/{tid}/children").read_text().split()
        except OSError:
            continue
        for child in children:
            out += _tree(int(child))
    return out


def memory(proc: subprocess.Popen) -> tuple[int, int, int]:
    """(RSS, PSS, processes) of ``proc`` and its descendants, bytes (Linux smaps_rollup)."""
    rss = pss = n = 0
    for pid in _tree(proc.pid):
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in lines[1:] if line.endswith("kB")}
        rss, pss, n = rss + fields.get("Rss", 0), pss + fields.get("Pss", 0), n + 1
    return rss, pss, n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--summary-db", type=Path, required=True)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--load-generator", choices=("threads", "wrk"), default="threads",
                        help="the clients: Python threads, or Debian's wrk (module docstring)")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    queries = make_queries(args.summary_db, args.queries)
    results: dict[int, dict] = {n: {"done": 0, "errors": 0, "latency": [], "seconds": 0.0, "mem": []} for n in counts}
    load_before = os.getloadavg()
    for r in range(args.rounds):
        for n in counts:
            proc, base = start(args.summary_db, n)
            try:
                t0 = time.monotonic()
                if args.load_generator == "wrk":
                    with tempfile.TemporaryDirectory() as folder:
                        done, errors, latency = load_wrk(base, queries, args.clients, args.seconds, Path(folder))
                else:
                    done, errors, latency = load(base, queries, args.clients, args.seconds)
                took = time.monotonic() - t0
                results[n]["mem"].append(memory(proc))
            finally:
                proc.terminate()
                proc.wait(60)
            got = results[n]
            got["done"] += done
            got["errors"] += errors
            got["latency"] += latency
            got["seconds"] += took
            print(f"round {r + 1}, {n} worker(s): {done / took:.1f} queries/s, {errors} errors", flush=True)
    load_after = os.getloadavg()
    print(f"\n{args.clients} clients ({args.load_generator}), {len(queries)} queries, {args.rounds} x "
          f"{args.seconds:g} s per worker count, {args.summary_db}")
    base_qps = None
    base_pss = None
    for n in counts:
        got = results[n]
        qps = got["done"] / got["seconds"]
        base_qps = base_qps or qps
        lat = sorted(got["latency"])
        p50 = statistics.median(lat) if lat else float("nan")
        p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan")
        rss = max(m[0] for m in got["mem"]) / 2**20
        pss = max(m[1] for m in got["mem"]) / 2**20
        procs = got["mem"][-1][2]
        base_pss = base_pss if base_pss is not None else (pss, n)
        extra = (f", {(pss - base_pss[0]) / (n - base_pss[1]):.0f} MiB PSS per extra worker"
                 if n != base_pss[1] else "")
        print(f"  {n} worker(s): {qps:6.1f} queries/s ({qps / base_qps:.2f}x), {got['errors']} errors, "
              f"p50 {p50:.0f} ms, p99 {p99:.0f} ms; {procs} processes: RSS {rss:.0f} MiB, PSS {pss:.0f} MiB{extra}")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
