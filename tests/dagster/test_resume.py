"""Pipeline resume (issue 12): runs left STARTED by a dead process are marked failed with
the reason, a killed crawl run is closed by the next start, and every crawl log entry is
summarized by the next run, whichever crawl run wrote it."""

import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path

import dagster as dg
from dagster._core.launcher import DefaultRunLauncher

from conftest import write_config
from kills import crawl_log_entries, dead_pid, killable_env
from sites import Response, SiteServer
from textpile.cli import main
from textpile.cli.pipeline_supervisor import NOT_STOPPED, STOP_GRACE_S
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.processes import ProcessId, this_process
from textpile_dagster.assets import crawl_run
from textpile_dagster.assets.partitions import CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.resources import PipelineSettings, build_resources
from textpile_dagster.sensors import recrawl_tick
from textpile_dagster.sensors.runs import fail_dead_runs, process_tags
from textpile.store.gen2_piles import register_functions


def _started_run(instance, job_name: str, tags: dict[str, str]) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(dg.DagsterRun(job_name=job_name, run_id=run_id, status=dg.DagsterRunStatus.STARTED,
                                   tags=tags))
    return run_id


def test_runs_of_dead_processes_are_marked_failed_with_the_reason(tmp_path):
    me = this_process()
    host = socket.gethostname()
    dead = dead_pid()
    with dg.instance_for_test() as instance:
        gone = _started_run(instance, "crawl_job", process_tags(ProcessId(host, dead, None)))
        alive = _started_run(instance, "crawl_job", process_tags(me))
        reused = _started_run(instance, "pipeline_job", process_tags(ProcessId(host, me.pid, me.started_unix - 60)))
        elsewhere = _started_run(instance, "crawl_job", process_tags(ProcessId("another-host", dead, None)))
        untagged = _started_run(instance, "crawl_job", {})
        lines = fail_dead_runs(instance, by="a test")
        assert lines == [
            f"run {reused} (pipeline_job): the process that ran it (pid {me.pid} on {host}) ended while the run "
            "was started (killed?); marked failed by a test",
            f"run {gone} (crawl_job): the process that ran it (pid {dead} on {host}) ended while the run was "
            "started (killed?); marked failed by a test",
        ]
        status = {run_id: instance.get_run_by_id(run_id).status for run_id in (gone, alive, reused, elsewhere, untagged)}
        assert status == {gone: dg.DagsterRunStatus.FAILURE, alive: dg.DagsterRunStatus.STARTED,
                          reused: dg.DagsterRunStatus.FAILURE, elsewhere: dg.DagsterRunStatus.STARTED,
                          untagged: dg.DagsterRunStatus.STARTED}
        [failure] = instance.all_logs(gone, of_type=dg.DagsterEventType.RUN_FAILURE)
        assert failure.message.endswith(f"the process that ran it (pid {dead} on {host}) ended while the run was "
                                        "started (killed?); marked failed by a test")
        assert fail_dead_runs(instance, by="a test") == []


def _run_started_by_the_run_launcher(instance, pid: int, at_unix: float) -> str:
    """A run as ``dagster dev`` (the DefaultRunLauncher) leaves it: no textpile tags, a
    RUN_START event written by its run worker, process ``pid``, at ``at_unix``."""
    run_id = _started_run(instance, "pipeline_job", {})
    event = dg.DagsterEvent(event_type_value=dg.DagsterEventType.RUN_START.value, job_name="pipeline_job",
                            message="Started execution of run for \"pipeline_job\".", pid=pid)
    instance.store_event(dg.EventLogEntry(error_info=None, level="DEBUG", user_message="", run_id=run_id,
                                          timestamp=at_unix, job_name="pipeline_job", dagster_event=event))
    return run_id


