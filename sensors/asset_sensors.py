"""Sensors: summarize a crawl-run partition when it lands; publish when the index changes.

Both read new materializations from the instance after a cursor (the last storage id
seen), so a partition that lands between two ticks is never missed.
"""

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from sensors.jobs import publish_job, summarize_job

_BATCH = 100


def _new_materializations(context: SensorEvaluationContext, asset: str):
    after = int(context.cursor) if context.cursor else None
    return context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset), after_storage_id=after), limit=_BATCH, ascending=True
    ).records


@sensor(
    name="summarize_after_crawl",
    job=summarize_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="When a crawl_run partition is materialized, stage, scrape and integrate it, then rebuild FTS.",
)
def summarize_after_crawl(context: SensorEvaluationContext):
    """One ``summarize_job`` run per new crawl_run materialization, for its partition."""
    records = _new_materializations(context, "crawl_run")
    if not records:
        return SkipReason("no new crawl_run materialization")
    requests = [
        RunRequest(run_key=f"summarize-{r.partition_key}-{r.storage_id}", partition_key=r.partition_key,
                   tags={"textpile/trigger": "summarize_after_crawl"})
        for r in records if r.partition_key
    ]
    return SensorResult(run_requests=requests, cursor=str(records[-1].storage_id))


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
