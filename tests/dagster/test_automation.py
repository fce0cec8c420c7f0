"""The recrawl schedule and the two sensors, evaluated with build_*_context."""

import datetime as dt

import dagster as dg
import pytest

from textpile_dagster import definitions
from textpile_dagster.assets.partitions import CRAWL_RUNS, key_unix_ms, new_crawl_run_key
from conftest import write_config
from textpile_dagster.resources import CrawlConfigResource, PipelineSettings
from dagster._core.utils import make_new_run_id
from textpile_dagster.sensors import partitions_to_summarize, publish_after_index, recrawl_decision, recrawl_schedule, summarize_after_crawl
from textpile_dagster.sensors.asset_sensors import ATTEMPT_TAG, PendingPartition
from textpile_dagster.sensors.runs import latest_storage_ids
from textpile_dagster.sensors.schedules import recrawl_cadence_s

NOON = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
NOON_MS = int(NOON.timestamp() * 1000)


def test_recrawl_cadence_is_the_interval_at_most_a_day():
    assert recrawl_cadence_s(3600) == 3600
    assert recrawl_cadence_s(7 * 86400) == 86400
    assert recrawl_cadence_s(0) == 0


def test_recrawl_decision_from_uuid7_keys():
    assert recrawl_decision([], NOON_MS, 3600) is None
    an_hour_ago = new_crawl_run_key(NOON_MS - 3_600_000)
    assert key_unix_ms(an_hour_ago) == NOON_MS - 3_600_000
    assert recrawl_decision([an_hour_ago], NOON_MS, 3600) is None
    ten_minutes_ago = new_crawl_run_key(NOON_MS - 600_000)
    assert recrawl_decision([an_hour_ago, ten_minutes_ago], NOON_MS, 3600) == (
        "latest crawl run began 600 s ago; next one due after 3600 s"
    )


def _schedule_context(instance, tmp_path, when, interval="1 hour"):
    config = write_config(tmp_path / "crawl.toml", ["http://127.0.0.1:9/"], recrawl_interval=interval)
    defs = definitions.build_definitions(PipelineSettings(data_dir=tmp_path, config_path=config))
    return dg.build_schedule_context(
        instance=instance, scheduled_execution_time=when,
        resources={"crawl_config": CrawlConfigResource(config_path=str(config))},
        repository_def=defs.get_repository_def(),
    )


def _tick(instance, tmp_path, when):
    with _schedule_context(instance, tmp_path, when) as context:
        return recrawl_schedule.evaluate_tick(context)


def test_schedule_adds_a_partition_and_requests_its_crawl(tmp_path):
    with dg.instance_for_test() as instance:
        data = _tick(instance, tmp_path, NOON)
        keys = instance.get_dynamic_partitions(CRAWL_RUNS)
        assert len(keys) == 1
        assert key_unix_ms(keys[0]) == NOON_MS
        [request] = data.run_requests
        assert request.partition_key == keys[0]
        assert request.run_key == keys[0]
        assert request.job_name in (None, "crawl_job")
        assert request.tags["textpile/trigger"] == "recrawl_schedule"

        # Half an hour later nothing is due (recrawl_interval 1 hour): skipped, no new key.
        data = _tick(instance, tmp_path, NOON + dt.timedelta(minutes=30))
        assert data.run_requests == []
        assert data.skip_message == "latest crawl run began 1800 s ago; next one due after 3600 s"
        assert instance.get_dynamic_partitions(CRAWL_RUNS) == keys

        # An hour later a second crawl run is due.
        data = _tick(instance, tmp_path, NOON + dt.timedelta(hours=1))
        assert len(data.run_requests) == 1
        assert len(instance.get_dynamic_partitions(CRAWL_RUNS)) == 2
        assert data.run_requests[0].partition_key == sorted(instance.get_dynamic_partitions(CRAWL_RUNS))[-1]


def _evaluate(sensor_def, instance, tmp_path, cursor=None):
    defs = definitions.build_definitions(PipelineSettings(data_dir=tmp_path))
    with dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs) as context:
        return sensor_def(context)


def _crawled(instance, *keys):
    instance.add_dynamic_partitions(CRAWL_RUNS, [k for k in keys if not instance.has_dynamic_partition(CRAWL_RUNS, k)])
    for key in keys:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="crawl_run", partition=key))


def _scraped(instance, *keys):
    for key in keys:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="scrape_results", partition=key))


def _summarized(instance):
    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="summary_db"))


def _add_run(instance, job_name, status, tags=None, asset_selection=None):
    run = dg.DagsterRun(job_name=job_name, run_id=make_new_run_id(), status=status, tags=tags or {},
                        asset_selection=asset_selection)
    instance.add_run(run)
    return run


def test_summarize_sensor_requests_one_partition_at_a_time_oldest_first(tmp_path):
    with dg.instance_for_test() as instance:
        result = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert result.skip_message == "every crawled partition is scraped and integrated"
        first, second = new_crawl_run_key(NOON_MS), new_crawl_run_key(NOON_MS + 1000)
        _crawled(instance, second, first)
        request = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert isinstance(request, dg.RunRequest)
        assert request.partition_key == first
        assert request.asset_selection is None  # the whole summarize_job
        crawl_id = latest_storage_ids(instance, "crawl_run")[first]
        assert request.run_key == f"summarize-{first}-{crawl_id}"
        assert request.tags == {"textpile/trigger": "summarize_after_crawl", ATTEMPT_TAG: f"{first}-{crawl_id}"}
        # The first one summarized: the second is next.
        _scraped(instance, first)
        _summarized(instance)
        assert _evaluate(summarize_after_crawl, instance, tmp_path).partition_key == second


