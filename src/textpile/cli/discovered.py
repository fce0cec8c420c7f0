"""``textpile discovered``: the sites outside the seeds that crawled pages link to
(atextcrawler's site discovery), and with ``--check`` the relevance of their start
pages (see :mod:`textpile.crawl.discovery.sites`)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from textpile.cli import EXIT_OK
from textpile.cli.crawl import whole_number


def register(subparsers) -> None:
    """Add the ``discovered`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "discovered",
        help="list the sites outside the seeds that crawled pages link to",
        description="List the origins outside the seeds that pages crawled with discover_sites = true link to, "
                    "most linked first, with their annotation (allow_sites / deny_sites) and the verdict on "
                    "their start page. With --check, the start page of each listed site that is neither denied "
                    "nor checked yet is fetched politely (robots.txt first) and judged by the relevance_* "
                    "criteria; nothing is crawled or indexed. Admit a site with allow_sites.",
    )
    p.add_argument("-c", "--database", required=True, metavar="FILE", help="crawler database")
    p.add_argument("--config", required=True, metavar="PATH",
                   help="crawl configuration (TOML): seeds, annotations, relevance criteria, user agent")
    p.add_argument("--check", action="store_true", help="fetch and judge the start pages not checked yet")
    p.add_argument("--min-pages", type=whole_number(10**9), default=1, metavar="N",
                   help="list only sites linked from at least N crawled pages (default 1)")
    p.set_defaults(func=run)


def format_sites(sites) -> str:
    """One line per site: origin, pages, links, annotation, relevance, verdict (tab-separated)."""
    lines = ["origin\tpages\tlinks\tannotation\trelevant\tverdict"]
    for s in sites:
        relevant = "-" if s.check is None or s.check.relevant is None else ("yes" if s.check.relevant else "no")
        verdict = "not checked" if s.check is None else s.check.verdict
        lines.append(f"{s.str_origin}\t{s.pages}\t{s.links}\t{s.annotation or '-'}\t{relevant}\t{verdict}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Run ``textpile discovered``; 0 when done."""
    from textpile.crawl.policy.config import load_config
    from textpile.crawl.discovery.sites import check_sites, discovered_sites
    from textpile.store.database import open_crawler_db

    config = load_config(args.config)
    # a misspelled path is no new, empty database; listing only reads
    conn = open_crawler_db(args.database, create=False, read_only=not args.check)
    try:
        sites = discovered_sites(conn, config, min_pages=args.min_pages)
        if args.check:
            todo = [s.str_origin for s in sites if s.check is None and s.annotation != "denied"]
            if todo:
                print(f"Checking the start pages of {len(todo)} sites ...", file=sys.stderr)
            asyncio.run(check_sites(conn, todo, config))
            sites = discovered_sites(conn, config, min_pages=args.min_pages)
    finally:
        conn.close()
    sys.stdout.write(format_sites(sites))
    if not sites and not config.discover_sites:
        print(f"No sites listed: discover_sites is off in {args.config} (with discover_sites = true, "
              "the next crawls count the links to sites outside the seeds).", file=sys.stderr)
    return EXIT_OK
