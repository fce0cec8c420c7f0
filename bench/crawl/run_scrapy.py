"""One Scrapy crawl for the crawl benchmark (a child process of bench_crawl.py).

    python bench/crawl/run_scrapy.py --ports 8001,8002 --delay-ms 1000 --max-commands 4000

Scrapy as a polite crawler is configured: ROBOTSTXT_OBEY, DOWNLOAD_DELAY = the delay,
RANDOMIZE_DOWNLOAD_DELAY off (its default would wait 0.5-1.5 times the delay),
CONCURRENT_REQUESTS_PER_DOMAIN = 1, one download slot per origin (a downloader
middleware and the spider set ``download_slot`` to host:port, also for robots.txt
requests: Scrapy's slots are per host name otherwise, and every origin here is 127.0.0.1),
CONCURRENT_REQUESTS = the number of origins, and the scheduler queue Scrapy's broad-crawl
guide recommends for many sites (DownloaderAwarePriorityQueue: without it one origin's
queued requests fill every concurrency slot). It follows every same-origin ``<a href>`` from
``/index.html`` of each port and stops after ``--max-commands`` responses
(CLOSESPIDER_PAGECOUNT). Prints the same JSON line as run_textpile.py.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from proctree import ProcessTree  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", required=True)
    parser.add_argument("--delay-ms", type=int, required=True)
    parser.add_argument("--max-commands", type=int, required=True)
    args = parser.parse_args()

    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.httpobj import urlparse_cached

    ports = [int(p) for p in args.ports.split(",")]

    class OriginSlots:
        """Downloader middleware: one download slot per origin (host:port)."""

        def process_request(self, request, spider=None):
            request.meta.setdefault("download_slot", urlparse_cached(request).netloc)

    class DocSpider(scrapy.Spider):
        name = "docs"
        async def start(self):
            for p in ports:
                yield scrapy.Request(f"http://127.0.0.1:{p}/index.html", meta={"download_slot": f"127.0.0.1:{p}"})

        def parse(self, response):
            if not hasattr(response, "css"):
                return
            origin = urlparse_cached(response).netloc
            for href in response.css("a::attr(href)").getall():
                url = response.urljoin(href)
                if url.startswith("http") and urlparse_cached(scrapy.Request(url)).netloc == origin:
                    yield scrapy.Request(url, callback=self.parse, meta={"download_slot": origin})

    stats = {}
    process = CrawlerProcess(settings={
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": args.delay_ms / 1000.0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS": max(16, len(ports)),
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "CLOSESPIDER_PAGECOUNT": args.max_commands,
        "DOWNLOADER_MIDDLEWARES": {OriginSlots: 1},
        "USER_AGENT": "scrapy-bench-crawler (for benchmarks)",
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    })
    crawler = process.create_crawler(DocSpider)
    started = time.monotonic()
    with ProcessTree(pss_every=10) as tree:
        process.crawl(crawler)
        process.start()
    wall = time.monotonic() - started
    cpu = tree.cpu_s()
    stats = crawler.stats.get_stats()
    requests = int(stats.get("downloader/request_count", 0))
    pages = int(stats.get("downloader/response_status_count/200", 0))
    print(json.dumps({"requests": requests, "pages": pages, "wall_s": wall, "cpu_s": cpu, "cpu_loop_s": tree.own_cpu_s(),
                      "peak_rss": tree.peak_rss, "peak_pss": tree.peak_pss, "exit_codes": {}}))


if __name__ == "__main__":
    main()
