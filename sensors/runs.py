"""Queries on the Dagster instance shared by the schedule and the sensors: which runs are
still active, which of them write the summary database, what a partition's state is."""

from __future__ import annotations

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    RunsFilter,
)

from textpile_dagster.sensors.jobs import crawl_job, pipeline_job, summarize_job

#: Run statuses of a run that has not ended.
ACTIVE_STATUSES = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
#: Assets whose materialization writes the staging area or the summary database.
SUMMARY_WRITERS = frozenset(
    AssetKey(name) for name in ("crawl_log_staging", "scrape_results", "summary_db", "fts_index", "token_index")
)
#: How many active runs are looked at (far more than textpile ever has at once).
_ACTIVE_LIMIT = 500


def active_runs(instance: DagsterInstance, job_name: str | None = None) -> list[DagsterRun]:
    """Runs queued, starting, started or canceling (of ``job_name`` when given), newest first."""
    return list(instance.get_runs(filters=RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES),
                                  limit=_ACTIVE_LIMIT))


def writes_summary(run: DagsterRun) -> bool:
    """Whether ``run`` materializes an asset of :data:`SUMMARY_WRITERS`: by its asset
    selection when it has one, else by its job (summarize_job or the whole pipeline_job)."""
    if run.asset_selection is not None:
        return bool(run.asset_selection & SUMMARY_WRITERS)
    return run.job_name in (summarize_job.name, pipeline_job.name)


def active_summary_runs(instance: DagsterInstance) -> list[DagsterRun]:
    """Active runs that write the staging area or the summary database."""
    return [run for run in active_runs(instance) if writes_summary(run)]


def active_crawl_runs(instance: DagsterInstance) -> list[DagsterRun]:
    """Active runs of crawl_job, plus any other active run materializing crawl_run."""
    crawl_key = AssetKey("crawl_run")
    return [
        run for run in active_runs(instance)
        if run.job_name == crawl_job.name or (run.asset_selection is not None and crawl_key in run.asset_selection)
    ]


def latest_storage_ids(instance: DagsterInstance, asset: str) -> dict[str, int]:
    """Partition key -> storage id of the latest materialization of partitioned ``asset``."""
    return dict(instance.get_latest_storage_id_by_partition(AssetKey(asset), DagsterEventType.ASSET_MATERIALIZATION))


def latest_storage_id(instance: DagsterInstance, asset: str) -> int | None:
    """Storage id of the latest materialization of unpartitioned ``asset``; None when never."""
    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=1,
                                              ascending=False).records
    return records[0].storage_id if records else None
