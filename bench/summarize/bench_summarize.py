"""Summarize benchmark: textpile beside trafilatura (default, fast) and resiliparse.

    python bench/summarize/bench_summarize.py [--repeat 2] [--before-src OLD/src] [--no-pipeline | --pipeline-only]

On real documentation pages (Debian's python3.11-doc, 530 HTML pages) and on the 23
labelled news pages newspaper4k ships (bench/docs.py), in child processes, interleaved
and repeated, with the load average beside every figure:

1. main-text F1 on the labelled pages (bench/summarize/extractors.py defines it);
2. pages per CPU-second of each extractor in one process (textpile: the whole
   ``scrape_document``: text piles, description, links);
3. wall pages/s and pages per CPU-second of each extractor over 2 worker processes;
4. textpile's whole ``summarize`` of a crawl of the same pages (crawled once from a
   loopback server into bench/data/python-docs-crawler.db), scraping on every core and
   in one process (``textpile-1-process``): files per CPU-second (all processes), wall
   files/s, the scrape stage's wall seconds, peak RSS and PSS of the process tree, and
   the summary database's size against the raw bytes of the pages, table by table (with
   the FTS index's share).

``--before-src`` runs an older checkout's textpile beside this one (rows "-before").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH))

from docs import DATA, doc_tree, html_files, labelled_pages  # noqa: E402

PEERS = ("trafilatura", "trafilatura-fast", "resiliparse")
CRAWLER_DB = DATA / "python-docs-crawler.db"


def load() -> float:
    return os.getloadavg()[0]


def child(args: list[str]) -> dict:
    """Run a benchmark child process; its last stdout line is JSON."""
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def crawl_docs(root: Path) -> Path:
    """The crawler database of python3.11-doc served on 127.0.0.1 (made once)."""
    if CRAWLER_DB.exists():
        return CRAWLER_DB
    print(f"crawling {root} into {CRAWLER_DB} (once) ...", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen([sys.executable, str(BENCH / "crawl" / "docserver.py"), "--root", str(root),
                                   "--origins", "1", "--log", str(Path(tmp) / "log.json")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            port = json.loads(server.stdout.readline())["ports"][0]
            partial = CRAWLER_DB.with_suffix(".partial.db")
            partial.unlink(missing_ok=True)
            child([str(BENCH / "crawl" / "run_textpile.py"), "--ports", str(port), "--delay-ms", "0",
                   "--max-commands", "2000", "--database", str(partial)])
            partial.rename(CRAWLER_DB)
        finally:
            server.stdin.close()
            server.wait(timeout=60)
    return CRAWLER_DB


def variants(before: Path | None) -> list[tuple[str, str, list[str]]]:
    """(row name, extractor, extra arguments) of every extractor measured."""
    rows = [("textpile", "textpile", [])]
    if before is not None:
        rows.append(("textpile-before", "textpile", ["--textpile-src", str(before)]))
    return rows + [(peer, peer, []) for peer in PEERS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before-src", type=Path)
    parser.add_argument("--no-pipeline", action="store_true")
    parser.add_argument("--pipeline-only", action="store_true", help="only part 4, the whole summarize")
    parser.add_argument("--pages", type=int, default=0, help="use only this many doc pages (0: all)")
    args = parser.parse_args()
    root = doc_tree("python3.11-doc")
    labelled_pages()  # download once, outside the measurements
    pages = html_files(root)
    if args.pages:
        pages = pages[:: max(1, len(pages) // args.pages)][: args.pages]
    rows = variants(args.before_src)
    run = [str(HERE / "run_extract.py")]
    with tempfile.TemporaryDirectory(prefix="bench-summarize-") as tmp:
        tmp = Path(tmp)
        listing = tmp / "pages.txt"
        listing.write_text("\n".join(str(p) for p in pages))
        print(f"{len(pages)} python3.11-doc pages, {sum(p.stat().st_size for p in pages) / len(pages) / 1024:.0f} KiB"
              " on average; 23 labelled news pages\n")

        if not args.pipeline_only:
            extractors(args, rows, run, listing)
        if args.no_pipeline:
            return
        pipeline(args, rows, root, tmp)


def extractors(args, rows, run, listing) -> None:
    """Parts 1 to 3: F1, pages per CPU-second in one process, and over 2 processes."""
    print(f"{'extractor':<18} {'F1':>6}   load")
    for name, extractor, extra in rows:
        before = load()
        result = child(run + ["--extractor", extractor, "--mode", "f1", *extra])
        print(f"{name:<18} {result['f1']:>6.3f}   {before:.1f}-{load():.1f}", flush=True)

    speed: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    print(f"\n{'extractor':<18} {'pages/CPU-s':>11} {'MB/CPU-s':>9}   load   (one process, round by round)")
    for repeat in range(args.repeat):
        order = rows if repeat % 2 == 0 else rows[::-1]
        for name, extractor, extra in order:
            before = load()
            result = child(run + ["--extractor", extractor, "--mode", "speed", "--pages", str(listing), *extra])
            rate = result["pages"] / result["cpu_s"]
            speed[name].append(rate)
            print(f"{name:<18} {rate:>11.1f} {result['bytes'] / result['cpu_s'] / 1e6:>9.2f}   "
                  f"{before:.1f}-{load():.1f}", flush=True)
    base = max(speed["textpile"])
    print("best of the rounds, and textpile's speed over each:")
    for name, rates in speed.items():
        print(f"  {name:<18} {max(rates):>8.1f} pages/CPU-s   textpile x{base / max(rates):.2f}")

    print(f"\n{'extractor':<18} {'wall pages/s':>12} {'pages/CPU-s':>11}   load   (2 worker processes)")
    for name, extractor, extra in rows:
        before = load()
        result = child(run + ["--extractor", extractor, "--mode", "pool", "--pages", str(listing), *extra])
        print(f"{name:<18} {result['pages'] / result['wall_s']:>12.1f} {result['pages'] / result['cpu_s']:>11.1f}"
              f"   {before:.1f}-{load():.1f}", flush=True)


def pipeline(args, rows, root: Path, tmp: Path) -> None:
    """Part 4: textpile's whole summarize of a crawl of the doc pages."""
    crawler_db = crawl_docs(root)
    print(f"\nsummarize {crawler_db.name} (all processes; FTS share: the full_text_entity_index tables;"
          " RSS summed over the processes, PSS with shared pages counted once)")
    print(f"{'textpile':<20} {'files':>6} {'files/CPU-s':>11} {'wall files/s':>12} {'scrape s':>8} "
          f"{'RSS MiB':>8} {'PSS MiB':>8} {'DB/raw':>7} {'FTS/raw':>8}   load")
    pipelines = [(name, extra) for name, extractor, extra in rows if extractor == "textpile"]
    pipelines.insert(1, ("textpile-1-process", ["--scrape-processes", "0"]))
    sizes = {}
    for repeat in range(args.repeat):
        for name, extra in pipelines if repeat % 2 == 0 else pipelines[::-1]:
            summary = tmp / f"{name}-{repeat}.db"
            before = load()
            result = child([str(HERE / "run_pipeline.py"), "--crawler-db", str(crawler_db), "--summary-db",
                            str(summary), "--work-dir", str(tmp / f"work-{name}-{repeat}"), *extra])
            raw = result["raw_bytes"]
            fts = result["tables"].get("full_text_entity_index", 0)
            sizes[name] = result
            print(f"{name:<20} {result['files']:>6} {result['files'] / result['cpu_s']:>11.1f} "
                  f"{result['files'] / result['wall_s']:>12.1f} {result['scrape_s']:>8.1f} "
                  f"{result['peak_rss'] / 2**20:>8.0f} {result.get('peak_pss', 0) / 2**20:>8.0f} "
                  f"{result['summary_bytes'] / raw:>7.3f} {fts / raw:>8.3f}   {before:.1f}-{load():.1f}", flush=True)
            summary.unlink()
    for name, result in sizes.items():
        raw = result["raw_bytes"]
        print(f"\n{name}: summary DB {result['summary_bytes'] / 2**20:.1f} MiB for {raw / 2**20:.1f} MiB of pages;"
              " bytes per table over the raw bytes:")
        for table, size in result["tables"].items():
            if size / raw >= 0.005:
                print(f"  {table:<28} {size / raw:6.3f}")


if __name__ == "__main__":
    main()
