"""The relevance benchmark over shards: its sites split over shards, searched as one index
(textpile.search.fanout), against one index of every site.

    python bench/relevance/shards.py --one-index all.db --shards a.db,b.db,c.db
                                     [--data-dir bench/data] [--sites ...] [--per-class 30]
                                     [--mode keyword] [--show-differences 5]

``--one-index`` is one summary database of all the sites, ``--shards`` the same sites
summarized into several summary databases (each site in one of them: ``textpile
summarize`` of each site's crawler database into its shard's, as into the one index).
Both are searched in the same run, the queries interleaved; every judged query of each
site (``--per-class`` per known-item class, everyday and natural whole) is searched over
all the sites. A result is relevant when it is on the site's host (Site.address) and its
path is judged relevant. Prints MRR@10 and success@1 of both, the difference, the share of
queries whose first 10 results are the same URLs in the same order, and the latency of
each (p50/p99, ms). Reads ``--data-dir``'s sites (as bench/relevance unpacked them) and
writes nothing there.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judgments import sample, site_queries  # noqa: E402
from metrics import dedupe_pages, page_path, percentile, reciprocal_rank, success_at  # noqa: E402
from sites import SITE_NAMES, SITES  # noqa: E402
from systems import searchable_documents  # noqa: E402

from textpile.search.fanout import ShardedSearch  # noqa: E402
from textpile.search.shards import LocalShard  # noqa: E402
from textpile.search.service import search_pages  # noqa: E402
from textpile.store.gen2_piles import register_functions  # noqa: E402


def on_site(urls: list[str], host: str) -> list[str]:
    """The page paths of ``urls`` (one per page, best first), a URL of another host
    standing as a path no judgment holds."""
    out = []
    for url in urls:
        parts = urlsplit(url)
        out.append(page_path(url) if parts.hostname == host else f"//{parts.hostname}{parts.path}")
    return dedupe_pages(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-index", type=Path, required=True, help="summary database of every site")
    parser.add_argument("--shards", required=True, help="comma-separated summary databases, the sites split over them")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data", help="where the sites are unpacked")
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--per-class", type=int, default=30, help="queries per site and known-item class")
    parser.add_argument("--mode", default="keyword", help="search mode (keyword, semantic, hybrid)")
    parser.add_argument("--time-limit-ms", type=float, default=10_000.0,
                        help="time budget of a search (large: the comparison is of rankings, not of a loaded machine)")
    parser.add_argument("--show-differences", type=int, default=0, help="print up to N queries whose top 10 differ")
    args = parser.parse_args()
    wanted = [s.strip() for s in args.sites.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in SITE_NAMES]
    if unknown:
        parser.error(f"--sites: unknown {', '.join(unknown)}")
    paths = [Path(p) for p in args.shards.split(",") if p.strip()]
    one = LocalShard.open(args.one_index)
    router = ShardedSearch([LocalShard.open(p) for p in paths])
    conn = register_functions(sqlite3.connect(f"file:{args.one_index}?mode=ro", uri=True))
    indexed: dict[str, set[str]] = {}
    for (url, *_rest) in searchable_documents(conn):
        indexed.setdefault(urlsplit(url).hostname or "", set()).add(page_path(url))
    conn.close()
    rows: dict[str, list[tuple[float, float]]] = {"one index": [], "shards": []}
    latency: dict[str, list[float]] = {"one index": [], "shards": []}
    same = total = 0
    differences = []
    load_before = __import__("os").getloadavg()
    for site in (s for s in SITES if s.name in wanted):
        root = site.root(args.data_dir)
        if not (root / site.seed).exists():
            parser.error(f"{site.name}: not unpacked under {args.data_dir} (run bench/relevance first)")
        queries, _ = sample(site_queries(site, root), indexed.get(site.address, set()), args.per_class)
        for i, q in enumerate(queries):
            got = {}
            order = ["one index", "shards"] if i % 2 == 0 else ["shards", "one index"]
            for name in order:
                t0 = time.perf_counter()
                if name == "one index":
                    with one._connect() as c:
                        results = search_pages(c, q.text, mode=args.mode, per_page=10, budget_ms=args.time_limit_ms)
                else:
                    results = router.search(q.text, mode=args.mode, per_page=10, budget_ms=args.time_limit_ms)
                latency[name].append((time.perf_counter() - t0) * 1000)
                urls = [r.url for r in results.results]
                got[name] = urls
                ranked = on_site(urls, site.address)
                rows[name].append((reciprocal_rank(ranked, q.relevant), success_at(ranked, q.relevant)))
            total += 1
            if got["one index"] == got["shards"]:
                same += 1
            elif len(differences) < args.show_differences:
                differences.append((site.name, q.text, got["one index"], got["shards"]))
        print(f"== {site.name}: {len(queries)} queries", flush=True)
    load_after = __import__("os").getloadavg()
    router.close()
    one.close()
    print(f"\n{len(paths)} shards against one index, {total} queries, mode {args.mode}")
    for name in rows:
        mrr = sum(r[0] for r in rows[name]) / max(1, len(rows[name]))
        s1 = sum(r[1] for r in rows[name]) / max(1, len(rows[name]))
        print(f"  {name:<10} MRR@10 {mrr:.4f}   success@1 {s1:.4f}   latency p50 {percentile(latency[name], 50):.1f} ms"
              f" / p99 {percentile(latency[name], 99):.1f} ms")
    diff = (sum(r[0] for r in rows["shards"]) - sum(r[0] for r in rows["one index"])) / max(1, total)
    print(f"  MRR@10 difference (shards - one index): {diff:+.4f}")
    print(f"  same top 10 (URLs and order): {same}/{total} = {same / max(1, total):.1%}")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    for site_name, text, a, b in differences:
        print(f"\n[{site_name}] {text!r}")
        for k in range(max(len(a), len(b))):
            x, y = (a[k] if k < len(a) else ""), (b[k] if k < len(b) else "")
            print(f"  {'=' if x == y else '!'} {x:<70} {y}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