def test_summarize_sensor_skips_partitions_already_up_to_date(tmp_path):
    """What `textpile pipeline` leaves behind (crawl, scrape, summary for each partition)
    needs no run; a re-scraped partition needs summary_db and fts_index only."""
    with dg.instance_for_test() as instance:
        first, second = new_crawl_run_key(NOON_MS), new_crawl_run_key(NOON_MS + 1000)
        for key in (first, second):
            _crawled(instance, key)
            _scraped(instance, key)
            _summarized(instance)
        assert partitions_to_summarize(instance) == []
        result = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert result.skip_message == "every crawled partition is scraped and integrated"
        # scrape_results[first] re-materialized (a backfill) after the last summary_db.
        _scraped(instance, first)
        crawl_id = latest_storage_ids(instance, "crawl_run")[first]
        scrape_id = latest_storage_ids(instance, "scrape_results")[first]
        assert partitions_to_summarize(instance) == [PendingPartition(first, f"{first}-{crawl_id}-{scrape_id}", True)]
        request = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert request.partition_key == first
        assert request.asset_selection == [dg.AssetKey("summary_db"), dg.AssetKey("fts_index")]
        # A partition deleted from crawl_runs is not requested.
        _summarized(instance)
        _crawled(instance, second)
        instance.delete_dynamic_partition(CRAWL_RUNS, second)
        assert partitions_to_summarize(instance) == []


def test_summarize_sensor_waits_for_active_summary_writers(tmp_path):
    with dg.instance_for_test() as instance:
        key = new_crawl_run_key(NOON_MS)
        _crawled(instance, key)
        # A crawl run does not write the summary: no reason to wait.
        _add_run(instance, "crawl_job", dg.DagsterRunStatus.STARTED)
        assert _evaluate(summarize_after_crawl, instance, tmp_path).partition_key == key
        for job_name, selection in (("summarize_job", None), ("pipeline_job", None),
                                    ("__ASSET_JOB", frozenset({dg.AssetKey("summary_db")})),
                                    ("pipeline_job", frozenset({dg.AssetKey("crawl_log_staging")}))):
            for status in (dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTED):  # (QUEUED needs a code origin)
                run = _add_run(instance, job_name, status, asset_selection=selection)
                result = _evaluate(summarize_after_crawl, instance, tmp_path)
                assert result.skip_message == (f"run {run.run_id} ({job_name}) writing the summary is still "
                                               f"{status.value.lower()}; one summarizing run at a time")
                instance.delete_run(run.run_id)
        # A run that only crawls, through the asset job, does not block either.
        _add_run(instance, "__ASSET_JOB", dg.DagsterRunStatus.STARTED, asset_selection=frozenset({dg.AssetKey("crawl_run")}))
        assert _evaluate(summarize_after_crawl, instance, tmp_path).partition_key == key


def test_summarize_sensor_does_not_repeat_a_failed_attempt(tmp_path):
    with dg.instance_for_test() as instance:
        first, second = new_crawl_run_key(NOON_MS), new_crawl_run_key(NOON_MS + 1000)
        _crawled(instance, first, second)
        request = _evaluate(summarize_after_crawl, instance, tmp_path)
        failed = _add_run(instance, "summarize_job", dg.DagsterRunStatus.FAILURE, tags=request.tags)
        result = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert result.skip_message.startswith(
            f"run {failed.run_id} for partition {first} ended failure without bringing it up to date; ")
        assert f"materialize scrape_results and summary_db for partition {first}" in result.skip_message
        # Once the partition is brought up to date by hand, the sensor goes on.
        _scraped(instance, first)
        _summarized(instance)
        assert _evaluate(summarize_after_crawl, instance, tmp_path).partition_key == second


def test_publish_sensor_requests_one_publish_per_batch_of_index_builds(tmp_path):
    with dg.instance_for_test() as instance:
        assert isinstance(_evaluate(publish_after_index, instance, tmp_path), dg.SkipReason)
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="fts_index"))
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="fts_index"))
        result = _evaluate(publish_after_index, instance, tmp_path)
        [request] = result.run_requests
        assert request.run_key == f"publish-{result.cursor}"
        assert request.partition_key is None
        assert isinstance(_evaluate(publish_after_index, instance, tmp_path, cursor=result.cursor), dg.SkipReason)


@pytest.mark.parametrize("sensor_def, job",
                         [(summarize_after_crawl, "summarize_job"), (publish_after_index, "publish_job")])
def test_sensors_target_their_jobs(sensor_def, job):
    assert sensor_def.job_name == job


def test_schedule_description_states_its_cadence():
    assert recrawl_schedule.cron_schedule == "0 * * * *"
    assert recrawl_schedule.description.startswith(
        "Ticks every hour, on the hour. A tick adds a crawl_runs partition and launches crawl_job for it "
        "when the latest crawl run began at least min(recrawl_interval, 1 day) ago")


def test_schedule_ignores_a_partition_added_by_hand(tmp_path):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(CRAWL_RUNS, ["manual-test-1"])
        data = _tick(instance, tmp_path, NOON)
        [request] = data.run_requests
        assert key_unix_ms(request.partition_key) == NOON_MS
