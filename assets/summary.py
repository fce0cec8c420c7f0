"""Group "summarize": staging, scraping, the summary database and its FTS index.

``crawl_log_staging`` and ``scrape_results`` are per crawl-run partition; ``summary_db``
integrates every staged and scraped partition folder not yet integrated, in key order
(UUID v7 hex sorts by time); ``fts_index`` rebuilds the FTS5 table.

Each asset has a ``code_version`` (:mod:`textpile.summarize.versions`): after an
extraction change (a new ``EXTRACTION_VERSION``) the UI shows the scraped partitions as
stale; a backfill of ``scrape_results`` rewrites them, and the next ``summary_db`` sees
scrape results of another extraction version than it integrated and rebuilds the summary
database from every partition (:mod:`textpile_dagster.assets.integration`). A backfill
without a version change never duplicates anything: integration skips every crawl UUID
already in ``crawl_summary``. Automation conditions: :mod:`textpile_dagster.assets.automation`.
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

from textpile.index.update import update_search_index
from textpile.summarize.pipeline import scrape_staged, stage_crawl_log
from textpile.summarize.tokens import regenerate_token_index
from textpile.summarize.versions import EXTRACTION_VERSION, FTS_VERSION, INTEGRATION_VERSION, STAGING_VERSION
from textpile_dagster.assets.automation import AFTER_CHECKS, AFTER_CRAWL, AFTER_SCRAPE
from textpile_dagster.assets.crawl import crawl_run
from textpile_dagster.assets.figures import summary_figures
from textpile_dagster.assets.integration import integrate_pending
from textpile_dagster.assets.partitions import agent_uuid_of, crawl_runs_partitions
from textpile_dagster.assets.tables import row_count, table
from textpile_dagster.resources import CrawlerDatabaseResource, StagingAreaResource, SummaryDatabaseResource
from textpile_dagster.resources.staging import SCRAPED_MARKER

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
    code_version=STAGING_VERSION,
    automation_condition=AFTER_CRAWL,
    description="The crawl run's crawl log entries, requests and files as Parquet in <staging>/<key>/.",
)
def crawl_log_staging(
    context: AssetExecutionContext,
    crawler_database: CrawlerDatabaseResource,
    staging_area: StagingAreaResource,
) -> MaterializeResult:
    """:func:`stage_partition`."""
    return stage_partition(context, crawler_database, staging_area)


def stage_partition(
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
            "parquet_rows": _parquet_table(staging_area, key),
            **row_count(report.crawl_log_entries),
        }
    )


@asset(
    partitions_def=crawl_runs_partitions,
    deps=[crawl_log_staging],
    group_name=GROUP,
    kinds={"parquet", "python"},
    code_version=EXTRACTION_VERSION,
    automation_condition=AFTER_CRAWL,
    description="Text piles, document descriptions and link summaries of the staged files, as Parquet.",
)
def scrape_results(context: AssetExecutionContext, staging_area: StagingAreaResource) -> MaterializeResult:
    """:func:`scrape_partition`."""
    return scrape_partition(context, staging_area)


def scrape_partition(context: AssetExecutionContext, staging_area: StagingAreaResource) -> MaterializeResult:
    """``scrape_staged`` on the partition folder; marks the folder scraped, with the extraction version."""
    key = context.partition_key
    folder = staging_area.partition_dir(key)
    with staging_area.partition_lock(key):
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: partition {key} is not staged; materialize crawl_log_staging first")
        staging_area.remove_marker(key, SCRAPED_MARKER)
        report = scrape_staged(folder, progress=staging_area.show_progress,
                               scrape_processes=staging_area.scrape_processes)
        staging_area.write_marker(key, SCRAPED_MARKER, {"files_scraped": report.files_scraped,
                                                        "extraction_version": EXTRACTION_VERSION})
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(folder)),
            "files_scraped": report.files_scraped,
            "links": report.links,
            "noindex": report.noindex,
            "scrape_errors": report.scrape_errors,
            "seconds": round(report.seconds, 3),
            "parquet_rows": _parquet_table(staging_area, key),
            **row_count(report.files_scraped),
        }
    )


class SummaryDbConfig(Config):
    """Run config of ``summary_db``."""

    reintegrate_all: bool = Field(
        default=False,
        description="Hand every scraped partition folder to integrate_staged, even those marked "
        "integrated (already integrated crawls are still skipped, nothing is duplicated).",
    )
    rebuild: bool = Field(
        default=False,
        description="Build the summary database anew from every partition folder, in key order, and swap "
        "it in (done by itself when a partition's extraction or integration version changed).",
    )


class IndexConfig(Config):
    """Run config of ``fts_index``."""

    rebuild: bool = Field(
        default=False,
        description="Rebuild the full text and search index whole instead of updating it by what the summary "
        "changed (the same index; done by itself when it was written by another textpile version).",
    )


def _parquet_table(staging_area: StagingAreaResource, key: str):
    counts = staging_area.parquet_row_counts(key)
    return table([("dataset", "string"), ("rows", "int")], sorted(counts.items()))


@asset(
    deps=[AssetDep(scrape_results, partition_mapping=AllPartitionMapping())],
    group_name=GROUP,
    kinds={"sqlite", "duckdb"},
    pool=SUMMARY_POOL,
    code_version=INTEGRATION_VERSION,
    automation_condition=AFTER_SCRAPE,
    description="The summary database: every scraped crawl-run partition integrated, in key order.",
)
def summary_db(
    context: AssetExecutionContext,
    config: SummaryDbConfig,
    summary_database: SummaryDatabaseResource,
    staging_area: StagingAreaResource,
) -> MaterializeResult:
    """:func:`integrate_partitions`."""
    return integrate_partitions(context, config, summary_database, staging_area)


def integrate_partitions(
    context: AssetExecutionContext,
    config: SummaryDbConfig,
    summary_database: SummaryDatabaseResource,
    staging_area: StagingAreaResource,
) -> MaterializeResult:
    """Integrate, in key order, each scraped partition folder not yet integrated, or
    rebuild from all of them when versions changed (``integrate_pending``).

    A folder counts as integrated when it carries the integrated marker and the summary
    database holds crawls of its agent (so a replaced summary database is refilled).
    Integration stops before the first folder that is staged but not scraped, or being
    staged or scraped by another run right now, so that crawl runs are always integrated
    in the order they were made. Holds the summary database's write lock throughout.
    ``dagster/row_count`` is the number of entity generations.
    """
    with summary_database.write_lock():
        result = integrate_pending(context, summary_database, staging_area,
                                   reintegrate_all=config.reintegrate_all, rebuild=config.rebuild)
    with closing(summary_database.open(read_only=True)) as conn:
        figures = summary_figures(conn)
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(summary_database.path),
            "partitions_integrated": MetadataValue.json([k for k, _ in result.done]),
            "partitions_already_integrated": len(result.skipped),
            "waiting_for_partition": result.waiting_for or "",
            "rebuilt_for_partitions": MetadataValue.json(result.rebuilt_for),
            **{name: result.total(name) for name in (
                "crawls_integrated", "crawls_skipped", "self_duplicates", "exact_duplicates", "generations_opened",
                "generations_closed", "placeholder_generations", "duplicates_ended", "links_skipped")},
            "integration": result.table(),
            **{f"db_{name}": value for name, value in figures.items()},
            **row_count(figures["generations"]),
        }
    )


@asset(
    deps=[summary_db],
    group_name=GROUP,
    kinds={"sqlite"},
    pool=SUMMARY_POOL,
    code_version=FTS_VERSION,
    automation_condition=AFTER_CHECKS,
    description="The FTS5 full_text_entity_index and textpile's search index over the searchable generations, "
    "updated by what the summary changed (config rebuild: true rebuilds them whole).",
)
def fts_index(context: AssetExecutionContext, config: IndexConfig,
              summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """:func:`update_index`."""
    return update_index(context, config, summary_database)


def update_index(context: AssetExecutionContext, config: IndexConfig,
                 summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """``update_search_index`` on the summary database (holding its write lock)."""
    with summary_database.write_lock():
        report = update_search_index(summary_database.path, rebuild=config.rebuild,
                                     progress=summary_database.show_progress)
    with closing(summary_database.open(read_only=True)) as conn:
        figures = summary_figures(conn)
    context.log.info("search index: %d pages (%s: %d added, %d removed, %d indexed again)", report.pages,
                     "rebuilt" if report.rebuilt else "updated", report.pages_added, report.pages_removed,
                     report.pages_reindexed)
    return MaterializeResult(
        metadata={
            "rows": report.pages,
            "searchable_generations": figures["searchable_generations"],
            "rebuilt": report.rebuilt,
            "rebuild_reason": report.rebuild_reason,
            "pages_added": report.pages_added,
            "pages_removed": report.pages_removed,
            "pages_reindexed": report.pages_reindexed,
            "seconds": round(report.seconds, 3),
            "path": MetadataValue.path(summary_database.path),
            **row_count(report.pages),
        }
    )


@asset(
    deps=[summary_db],
    group_name=GROUP,
    kinds={"sqlite"},
    pool=SUMMARY_POOL,
    description="Optional, experimental: token and token_statistics over every Gen1 text pile "
    "(seed page \"Token Index\"). Not automated; materialize it on demand.",
)
def token_index(context: AssetExecutionContext, summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """``regenerate_token_index`` on the summary database (holding its write lock)."""
    with summary_database.write_lock():
        report = regenerate_token_index(summary_database.path)
    context.log.info("token index: %d tokens over %d text piles", report.tokens, report.text_piles)
    return MaterializeResult(
        metadata={"text_piles": report.text_piles, "tokens": report.tokens, "statistics_rows": report.statistics_rows,
                  **row_count(report.tokens)}
    )
