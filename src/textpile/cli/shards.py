"""``textpile shards``: which shard holds a site, and moving a site to its shard.

The shard table is ``shards.toml`` (:mod:`textpile.shards.config`); each shard is a data
folder ``<root>/<shard>/`` with ``crawler.db``, ``summary.db`` and ``published/summary.db``.
"""

from __future__ import annotations

import argparse

from textpile.cli import EXIT_OK


def register(subparsers) -> None:
    """Add the ``shards`` subcommand (``where``, ``move``) to ``subparsers``."""
    p = subparsers.add_parser("shards", help="site shards: which shard holds a site, move a site to its shard",
                              description="Shards by site: each shard is a data folder of its own; a site (origin) "
                                          "goes to a shard by a stable hash of the origin or by the overrides of "
                                          "the shard table.")
    sub = p.add_subparsers(dest="shards_command", metavar="ACTION", required=True)
    where = sub.add_parser("where", help="print the shard of each URL's site and its data folder")
    where.add_argument("-t", "--table", required=True, metavar="FILE", help="the shard table (shards.toml)")
    where.add_argument("urls", nargs="+", metavar="URL")
    where.set_defaults(func=run_where)
    move = sub.add_parser(
        "move", help="move a site to the shard the table assigns it now (edit the overrides first)",
        description="Move the crawl log and every crawler database row of a site from the shard holding it to the "
                    "shard the table assigns it now, then summarize both shards again (the source anew), publish "
                    "them again and, when Dagster runs the shards, stage and scrape the partitions of the crawl runs "
                    "that had entries of the site again on both. Nothing is lost: rows are copied and compared before they are deleted from the "
                    "source; an interrupted move is finished by running it again.")
    move.add_argument("-t", "--table", required=True, metavar="FILE", help="the shard table (shards.toml)")
    move.add_argument("site", metavar="URL", help="a URL of the site (its origin is moved)")
    move.add_argument("--no-embeddings", action="store_true", help="summarize without computing page vectors")
    move.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    move.set_defaults(func=run_move)


def run_where(args: argparse.Namespace) -> int:
    """Print ``URL<TAB>shard<TAB>folder`` per URL."""
    from textpile.shards.config import load_shards

    shards = load_shards(args.table)
    for url in args.urls:
        shard = shards.shard_of(url)
        print(f"{url}\t{shard}\t{shards.folder(shard)}")
    return EXIT_OK


def run_move(args: argparse.Namespace) -> int:
    """Move the site; print what moved as ``key = value`` lines."""
    from textpile.shards.config import load_shards
    from textpile.shards.move import move_site, resummarize_shard

    shards = load_shards(args.table)

    def resummarize(name: str, anew: bool) -> None:
        resummarize_shard(shards, name, anew, embeddings=not args.no_embeddings, progress=not args.no_progress)

    report = move_site(shards, args.site, resummarize=resummarize)
    # Dagster's staging areas (when the shards are run by Dagster) follow the crawler databases
    from textpile_dagster.assets.shard_moves import restage_moved_site

    restaged = restage_moved_site(shards, report)
    print(f"site = {report.site}")
    print(f"target = {report.target}")
    print(f"sources = {', '.join(report.sources) or '(none: already on its shard)'}")
    for table, count in report.rows.items():
        print(f"{table} = {count}")
    print(f"crawl_runs = {', '.join(report.crawl_runs)}")
    print(f"resummarized = {', '.join(report.resummarized)}")
    print(f"restaged = {', '.join(f'{name}:{key}' for name, keys in restaged.items() for key in keys)}")
    return EXIT_OK
