"""`textpile pipeline` end to end on a real documentation site served on 127.0.0.1."""

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import dagster as dg

from conftest import REPO, write_config
from textpile.cli import main
from textpile.search.engine import search
from textpile.store.gen2_piles import register_functions


def _textpile(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    return subprocess.run([str(Path(sys.executable).parent / "textpile"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_pipeline_on_a_real_documentation_site(tmp_path, real_docs_site):
    base_url, _root = real_docs_site
    config = write_config(tmp_path / "crawl.toml", [base_url + "/index.html"], max_commands=60)
    data = tmp_path / "data"
    # Run from a folder outside the checkout: definitions.py is found through the package.
    out = _textpile("pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for step in ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
                 "published_index"):
        assert f"] {step}: " in out.stderr
    assert "checks 4/4 passed" in out.stderr and "checks 1/1 passed" in out.stderr
    assert "pages crawled;" in out.stdout and "pages indexed;" in out.stdout
    for name in ("crawler.db", "summary.db", "published/summary.db", "dagster_home/dagster.yaml"):
        assert (data / name).is_file(), name

    published = data / "published" / "summary.db"
    with closing(register_functions(sqlite3.connect(f"file:{published}?mode=ro", uri=True))) as conn:
        (pages,) = conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()
        assert 5 <= pages <= 60
        hits = search(conn, "database")
        assert hits.total > 0
        assert hits.results[0].url.startswith(base_url + "/")

    # Again, in process and with explicit definitions: a new partition in the same data dir.
    assert main(["pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress", "--token-index",
                 "-m", "5", "--definitions", str(REPO / "definitions.py")]) == 0
    assert "DAGSTER_HOME" not in os.environ or os.environ["DAGSTER_HOME"] != str(data / "dagster_home")
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        keys = instance.get_dynamic_partitions("crawl_runs")
        assert len(keys) == 2 and keys[0] < keys[1]
        for asset in ("crawl_run", "crawl_log_staging", "scrape_results"):
            status = instance.get_materialized_partitions(dg.AssetKey(asset))
            assert status == set(keys), asset
        for asset in ("summary_db", "fts_index", "published_index"):
            records = instance.fetch_materializations(dg.AssetKey(asset), limit=10).records
            assert len(records) == 2, asset
    with closing(register_functions(sqlite3.connect(f"file:{published}?mode=ro", uri=True))) as conn:
        agents = conn.execute("SELECT count(DISTINCT agent_uuid) FROM crawl_summary").fetchone()[0]
        assert agents == 2
        assert conn.execute("SELECT count(*) FROM token").fetchone()[0] > 0  # --token-index


def test_pipeline_refuses_bad_input_before_adding_a_partition(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("seeds = 3\n")
    data = tmp_path / "data"
    assert main(["pipeline", "--config", str(bad), "--data-dir", str(data)]) == 2
    assert "configuration error" in capsys.readouterr().err
    assert not (data / "dagster_home").exists()
    assert main(["pipeline", "--config", str(bad), "--definitions", str(tmp_path / "nope.py")]) == 2
    assert "nope.py: no such file" in capsys.readouterr().err


def test_dagster_home_comes_from_the_option_then_the_environment_then_the_data_dir(tmp_path):
    from textpile.cli.pipeline import dagster_home_for

    data = tmp_path / "data"
    assert dagster_home_for(data, tmp_path / "opt", {"DAGSTER_HOME": "/env"}) == (tmp_path / "opt", "--dagster-home")
    assert dagster_home_for(data, None, {"DAGSTER_HOME": "/env"}) == (Path("/env"), "DAGSTER_HOME")
    assert dagster_home_for(data, None, {"DAGSTER_HOME": ""}) == (data / "dagster_home", "default")
    assert dagster_home_for(data, None, {}) == (data / "dagster_home", "default")


def test_pipeline_records_one_run_in_the_dagster_home_of_the_environment(tmp_path, changing_site, monkeypatch,
                                                                          capsys):
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"], max_commands=10)
    home = tmp_path / "instance"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    data = tmp_path / "data"
    assert main(["pipeline", "--no-progress", "--config", str(config), "--data-dir", str(data)]) == 0
    err = capsys.readouterr().err
    assert not (data / "dagster_home").exists()
    assert (home / "dagster.yaml").read_text("utf-8").startswith("# written by textpile pipeline\n")
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert [line.split(":")[0].split(" ...")[0] for line in lines] == [
        f"[{n}/7] {step}" for n, step in enumerate(
            ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
             "published_index"), 1)
        for _ in range(2)]
    assert "] summary_db: 5 crawls integrated, 4 generations opened, 0 closed, 0 self-duplicates, 0 exact; " \
           "checks 4/4 passed (" in err
    assert "] fts_index: 4 FTS rows; checks 1/1 passed (" in err
    assert "] embeddings: 4 pages embedded, 4 page vectors (" in err
    with dg.DagsterInstance.from_config(str(home)) as instance:
        [run] = instance.get_runs()
        assert run.job_name == "pipeline_job"
        assert run.status == dg.DagsterRunStatus.SUCCESS
        [key] = instance.get_dynamic_partitions("crawl_runs")
        assert run.tags["dagster/partition"] == key
        assert run.tags["textpile/trigger"] == "textpile pipeline"
        for asset in ("crawl_run", "crawl_log_staging", "scrape_results"):
            assert instance.get_materialized_partitions(dg.AssetKey(asset)) == {key}, asset
        for asset in ("summary_db", "fts_index", "published_index"):
            [record] = instance.fetch_materializations(dg.AssetKey(asset), limit=10).records
            assert record.run_id == run.run_id, asset
