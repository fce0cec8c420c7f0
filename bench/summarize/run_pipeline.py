"""One ``summarize`` run for the summarize benchmark (a child process of
bench_summarize.py), printed as one JSON line.

    python bench/summarize/run_pipeline.py --crawler-db CRAWL.db --summary-db OUT.db [--batch-size 1000] \
        [--textpile-src OLD/src] [--scrape-processes N] [--embeddings]

Summarizes the crawler database into a new summary database (staging, scraping,
integration, FTS index, optimize and vacuum; the page vectors of issue 14 only with
--embeddings) and reports: files scraped, wall seconds, CPU seconds of this process and
all its descendants (scraping workers), peak resident memory of the process tree (RSS
summed, and PSS: shared pages counted once; bench/proctree.py), the summary database's
size and its bytes per table (SQLite's dbstat; FTS5 shadow tables summed under the
virtual table's name), and the raw bytes of the HTML and text files in the crawler database.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from proctree import ProcessTree  # noqa: E402

FTS_TABLE = "full_text_entity_index"


def table_bytes(database: Path) -> dict[str, int]:
    """Bytes of each table with its indexes (dbstat), FTS5 shadow tables counted under
    the FTS table's name."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        owners = dict(conn.execute("SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')"))
        sizes: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = owners.get(name, name)
            if table.startswith(FTS_TABLE + "_"):
                table = FTS_TABLE
            sizes[table] = sizes.get(table, 0) + size
        return dict(sorted(sizes.items(), key=lambda kv: -kv[1]))
    finally:
        conn.close()


def raw_bytes(crawler_db: Path) -> int:
    """Bytes of the text files (HTML and plain text) the crawl fetched."""
    conn = sqlite3.connect(f"file:{crawler_db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT coalesce(sum(f.file_size), 0) FROM file f"
                            " JOIN file_text t ON t.file_id = f.file_id").fetchone()[0]
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawler-db", type=Path, required=True)
    parser.add_argument("--summary-db", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--textpile-src", type=Path)
    parser.add_argument("--scrape-processes", type=int, help="scraping worker processes (default: textpile's)")
    parser.add_argument("--embeddings", action="store_true",
                        help="also embed the pages (issue 14; bench/bench_semantic.py measures that on its own)")
    args = parser.parse_args()
    if args.textpile_src is not None:
        sys.path.insert(0, str(args.textpile_src))
        # Worker processes come from a forkserver, a new interpreter that imports the installed
        # textpile before it takes this sys.path: PYTHONPATH puts the other checkout first there too.
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(args.textpile_src), os.environ.get("PYTHONPATH"))))
    from textpile.summarize.pipeline import summarize

    started = time.monotonic()
    extra = {} if args.scrape_processes is None else {"scrape_processes": args.scrape_processes}
    if "embeddings" in inspect.signature(summarize).parameters:  # older checkouts do not embed
        extra["embeddings"] = args.embeddings
    with ProcessTree() as tree:
        report = summarize(args.crawler_db, args.summary_db, work_dir=args.work_dir, batch_size=args.batch_size,
                           progress=False, **extra)
    wall, cpu = time.monotonic() - started, tree.cpu_s()
    print(json.dumps({
        "files": report.scrape.files_scraped, "crawls": report.pages_processed, "fts_rows": report.fts_rows,
        "wall_s": wall, "cpu_s": cpu, "peak_rss": tree.peak_rss, "peak_pss": tree.peak_pss,
        "scrape_s": report.scrape.seconds,
        "summary_bytes": args.summary_db.stat().st_size, "raw_bytes": raw_bytes(args.crawler_db),
        "tables": table_bytes(args.summary_db),
    }))


if __name__ == "__main__":
    main()
