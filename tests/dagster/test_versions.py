"""code_version: materializations record the stage versions; scrape results of another
extraction version make summary_db rebuild the summary database from every partition."""

import dataclasses
import sqlite3
from contextlib import closing

import dagster as dg

from conftest import write_config
from textpile.summarize.scrape import document
from textpile.summarize.versions import EXTRACTION_VERSION
from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS, CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.assets import summary as summary_assets
from textpile_dagster.resources import PipelineSettings, StagingAreaResource, build_resources
from textpile.store.gen2_piles import register_functions

EVERYTHING = [*ALL_ASSETS, *ALL_CHECKS]
SUMMARY_STEPS = ["crawl_log_staging", "scrape_results", "summary_db", "fts_index"]


def _run(instance, settings, key=None, selection=None, run_config=None):
    resources = build_resources(settings)
    # Scraped in the step's own process: the test patches scrape_document in this process.
    resources["staging_area"] = StagingAreaResource(root=resources["staging_area"].root, scrape_processes=0)
    result = dg.materialize(EVERYTHING, instance=instance, resources=resources, partition_key=key,
                            selection=selection, raise_on_error=False, run_config=run_config)
    assert result.success, [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
    return result


def _metadata(result, asset):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey(asset)]
    return {k: getattr(v, "value", v) for k, v in event.event_specific_data.materialization.metadata.items()}


def _titles(path):
    with closing(register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))) as conn:
        return sorted(r[0] for r in conn.execute("SELECT title FROM document_description"))


def test_changed_extraction_rebuilds_the_summary_from_every_partition(tmp_path, changing_site, monkeypatch):
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"])
    settings = PipelineSettings(data_dir=tmp_path / "data", config_path=config, force_recrawl=True)
    summary = settings.summary_db
    with dg.instance_for_test() as instance:
        keys = sorted([new_crawl_run_key(), new_crawl_run_key()])  # made in one millisecond: random order
        instance.add_dynamic_partitions(CRAWL_RUNS, keys)
        for key in keys:
            result = _run(instance, settings, key)
        [record] = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("scrape_results"), asset_partitions=[keys[0]]), limit=1).records
        assert record.asset_materialization.tags["dagster/code_version"] == EXTRACTION_VERSION
        generations_before = _metadata(result, "summary_db")["db_generations"]
        before = _titles(summary)
        assert before == ["Alpha page", "Bravo page", "Charlie page", "Gazetteer index"]

        # A new extraction (titles upper-cased), a new version: backfill scrape_results of both partitions.
        scrape = document.scrape_document

        def upper_titles(*args, **kwargs):
            result = scrape(*args, **kwargs)
            title = result.description.title.upper()
            return dataclasses.replace(result, description=dataclasses.replace(result.description, title=title))

        monkeypatch.setattr(document, "scrape_document", upper_titles)
        monkeypatch.setattr(summary_assets, "EXTRACTION_VERSION", EXTRACTION_VERSION + "-upper")
        for key in keys:
            _run(instance, settings, key, selection=["scrape_results"])
        # Re-integrating would skip every crawl: summary_db rebuilds from both partitions instead.
        result = _run(instance, settings, selection=["summary_db", "fts_index"])
        meta = _metadata(result, "summary_db")
        assert meta["rebuilt_for_partitions"] == keys
        assert meta["partitions_integrated"] == keys
        assert meta["crawls_skipped"] == 0
        assert meta["crawls_integrated"] == 10  # 5 crawl log entries per crawl run
        # The same generations as before (4 pages, robots.txt), with the new titles.
        assert meta["dagster/row_count"] == meta["db_generations"] == generations_before == 5
        assert [r.data["partition"] for r in meta["integration"].records] == keys
        assert _titles(summary) == ["ALPHA PAGE", "BRAVO PAGE", "CHARLIE PAGE", "GAZETTEER INDEX"]
        assert not (tmp_path / "data" / "summary.db.rebuild").exists()
        # Once rebuilt, the next summary_db has nothing to do.
        again = _metadata(_run(instance, settings, selection=["summary_db"]), "summary_db")
        assert (again["rebuilt_for_partitions"], again["partitions_integrated"],
                again["partitions_already_integrated"]) == ([], [], 2)
