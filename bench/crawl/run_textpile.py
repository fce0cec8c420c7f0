"""One textpile crawl for the crawl benchmark (a child process of bench_crawl.py).

    python bench/crawl/run_textpile.py --ports 8001,8002 --delay-ms 1000 --max-commands 4000 \
        --database crawl.db [--textpile-src OLD/src]

Crawls ``http://127.0.0.1:<port>/index.html`` for every port with ``crawl_async`` (the
crawl loop without the end's optimize and vacuum) and prints one JSON line: requests,
wall seconds, CPU seconds of this process and its children (page readers), and the
peak resident memory of the process tree (sampled every 0.1 s). ``--textpile-src``
puts another checkout's ``src`` first on ``sys.path`` (to measure an older version).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time
from pathlib import Path


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class PeakRss:
    """Samples the resident memory of this process and its children (psutil) every
    ``interval_s``; the list of children (a scan of /proc, costly) is refreshed every
    ``children_every`` samples."""

    def __init__(self, interval_s: float = 0.2, children_every: int = 10) -> None:
        import psutil

        self.process = psutil.Process()
        self.peak = 0
        self.interval_s = interval_s
        self.children_every = children_every
        self.children: list = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self) -> None:
        import psutil

        total = self.process.memory_info().rss
        for child in self.children:
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        self.peak = max(self.peak, total)

    def run(self) -> None:
        count = 0
        while not self.done.wait(self.interval_s):
            if count % self.children_every == 0:
                self.children = self.process.children(recursive=True)
            count += 1
            self.sample()

    def __enter__(self) -> "PeakRss":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", required=True)
    parser.add_argument("--delay-ms", type=int, required=True)
    parser.add_argument("--max-commands", type=int, required=True)
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--textpile-src", type=Path)
    args = parser.parse_args()
    if args.textpile_src is not None:
        sys.path.insert(0, str(args.textpile_src))
    import asyncio

    from textpile.crawl.config import CrawlConfig
    from textpile.crawl.crawldb import CrawlerDb
    from textpile.crawl.run import CrawlReport, crawl_async
    from textpile.ids import uuid7
    from textpile.store.database import open_crawler_db

    ports = [int(p) for p in args.ports.split(",")]
    config = CrawlConfig(default_delay_ms=args.delay_ms, max_commands_per_run=args.max_commands,
                         recrawl_interval_s=86400, seeds=[f"http://127.0.0.1:{p}/index.html" for p in ports],
                         allow_private_addresses=True, user_agent="textpile-bench-crawler (for benchmarks)")
    conn = open_crawler_db(args.database)
    db = CrawlerDb(conn)
    db.start_agent(uuid7(), "bench", config.user_agent)
    report = CrawlReport(agent_uuid=uuid7())
    started_cpu = cpu_seconds()
    started = time.monotonic()
    with PeakRss() as rss:
        asyncio.run(crawl_async(config, db, report))
    wall = time.monotonic() - started
    cpu = cpu_seconds() - started_cpu
    db.finish_agent()
    conn.close()
    print(json.dumps({"requests": report.total_requests, "pages": report.ingested_files, "wall_s": wall,
                      "cpu_s": cpu, "peak_rss": rss.peak, "exit_codes": report.exit_code_counts}))


if __name__ == "__main__":
    main()
