"""Maintenance subcommands: ``optimize-db``, ``regenerate-token-index``, ``delete old-crawl-log-entries``.

Source: unobtanium-documentation.txt, page "unobtanium-crawler", sections ``optimize-db``,
``regenerate-token-index`` and ``delete old-crawl-log-entries`` (option names as documented).
"""

from __future__ import annotations

import argparse
import datetime as dt

from textpile.cli import EXIT_OK
from textpile.enums import ExitCode


def register(subparsers) -> None:
    """Add ``optimize-db``, ``regenerate-token-index`` and ``delete`` to ``subparsers``."""
    p = subparsers.add_parser("optimize-db", help="analyze, optimize and vacuum a crawler or summary database",
                              description="Run SQLite's ANALYZE, PRAGMA optimize and VACUUM on the given "
                                          "crawler or summary database.")
    p.add_argument("-c", "--database", required=True, metavar="FILE", help="the database file to optimize")
    p.set_defaults(func=run_optimize)

    p = subparsers.add_parser("regenerate-token-index", help="(re)build the experimental token index",
                              description="Rebuild the token and token_statistics tables of a summary "
                                          "database from its Gen1 text piles (lower-cased Unicode words).")
    p.add_argument("-s", "--summary-database", required=True, metavar="FILE",
                   help="the summary database to generate the token index for")
    p.set_defaults(func=run_tokens)

    p = subparsers.add_parser("delete", help="delete data from a database")
    sub = p.add_subparsers(dest="delete_command", metavar="SUBCOMMAND", required=True)
    d = sub.add_parser("old-crawl-log-entries",
                       help="delete old crawl log entries with their requests, files and redirects",
                       description="Delete all but the latest N crawl log entries of each URL, with their "
                                   "requests, files, file texts and redirects (crawl candidates stay). "
                                   "Only a simulation that prints what would be deleted, unless --apply.")
    d.add_argument("-c", "--crawler-db", required=True, metavar="FILE",
                   help="the crawler database to delete crawl log entries from")
    d.add_argument("--keep-latest", required=True, type=int, metavar="N",
                   help="how many of the latest entries for each page to keep (1 or more)")
    d.add_argument("--apply", action="store_true", help="actually delete instead of simulating")
    d.set_defaults(func=run_delete)


def run_optimize(args: argparse.Namespace) -> int:
    """``textpile optimize-db``: 0 when done; a missing, empty, foreign, corrupt, read-only or
    locked file raises DatabaseError (exit 1), and a refused file is left unchanged."""
    from textpile.store.database import open_any_db, optimize_and_vacuum, sqlite_errors

    conn, kind = open_any_db(args.database)
    try:
        with sqlite_errors(args.database):
            optimize_and_vacuum(conn)
    finally:
        conn.close()
    print(f"Optimized and vacuumed {args.database} ({kind} database).")
    return EXIT_OK


def run_tokens(args: argparse.Namespace) -> int:
    """``textpile regenerate-token-index``: 0 when done; a missing summary database exits 1."""
    from textpile.summarize.tokens import regenerate_token_index

    report = regenerate_token_index(args.summary_database)
    print(f"Token index regenerated: {report.tokens} tokens, {report.statistics_rows} statistics rows "
          f"over {report.text_piles} text piles.")
    return EXIT_OK


def _exit_name(code: int) -> str:
    try:
        return ExitCode(code).name
    except ValueError:
        return str(code)


def run_delete(args: argparse.Namespace) -> int:
    """``textpile delete old-crawl-log-entries``: 0 when done (simulated or applied);
    a --keep-latest below 1 is a usage error (exit 2); a missing database exits 1."""
    import sys

    from textpile.cli import EXIT_USAGE
    from textpile.summarize.retention import MAX_KEEP_LATEST, delete_old_crawl_log_entries

    if args.keep_latest < 1:
        print(f"textpile delete old-crawl-log-entries: --keep-latest must be 1 or more (0 would delete every "
              f"crawl log entry), got {args.keep_latest}", file=sys.stderr)
        return EXIT_USAGE
    if args.keep_latest > MAX_KEEP_LATEST:
        print(f"textpile delete old-crawl-log-entries: --keep-latest must be at most {MAX_KEEP_LATEST}, "
              f"got {args.keep_latest}", file=sys.stderr)
        return EXIT_USAGE
    plan = delete_old_crawl_log_entries(args.crawler_db, args.keep_latest, apply=args.apply)
    verb = "Deleted" if plan.applied else "Would delete"
    for crawl_log_id, url, started, exit_code in plan.entries:
        when = dt.datetime.fromtimestamp(started, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        print(f"{verb}: {when} {_exit_name(exit_code)} {url} (crawl_log_id {crawl_log_id})")
    counts = ", ".join(f"{n} {table}" for table, n in plan.rows.items())
    print(f"{verb} {counts} (keeping the latest {args.keep_latest} crawl log entries per URL).")
    if not plan.applied:
        print("This was a simulation; run again with --apply to delete.")
    return EXIT_OK
