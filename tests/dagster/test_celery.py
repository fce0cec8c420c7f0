"""A sharded deployment across two hosts, stood in for on one machine: Debian's
redis-server as the broker, two dagster-celery workers (hosts alpha and beta, each on its
own queue textpile-<host>) and two data folders. Three shards: a and c on alpha's folder,
b on beta's. Every step of a shard runs on the worker of its host, and the published shards then answer
one search together."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from conftest import write_config
from redis_server import STARTUP_S, needs_redis, redis_url  # noqa: F401 (a fixture)
from test_shards import SHARDS, WORDS, _crawled_origins, _hits, _site
from textpile.cli import main
from textpile.shards.config import load_shards
from textpile_dagster.assets import CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.resources.settings import ENV_CONFIG, ENV_SHARDS

HOSTS = {"a": "alpha", "b": "beta", "c": "alpha"}
ASSETS = ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
          "published_index")

pytestmark = needs_redis


def _start_worker(host: str, env: dict, config_yaml: Path, log: Path) -> subprocess.Popen:
    """``dagster-celery worker start`` for ``host``: queue textpile-<host>, worker name <host>@...; the solo
    pool runs a step in the worker process itself (a prefork child is daemonic: no scrape or crawl processes)."""
    command = [str(Path(sys.executable).with_name("dagster-celery")), "worker", "start", "-A", "dagster_celery.app",
               "-y", str(config_yaml), "-q", f"textpile-{host}", "-n", host, "--", "--pool", "solo"]
    return subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _wait_for_workers(env: dict, broker: str, workers: dict[str, subprocess.Popen], logs: Path) -> None:
    """Until every worker answers ``celery inspect ping`` through ``broker``; a worker that
    exits or stays silent fails the test with the end of its log."""
    hosts = set(workers)
    deadline = time.monotonic() + STARTUP_S
    celery = str(Path(sys.executable).with_name("celery"))
    while time.monotonic() < deadline:
        found = subprocess.run([celery, "-A", "dagster_celery.app", "-b", broker, "inspect", "ping", "--timeout", "2"],
                               env=env, capture_output=True, text=True, timeout=60).stdout
        if all(f"{host}@" in found for host in hosts):
            return
        for host, worker in workers.items():
            if worker.poll() is not None:
                raise AssertionError(f"worker {host} exited ({worker.returncode}): "
                                     f"{(logs / f'worker-{host}.log').read_text(errors='replace')[-3000:]}")
        time.sleep(1)
    tails = {host: (logs / f"worker-{host}.log").read_text(errors="replace")[-1500:] for host in hosts}
    raise AssertionError(f"workers {sorted(hosts)} did not answer within {STARTUP_S:g} s: {tails}")


def _stop(worker: subprocess.Popen) -> None:
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def _workers_of_steps(instance, run_id) -> dict[str, str]:
    """{step key: the Celery worker (hostname) that ran it}, from the worker's engine events."""
    ran = {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None or event.event_type_value != "ENGINE_EVENT" or event.step_key is None:
            continue
        metadata = event.event_specific_data.metadata or {}
        if "Celery worker" in metadata:
            ran[event.step_key] = metadata["Celery worker"].value
    return ran


def test_each_shards_steps_run_on_its_hosts_worker(tmp_path, redis_url, monkeypatch, capsys):
    servers = {shard: _site(shard, None) for shard in SHARDS}
    for server in servers.values():
        server.__enter__()
    home = tmp_path / "dagster_home"
    home.mkdir()
    folders = {"alpha": tmp_path / "host_alpha", "beta": tmp_path / "host_beta"}
    try:
        urls = {s: servers[s].base_url for s in SHARDS}
        table = tmp_path / "shards.toml"
        table.write_text(
            'shards = ["a", "b", "c"]\n[overrides]\n' + "".join(f'"{urls[s]}" = "{s}"\n' for s in SHARDS)
            + "[hosts]\n" + "".join(f'{s} = "{HOSTS[s]}"\n' for s in SHARDS)
            + "[folders]\n" + "".join(f'{s} = "{folders[HOSTS[s]] / s}"\n' for s in SHARDS), "utf-8")
        config = write_config(tmp_path / "crawl.toml", [urls[s] + "/" for s in SHARDS])
        celery_yaml = tmp_path / "celery.yaml"
        celery_yaml.write_text(f"execution:\n  config:\n    broker: '{redis_url}/0'\n    backend: '{redis_url}/1'\n")
        env = {**os.environ, "DAGSTER_HOME": str(home), ENV_SHARDS: str(table), ENV_CONFIG: str(config),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
        # the instance's storage is made here, once, before the workers open it (made by
        # three processes at once, its schema version could be stamped twice)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            key = new_crawl_run_key()
            instance.add_dynamic_partitions(CRAWL_RUNS, [key])
            workers = {host: _start_worker(host, env, celery_yaml, tmp_path / f"worker-{host}.log")
                       for host in folders}
            try:
                _wait_for_workers(env, f"{redis_url}/0", workers, tmp_path)
                monkeypatch.setenv(ENV_SHARDS, str(table))
                monkeypatch.setenv(ENV_CONFIG, str(config))
                recon = ReconstructableRepository.for_module("textpile_dagster.definitions", "defs",
                                                             working_directory=str(tmp_path))
                job = recon.get_reconstructable_job("shards_celery_job")
                run_config = {"execution": {"config": {"broker": f"{redis_url}/0", "backend": f"{redis_url}/1"}}}
                with dg.execute_job(job, instance=instance, run_config=run_config,
                                    tags={"dagster/partition": key}) as result:
                    failures = [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
                    assert result.success, failures
                    ran = _workers_of_steps(instance, result.run_id)
            finally:
                for worker in workers.values():
                    _stop(worker)
        # every step of a shard ran on the worker of its host, and only there
        assert {step: worker.split("@")[0] for step, worker in ran.items()} == {
            f"shard_{s}__{asset}": HOSTS[s] for s in SHARDS for asset in ASSETS}
        shards = load_shards(table)
        for shard in SHARDS:
            folder = shards.folder(shard)
            assert folder == folders[HOSTS[shard]] / shard
            assert _crawled_origins(folder) == [urls[shard]]
            assert _hits(folder, WORDS[shard]) == [urls[shard] + "/", urls[shard] + "/more"]
        assert sorted(p.name for p in folders["alpha"].iterdir()) == ["a", "c"]
        assert sorted(p.name for p in folders["beta"].iterdir()) == ["b"]
        # the published shards answer one search together: every /more page has "habits"
        capsys.readouterr()
        published = [arg for s in SHARDS for arg in ("-s", str(shards.folder(s) / "published" / "summary.db"))]
        assert main(["search", *published, "--mode", "keyword", "--time-limit-ms", "120000", "--format", "json",
                     "habits"]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert sorted(hit["url"] for hit in answer["list"]) == sorted(urls[s] + "/more" for s in SHARDS)
        assert answer["partial"] is False
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)

