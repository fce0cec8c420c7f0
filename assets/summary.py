"""Group "summarize": staging, scraping, the summary database and its FTS index.

``crawl_log_staging`` and ``scrape_results`` are per crawl-run partition; ``summary_db``
integrates every staged and scraped partition folder not yet integrated, in key order
(UUID v7 hex sorts by time); ``fts_index`` rebuilds the FTS5 table.

Backfills: re-materializing ``crawl_log_staging``/``scrape_results`` of chosen partitions
rewrites their Parquet (staging ignores the summary database, so the folder is complete
again) and removes their "integrated" marker; the next ``summary_db`` hands them to
``integrate_staged`` again, which skips every crawl UUID already in ``crawl_summary``.
So a backfill never duplicates anything; history already integrated is not rewritten.
To apply an extraction change to all history, move ``summary.db`` away and materialize
``summary_db``: every partition folder is integrated again, in key order.
"""

from contextlib import closing

from dagster import (
    AllPartitionMapping,
    AssetDep,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
)
from pydantic import Field

from textpile_dagster.assets.crawl import crawl_run
from textpile_dagster.assets.figures import agent_integrated, summary_figures
from textpile_dagster.assets.partitions import agent_uuid_of, crawl_runs_partitions
from textpile_dagster.resources import CrawlerDatabaseResource, StagingAreaResource, SummaryDatabaseResource
from textpile_dagster.resources.staging import INTEGRATED_MARKER, SCRAPED_MARKER
from textpile.summarize.pipeline import (
    IntegrationReport,
    integrate_staged,
    rebuild_fts,
    scrape_staged,
    stage_crawl_log,
)
from textpile.summarize.tokens import regenerate_token_index

GROUP = "summarize"
#: Dagster pool of the steps writing the summary database. With a limit of 1 in dagster.yaml
#: (``concurrency: pools: default_limit: 1``, as ``textpile pipeline`` writes it) such steps
#: queue in Dagster; without one they still never write at once: each holds
#: ``SummaryDatabaseResource.write_lock`` (a file lock), whatever the instance config.
SUMMARY_POOL = "textpile_summary_db"


@asset(
    partitions_def=crawl_runs_partitions,
    deps=[crawl_run],
    group_name=GROUP,
    kinds={"parquet", "duckdb"},
    description="The crawl run's crawl log entries, requests and files as Parquet in <staging>/<key>/.",
)
def crawl_log_staging(
    context: AssetExecutionContext,
    crawler_database: CrawlerDatabaseResource,
    staging_area: StagingAreaResource,
) -> MaterializeResult:
    """Empty the partition folder, then ``stage_crawl_log`` of this agent into it."""
    key = context.partition_key
    agent_uuid = agent_uuid_of(key)
    with staging_area.partition_lock(key):
        folder = staging_area.reset_partition(key)
        report = stage_crawl_log(
            crawler_database.path,
            folder,
            agent_uuid=agent_uuid,
            batch_size=staging_area.batch_size,
            progress=staging_area.show_progress,
        )
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(folder)),
            "crawl_log_entries": report.crawl_log_entries,
            "files": report.files,
            "bytes_of_text": report.bytes_of_text,
            "batches": len(report.batches),
            "parquet_rows": MetadataValue.json(staging_area.parquet_row_counts(key)),
        }
    )


@asset(
    partitions_def=crawl_runs_partitions,
    deps=[crawl_log_staging],
    group_name=GROUP,
    kinds={"parquet", "python"},
    description="Text piles, document descriptions and link summaries of the staged files, as Parquet.",
)
def scrape_results(context: AssetExecutionContext, staging_area: StagingAreaResource) -> MaterializeResult:
    """``scrape_staged`` on the partition folder; marks the folder scraped and not integrated."""
    key = context.partition_key
    folder = staging_area.partition_dir(key)
    with staging_area.partition_lock(key):
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: partition {key} is not staged; materialize crawl_log_staging first")
        staging_area.remove_marker(key, SCRAPED_MARKER)
        staging_area.remove_marker(key, INTEGRATED_MARKER)
        report = scrape_staged(folder, progress=staging_area.show_progress)
        staging_area.write_marker(key, SCRAPED_MARKER, {"files_scraped": report.files_scraped})
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(folder)),
            "files_scraped": report.files_scraped,
            "links": report.links,
            "noindex": report.noindex,
            "scrape_errors": report.scrape_errors,
            "seconds": round(report.seconds, 3),
            "parquet_rows": MetadataValue.json(staging_area.parquet_row_counts(key)),
        }
    )


class SummaryDbConfig(Config):
    """Run config of ``summary_db``."""

    reintegrate_all: bool = Field(
        default=False,
        description="Hand every scraped partition folder to integrate_staged, even those marked "
        "integrated (already integrated crawls are still skipped, nothing is duplicated).",
    )


