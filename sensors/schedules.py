"""The recrawl schedule: a new crawl-run partition on the configured cadence.

The schedule ticks every hour, on the hour. A tick starts a crawl run (adds a
``crawl_runs`` key and requests ``crawl_job`` for it) when the latest crawl run (by the
time in its UUID v7 key, whoever started it) began at least
``min(recrawl_interval, 1 day)`` ago (:func:`recrawl_cadence_s`) and no crawl run is
queued or running; otherwise it skips, saying why. Schedules cannot return
dynamic-partition requests, so the key is added through the instance before the run
request is returned: a "Test schedule" evaluation in the UI that is due adds the key even
when its run is not launched (use the ``crawl_now`` sensor to start a run by hand).
"""

from dagster import (
    DefaultScheduleStatus,
    RunRequest,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from textpile_dagster.assets.partitions import CRAWL_RUNS, key_unix_ms, new_crawl_run_key
from textpile_dagster.resources import CrawlConfigResource
from textpile_dagster.sensors.jobs import crawl_job
from textpile_dagster.sensors.runs import active_crawl_runs

RECRAWL_TICK_CRON = "0 * * * *"
DAY_S = 86_400


def recrawl_cadence_s(recrawl_interval_s: int) -> int:
    """Seconds between crawl runs: the recrawl interval, at most one day (daily by
    default, so that new pages found by a run that hit max_commands are not left waiting)."""
    return max(0, min(int(recrawl_interval_s), DAY_S))


def recrawl_decision(keys: list[str], now_ms: int, cadence_s: int) -> str | None:
    """None when a new crawl run is due at ``now_ms``, else the reason to skip.

    ``keys`` are the existing partition keys; the latest UUID v7 key dates the last run.
    Keys that are no crawl-run keys (e.g. a partition added by hand) are ignored.
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
    description="Ticks every hour, on the hour. A tick adds a crawl_runs partition and launches "
    "crawl_job for it when the latest crawl run began at least min(recrawl_interval, 1 day) ago "
    "(recrawl_interval from the crawl configuration) and no crawl run is queued or running; "
    "otherwise it skips and says why. To crawl right now, use the crawl_now sensor.",
)
def recrawl_schedule(context: ScheduleEvaluationContext, crawl_config: CrawlConfigResource):
    """Decide with :func:`recrawl_decision`; when due, add a key and request its crawl run."""
    instance = context.instance
    active = active_crawl_runs(instance)
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
