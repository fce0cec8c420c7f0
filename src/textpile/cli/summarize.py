"""``textpile summarize``: integrate a crawler database into a summary database.

Source: unobtanium-documentation.txt, page "unobtanium-crawler", section ``summarize``
(``-c/--crawler-db``, ``-s/--summary-db``), page "Your first search engine" (the
progress lines and the end report).
"""

from __future__ import annotations

import argparse
import os
import sys

from textpile.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from textpile.errors import DatabaseError

MAX_BATCH_SIZE = 1_000_000
"""The largest --batch-size (a batch is staged, scraped and integrated in memory)."""


def register(subparsers) -> None:
    """Add the ``summarize`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "summarize",
        help="summarize a crawler database into a summary database (the search index)",
        description="Integrate every crawl log entry not yet summarized into the summary database, "
                    "in batches of up to 1000, then update the full text index by what changed, embed new and "
                    "changed pages (the vectors of the semantic and hybrid search modes) and tidy the database "
                    "(no whole-file rewrite: textpile optimize-db does that). Interrupting is safe: the next run "
                    "continues. The end report goes to stdout, progress to stderr.",
    )
    p.add_argument("-c", "--crawler-db", required=True, metavar="FILE", help="the crawler database to read")
    p.add_argument("-s", "--summary-db", required=True, metavar="FILE",
                   help="the summary database to write (created if missing)")
    p.add_argument("--work-dir", metavar="DIR",
                   help="folder for the Parquet staging files (default: a temporary folder, removed after)")
    p.add_argument("--batch-size", type=int, default=1000, metavar="N",
                   help="crawl log entries per batch (default 1000)")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.add_argument("--no-embeddings", action="store_true",
                   help="do not compute page and section vectors (the semantic and hybrid search modes need them)")
    p.add_argument("--rebuild-index", action="store_true",
                   help="rebuild the full text and search index whole instead of updating it by what changed "
                        "(the same index, at the cost of every page)")
    p.set_defaults(func=run)


def format_report(report) -> str:
    """The end report of a :class:`~textpile.summarize.pipeline.SummaryReport`, as text lines."""
    i = report.integration
    lines = [
        "[Summary_Report]",
        f"pages_processed = {report.pages_processed}",
        f"crawls_skipped = {i.crawls_skipped}",
        f"self_duplicates = {i.self_duplicates}",
        f"exact_duplicates = {i.exact_duplicates}",
        f"duplicates_ended = {i.duplicates_ended}",
        f"generations_opened = {i.generations_opened}",
        f"generations_closed = {i.generations_closed}",
        f"placeholder_generations = {i.placeholder_generations}",
        f"files_scraped = {report.scrape.files_scraped}",
        f"scrape_errors = {report.scrape.scrape_errors}",
        f"links_skipped = {i.links_skipped}",
        f"full_text_index_rows = {report.fts_rows}",
    ]
    if report.index is not None:
        x = report.index
        lines += [f"index_rebuilt = {'true' if x.rebuilt else 'false'}", f"index_pages_added = {x.pages_added}",
                  f"index_pages_removed = {x.pages_removed}", f"index_pages_reindexed = {x.pages_reindexed}",
                  f"index_pages_recounted = {x.pages_recounted}"]
    if report.embedding is not None:
        e = report.embedding
        lines += [f"pages_embedded = {e.pages_embedded}", f"sections_embedded = {e.sections_embedded}",
                  f"page_vectors_removed = {e.pages_removed}", f"page_vectors = {e.pages_kept + e.pages_embedded}",
                  f"page_vector_lists = {e.vector_lists}"]
    lines += [
        f"seconds = {report.seconds:.2f}",
    ]
    if report.interrupted:
        lines.append("interrupted = true")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Run ``textpile summarize``; return 0 when done, 130 when interrupted, 2 for a bad
    --batch-size or a --work-dir that is a file. Missing, empty, wrong, corrupt, read-only
    or locked databases raise DatabaseError (exit 1); so does a summary database that
    failed under the run (disk full, deleted, replaced), after the report is printed."""
    from textpile.summarize.pipeline import summarize

    if args.batch_size < 1:
        print(f"textpile summarize: --batch-size must be at least 1, got {args.batch_size}", file=sys.stderr)
        return EXIT_USAGE
    if args.batch_size > MAX_BATCH_SIZE:
        print(f"textpile summarize: --batch-size must be at most {MAX_BATCH_SIZE}, got {args.batch_size}",
              file=sys.stderr)
        return EXIT_USAGE
    if args.work_dir is not None and os.path.exists(args.work_dir) and not os.path.isdir(args.work_dir):
        print(f"textpile summarize: --work-dir {args.work_dir}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    progress = not args.no_progress

    def log(text: str) -> None:
        if progress:
            print(text, file=sys.stderr)

    report = summarize(args.crawler_db, args.summary_db, work_dir=args.work_dir, batch_size=args.batch_size,
                       progress=progress, log=log, embeddings=not args.no_embeddings,
                       rebuild_index=args.rebuild_index)
    sys.stdout.write(format_report(report))
    for example in report.integration.skipped_link_examples:
        print(f"textpile summarize: skipped link: {example}", file=sys.stderr)
    sys.stdout.flush()
    if report.failure is not None:
        raise DatabaseError(report.failure)
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK
