"""One textpile crawl for the crawl benchmark (a child process of bench_crawl.py).

    python bench/crawl/run_textpile.py --ports 8001,8002 --delay-ms 1000 --max-commands 4000 \
        --database crawl.db [--textpile-src OLD/src]

Crawls ``http://127.0.0.1:<port>/index.html`` for every port with ``crawl_async`` (the
crawl loop without the end's optimize and vacuum) and prints one JSON line: requests,
wall seconds, CPU seconds of the process tree (this process, the event loop's, and its
workers: page readers, the crawler database process; the sampler's own CPU left out)
and of this process alone, the children's CPU seconds per process name (textpile names
its workers by role: ``textpile-reader``, ``textpile-writer``; the forkserver keeps
python's name), and the peak resident memory of the process tree (RSS
summed, sampled every 0.1 s; PSS, shared pages counted once, every 1 s). ``--textpile-src``
puts another checkout's ``src`` first on ``sys.path`` (to measure an older version).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from proctree import ProcessTree  # noqa: E402


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
        # The workers (page readers, the crawler database process) come from a forkserver,
        # a new interpreter that imports the installed textpile before it takes this
        # sys.path: PYTHONPATH puts the other checkout first there too.
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(args.textpile_src),
                                                                 os.environ.get("PYTHONPATH"))))
    import asyncio

    try:
        from textpile.crawl.crawldb.writer import CrawlerDb
        from textpile.crawl.loop import run as crawl_run
        from textpile.crawl.policy.config import CrawlConfig
    except ImportError:  # an older checkout (--before-src): the crawl package without sub-packages
        from textpile.crawl import run as crawl_run
        from textpile.crawl.config import CrawlConfig
        from textpile.crawl.crawldb import CrawlerDb
    CrawlReport, crawl_async = crawl_run.CrawlReport, crawl_run.crawl_async
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
    started = time.monotonic()
    with ProcessTree(pss_every=10) as tree:
        coroutine = crawl_async(config, db, report)
        if hasattr(crawl_run, "run_event_loop"):  # as run_crawl runs it (older checkouts: asyncio's loop)
            crawl_run.run_event_loop(coroutine)
        else:
            asyncio.run(coroutine)
    wall = time.monotonic() - started
    cpu = tree.cpu_s()
    db.finish_agent()
    conn.close()
    print(json.dumps({"requests": report.total_requests, "pages": report.ingested_files, "wall_s": wall,
                      "cpu_s": cpu, "cpu_loop_s": tree.own_cpu_s(),
                      "cpu_by_role": tree.children_cpu_by_name(), "peak_rss": tree.peak_rss, "peak_pss": tree.peak_pss, "exit_codes": report.exit_code_counts}))


if __name__ == "__main__":
    main()
