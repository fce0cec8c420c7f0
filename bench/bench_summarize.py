"""Benchmark: pages/s of ``summarize`` over a crawled documentation site.

Serves the real documentation HTML (Debian's sqlite3-doc, else pydoc HTML) on
127.0.0.1, crawls it with ``run_crawl`` (or reuses ``--crawler-db``), then times
``summarize`` into a fresh summary database and prints the figures, including the
share of time spent scraping versus staging and integrating.

    python bench/bench_summarize.py [--max-commands 300] [--crawler-db FILE] [--batch-size 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from sites import DirectoryServer, real_docs_root  # noqa: E402

from textpile.crawl.config import CrawlConfig  # noqa: E402
from textpile.crawl.run import run_crawl  # noqa: E402
from textpile.summarize.pipeline import summarize  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-commands", type=int, default=300)
    parser.add_argument("--crawler-db", type=Path, help="reuse this crawler database instead of crawling")
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-summarize-") as tmp:
        tmp = Path(tmp)
        crawler_db = args.crawler_db
        if crawler_db is None:
            crawler_db = tmp / "crawler.db"
            root = real_docs_root(tmp)
            with DirectoryServer(root) as server:
                started = time.monotonic()
                config = CrawlConfig(default_delay_ms=0, max_commands_per_run=args.max_commands,
                                     recrawl_interval_s=86400, seeds=[server.base_url + "/index.html"],
                                     allow_private_addresses=True)
                crawl = run_crawl(config, crawler_db, progress=False)
                print(f"crawled {root}: {crawl.ingested_files} files ingested, {crawl.total_requests} requests "
                      f"in {time.monotonic() - started:.1f} s")
        report = summarize(crawler_db, tmp / "summary.db", batch_size=args.batch_size, progress=False)
        scrape_s = report.scrape.seconds
        print(f"summarize: {report.pages_processed} crawl log entries, {report.scrape.files_scraped} files scraped, "
              f"{report.fts_rows} FTS rows in {report.seconds:.2f} s")
        print(f"  pages/s (crawl log entries): {report.pages_processed / report.seconds:.1f}")
        print(f"  files scraped/s:             {report.scrape.files_scraped / report.seconds:.1f}")
        print(f"  scraping: {scrape_s:.2f} s ({100 * scrape_s / report.seconds:.0f}% of the run); "
              f"staging + integration + FTS + vacuum: {report.seconds - scrape_s:.2f} s")


if __name__ == "__main__":
    main()
