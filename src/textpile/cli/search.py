"""``textpile serve`` (the search frontend, like unobtanium-viewer) and ``textpile search``.

Options follow unobtanium-viewer (unobtanium-documentation.txt, "unobtanium-viewer"):
``-s/--summary-db`` (default summary.db), ``-t/--template-location``,
``-l/--listen-on`` (default 127.0.0.1:3000), ``--request-workers`` (accepted; the
ASGI server runs searches in its thread pool).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys

from textpile.errors import DatabaseError


def _listen_on(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected ip:port such as 127.0.0.1:3000, got {value!r}")
    return host.strip("[]"), int(port)


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}")
    return int(value)


def _non_negative(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number from 0, got {value!r}")
    return int(value)


def register(subparsers) -> None:
    """Add the ``serve`` and ``search`` subcommands to ``subparsers``."""
    serve = subparsers.add_parser(
        "serve",
        help="serve the search page, JSON API and SQL exploration of a summary database",
        description="Serve a summary database with Datasette and the textpile search plugin, read-only.",
    )
    serve.add_argument("-s", "--summary-db", default="summary.db", metavar="FILE",
                       help="the summary database (default: summary.db)")
    serve.add_argument("-l", "--listen-on", default="127.0.0.1:3000", type=_listen_on, metavar="IP:PORT",
                       help="address to listen on (default: 127.0.0.1:3000, local machine only)")
    serve.add_argument("-t", "--template-location", default=None, metavar="DIR",
                       help="folder of templates overriding the built-in ones by file name "
                            "(and static/ files served under /-/textpile/static/)")
    serve.add_argument("--request-workers", default=3, type=_positive, metavar="N",
                       help="accepted for unobtanium-viewer compatibility (default: 3)")
    serve.add_argument("--sql-time-limit-ms", default=3000, type=_positive, metavar="MS",
                       help="time limit of SQL queries in the exploration views (default: 3000)")
    serve.set_defaults(func=run_serve)

    search = subparsers.add_parser(
        "search",
        help="search a summary database from the terminal",
        description="Search a summary database with textpile's query language and print the results.",
    )
    search.add_argument("-s", "--summary-db", default="summary.db", metavar="FILE",
                        help="the summary database (default: summary.db)")
    search.add_argument("--page", default=0, type=_non_negative, metavar="N", help="result page, from 0 (default: 0)")
    search.add_argument("--per-page", default=20, type=_positive, metavar="N",
                        help="results per page, at most 100 (default: 20)")
    search.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    search.add_argument("query", nargs="+", metavar="QUERY", help="the query (words are joined with spaces)")
    search.set_defaults(func=run_search)


def run_serve(args) -> int:
    """Run Datasette with the textpile plugin on ``args.listen_on`` until interrupted."""
    import uvicorn

    from textpile.web.app import build_datasette

    datasette = build_datasette(args.summary_db, template_dir=args.template_location,
                                sql_time_limit_ms=args.sql_time_limit_ms)
    host, port = args.listen_on
    print(f"textpile: serving {args.summary_db} on http://{host}:{port}/", file=sys.stderr)
    uvicorn.run(datasette.app(), host=host, port=port, log_level="warning")
    return 0


def format_text(results) -> str:
    """Return the terminal rendering of ``results``: a header, then numbered results.

    Each result: ``N. title``, then indented URL, snippet (tags removed) and a line of
    date and language when known.
    """
    from textpile.web.views import iso_date

    lines = []
    first = results.page * results.per_page + 1
    if results.total:
        last = first + len(results.results) - 1
        lines.append(f"{results.total} results, showing {first}-{last}" if results.results
                     else f"{results.total} results, none on page {results.page}")
    if results.message:
        lines.append(results.message)
    for n, r in enumerate(results.results, start=first):
        lines.append("")
        lines.append(f"{n}. {r.title}")
        lines.append(f"   {r.url}")
        if r.snippet_text:
            lines.append(f"   {r.snippet_text}")
        meta = []
        if r.time_updated_unix_utc is not None:
            meta.append(f"updated {(iso_date(r.time_updated_unix_utc) or '')[:10]}")
        elif r.time_created_unix_utc is not None:
            meta.append(f"published {(iso_date(r.time_created_unix_utc) or '')[:10]}")
        if r.language:
            meta.append(f"language {r.language}")
        if meta:
            lines.append("   " + " · ".join(meta))
    return "\n".join(lines)


def run_search(args) -> int:
    """Print the results of ``args.query``; exit 0 (also when nothing is found), 1 on a bad database."""
    from textpile.search.engine import search
    from textpile.store.database import open_summary_db
    from textpile.web.app import check_summary_db
    from textpile.web.views import results_json

    check_summary_db(args.summary_db)
    conn = open_summary_db(args.summary_db, create=False, read_only=True)
    try:
        try:
            results = search(conn, " ".join(args.query), page=args.page, per_page=args.per_page)
        except sqlite3.Error as exc:
            raise DatabaseError(f"{args.summary_db}: search failed: {exc}") from exc
    finally:
        conn.close()
    if args.format == "json":
        print(json.dumps(results_json(results), ensure_ascii=False, indent=2))
    else:
        print(format_text(results))
    return 0

