""""More like this" over shards against one index of the same pages.

    python bench/bench_like_shards.py --one-index all.db --shards a.db,b.db,c.db [--pages 300] [--seed 28]

Samples ``--pages`` pages with a vector from the one index (the same URLs are on the
shards) and, interleaved, asks each for the pages most like it: one index
(:func:`textpile.search.service.more_like_this`) and the shards as one
(:meth:`textpile.search.fanout.ShardedSearch.more_like_this`): the first 10 results,
timed, and all 100. Prints the share of pages whose first 10 are the same result URLs
(a section link included), whose 100 are the same pages (and result URLs) in the same
order, the largest difference of a page's similarity, and the CPU time of the first 10
(the process's: the shards' threads count) p50/p99 in ms, with the load average. Writes
nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import time

from textpile.search.fanout import ShardedSearch
from textpile.search.service import more_like_this
from textpile.search.shards import LocalShard


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-index", required=True)
    parser.add_argument("--shards", required=True, help="comma-separated summary databases")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=28)
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.one_index}?mode=ro", uri=True)
    urls = sorted(u for u, in conn.execute(
        "SELECT DISTINCT u.str_url FROM page_embedding pe JOIN entity_generation eg "
        "ON eg.entity_generation_id = pe.entity_generation_id JOIN url u ON u.url_id = eg.url_id "
        "WHERE eg.url_fragment IS NULL"))
    conn.close()
    sample = random.Random(args.seed).sample(urls, min(args.pages, len(urls)))
    single = LocalShard.open(args.one_index)
    same10 = same100 = pages100 = 0
    worst = 0.0
    cpu = {"one": [], "shards": []}
    load_before = os.getloadavg()

    def one_index(url: str, per_page: int):
        with single._connect() as c:
            return more_like_this(c, url, semantic=single._semantic().get(c, with_model=False), per_page=per_page,
                                  budget_ms=60_000)

    with ShardedSearch([LocalShard.open(p) for p in args.shards.split(",")]) as router:
        for n, url in enumerate(sample):
            runs = {}
            for name in (("one", "shards") if n % 2 == 0 else ("shards", "one")):  # a first page, timed
                started = time.process_time()
                runs[name] = (one_index(url, 10) if name == "one"
                              else router.more_like_this(url, per_page=10, budget_ms=60_000))
                cpu[name].append((time.process_time() - started) * 1000.0)
            same10 += [r.url for r in runs["one"].results] == [r.url for r in runs["shards"].results]
            one = one_index(url, 100).results  # all 100
            shards = router.more_like_this(url, per_page=100, budget_ms=60_000).results
            same100 += [r.url for r in one] == [r.url for r in shards]
            pages100 += [r.page_url for r in one] == [r.page_url for r in shards]
            worst = max([worst] + [abs(a.score - b.score) for a, b in zip(one, shards) if a.page_url == b.page_url])
    single.close()
    load_after = os.getloadavg()
    pages = len(sample)

    def share(k: int) -> str:
        return f"{k} ({100 * k / pages:.1f}%)"

    print("| pages | same first 10 (result URLs) | same 100 pages in order | same 100 result URLs "
          "| largest similarity difference | load |")
    print("|---|---|---|---|---|---|")
    print(f"| {pages} | {share(same10)} | {share(pages100)} | {share(same100)} | {worst:.2e} "
          f"| {load_before[0]:.1f} -> {load_after[0]:.1f} |")
    print()
    print("| more like this, first 10 results | CPU p50 ms | CPU p99 ms |")
    print("|---|---|---|")
    for name in ("one", "shards"):
        print(f"| {name} | {_percentile(cpu[name], 0.5):.1f} | {_percentile(cpu[name], 0.99):.1f} |")

if __name__ == "__main__":
    main()
