"""``textpile import``: web archives (WARC, WACZ, zshot SQLite) into a crawler database
as crawl runs (see :mod:`textpile.archives.importer`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from textpile.cli import EXIT_OK


def register(subparsers) -> None:
    """Add the ``import`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "import",
        help="import web archives (WARC, WACZ, zshot) into a crawler database",
        description="Read WARC, WACZ and zshot SQLite archives (the kind of each told from its bytes) into the "
                    "crawler database as crawl log entries with the archive's own times, statuses, headers and "
                    "bodies, one crawl run per archive, so that summarize and search treat them as crawled pages. "
                    "Prints one report per archive on stdout; records that cannot be read are listed on stderr "
                    "and the rest is imported.",
    )
    p.add_argument("-c", "--database", required=True, metavar="FILE",
                   help="crawler database to import into (created if missing)")
    p.add_argument("--config", metavar="PATH",
                   help="crawl configuration (TOML) whose user_agent (robots.txt token), session_parameters, "
                        "sitemaps and feeds apply; without it textpile's defaults with the token textpile-crawler")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.add_argument("archives", nargs="+", metavar="FILE", help="archive files (WARC, WARC.gz, WACZ, zshot .db)")
    p.set_defaults(func=run)


def format_import_report(reports) -> str:
    """The reports as TOML (an array of tables ``[[Import_Report]]``)."""
    lines = []
    for r in reports:
        lines += ["[[Import_Report]]", f"archive = {_toml(str(r.path))}", f"kind = {_toml(r.kind)}",
                  f"sha256 = {_toml(r.sha256)}"]
        if r.already_imported is not None:
            lines += [f"already_imported_by_run = {_toml(r.already_imported)}", ""]
            continue
        lines += [f"run = {_toml(r.run.hex if r.run else '')}", f"exchanges = {r.exchanges}",
                  f"crawl_log_entries = {r.entries}", f"skipped = {r.skipped}", f"problems = {len(r.problems)}",
                  f"resumed_after = {r.resumed_after}", f"duration_s = {r.duration_s:.1f}", "",
                  "[Import_Report.exit_codes]"]
        lines += [f"{name} = {count}" for name, count in sorted(r.exit_code_counts.items())]
        lines.append("")
    return "\n".join(lines) + "\n"


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run(args: argparse.Namespace) -> int:
    """Run ``textpile import``; 0 when done (records that could not be read are reported
    on stderr, one line each, and do not fail the import). A file that is no archive, or
    a database that cannot be used, raises TextpileError (exit 1) before anything is imported."""
    from textpile.archives.importer import import_archives
    from textpile.crawl.policy.config import load_config

    config = load_config(Path(args.config)) if args.config else None
    reports = import_archives(args.database, [Path(a) for a in args.archives], config=config,
                              progress=not args.no_progress)
    for report in reports:
        for problem in report.problems:
            print(f"textpile: {report.path}: {problem.where}: {problem.message}", file=sys.stderr)
    sys.stdout.write(format_import_report(reports))
    return EXIT_OK
