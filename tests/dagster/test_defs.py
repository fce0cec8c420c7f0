"""The Definitions load, with the expected assets, checks, jobs, schedule, sensors, resources."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
from textpile.summarize.versions import EXTRACTION_VERSION, FTS_VERSION, INTEGRATION_VERSION, STAGING_VERSION
from textpile.semantic.model import MODEL_NAME

from textpile_dagster import definitions
from conftest import REPO, write_config
from textpile_dagster.resources import (
    CrawlConfigResource,
    CrawlerDatabaseResource,
    LiveHttpFetcher,
    PipelineSettings,
    PublishTargetResource,
    StagingAreaResource,
    SummaryDatabaseResource,
)

ASSETS = {"crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
          "published_index", "token_index", "archive_import"}
CHECKS = {
    ("summary_db", "summary_referential_integrity"),
    ("summary_db", "summary_single_open_generation"),
    ("summary_db", "summary_open_html_have_text_piles"),
    ("summary_db", "summary_schema_versions"),
    ("fts_index", "fts_rows_equal_searchable_generations"),
}


def test_definitions_have_the_graph(tmp_path):
    defs = definitions.build_definitions(PipelineSettings(data_dir=tmp_path))
    dg.Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    graph = repo.asset_graph
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == ASSETS
    assert {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys} == CHECKS
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert groups == {"crawl_run": "crawl", "crawl_log_staging": "summarize", "scrape_results": "summarize",
                      "summary_db": "summarize", "fts_index": "summarize", "embeddings": "summarize",
                      "published_index": "publish",
                      "token_index": "summarize", "archive_import": "crawl"}
    partitioned = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).partitions_def}
    assert partitioned == {"crawl_run", "crawl_log_staging", "scrape_results"}
    assert graph.get(dg.AssetKey("crawl_run")).partitions_def == dg.DynamicPartitionsDefinition(name="crawl_runs")
    assert {s.name for s in repo.schedule_defs} == set()
    assert {s.name for s in repo.sensor_defs} == {"crawl_now", "recrawl", "textpile_automation"}
    conditions = {k.to_user_string(): graph.get(k).automation_condition for k in graph.get_all_asset_keys()}
    assert {k: c.get_label() if c else None for k, c in conditions.items()} == {
        "crawl_run": None, "token_index": None, "crawl_log_staging": "eager", "scrape_results": "eager",
        "summary_db": "after_scrape", "fts_index": None, "embeddings": None, "published_index": None,
        "archive_import": None}
    for name in ("fts_index", "embeddings", "published_index"):  # eager() & all_deps_blocking_checks_passed()
        assert [c.get_label() for c in conditions[name].children] == ["eager", "all_deps_blocking_checks_passed"]
    versions = {k.to_user_string(): graph.get(k).code_version for k in graph.get_all_asset_keys()}
    assert versions == {"crawl_run": None, "crawl_log_staging": STAGING_VERSION, "scrape_results": EXTRACTION_VERSION,
                        "summary_db": INTEGRATION_VERSION, "fts_index": FTS_VERSION, "embeddings": MODEL_NAME,
                        "published_index": None,
                        "token_index": None, "archive_import": None}
    assert (STAGING_VERSION, EXTRACTION_VERSION, INTEGRATION_VERSION, FTS_VERSION) == ("1", "4", "3", "3")
    assert {"crawl_job", "summarize_job", "publish_job", "pipeline_job", "import_job"} <= {
        j.name for j in repo.get_all_jobs()}
    deps = {k.to_user_string(): {p.to_user_string() for p in graph.get(k).parent_keys}
            for k in graph.get_all_asset_keys()}
    assert deps == {"crawl_run": set(), "crawl_log_staging": {"crawl_run"}, "scrape_results": {"crawl_log_staging"},
                    "summary_db": {"scrape_results"}, "fts_index": {"summary_db"}, "embeddings": {"fts_index"},
                    "published_index": {"fts_index", "embeddings"},
                    "token_index": {"summary_db"}, "archive_import": set()}


def test_resources_resolve_under_the_data_dir(tmp_path):
    config = write_config(tmp_path / "crawl.toml", ["http://127.0.0.1:9/"])
    defs = definitions.build_definitions(PipelineSettings(data_dir=tmp_path, config_path=config))
    assert set(defs.get_repository_def().get_top_level_resources()) == set(defs.resources)
    with dg.build_resources(defs.resources) as initialized:
        resources = {name: getattr(initialized, name) for name in defs.resources}
    assert set(resources) == {"crawl_config", "crawler_database", "summary_database", "staging_area",
                              "publish_target", "http_fetcher"}
    assert isinstance(resources["crawl_config"], CrawlConfigResource)
    assert resources["crawl_config"].load().seeds == ["http://127.0.0.1:9/"]
    assert isinstance(resources["crawler_database"], CrawlerDatabaseResource)
    assert resources["crawler_database"].path == str(tmp_path / "crawler.db")
    assert isinstance(resources["summary_database"], SummaryDatabaseResource)
    assert resources["summary_database"].path == str(tmp_path / "summary.db")
    assert isinstance(resources["staging_area"], StagingAreaResource)
    assert resources["staging_area"].root == str(tmp_path / "staging")
    assert isinstance(resources["publish_target"], PublishTargetResource)
    assert resources["publish_target"].path == str(tmp_path / "published" / "summary.db")
    assert isinstance(resources["http_fetcher"], LiveHttpFetcher)
    assert resources["http_fetcher"].transport() is None
    assert list(tmp_path.iterdir()) == [config]  # building definitions creates nothing


def test_lazy_defs_read_the_environment_when_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTPILE_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("TEXTPILE_CONFIG", str(tmp_path / "c.toml"))
    defs = definitions.defs()
    resources = defs.resources
    assert resources["summary_database"].path == str(tmp_path / "d" / "summary.db")
    assert resources["crawl_config"].config_path == str(tmp_path / "c.toml")


def test_workspace_yaml_loads_the_same_graph(tmp_path):
    env = {"DAGSTER_HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path),
           "TEXTPILE_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    dagster = str(Path(sys.executable).parent / "dagster")
    out = subprocess.run([dagster, "definitions", "validate", "-w", "workspace.yaml"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Validation successful for code location textpile" in out.stdout + out.stderr
    # The installed module, from a folder outside the checkout (how `dagster dev -m` loads it).
    listed = subprocess.run([dagster, "asset", "list", "-m", "textpile_dagster.definitions"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) == ASSETS
