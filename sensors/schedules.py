"""The recrawl schedule: a new crawl-run partition on the configured cadence.

The schedule ticks every hour. A tick starts a crawl run (adds a ``crawl_runs`` key and
requests ``crawl_job`` for it) when the latest crawl run began at least
:func:`recrawl_cadence_s` ago and no crawl run is queued or running; otherwise it skips,
saying why. Schedules cannot return dynamic-partition requests, so the key is added
through the instance before the run request is returned.
"""

from dagster import (
    DagsterRunStatus,
    DefaultScheduleStatus,
    RunRequest,
    RunsFilter,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from assets.partitions import CRAWL_RUNS, key_unix_ms, new_crawl_run_key
from resources import CrawlConfigResource
from sensors.jobs import crawl_job

RECRAWL_TICK_CRON = "0 * * * *"
DAY_S = 86_400
_ACTIVE = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def recrawl_cadence_s(recrawl_interval_s: int) -> int:
    """Seconds between crawl runs: the recrawl interval, at most one day (daily by
    default, so that new pages found by a run that hit max_commands are not left waiting)."""
    return max(0, min(int(recrawl_interval_s), DAY_S))


def recrawl_decision(keys: list[str], now_ms: int, cadence_s: int) -> str | None:
    """None when a new crawl run is due at ``now_ms``, else the reason to skip.

    ``keys`` are the existing partition keys; the latest UUID v7 key dates the last run.
    """
    times = [t for t in (key_unix_ms(k) for k in keys) if t is not None]
    if not times:
        return None
    age_s = (now_ms - max(times)) / 1000
    if age_s >= cadence_s:
        return None
    return f"latest crawl run began {age_s:.0f} s ago; next one due after {cadence_s} s"


@schedule(
    name="recrawl_schedule",
    cron_schedule=RECRAWL_TICK_CRON,
    job=crawl_job,
    default_status=DefaultScheduleStatus.STOPPED,
    description="Adds a crawl_runs partition and crawls it when the recrawl cadence has passed.",
)
def recrawl_schedule(context: ScheduleEvaluationContext, crawl_config: CrawlConfigResource):
    """Decide with :func:`recrawl_decision`; when due, add a key and request its crawl run."""
    instance = context.instance
    active = instance.get_runs(filters=RunsFilter(job_name=crawl_job.name, statuses=_ACTIVE), limit=1)
    if active:
        return SkipReason(f"crawl run {active[0].run_id} is still {active[0].status.value.lower()}")
    cadence = recrawl_cadence_s(crawl_config.load().recrawl_interval_s)
    now_ms = int(context.scheduled_execution_time.timestamp() * 1000)
    reason = recrawl_decision(list(instance.get_dynamic_partitions(CRAWL_RUNS)), now_ms, cadence)
    if reason is not None:
        return SkipReason(reason)
    key = new_crawl_run_key(now_ms)
    instance.add_dynamic_partitions(CRAWL_RUNS, [key])
    return RunRequest(run_key=key, partition_key=key, tags={"textpile/trigger": "recrawl_schedule"})
