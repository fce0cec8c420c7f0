"""``textpile debug``: ``indexiness``, ``query-crawl-log`` and ``sqlite-version``.

Source: unobtanium-documentation.txt, page "unobtanium-crawler", sections
``debug indexiness``, ``debug query-crawl-log`` and ``debug sqlite-version`` (options
as documented); page "Calculating Indexiness" for the breakdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import sys

from textpile.cli import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from textpile.enums import CrawlType, ExitCode


def register(subparsers) -> None:
    """Add ``debug`` and its subcommands to ``subparsers``."""
    p = subparsers.add_parser("debug", help="debugging helpers")
    sub = p.add_subparsers(dest="debug_command", metavar="SUBCOMMAND", required=True)

    d = sub.add_parser("indexiness", help="print the indexiness breakdown of a crawled page",
                       description="Scrape the latest stored file of a URL from the crawler database and "
                                   "print the indexiness metrics and score.")
    d.add_argument("-c", "--database", required=True, metavar="FILE",
                   help="the crawler database to fetch the page from")
    d.add_argument("-u", "--url", required=True, metavar="URL",
                   help="the URL to calculate for; the latest stored file of it is used")
    d.set_defaults(func=run_indexiness)

    d = sub.add_parser("query-crawl-log", help="query entries of the crawl log",
                       description="Print crawl log entries of the crawler database matching all given filters, "
                                   "oldest first.")
    d.add_argument("-c", "--crawler-db", required=True, metavar="FILE", help="the crawler database to query")
    d.add_argument("--uuid", metavar="UUID", help="the crawl log entry's crawl UUID")
    d.add_argument("--host", metavar="HOST", help="only URLs with this host name")
    d.add_argument("--url", metavar="URL", help="only this URL (the fragment is ignored)")
    d.add_argument("--exit-code", metavar="EXIT_CODE", help="only this exit code, by name or number")
    d.set_defaults(func=run_query_crawl_log)

    d = sub.add_parser("sqlite-version", help="print the SQLite version textpile uses")
    d.set_defaults(func=run_sqlite_version)


def _usage_error(command: str, message: str) -> int:
    print(f"textpile debug {command}: {message}", file=sys.stderr)
    return EXIT_USAGE


def _iso(unix: int | None) -> str:
    if unix is None:
        return "-"
    return dt.datetime.fromtimestamp(unix, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_indexiness(args: argparse.Namespace) -> int:
    """``textpile debug indexiness``: 0 printed; 2 for an unparsable URL; 1 when the
    database has no stored file text for the URL (or the database is missing)."""
    from textpile.store.database import open_crawler_db, sqlite_errors
    from textpile.store.urls import UrlError, parse_url
    from textpile.summarize.scrape.document import scrape_document
    from textpile.summarize.scrape.indexiness import indexiness_breakdown

    try:
        url = parse_url(args.url)
    except UrlError as exc:
        return _usage_error("indexiness", f"--url: {exc}")
    conn = open_crawler_db(args.database, create=False, read_only=True)
    try:
        with sqlite_errors(args.database):
            row = conn.execute(
                """SELECT ft.text, m.mime_type || '/' || m.mime_subtype, f.last_modified_unix_utc,
                      coalesce(r.time_sent_unix_utc, cl.time_started_unix_utc)
               FROM file f JOIN url u ON u.url_id = f.url_id JOIN file_text ft ON ft.file_id = f.file_id
               JOIN mimetype m ON m.mimetype_id = f.mimetype_id JOIN crawl_log cl ON cl.crawl_log_id = f.crawl_log_id
               LEFT JOIN request r ON r.request_id = f.request_id
               WHERE u.str_url = ? ORDER BY cl.time_started_unix_utc DESC, f.file_id DESC LIMIT 1""",
                (url.str_url,)).fetchone()
    finally:
        conn.close()
    if row is None:
        print(f"textpile debug indexiness: {args.database}: no stored file text for {url.str_url}", file=sys.stderr)
        return EXIT_FAILURE
    text, essence, last_modified, fetched = row
    result = scrape_document(text, url.str_url, mime_type=essence, last_modified_unix_utc=last_modified,
                             now_unix_utc=fetched)
    breakdown = indexiness_breakdown(result.links, result.description.time_created_unix_utc is not None)
    print(f"Indexiness of {url.str_url} (fetched {_iso(fetched)}):")
    width = max(len(k) for k in breakdown)
    for key, value in breakdown.items():
        if key != "score":
            print(f"  {key:<{width}}  {str(value).lower() if isinstance(value, bool) else value}")
    print(f"  {'links_total':<{width}}  {len(result.links)}")
    print(f"  {'score':<{width}}  {breakdown['score']}")
    return EXIT_OK


def run_query_crawl_log(args: argparse.Namespace) -> int:
    """``textpile debug query-crawl-log``: 0 (also when nothing matched); 2 for a bad
    --uuid, --url or --exit-code; 1 for a missing database."""
    from textpile.ids import parse_uuid
    from textpile.store.database import open_crawler_db, sqlite_errors
    from textpile.store.urls import UrlError, parse_url

    where, params = [], []
    if args.uuid is not None:
        try:
            where.append("cl.crawl_uuid = ?")
            params.append(parse_uuid(args.uuid).bytes)
        except ValueError as exc:
            return _usage_error("query-crawl-log", f"--uuid: {exc}")
    if args.host is not None:
        where.append("o.host = ?")
        params.append(args.host.strip().rstrip(".").lower())
    if args.url is not None:
        try:
            where.append("u.str_url = ?")
            params.append(parse_url(args.url).str_url)
        except UrlError as exc:
            return _usage_error("query-crawl-log", f"--url: {exc}")
    if args.exit_code is not None:
        try:
            where.append("cl.exit_code = ?")
            params.append(int(ExitCode.parse(args.exit_code)))
        except ValueError as exc:
            return _usage_error("query-crawl-log", f"--exit-code: {exc}")
    sql = ("SELECT cl.time_started_unix_utc, cl.exit_code, cl.crawl_type, cl.time_taken_ms, cl.crawl_uuid,"
           " u.str_url, cl.message FROM crawl_log cl JOIN url u ON u.url_id = cl.url_id"
           " JOIN origin o ON o.origin_id = u.origin_id")
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY cl.time_started_unix_utc, cl.crawl_log_id"
    conn = open_crawler_db(args.crawler_db, create=False, read_only=True)
    try:
        with sqlite_errors(args.crawler_db):
            rows = conn.execute(sql, params).fetchall()
    finally:
        conn.close()
    table = [("time_started", "exit_code", "crawl_type", "time_taken_ms", "crawl_uuid", "url", "message")]
    for started, code, ctype, taken, crawl_uuid, url, message in rows:
        try:
            code_text = f"{ExitCode(code).name} ({code})"
        except ValueError:
            code_text = str(code)
        try:
            type_text = CrawlType(ctype).name
        except ValueError:
            type_text = str(ctype)
        table.append((_iso(started), code_text, type_text, str(taken), str(parse_uuid(crawl_uuid)), url,
                      message or ""))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    print(f"{len(rows)} crawl log entries.")
    return EXIT_OK


def run_sqlite_version(args: argparse.Namespace) -> int:
    """``textpile debug sqlite-version``: print the SQLite library version; 0."""
    print(sqlite3.sqlite_version)
    return EXIT_OK