def _integration_table(rows: list[tuple[str, IntegrationReport]]) -> str:
    lines = [
        "| partition | integrated | skipped | self dup. | exact dup. | opened | closed | s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, r in rows:
        lines.append(
            f"| `{key}` | {r.crawls_integrated} | {r.crawls_skipped} | {r.self_duplicates} | "
            f"{r.exact_duplicates} | {r.generations_opened} | {r.generations_closed} | {r.seconds:.2f} |"
        )
    return "\n".join(lines)


def _integrate_pending(
    context: AssetExecutionContext,
    config: SummaryDbConfig,
    summary_database: SummaryDatabaseResource,
    staging_area: StagingAreaResource,
) -> tuple[list[tuple[str, IntegrationReport]], list[str], str | None]:
    """The loop of ``summary_db``: (integrated (key, report) pairs, keys already
    integrated, the key integration stopped before or None)."""
    with closing(summary_database.open()):
        pass  # creates the database with its schema on first use
    done: list[tuple[str, IntegrationReport]] = []
    skipped: list[str] = []
    for key in staging_area.staged_keys():
        with staging_area.partition_lock(key, wait=False) as free:
            if not free:
                context.log.info(
                    "partition %s is being staged or scraped by another run right now; it and later "
                    "partitions are integrated by the next summary_db materialization (summarize_job "
                    "runs end with one)", key)
                return done, skipped, key
            if not staging_area.has_marker(key, SCRAPED_MARKER):
                context.log.warning(
                    "partition %s is staged but not scraped (crawl_log_staging was materialized for it, "
                    "scrape_results was not, or failed); it and later partitions are not integrated "
                    "until you materialize scrape_results for partition %s, then summary_db (or run "
                    "summarize_job for that partition)", key, key)
                return done, skipped, key
            if staging_area.has_marker(key, INTEGRATED_MARKER) and not config.reintegrate_all:
                with closing(summary_database.open(read_only=True)) as conn:
                    if agent_integrated(conn, agent_uuid_of(key).bytes):
                        skipped.append(key)
                        continue
            report = integrate_staged(summary_database.path, staging_area.partition_dir(key),
                                      progress=staging_area.show_progress)
            staging_area.write_marker(key, INTEGRATED_MARKER, {
                "crawls_integrated": report.crawls_integrated, "crawls_skipped": report.crawls_skipped,
            })
        done.append((key, report))
        context.log.info("integrated partition %s: %s", key, report)
    return done, skipped, None


@asset(
    deps=[AssetDep(scrape_results, partition_mapping=AllPartitionMapping())],
    group_name=GROUP,
    kinds={"sqlite", "duckdb"},
    pool=SUMMARY_POOL,
    description="The summary database: every scraped crawl-run partition integrated, in key order.",
)
def summary_db(
    context: AssetExecutionContext,
    config: SummaryDbConfig,
    summary_database: SummaryDatabaseResource,
    staging_area: StagingAreaResource,
) -> MaterializeResult:
    """Integrate, in key order, each scraped partition folder not yet integrated.

    A folder counts as integrated when it carries the integrated marker and the summary
    database holds crawls of its agent (so a replaced summary database is refilled).
    Integration stops before the first folder that is staged but not scraped, or being
    staged or scraped by another run right now, so that crawl runs are always integrated
    in the order they were made. Holds the summary database's write lock throughout.
    """
    with summary_database.write_lock():
        done, skipped, waiting_for = _integrate_pending(context, config, summary_database, staging_area)
    with closing(summary_database.open(read_only=True)) as conn:
        figures = summary_figures(conn)
    total = lambda name: sum(getattr(r, name) for _, r in done)  # noqa: E731
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(summary_database.path),
            "partitions_integrated": MetadataValue.json([k for k, _ in done]),
            "partitions_already_integrated": len(skipped),
            "waiting_for_partition": waiting_for or "",
            "crawls_integrated": total("crawls_integrated"),
            "crawls_skipped": total("crawls_skipped"),
            "self_duplicates": total("self_duplicates"),
            "exact_duplicates": total("exact_duplicates"),
            "generations_opened": total("generations_opened"),
            "generations_closed": total("generations_closed"),
            "placeholder_generations": total("placeholder_generations"),
            "duplicates_ended": total("duplicates_ended"),
            "links_skipped": total("links_skipped"),
            "integration": MetadataValue.md(_integration_table(done)),
            **{f"db_{name}": value for name, value in figures.items()},
        }
    )


@asset(
    deps=[summary_db],
    group_name=GROUP,
    kinds={"sqlite"},
    pool=SUMMARY_POOL,
    description="The FTS5 full_text_entity_index over the searchable generations (rowid = generation id).",
)
def fts_index(context: AssetExecutionContext, summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """``rebuild_fts`` on the summary database (holding its write lock)."""
    with summary_database.write_lock():
        rows = rebuild_fts(summary_database.path)
    with closing(summary_database.open(read_only=True)) as conn:
        figures = summary_figures(conn)
    context.log.info("FTS index: %d rows", rows)
    return MaterializeResult(
        metadata={
            "rows": rows,
            "searchable_generations": figures["searchable_generations"],
            "path": MetadataValue.path(summary_database.path),
        }
    )


@asset(
    deps=[summary_db],
    group_name=GROUP,
    kinds={"sqlite"},
    pool=SUMMARY_POOL,
    description="Optional, experimental: token and token_statistics over every Gen1 text pile "
    "(seed page \"Token Index\"). Not part of the sensor-driven jobs; materialize it on demand.",
)
def token_index(context: AssetExecutionContext, summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """``regenerate_token_index`` on the summary database (holding its write lock)."""
    with summary_database.write_lock():
        report = regenerate_token_index(summary_database.path)
    context.log.info("token index: %d tokens over %d text piles", report.tokens, report.text_piles)
    return MaterializeResult(
        metadata={"text_piles": report.text_piles, "tokens": report.tokens, "statistics_rows": report.statistics_rows}
    )