def test_runs_of_dead_run_workers_of_the_run_launcher_are_marked_failed(tmp_path):
    """Runs launched from the UI, a schedule or a sensor carry no textpile tags: their run
    worker's pid comes from the RUN_START event. A pid now held by a process that began
    after that event is another process."""
    me = this_process()
    dead = dead_pid()
    with dg.instance_for_test() as instance:
        assert isinstance(instance.run_launcher, DefaultRunLauncher)
        gone = _run_started_by_the_run_launcher(instance, dead, time.time())
        alive = _run_started_by_the_run_launcher(instance, me.pid, time.time())
        reused = _run_started_by_the_run_launcher(instance, me.pid, me.started_unix - 60)
        lines = fail_dead_runs(instance, by="the crawl_now sensor")
        assert sorted(lines) == sorted([
            f"run {gone} (pipeline_job): the process that ran it (pid {dead}) ended while the run was started "
            "(killed?); marked failed by the crawl_now sensor",
            f"run {reused} (pipeline_job): the process that ran it (pid {me.pid}) ended while the run was started "
            "(killed?); marked failed by the crawl_now sensor",
        ])
        status = {run_id: instance.get_run_by_id(run_id).status for run_id in (gone, alive, reused)}
        assert status == {gone: dg.DagsterRunStatus.FAILURE, alive: dg.DagsterRunStatus.STARTED,
                          reused: dg.DagsterRunStatus.FAILURE}


def test_recrawl_goes_on_after_a_crawl_run_of_a_dead_process(tmp_path):
    with dg.instance_for_test() as instance:
        stuck = _started_run(instance, "crawl_job", process_tags(ProcessId(socket.gethostname(), dead_pid(), None)))
        result = recrawl_tick(instance, 86_400, int(time.time() * 1000))
        assert isinstance(result, dg.SensorResult) and len(result.run_requests) == 1
        assert instance.get_run_by_id(stuck).status == dg.DagsterRunStatus.FAILURE
        # A live crawl run still holds the next one back.
        _started_run(instance, "crawl_job", process_tags())
        skip = recrawl_tick(instance, 86_400, int(time.time() * 1000))
        assert isinstance(skip, dg.SkipReason) and skip.skip_message.endswith(" is still started")


def test_crawl_run_materializes_the_partition_of_a_run_it_closed(tmp_path, changing_site):
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"])
    settings = PipelineSettings(data_dir=tmp_path / "data", config_path=config)
    resources = build_resources(settings)
    killed, new = new_crawl_run_key(), None
    (tmp_path / "data").mkdir()
    # A crawl run whose process died: its agent row has no end.
    run_crawl(load_config(config), settings.crawler_db, agent_uuid=uuid.UUID(hex=killed), progress=False)
    with closing(register_functions(sqlite3.connect(settings.crawler_db))) as conn, conn:
        conn.execute("UPDATE agent SET time_finished_unix_utc = NULL")
        entries = conn.execute("SELECT count(*) FROM crawl_log").fetchone()[0]
    with dg.instance_for_test() as instance:
        new = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [killed, new])
        result = dg.materialize([crawl_run], partition_key=new, instance=instance, resources=resources)
        assert result.success
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("crawl_run"), asset_partitions=[killed]), limit=5).records
        [record] = records
        materialization = record.event_log_entry.asset_materialization
        assert materialization.description == (f"closed crawl run {killed}: its process ended without finishing "
                                                f"it; its {entries} crawl log entries are kept")
        assert materialization.metadata["closed_by_crawl_run"].value == new
        assert materialization.metadata["dagster/row_count"].value == entries


