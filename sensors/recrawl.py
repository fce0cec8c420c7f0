"""``recrawl``: a new crawl-run partition on the configured cadence, added with its run.

Every :data:`RECRAWL_CHECK_S` seconds (while turned on) the sensor starts a crawl run
when the latest crawl run (by the time in its UUID v7 key, whoever started it) began at
least ``min(recrawl_interval, 1 day)`` ago (:func:`recrawl_cadence_s`) and no crawl run
is queued or running; otherwise it skips, saying why. A start is one ``SensorResult``: the
request to add the new ``crawl_runs`` key together with the ``crawl_job`` run for it, so
the evaluation itself changes nothing (a UI "Preview tick result" adds no key; Dagster
adds it when the tick is committed). Schedules cannot return dynamic-partition requests,
which is why this is a sensor.
"""

from __future__ import annotations

import time

from dagster import (
    DagsterInstance,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from textpile_dagster.assets.partitions import CRAWL_RUNS, crawl_runs_partitions, key_unix_ms, new_crawl_run_key
from textpile_dagster.resources import CrawlConfigResource
from textpile_dagster.sensors.jobs import crawl_job
from textpile_dagster.sensors.runs import active_crawl_runs, fail_dead_runs

#: Seconds between two evaluations of the sensor.
RECRAWL_CHECK_S = 600
DAY_S = 86_400
TRIGGER = "recrawl"


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


def recrawl_tick(instance: DagsterInstance, recrawl_interval_s: int, now_ms: int) -> SensorResult | SkipReason:
    """What the sensor answers at ``now_ms``: the new partition with its run, or why not.
    Crawl runs left STARTED by a process that died are marked failed first, so they do not
    hold the next crawl run back for good."""
    fail_dead_runs(instance, by="the recrawl sensor")
    active = active_crawl_runs(instance)
    if active:
        return SkipReason(f"crawl run {active[0].run_id} is still {active[0].status.value.lower()}")
    cadence = recrawl_cadence_s(recrawl_interval_s)
    reason = recrawl_decision(list(instance.get_dynamic_partitions(CRAWL_RUNS)), now_ms, cadence)
    if reason is not None:
        return SkipReason(reason)
    key = new_crawl_run_key(now_ms)
    return SensorResult(
        run_requests=[RunRequest(run_key=key, partition_key=key, tags={"textpile/trigger": TRIGGER})],
        dynamic_partitions_requests=[crawl_runs_partitions.build_add_request([key])],
    )


@sensor(
    name="recrawl",
    job=crawl_job,
    minimum_interval_seconds=RECRAWL_CHECK_S,
    default_status=DefaultSensorStatus.STOPPED,
    description="Every 10 minutes: adds a crawl_runs partition and launches crawl_job for it when the "
    "latest crawl run began at least min(recrawl_interval, 1 day) ago (recrawl_interval from the crawl "
    "configuration) and no crawl run is queued or running; otherwise it skips and says why. To crawl "
    "right now, use the crawl_now sensor.",
)
def recrawl(context: SensorEvaluationContext, crawl_config: CrawlConfigResource):
    """:func:`recrawl_tick` now.

    Raises:
        ConfigError: the crawl configuration is invalid (shown as the tick's error).
    """
    return recrawl_tick(context.instance, crawl_config.load().recrawl_interval_s, int(time.time() * 1000))
