"""The archive_import asset: a real WARC (pywb's sample crawl of www.iana.org) becomes a
crawl_runs partition whose crawl_run is recorded as materialized; that partition is then
staged, scraped and summarized like a crawl run, and search finds its pages."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import dagster as dg

from archive_samples import pywb_warcs
from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS, ARCHIVE_ASSETS, CRAWL_RUNS, archive_import
from textpile_dagster.resources import PipelineSettings, build_resources
from textpile.search.engine import search
from textpile.store.gen2_piles import register_functions

EVERYTHING = [*ALL_ASSETS, *ARCHIVE_ASSETS, *ALL_CHECKS]


def test_archive_import_adds_a_crawl_run_partition_that_is_summarized(tmp_path):
    warc = pywb_warcs() / "iana.warc.gz"
    settings = PipelineSettings(data_dir=tmp_path / "data", config_path=tmp_path / "unused.toml")
    resources = build_resources(settings)
    run_config = {"ops": {"archive_import": {"config": {"archives": [str(warc)]}}}}
    with dg.instance_for_test() as instance:
        result = dg.materialize(EVERYTHING, instance=instance, resources=resources, selection=[archive_import],
                                run_config=run_config)
        assert result.success
        [key] = instance.get_dynamic_partitions(CRAWL_RUNS)
        events = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
        crawl = events["crawl_run"].event_specific_data.materialization
        assert crawl.partition == key
        meta = {k: getattr(v, "value", v) for k, v in crawl.metadata.items()}
        assert (meta["kind"], meta["exchanges"], meta["dagster/row_count"], meta["exit_file_ingested"],
                meta["exit_duplicate"], meta["problems"]) == ("warc", 171, 171, 16, 10, 0)
        [row] = events["archive_import"].event_specific_data.materialization.metadata["archives"].records
        assert row.data == {"archive": str(warc), "kind": "warc", "crawl_run": key, "crawl_log_entries": 171,
                            "problems": 0}
        with closing(register_functions(sqlite3.connect(settings.crawler_db))) as conn:
            assert conn.execute("SELECT name FROM agent WHERE agent_uuid = ?", (bytes.fromhex(key),)).fetchone() == (
                "import iana.warc.gz",)
        summarized = dg.materialize(EVERYTHING, instance=instance, resources=resources, partition_key=key,
                                    selection=["crawl_log_staging", "scrape_results", "summary_db", "fts_index"])
        assert summarized.success
        with closing(register_functions(sqlite3.connect(f"file:{settings.summary_db}?mode=ro", uri=True))) as conn:
            assert search(conn, "root zone database").results[0].url == "http://www.iana.org/domains/root/db"
        # the same archive again: nothing imported, no new partition
        again = dg.materialize(EVERYTHING, instance=instance, resources=resources, selection=[archive_import],
                               run_config=run_config)
        assert again.success and instance.get_dynamic_partitions(CRAWL_RUNS) == [key]
