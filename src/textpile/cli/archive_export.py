"""``textpile export``: the crawler database's exchanges as a web archive (WARC/1.1; see
:mod:`textpile.archives.warc_export`)."""

from __future__ import annotations

import argparse
import json
import sys

from textpile.cli import EXIT_OK


def register(subparsers) -> None:
    """Add the ``export`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "export",
        help="export the crawler database's exchanges as a WARC file",
        description="Write every HTTP answer of the crawler database's file and metadata crawls as a WARC/1.1 "
                    "response record (the URL, time, status, the headers the database keeps and the stored text), "
                    "so that `textpile import` gives the same pages. A name ending in .gz is gzip-compressed "
                    "record by record. Prints a report on stdout.",
    )
    p.add_argument("-c", "--database", required=True, metavar="FILE", help="crawler database to export (read only)")
    p.add_argument("--warc", required=True, metavar="FILE", help="WARC file to write (FILE.gz: compressed)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``textpile export``; 0 when the file is written. A database that cannot be read
    or a file that cannot be written raises TextpileError (exit 1), leaving no file."""
    from textpile.archives.warc_export import export_warc

    report = export_warc(args.database, args.warc)
    sys.stdout.write(f"[Export_Report]\nwarc = {json.dumps(str(report.path))}\nresponse_records = {report.records}\n"
                     f"with_body = {report.bodies}\nbytes = {report.bytes}\n")
    return EXIT_OK
