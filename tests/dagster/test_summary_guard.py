"""Runs writing the summary database never overlap, whatever the instance config (file
locks), and summary_db says why it stops before a partition only when it is so."""

import logging
import subprocess
import sys
import threading
import time

from pathlib import Path

import dagster as dg

from textpile_dagster.assets import new_crawl_run_key
from textpile_dagster.assets.summary import fts_index, summary_db
from textpile_dagster.resources import PipelineSettings, build_resources
from textpile.store.locks import exclusive_lock

REPO = Path(__file__).resolve().parents[2]


def test_exclusive_lock_excludes_another_holder(tmp_path):
    path = tmp_path / "sub" / "x.lock"
    with exclusive_lock(path) as held:
        assert held is True
        with exclusive_lock(path, wait=False) as other:
            assert other is False
    with exclusive_lock(path, wait=False) as again:
        assert again is True


def test_exclusive_lock_excludes_another_process(tmp_path):
    path = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; sys.path.insert(0, sys.argv[1]); from textpile.store.locks import exclusive_lock\n"
         "with exclusive_lock(sys.argv[2]):\n    print('held', flush=True); sys.stdin.readline()",
         str(REPO), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with exclusive_lock(path, wait=False) as held:
            assert held is False
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with exclusive_lock(path, wait=False) as held:
        assert held is True


def _settings(tmp_path):
    return PipelineSettings(data_dir=tmp_path / "data", config_path=tmp_path / "crawl.toml")


def test_a_summary_writer_waits_for_the_lock(tmp_path):
    """Without any pool limit, fts_index of another run waits while the lock is held."""
    resources = build_resources(_settings(tmp_path))
    summary = resources["summary_database"]
    summary.open().close()
    outcome = {}
    with dg.instance_for_test() as instance:
        with summary.write_lock():
            worker = threading.Thread(target=lambda: outcome.update(
                result=dg.materialize([fts_index], instance=instance, resources=resources)))
            worker.start()
            time.sleep(0.5)
            released = time.time()
        worker.join(timeout=60)
        result = outcome["result"]
        assert result.success
        [record] = instance.fetch_materializations(dg.AssetKey("fts_index"), limit=1).records
        assert record.timestamp >= released  # materialized only after the lock was released


def _messages(instance, run_id, level):
    return [e.user_message for e in instance.all_logs(run_id) if e.level == level and not e.is_dagster_event]


def _waiting_for(result):
    [event] = result.get_asset_materialization_events()
    return event.event_specific_data.materialization.metadata["waiting_for_partition"].value


def test_summary_db_explains_a_staged_but_unscraped_partition(tmp_path):
    resources = build_resources(_settings(tmp_path))
    staging = resources["staging_area"]
    key = new_crawl_run_key()
    staging.reset_partition(key)  # staged (crawl_log_staging ran), never scraped
    with dg.instance_for_test() as instance:
        result = dg.materialize([summary_db], instance=instance, resources=resources)
        assert _waiting_for(result) == key
        [warning] = _messages(instance, result.run_id, logging.WARNING)
        assert warning == (
            f"partition {key} is staged but not scraped (crawl_log_staging was materialized for it, "
            "scrape_results was not, or failed); it and later partitions are not integrated until you "
            f"materialize scrape_results for partition {key}, then summary_db (or run summarize_job for "
            "that partition)")

        # The same folder while another run stages or scrapes it: no warning, an explanation.
        with staging.partition_lock(key):
            result = dg.materialize([summary_db], instance=instance, resources=resources)
        assert _waiting_for(result) == key
        assert _messages(instance, result.run_id, logging.WARNING) == []
        assert (f"partition {key} is being staged or scraped by another run right now; it and later "
                "partitions are integrated by the next summary_db materialization (summarize_job runs "
                "end with one)") in _messages(instance, result.run_id, logging.INFO)
