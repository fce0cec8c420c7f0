"""``shards_crawl_now``: one crawl run of every shard, started by hand from the Dagster UI
(a sharded code location, ``TEXTPILE_SHARDS``).

As ``crawl_now`` does for one data folder: its evaluation makes a fresh ``crawl_runs`` key
and returns, together, the request to add that partition and the run of ``shards_job``
(every shard's pipeline for it, shards side by side). Turned on, it starts one crawl run on
its first tick, then skips until turned off and on again.
"""

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from textpile_dagster.assets.partitions import crawl_runs_partitions, new_crawl_run_key
from textpile_dagster.resources.shards import ShardsResource

TRIGGER = "shards_crawl_now"


@sensor(
    name="shards_crawl_now",
    job_name="shards_job",
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Start one crawl run of every shard now: Preview tick result, then Launch all & commit tick "
    "result (adds a crawl_runs partition and launches shards_job for it). Turned on, it starts one on its "
    "first tick, then skips until turned off and on again.",
)
def shards_crawl_now(context: SensorEvaluationContext, shards: ShardsResource):
    """A new partition and the run of every shard for it, on a preview or the first tick
    after a start.

    Raises:
        ConfigError: the shard table or the crawl configuration is invalid (the tick's error).
    """
    if not context.is_first_tick_since_sensor_start:
        return SkipReason("shards_crawl_now starts one crawl run each time it is turned on, and on each "
                          "Preview tick result -> Launch all; turn it off and on again for another")
    shards.table()  # a bad table or configuration fails here, before a partition is added
    shards.crawl_config.load()
    key = new_crawl_run_key()
    return SensorResult(
        run_requests=[RunRequest(run_key=key, partition_key=key, tags={"textpile/trigger": TRIGGER})],
        dynamic_partitions_requests=[crawl_runs_partitions.build_add_request([key])],
    )
