"""``crawl_now``: the supported way to start one crawl run by hand from the Dagster UI.

Its evaluation makes a fresh ``crawl_runs`` key (a UUID v7 hex, see
``assets.partitions``) and returns, together, the request to add that partition and
the ``crawl_job`` run for it. In the UI: Automation -> crawl_now -> "Preview tick result"
-> "Apply requests & commit tick result" (the UI adds the partition, then launches the run).
Previewing alone adds nothing. Turned on, it starts one crawl run on its first tick and
then skips until it is turned off and on again.
"""

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from textpile_dagster.assets.partitions import crawl_runs_partitions, new_crawl_run_key
from textpile_dagster.resources import CrawlConfigResource
from textpile_dagster.sensors.jobs import crawl_job
from textpile_dagster.sensors.runs import active_crawl_runs, fail_dead_runs

TRIGGER = "crawl_now"


@sensor(
    name="crawl_now",
    job=crawl_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Start one crawl run now: Preview tick result, then Apply requests & commit tick result "
    "(adds a crawl_runs partition and launches crawl_job for it). Turned on, it starts one crawl run "
    "on its first tick, then skips until turned off and on again. Skips while a crawl run is queued "
    "or running.",
)
def crawl_now(context: SensorEvaluationContext, crawl_config: CrawlConfigResource):
    """A new partition and its crawl run, on a preview or the first tick after a start.

    Raises:
        ConfigError: the crawl configuration is invalid (shown as the tick's error).
    """
    if not context.is_first_tick_since_sensor_start:
        return SkipReason("crawl_now starts one crawl run each time it is turned on, and on each "
                          "Preview tick result -> Apply requests; turn it off and on again for another")
    for line in fail_dead_runs(context.instance, by="the crawl_now sensor"):
        context.log.warning(line)
    active = active_crawl_runs(context.instance)
    if active:
        run = active[0]
        return SkipReason(f"crawl run {run.run_id} is still {run.status.value.lower()}; start another "
                          "when it has ended")
    crawl_config.load()  # a bad configuration fails here, before a partition is added
    key = new_crawl_run_key()
    return SensorResult(
        run_requests=[RunRequest(run_key=key, partition_key=key, tags={"textpile/trigger": TRIGGER})],
        dynamic_partitions_requests=[crawl_runs_partitions.build_add_request([key])],
    )