def test_pipeline_killed_during_its_crawl_is_resumed_by_the_next(tmp_path, capsys):
    """The issue's case: ``textpile pipeline`` killed during crawl_run; the next pipeline
    marks the run failed, closes the crawl run, stages and scrapes its entries, then
    crawls the rest: every crawl log entry ends up in the summary and the published index."""
    pages = [f"/p{i}.html" for i in range(8)]
    hold = threading.Event()
    served = []

    def leaf(request):
        served.append(request.path)
        if len(served) > 4:
            hold.wait(300)
        return Response(200, f"<html><head><title>Page {request.path}</title></head><body><main><p>"
                             f"{request.path} tells of numbats and bilbies {' '.join(['x'] * 40)}</p></main></body></html>")

    routes = {"/robots.txt": Response(404),
              "/": Response(200, "<title>Index</title>" + "".join(f'<a href="{p}">{p}</a>' for p in pages)),
              **{p: leaf for p in pages}}
    data = tmp_path / "data"
    env = killable_env(tmp_path)
    with SiteServer(routes) as site:
        config = write_config(tmp_path / "crawl.toml", [site.base_url + "/"])
        command = [str(Path(sys.executable).with_name("textpile")), "pipeline", "--config", str(config),
                   "--data-dir", str(data), "--no-progress"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 300
        while crawl_log_entries(data / "crawler.db") < 6 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        out, err = first.communicate(timeout=60)
        hold.set()
        assert crawl_log_entries(data / "crawler.db") == 6, err  # robots.txt, /, four pages; the others held
        with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
            [stuck] = instance.get_runs()
            assert stuck.status == dg.DagsterRunStatus.STARTED
            [killed] = instance.get_dynamic_partitions(CRAWL_RUNS)
        assert main(["pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        f"textpile pipeline: run {stuck.run_id} (pipeline_job): the process that ran it (pid {first.pid} on "
        f"{socket.gethostname()}) ended while the run was started (killed?); marked failed by textpile pipeline "
        "at its start\n"
        f"textpile pipeline: closed crawl run {killed}: its process ended without finishing it; its 6 crawl log "
        "entries are kept\n"
        f"textpile pipeline: crawl run {killed}: 6 crawl log entries not yet summarized; staging and scraping "
        "them first\n"), err
    with closing(register_functions(sqlite3.connect(data / "crawler.db"))) as conn:
        crawl_uuids = {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_log")}
        pages_crawled = sorted(r[0] for r in conn.execute(
            "SELECT u.str_url FROM crawl_log l JOIN url u USING(url_id) WHERE crawl_type = 0 AND exit_code = 20"))
    assert pages_crawled == sorted([site.base_url + "/", *(site.base_url + p for p in pages)])  # each once
    with closing(register_functions(sqlite3.connect(data / "published" / "summary.db"))) as conn:
        assert {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_summary")} == crawl_uuids
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] == 9
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        statuses = sorted(run.status.value for run in instance.get_runs())
        assert statuses == ["FAILURE", "SUCCESS", "SUCCESS"]  # the killed run, the resume run, the new run
        assert instance.get_run_by_id(stuck.run_id).status == dg.DagsterRunStatus.FAILURE


def test_pipeline_stopped_by_sigterm_stops_its_crawl_cleanly_and_is_resumed(tmp_path, capsys):
    """SIGTERM during crawl_run: the crawl stops as with Ctrl+C (its crawl run ends, what
    it crawled is materialized), the pipeline exits 143 saying where; the next pipeline
    stages and scrapes that crawl run first and has nothing to close or mark failed."""
    pages = [f"/p{i}.html" for i in range(6)]
    hold = threading.Event()
    served = []

    def leaf(request):
        served.append(request.path)
        if len(served) > 2:
            hold.wait(300)
        return Response(200, f"<html><head><title>Page {request.path}</title></head><body><main><p>"
                             f"{request.path} on quokkas and dunnarts {' '.join(['y'] * 40)}</p></main></body></html>")

    routes = {"/robots.txt": Response(404),
              "/": Response(200, "<title>Index</title>" + "".join(f'<a href="{p}">{p}</a>' for p in pages)),
              **{p: leaf for p in pages}}
    data = tmp_path / "data"
    env = killable_env(tmp_path)
    with SiteServer(routes) as site:
        config = write_config(tmp_path / "crawl.toml", [site.base_url + "/"])
        first = subprocess.Popen([str(Path(sys.executable).with_name("textpile")), "pipeline", "--config", str(config),
                                  "--data-dir", str(data), "--no-progress"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 300
        while crawl_log_entries(data / "crawler.db") < 4 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=120)
        hold.set()
        assert first.returncode == 143, err
        with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
            [stopped] = instance.get_runs()
            [key] = instance.get_dynamic_partitions(CRAWL_RUNS)
            assert instance.get_materialized_partitions(dg.AssetKey("crawl_run")) == {key}
        # (its supervisor ends the processes still there 7 s after the signal: on a loaded
        # machine the pipeline's teardown after the step can take that long)
        assert err.replace(NOT_STOPPED.format(grace_s=STOP_GRACE_S) + "\n", "").endswith(
            f"textpile pipeline: interrupted during crawl_run (run {stopped.run_id}); what was done is kept, and the "
            "next textpile pipeline resumes from there\ntextpile: stopped by SIGTERM\n"), err
        assert "Traceback" not in err
        with closing(register_functions(sqlite3.connect(data / "crawler.db"))) as conn:
            assert conn.execute("SELECT count(*) FROM agent WHERE time_finished_unix_utc IS NULL").fetchone() == (0,)
            kept = conn.execute("SELECT count(*) FROM crawl_log").fetchone()[0]
        assert main(["pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"textpile pipeline: crawl run {key}: {kept} crawl log entries not yet summarized; "
                          "staging and scraping them first\n"), err
    with closing(register_functions(sqlite3.connect(data / "crawler.db"))) as conn:
        crawl_uuids = {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_log")}
    with closing(register_functions(sqlite3.connect(data / "published" / "summary.db"))) as conn:
        assert {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_summary")} == crawl_uuids
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] == 7


def test_pipeline_killed_in_summary_db_frees_its_pool_slot(tmp_path, changing_site):
    """summary_db runs in the pool textpile_summary_db (one at a time). Killed there, the
    dead run kept its slot and every later summary_db waited for it for good; marking
    the run failed frees it, so the next pipeline ends."""
    data = tmp_path / "data"
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"])
    env = killable_env(tmp_path)
    command = [str(Path(sys.executable).with_name("textpile")), "pipeline", "--config", str(config),
               "--data-dir", str(data), "--no-progress"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    for line in first.stderr:
        if line.startswith("[4/7] summary_db ..."):
            first.send_signal(signal.SIGKILL)
            break
    first.communicate(timeout=120)
    assert first.returncode == -signal.SIGKILL
    second = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "marked failed by textpile pipeline at its start" in second.stderr
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        assert sorted(run.status.value for run in instance.get_runs()) == ["FAILURE", "SUCCESS"]
        info = instance.event_log_storage.get_concurrency_info("textpile_summary_db")
        assert info.claimed_slots == []
    with closing(register_functions(sqlite3.connect(data / "published" / "summary.db"))) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] == 4


def test_slots_of_runs_that_ended_holding_them_are_freed(tmp_path):
    """A run killed while it held the textpile_summary_db slot, then marked failed by
    someone else (Dagster's run monitoring, a sensor): its claim stayed, and every later
    summary_db waited for it. The next pipeline's recovery frees it (and the claims of a
    run that is gone), and the next claim of a run at work gets the slot."""
    from textpile.cli.pipeline_run import open_instance

    pool = "textpile_summary_db"
    with open_instance(tmp_path) as instance:  # as textpile pipeline makes it: one slot
        storage = instance.event_log_storage
        storage.initialize_concurrency_limit_to_default(pool)
        failed = _started_run(instance, "pipeline_job", process_tags(this_process()))
        alive = _started_run(instance, "pipeline_job", process_tags(this_process()))
        gone = str(uuid.uuid4())  # its run was deleted
        for run_id in (failed, gone, alive):
            storage.claim_concurrency_slot(pool, run_id, "summary_db")
        assert [slot.run_id for slot in storage.get_concurrency_info(pool).claimed_slots] == [failed]
        instance.report_run_failed(instance.get_run_by_id(failed), message="marked failed by run monitoring")
        lines = fail_dead_runs(instance, by="textpile pipeline at its start")
        assert sorted(lines) == sorted([
            f"run {failed} (FAILURE) ended holding the pool slot of {pool}; freed by textpile pipeline at its start",
            f"run {gone} (gone) ended holding the pool slot of {pool}; freed by textpile pipeline at its start"])
        info = storage.get_concurrency_info(pool)
        assert [step.run_id for step in info.pending_steps] == [alive]
        assert storage.claim_concurrency_slot(pool, alive, "summary_db").is_claimed
        assert fail_dead_runs(instance, by="again") == []
