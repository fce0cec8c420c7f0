"""Queries on the Dagster instance shared by the crawl-starting sensors: which runs are
still active, which of them crawl."""

from __future__ import annotations

from dagster import AssetKey, DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter

from textpile_dagster.sensors.jobs import crawl_job

#: Run statuses of a run that has not ended.
ACTIVE_STATUSES = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
#: How many active runs are looked at (far more than textpile ever has at once).
_ACTIVE_LIMIT = 500


def active_runs(instance: DagsterInstance, job_name: str | None = None) -> list[DagsterRun]:
    """Runs queued, starting, started or canceling (of ``job_name`` when given), newest first."""
    return list(instance.get_runs(filters=RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES),
                                  limit=_ACTIVE_LIMIT))


def active_crawl_runs(instance: DagsterInstance) -> list[DagsterRun]:
    """Active runs of crawl_job, plus any other active run materializing crawl_run."""
    crawl_key = AssetKey("crawl_run")
    return [
        run for run in active_runs(instance)
        if run.job_name == crawl_job.name or (run.asset_selection is not None and crawl_key in run.asset_selection)
    ]
