"""Starting a crawl run by hand: the crawl_now sensor, and the error for a partition named by hand."""

import dagster as dg
import pytest

from textpile_dagster import definitions
from textpile_dagster.assets.partitions import CRAWL_RUNS, agent_uuid_of, key_unix_ms
from conftest import write_config
from textpile_dagster.resources import PipelineSettings
from textpile_dagster.resources.keys import HOW_TO_START
from textpile_dagster.sensors import crawl_now, recrawl_decision
from textpile.errors import ConfigError


def _defs(tmp_path, config_text=None):
    config = write_config(tmp_path / "crawl.toml", ["http://127.0.0.1:9/"])
    if config_text is not None:
        config.write_text(config_text, "utf-8")
    return definitions.build_definitions(PipelineSettings(data_dir=tmp_path / "data", config_path=config))


def _tick(instance, defs, last_tick_completion_time=None, last_sensor_start_time=None):
    """Evaluate crawl_now as the code server does (an instance ref, the repository's resources)."""
    repo = defs.get_repository_def()
    with dg.SensorEvaluationContext(
        instance.get_ref(), last_tick_completion_time=last_tick_completion_time, last_run_key=None,
        cursor=None, log_key=None, repository_name=repo.name, repository_def=repo, sensor_name="crawl_now",
        resources={"crawl_config": repo.get_top_level_resources()["crawl_config"]},
        last_sensor_start_time=last_sensor_start_time,
    ) as context:
        return crawl_now.evaluate_tick(context)


def test_preview_adds_one_partition_and_requests_its_crawl(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        data = _tick(instance, defs)  # a UI preview: no tick times
        [request] = data.run_requests
        [add] = data.dynamic_partitions_requests
        key = request.partition_key
        assert add == dg.AddDynamicPartitionsRequest(partitions_def_name=CRAWL_RUNS, partition_keys=[key])
        assert agent_uuid_of(key).version == 7 and key_unix_ms(key) is not None
        assert request.run_key == key
        assert request.tags["textpile/trigger"] == "crawl_now"
        assert request.job_name in (None, "crawl_job")
        # The evaluation itself adds nothing (the UI's "Apply requests" or the daemon does).
        assert instance.get_dynamic_partitions(CRAWL_RUNS) == []
        # A second evaluation makes another key.
        assert _tick(instance, defs).run_requests[0].partition_key != key


def test_turned_on_it_crawls_once_per_start(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        first = _tick(instance, defs, last_sensor_start_time=1000.0, last_tick_completion_time=900.0)
        assert len(first.run_requests) == 1
        later = _tick(instance, defs, last_sensor_start_time=1000.0, last_tick_completion_time=1030.0)
        assert later.run_requests == []
        assert later.skip_message.startswith("crawl_now starts one crawl run each time it is turned on")


def test_skips_while_a_crawl_run_is_active(tmp_path):
    from dagster._core.utils import make_new_run_id

    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        run = dg.DagsterRun(job_name="crawl_job", run_id=make_new_run_id(), status=dg.DagsterRunStatus.STARTED)
        instance.add_run(run)
        data = _tick(instance, defs)
        assert data.run_requests == []
        assert data.skip_message == f"crawl run {run.run_id} is still started; start another when it has ended"


def test_a_bad_configuration_fails_the_evaluation(tmp_path):
    defs = _defs(tmp_path, config_text='seeds = "not a list"\n')
    with dg.instance_for_test() as instance:
        with pytest.raises(Exception) as caught:
            _tick(instance, defs)
        error = caught.value
        while not isinstance(error, ConfigError) and error.__cause__ is not None:
            error = error.__cause__
        assert isinstance(error, ConfigError)
        assert instance.get_dynamic_partitions(CRAWL_RUNS) == []


def test_a_partition_named_by_hand_fails_with_what_to_do(tmp_path):
    defs = _defs(tmp_path)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(CRAWL_RUNS, ["manual-test-1"])
        result = defs.resolve_job_def("crawl_job").execute_in_process(
            instance=instance, partition_key="manual-test-1", raise_on_error=False)
        assert not result.success
        [failure] = result.get_step_failure_events()
        error = failure.step_failure_data.error
        while error.cause is not None:
            error = error.cause
        assert error.message.strip() == f"ValueError: not a crawl-run partition key: 'manual-test-1'. {HOW_TO_START}"
        assert "Automation -> crawl_now -> Preview tick result -> Apply requests & commit tick result" in HOW_TO_START
        # The recrawl schedule ignores such a key instead of failing on it.
        assert recrawl_decision(["manual-test-1"], 1_000, 3600) is None


def test_the_readmes_command_removes_a_partition_added_by_mistake(tmp_path):
    """The README's advice for a crawl_runs partition typed into Materialize all's
    launchpad: its command, run as written with KEY replaced, removes that partition only."""
    import os
    import re
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    [command] = re.findall(r"`(DAGSTER_HOME=\S+ python -c \"[^`]*delete_dynamic_partition[^`]*\")`", readme)
    home = tmp_path / "data" / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    real = "019300000000700080000000000000a1"
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(CRAWL_RUNS, [real, "made-up"])
    words = shlex.split(command.replace("'KEY'", "'made-up'"))
    env = dict(os.environ, DAGSTER_HOME=words[0].split("=", 1)[1].replace("$PWD", str(tmp_path)))
    assert words[1:3] == ["python", "-c"]
    done = subprocess.run([sys.executable, "-c", words[3]], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_dynamic_partitions(CRAWL_RUNS) == [real]
