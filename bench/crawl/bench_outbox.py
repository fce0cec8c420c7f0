"""Benchmark: what the links between two shards leave behind as the links change.

    python bench/crawl/bench_outbox.py [--days 30] [--per-day 50] [--before-src OLD/src]

Two sites on 127.0.0.1, x on shard a and y on shard b (a shard table with overrides).
Each day x's start page links ``--per-day`` new pages of y and no longer links the day
before's, as a news site's front page does; a crawls (every page again) and hands the
links to b through its outbox, then b crawls what is due (textpile.shards.handoff). After
the last day it prints, for this checkout and for ``--before-src`` (another checkout's
``src/``, run in a process of its own with it on PYTHONPATH), the rows of a's outbox, b's
crawl candidates (the pages b keeps: what it crawls again and indexes), the pages b
pruned (crawl log exit code 182), and the CPU seconds of the run's main process, with the load
average. What should hold: the outbox and b's candidates follow the links of today, not
every link ever found.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Routes(BaseHTTPRequestHandler):
    """Answers GET from the server's ``routes`` ({path: (content type, body)}), else 404."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        found = self.server.routes.get(self.path)  # type: ignore[attr-defined]
        status, (kind, body) = (200, found) if found else (404, ("text/plain", "not found"))
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def _page(title: str, links: list[str]) -> tuple[str, str]:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return ("text/html; charset=utf-8", f'<!doctype html><html lang="en"><head><title>{title}</title></head><body>'
                                        f"<main><h1>{title}</h1><p>{title} holds a few words.</p><ul>{anchors}</ul>"
                                        "</main></body></html>")


def _serve() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Routes)
    server.routes = {"/robots.txt": ("text/plain", "User-agent: *\nAllow: /\n")}  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def simulate(days: int, per_day: int) -> dict:
    """Run the days (module docstring) with the textpile on sys.path; returns the figures."""
    from textpile.crawl.loop.run import run_crawl
    from textpile.crawl.policy.config import load_config
    from textpile.shards.config import load_shards
    from textpile.shards.handoff import handoff_of

    (x, xs), (y, ys) = _serve(), _serve()
    y.routes["/"] = _page("y start", [])  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table = folder / "shards.toml"
        table.write_text(f'shards = ["a", "b"]\n[overrides]\n"{xs}" = "a"\n"{ys}" = "b"\n', "utf-8")
        (folder / "crawl.toml").write_text(
            f'seeds = ["{xs}/", "{ys}/"]\nmax_commands_per_run = {10 * per_day + 100}\nrecrawl_interval = "1 day"\n'
            'user_agent = "textpile-bench/0.1"\nallow_private_addresses = true\ndefault_delay_ms = 0\n'
            "sitemaps = false\n", "utf-8")
        config = load_config(folder / "crawl.toml")
        shards = load_shards(table)
        started = time.process_time()
        for day in range(days):
            links = [f"{ys}/d{day}-{i}" for i in range(per_day)]
            for url in links:
                y.routes[url[len(ys):]] = _page(url, ["/"])  # type: ignore[attr-defined]
            x.routes["/"] = _page(f"x start, day {day}", links)  # type: ignore[attr-defined]
            for shard, again in (("a", True), ("b", False)):
                own = config.model_copy(update={"seeds": shards.seeds_by_shard(config.seeds)[shard]})
                shards.folder(shard).mkdir(exist_ok=True)
                report = run_crawl(own, shards.folder(shard) / "crawler.db", progress=False, page_readers=0,
                                   force_recrawl=again, handoff=handoff_of(shards, config.crawl_seeds, shard))
                if report.failure:
                    raise SystemExit(f"day {day}, shard {shard}: {report.failure}")
            print(f"   day {day + 1} of {days}", file=sys.stderr, flush=True)
        cpu = time.process_time() - started
        with sqlite3.connect(shards.folder("a") / "crawler.db") as a, \
                sqlite3.connect(shards.folder("b") / "crawler.db") as b:
            figures = {"outbox": a.execute("SELECT count(*) FROM textpile_handoff WHERE shard != ''").fetchone()[0],
                       "candidates": b.execute("SELECT count(*) FROM crawl_candidate").fetchone()[0],
                       "pruned": b.execute("SELECT count(*) FROM crawl_log WHERE exit_code = 182").fetchone()[0],
                       "cpu_s": round(cpu, 2)}
    x.shutdown()
    y.shutdown()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--per-day", type=int, default=50)
    parser.add_argument("--before-src", type=Path, help="the src/ of the version to compare with")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.days < 1 or args.per_day < 1:
        parser.error("--days and --per-day: whole numbers of 1 or more")
    if args.worker:
        print(json.dumps(simulate(args.days, args.per_day)))
        return 0
    versions = [("this checkout", HERE.parent.parent / "src")]
    if args.before_src is not None:
        if not (args.before_src / "textpile").is_dir():
            parser.error(f"--before-src {args.before_src}: no textpile package there")
        versions.insert(0, ("before", args.before_src.resolve()))
    rows = []
    for name, src in versions:
        print(f"== {name} ({src}): {args.days} days x {args.per_day} new links", file=sys.stderr, flush=True)
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run([sys.executable, __file__, "--worker", "--days", str(args.days), "--per-day",
                              str(args.per_day)], env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        rows.append((name, json.loads(out.strip().splitlines()[-1])))
    print(f"\n{args.days} days; each day x links {args.per_day} new pages of y and drops the day before's")
    print(f"{'version':<15} {'a outbox rows':>14} {'b candidates':>13} {'b pruned':>9} {'CPU s (main process)':>21}")
    for name, f in rows:
        print(f"{name:<15} {f['outbox']:>14} {f['candidates']:>13} {f['pruned']:>9} {f['cpu_s']:>21}")
    print(f"load average: {os.getloadavg()[0]:.2f} (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
