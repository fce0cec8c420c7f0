"""Scraping speed: pages/s of scrape_document and of trafilatura alone (default vs fast).

Usage: python bench/bench_scrape.py [N]   (N pages, default 60)

Pages come from Debian's sqlite3-doc HTML (/usr/share/doc/sqlite3-doc or /usr/share/doc/sqlite3),
else pydoc HTML of a few standard modules written to a temporary folder. Prints pages/s
for: parsing only, trafilatura default and fast on a parsed tree, scrape_document with
trafilatura fast (the chosen mode) and default, and the fast/default ratios.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import trafilatura

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from sites import real_docs_root  # noqa: E402

from textpile.summarize.scrape.document import parse_html, scrape_document  # noqa: E402
from textpile.summarize.scrape.main_content import DEFAULT_FAST  # noqa: E402


def rate(label: str, count: int, seconds: float) -> float:
    pages_per_s = count / seconds if seconds else float("inf")
    print(f"{label:<42} {pages_per_s:8.1f} pages/s  ({seconds:.2f} s)")
    return pages_per_s


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    with tempfile.TemporaryDirectory() as tmp:
        root = real_docs_root(Path(tmp))
        files = sorted(root.glob("*.html"))[:n]
        bodies = [(f"http://docs.test/{p.name}", p.read_bytes().decode("utf-8", "replace")) for p in files]
    size = sum(len(b) for _, b in bodies) / max(len(bodies), 1)
    print(f"{len(bodies)} pages from {root}, {size / 1024:.1f} KiB average")

    start = time.perf_counter()
    trees = [parse_html(body) for _, body in bodies]
    rate("lxml parse only", len(bodies), time.perf_counter() - start)

    results = {}
    for fast in (False, True):
        start = time.perf_counter()
        for (url, _), tree in zip(bodies, trees):
            if tree is not None:
                trafilatura.bare_extraction(tree, url=url, fast=fast, include_comments=False)
        results[("traf", fast)] = rate(f"trafilatura {'fast' if fast else 'default'} (tree given)",
                                       len(bodies), time.perf_counter() - start)
    for fast in (DEFAULT_FAST, not DEFAULT_FAST):
        start = time.perf_counter()
        for url, body in bodies:
            scrape_document(body, url, fast_main_content=fast)
        chosen = " (chosen)" if fast == DEFAULT_FAST else ""
        results[("scrape", fast)] = rate(f"scrape_document, trafilatura {'fast' if fast else 'default'}{chosen}",
                                         len(bodies), time.perf_counter() - start)
    print(f"trafilatura fast/default ratio:      {results[('traf', True)] / results[('traf', False)]:.2f}")
    print(f"scrape_document fast/default ratio:  {results[('scrape', True)] / results[('scrape', False)]:.2f}")

    same = 0
    for url, body in bodies:
        a = scrape_document(body, url, fast_main_content=True).text_pile
        b = scrape_document(body, url, fast_main_content=False).text_pile
        same += a.text == b.text
    print(f"pages whose main text is identical in both modes: {same}/{len(bodies)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
