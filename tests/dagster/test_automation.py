"""Declarative automation (summarize after a crawl run lands, publish after passed checks)
and the recrawl sensor, which adds its partition with its run request."""

import datetime as dt
import time

import dagster as dg

from conftest import write_config
from textpile_dagster import definitions
from textpile_dagster.assets.partitions import CRAWL_RUNS, key_unix_ms, new_crawl_run_key
from textpile_dagster.resources import PipelineSettings
from textpile_dagster.sensors import recrawl, recrawl_decision, recrawl_tick
from textpile_dagster.sensors.recrawl import recrawl_cadence_s

NOON = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
NOON_MS = int(NOON.timestamp() * 1000)
SUMMARY = ["crawl_log_staging", "scrape_results"]
SUMMARY_CHECKS = ("summary_referential_integrity", "summary_single_open_generation",
                  "summary_open_html_have_text_piles", "summary_schema_versions")


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
    assert recrawl_decision(["manual-test-1"], NOON_MS, 3600) is None


def test_recrawl_returns_the_new_partition_with_its_run_and_adds_nothing_itself():
    with dg.instance_for_test() as instance:
        result = recrawl_tick(instance, 3600, NOON_MS)
        [request] = result.run_requests
        [add] = result.dynamic_partitions_requests
        assert add == dg.AddDynamicPartitionsRequest(partitions_def_name=CRAWL_RUNS,
                                                     partition_keys=[request.partition_key])
        assert key_unix_ms(request.partition_key) == NOON_MS
        assert request.run_key == request.partition_key
        assert request.tags == {"textpile/trigger": "recrawl"}
        assert instance.get_dynamic_partitions(CRAWL_RUNS) == []  # evaluating changed nothing
        instance.add_dynamic_partitions(CRAWL_RUNS, [request.partition_key])  # the tick committed
        skipped = recrawl_tick(instance, 3600, NOON_MS + 1_800_000)
        assert skipped.skip_message == "latest crawl run began 1800 s ago; next one due after 3600 s"
        assert len(recrawl_tick(instance, 3600, NOON_MS + 3_600_000).run_requests) == 1


def test_recrawl_sensor_reads_the_interval_from_the_configuration(tmp_path):
    config = write_config(tmp_path / "crawl.toml", ["http://127.0.0.1:9/"], recrawl_interval="1 hour")
    defs = definitions.build_definitions(PipelineSettings(data_dir=tmp_path, config_path=config))
    with dg.instance_for_test() as instance:
        recent = new_crawl_run_key(int(time.time() * 1000) - 600_000)
        instance.add_dynamic_partitions(CRAWL_RUNS, [recent])
        resources = {"crawl_config": defs.get_repository_def().get_top_level_resources()["crawl_config"]}
        with dg.build_sensor_context(instance=instance, definitions=defs, resources=resources) as context:
            result = recrawl(context)
        assert result.skip_message.startswith("latest crawl run began 6")
        assert result.skip_message.endswith(" s ago; next one due after 3600 s")


def _defs(tmp_path):
    return definitions.build_definitions(PipelineSettings(data_dir=tmp_path))


ASSETS = ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
          "published_index", "token_index")


def _requested(result) -> dict[str, set]:
    """Requested asset -> partition keys (None: unpartitioned)."""
    found = {name: set(result.get_requested_partitions(dg.AssetKey(name))) for name in ASSETS}
    return {name: keys for name, keys in found.items() if keys}


def _materialized(instance, asset, partition=None):
    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition=partition))


def _checked(instance, asset, check, passed):
    instance.report_runless_asset_event(dg.AssetCheckEvaluation(asset_key=dg.AssetKey(asset), check_name=check,
                                                                passed=passed))


def test_a_crawl_run_landing_requests_its_summary_and_the_publish(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        key = new_crawl_run_key(NOON_MS)
        instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        # Nothing crawled yet: nothing to stage, nothing new to summarize.
        assert {k: v for k, v in _requested(result).items() if k in (*SUMMARY, "summary_db")} == {}
        _materialized(instance, "crawl_run", key)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        # Staging and scraping of the partition, one run (same partition, same tick).
        assert _requested(result) == {"crawl_log_staging": {key}, "scrape_results": {key}}
        # Requested once: the next tick, before anything landed, requests nothing again.
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result) == {}
        _materialized(instance, "crawl_log_staging", key)
        _materialized(instance, "scrape_results", key)
        # Then the summary; its index once the summary's blocking checks passed; then the publish.
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result) == {"summary_db": {None}}
        _materialized(instance, "summary_db")
        for check in SUMMARY_CHECKS:
            _checked(instance, "summary_db", check, passed=True)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result) == {"fts_index": {None}}
        _materialized(instance, "fts_index")
        _checked(instance, "fts_index", "fts_rows_equal_searchable_generations", passed=True)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        # the vectors, then the publish that carries them (one run, in dependency order)
        assert _requested(result) == {"embeddings": {None}, "published_index": {None}}
        _materialized(instance, "embeddings")
        _materialized(instance, "published_index")
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result) == {}


def test_index_and_publish_wait_for_the_blocking_checks(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        _materialized(instance, "embeddings")  # made by an earlier run
        _materialized(instance, "summary_db")
        _checked(instance, "summary_db", "summary_referential_integrity", passed=False)
        for check in SUMMARY_CHECKS[1:]:
            _checked(instance, "summary_db", check, passed=True)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert "fts_index" not in _requested(result)
        _materialized(instance, "fts_index")
        _checked(instance, "fts_index", "fts_rows_equal_searchable_generations", passed=False)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert "published_index" not in _requested(result)
        _materialized(instance, "fts_index")
        _checked(instance, "fts_index", "fts_rows_equal_searchable_generations", passed=True)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result).get("published_index") == {None}


def test_a_failed_crawl_run_does_not_block_later_summaries(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        failed, later = new_crawl_run_key(NOON_MS), new_crawl_run_key(NOON_MS + 1000)
        instance.add_dynamic_partitions(CRAWL_RUNS, [failed, later])
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        _materialized(instance, "crawl_run", later)  # `failed` never materialized
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result) == {"crawl_log_staging": {later}, "scrape_results": {later}}
        _materialized(instance, "crawl_log_staging", later)
        _materialized(instance, "scrape_results", later)
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        assert _requested(result)["summary_db"] == {None}
