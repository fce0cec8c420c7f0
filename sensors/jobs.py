"""Asset jobs targeted by the sensors and ``textpile pipeline``."""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job

from textpile_dagster.assets import (
    archive_import,
    crawl_log_staging,
    crawl_run,
    embeddings,
    fts_index,
    published_index,
    scrape_results,
    summary_db,
)

#: One crawl run (partitioned).
crawl_job = define_asset_job(
    "crawl_job",
    selection=AssetSelection.assets(crawl_run),
    description="Crawl: one crawl run per crawl_runs partition.",
)

#: Stage and scrape one crawl-run partition, then integrate, rebuild the FTS index and embed.
summarize_job = define_asset_job(
    "summarize_job",
    selection=AssetSelection.assets(crawl_log_staging, scrape_results, summary_db, fts_index, embeddings),
    description="Stage and scrape a crawl-run partition, integrate it into the summary, rebuild FTS, "
    "embed new and changed pages.",
)

#: Publish the summary database.
publish_job = define_asset_job(
    "publish_job",
    selection=AssetSelection.assets(published_index),
    description="Swap a finished copy of the summary database onto the published path.",
)

#: Everything, for ``textpile pipeline`` (which runs it asset by asset for one partition).
pipeline_job = define_asset_job(
    "pipeline_job",
    selection=AssetSelection.all() - AssetSelection.assets(archive_import),
    description="The whole pipeline for one crawl-run partition.",
)

#: Web archives into the crawler database (run config: ops.archive_import.config.archives).
import_job = define_asset_job(
    "import_job",
    selection=AssetSelection.assets(archive_import),
    description="Import web archives (WARC, WACZ, zshot), one new crawl-run partition each; the automation "
    "then summarizes them.",
)

ALL_JOBS = [crawl_job, summarize_job, publish_job, pipeline_job, import_job]
