"""The recrawl schedule and the two sensors, evaluated with build_*_context."""

import datetime as dt

import dagster as dg
import pytest

import definitions
from assets.partitions import CRAWL_RUNS, key_unix_ms, new_crawl_run_key
from conftest import write_config
from resources import CrawlConfigResource, PipelineSettings
from sensors import publish_after_index, recrawl_decision, recrawl_schedule, summarize_after_crawl
from sensors.schedules import recrawl_cadence_s

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


def test_summarize_sensor_requests_each_landed_partition(tmp_path):
    with dg.instance_for_test() as instance:
        result = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert isinstance(result, dg.SkipReason)
        first, second = new_crawl_run_key(NOON_MS), new_crawl_run_key(NOON_MS + 1000)
        instance.add_dynamic_partitions(CRAWL_RUNS, [first, second])
        for key in (first, second):
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="crawl_run", partition=key))
        result = _evaluate(summarize_after_crawl, instance, tmp_path)
        assert [r.partition_key for r in result.run_requests] == [first, second]
        assert len({r.run_key for r in result.run_requests}) == 2
        assert result.cursor
        # Nothing new after the cursor: skip.
        again = _evaluate(summarize_after_crawl, instance, tmp_path, cursor=result.cursor)
        assert isinstance(again, dg.SkipReason)
        # A materialization of another asset is not a crawl run.
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="fts_index"))
        again = _evaluate(summarize_after_crawl, instance, tmp_path, cursor=result.cursor)
        assert isinstance(again, dg.SkipReason)


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
