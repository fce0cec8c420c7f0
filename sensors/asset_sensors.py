"""Sensors: summarize crawl-run partitions that are not up to date; publish when the index changes.

``summarize_after_crawl`` reads the state from the instance on each tick (no cursor), so
turning it on late, after ``textpile pipeline`` or manual runs, only requests what is
really missing, and a partition that lands between two ticks is never missed.
"""

from typing import NamedTuple

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterInstance,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from textpile_dagster.assets.partitions import CRAWL_RUNS
from textpile_dagster.sensors.jobs import publish_job, summarize_job
from textpile_dagster.sensors.runs import active_summary_runs, latest_storage_id, latest_storage_ids

_BATCH = 100
#: Tag naming what a summarize run was requested for: ``<key>-<crawl_run storage id>``
#: (whole job) or ``<key>-<crawl_run storage id>-<scrape_results storage id>`` (summary only).
ATTEMPT_TAG = "textpile/summarize_attempt"
#: What a summarize run materializes when the partition is scraped but not integrated.
SUMMARY_ONLY = [AssetKey("summary_db"), AssetKey("fts_index")]


class PendingPartition(NamedTuple):
    """A crawl_runs partition whose summary is not up to date."""

    key: str
    #: The :data:`ATTEMPT_TAG` value of the run that would bring it up to date.
    attempt: str
    #: True when only summary_db and fts_index are missing (scrape_results is current).
    summary_only: bool


def partitions_to_summarize(instance: DagsterInstance) -> list[PendingPartition]:
    """The crawl_runs partitions whose summary is not up to date, oldest key first.

    A partition with a crawl_run materialization (and still in ``crawl_runs``) needs the
    whole summarize_job when scrape_results[key] was never materialized or is older than
    crawl_run[key]; it needs only summary_db and fts_index when the latest summary_db is
    older than scrape_results[key]; otherwise it is up to date. Staleness is compared by
    event-log storage ids (they grow with time).
    """
    crawled = latest_storage_ids(instance, "crawl_run")
    scraped = latest_storage_ids(instance, "scrape_results")
    summary = latest_storage_id(instance, "summary_db")
    existing = set(instance.get_dynamic_partitions(CRAWL_RUNS))
    pending = []
    for key in sorted(k for k in crawled if k in existing):
        scrape_id = scraped.get(key)
        if scrape_id is None or scrape_id < crawled[key]:
            pending.append(PendingPartition(key, f"{key}-{crawled[key]}", False))
        elif summary is None or summary < scrape_id:
            pending.append(PendingPartition(key, f"{key}-{crawled[key]}-{scrape_id}", True))
    return pending


@sensor(
    name="summarize_after_crawl",
    job=summarize_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Requests one summarize_job run at a time, for the oldest crawl_runs partition whose "
    "crawl_run materialization is not yet scraped (stage, scrape, integrate, rebuild FTS) or whose "
    "scrape_results are not yet integrated (summary_db and fts_index only). Partitions already up to "
    "date are never requested again; nothing is requested while a run writing the staging area or "
    "the summary database is queued or running.",
)
def summarize_after_crawl(context: SensorEvaluationContext):
    """At most one ``summarize_job`` run per tick; see the description for which."""
    instance = context.instance
    busy = active_summary_runs(instance)
    if busy:
        run = busy[0]
        return SkipReason(f"run {run.run_id} ({run.job_name}) writing the summary is still "
                          f"{run.status.value.lower()}; one summarizing run at a time")
    pending = partitions_to_summarize(instance)
    if not pending:
        return SkipReason("every crawled partition is scraped and integrated")
    key, attempt, summary_only = pending[0]
    earlier = instance.get_runs(filters=RunsFilter(tags={ATTEMPT_TAG: attempt}), limit=1)
    if earlier:
        run = earlier[0]
        return SkipReason(
            f"run {run.run_id} for partition {key} ended {run.status.value.lower()} without bringing it up "
            f"to date; see its logs, fix the cause, then re-execute it (or materialize scrape_results and "
            f"summary_db for partition {key}); later partitions wait, as integration goes in key order"
        )
    return RunRequest(
        run_key=f"summarize-{attempt}",
        partition_key=key,
        asset_selection=SUMMARY_ONLY if summary_only else None,
        tags={"textpile/trigger": "summarize_after_crawl", ATTEMPT_TAG: attempt},
    )


def _new_materializations(context: SensorEvaluationContext, asset: str):
    after = int(context.cursor) if context.cursor else None
    return context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset), after_storage_id=after), limit=_BATCH, ascending=True
    ).records


@sensor(
    name="publish_after_index",
    job=publish_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="When fts_index is materialized, publish the summary database.",
)
def publish_after_index(context: SensorEvaluationContext):
    """One ``publish_job`` run for any number of new fts_index materializations."""
    records = _new_materializations(context, "fts_index")
    if not records:
        return SkipReason("no new fts_index materialization")
    last = records[-1].storage_id
    return SensorResult(
        run_requests=[RunRequest(run_key=f"publish-{last}", tags={"textpile/trigger": "publish_after_index"})],
        cursor=str(last),
    )
