"""A sharded deployment under Dagster: the pipeline once per shard, each shard's files
written only by its own steps (pool per shard), shards side by side under the
multiprocess executor. Three sites on 127.0.0.1, one per shard (overrides)."""

import sqlite3
import threading
from contextlib import closing

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from conftest import page, write_config
from sites import Response, SiteServer
from textpile.search.engine import search
from textpile.shards.config import load_shards
from textpile.store.gen2_piles import register_functions
from textpile_dagster.assets import CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.assets.shards import shard_pool
from textpile_dagster.definitions import build_definitions
from textpile_dagster.resources import PipelineSettings
from textpile_dagster.resources.settings import ENV_CONFIG, ENV_SHARDS

SHARDS = ("a", "b", "c")
WORDS = {"a": "aardvark", "b": "bassoon", "c": "cassowary"}
#: How long a site's start page waits for another shard's crawl to arrive: a ceiling,
#: never reached when shards run side by side, below the crawler's 30 s answer deadline.
MEETING_S = 25.0


class Meeting:
    """Start pages that answer once two sites have been asked for theirs: proof, without
    timing, that two shards crawled at the same time (``met`` False when one waited in vain)."""

    def __init__(self) -> None:
        self.arrived: set[str] = set()
        self.met: dict[str, bool] = {}
        self.changed = threading.Condition()

    def start_page(self, shard: str):
        def answer(request):
            with self.changed:
                self.arrived.add(shard)
                self.changed.notify_all()
                self.met[shard] = self.changed.wait_for(lambda: len(self.arrived) >= 2, timeout=MEETING_S)
            return Response(200, page(f"{WORDS[shard]} home", f"The {WORDS[shard]} pages.", ["/more"]))
        return answer


def _site(shard: str, meeting: Meeting | None) -> SiteServer:
    word = WORDS[shard]
    return SiteServer({
        "/robots.txt": Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
        "/": meeting.start_page(shard) if meeting else Response(200, page(f"{word} home", f"The {word} pages.",
                                                                           ["/more"])),
        "/more": Response(200, page(f"More {word}", f"Everything about the {word} and its habits.", ["/"])),
    })


@pytest.fixture
def deployment(tmp_path, request):
    """Three sites, a shard table sending each to its own shard, a crawl configuration
    with all three seeds; yields (table path, config path, {shard: base_url})."""
    meeting = Meeting() if getattr(request, "param", False) else None
    servers = {shard: _site(shard, meeting) for shard in SHARDS}
    for server in servers.values():
        server.__enter__()
    try:
        table = tmp_path / "shards.toml"
        overrides = "\n".join(f'"{servers[s].base_url}" = "{s}"' for s in SHARDS)
        table.write_text(f'shards = ["a", "b", "c"]\nroot = "data"\n[overrides]\n{overrides}\n', "utf-8")
        config = write_config(tmp_path / "crawl.toml", [servers[s].base_url + "/" for s in SHARDS])
        yield table, config, {s: servers[s].base_url for s in SHARDS}, meeting
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)


def _crawled_origins(folder):
    with closing(sqlite3.connect(folder / "crawler.db")) as conn:
        return sorted(r[0] for r in conn.execute(
            "SELECT DISTINCT o.str_origin FROM crawl_log c JOIN url u USING (url_id) JOIN origin o USING (origin_id)"))


def _hits(folder, word):
    published = folder / "published" / "summary.db"
    with closing(register_functions(sqlite3.connect(f"file:{published}?mode=ro", uri=True))) as conn:
        return sorted(h.url for h in search(conn, word).results)


def _assert_each_shard_holds_its_site(table, urls):
    shards = load_shards(table)
    for shard in SHARDS:
        folder = shards.folder(shard)
        assert _crawled_origins(folder) == [urls[shard]]  # only its own site
        assert _hits(folder, WORDS[shard]) == [urls[shard] + "/", urls[shard] + "/more"]
        for other in set(SHARDS) - {shard}:
            assert _hits(folder, WORDS[other]) == []


def test_each_shard_runs_its_pipeline_on_its_own_folder(deployment):
    table, config, urls, _ = deployment
    defs = build_definitions(PipelineSettings(config_path=config, shard_table=table))
    job = defs.resolve_job_def("shards_job")
    # seven assets per shard, each in its shard's pool and tagged with its shard
    nodes = {node.name: node for node in job.graph.node_dict.values()}
    assert len(nodes) == 21
    for shard in SHARDS:
        for asset in ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
                      "published_index"):
            node = nodes[f"shard_{shard}__{asset}"]
            assert node.definition.pool == shard_pool(shard) == f"textpile_shard_{shard}"
            assert node.tags["textpile/shard"] == shard
            assert "dagster-celery/queue" not in node.tags  # the table names no hosts
    with dg.instance_for_test() as instance:
        key = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        result = job.execute_in_process(instance=instance, partition_key=key, raise_on_error=False)
        assert result.success, [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
    _assert_each_shard_holds_its_site(table, urls)
    # each published shard has its pages' vectors (the semantic and hybrid modes)
    shards = load_shards(table)
    for shard in SHARDS:
        with closing(sqlite3.connect(shards.folder(shard) / "published" / "summary.db")) as conn:
            assert conn.execute("SELECT count(*) FROM page_embedding").fetchone() == (2,)


def _step_processes(instance, run_id):
    """{step key: (pid, start, end)} from the run's event log."""
    steps: dict[str, list] = {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None or event.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            steps[event.step_key] = [event.pid, record.timestamp, None]
        elif event.event_type_value == "STEP_SUCCESS":
            steps[event.step_key][2] = record.timestamp
    return {k: tuple(v) for k, v in steps.items()}


@pytest.mark.parametrize("deployment", [True], indirect=True)
def test_the_multiprocess_executor_crawls_shards_side_by_side(tmp_path, deployment, monkeypatch):
    table, config, urls, meeting = deployment
    monkeypatch.setenv(ENV_SHARDS, str(table))
    monkeypatch.setenv(ENV_CONFIG, str(config))
    recon = ReconstructableRepository.for_module("textpile_dagster.definitions", "defs", working_directory=str(tmp_path))
    job = recon.get_reconstructable_job("shards_job")
    (tmp_path / "dagster_home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster_home"),
                              overrides={"concurrency": {"pools": {"default_limit": 1}}}) as instance:
        key = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        crawls = [dg.AssetKey([f"shard_{shard}", "crawl_run"]) for shard in SHARDS]
        with dg.execute_job(job, instance=instance, tags={"dagster/partition": key},
                            asset_selection=crawls) as result:
            assert result.success, [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
            pids = {step: pid for step, (pid, _, _) in _step_processes(instance, result.run_id).items()}
    # two start pages were asked for at once: two shards crawled side by side, each in a process of its own
    assert sum(meeting.met.values()) >= 2, meeting.met
    assert len({pids[f"shard_{shard}__crawl_run"] for shard in SHARDS}) == 3
    shards = load_shards(table)
    for shard in SHARDS:
        assert _crawled_origins(shards.folder(shard)) == [urls[shard]]


def test_shards_crawl_now_adds_a_partition_and_requests_every_shard(deployment):
    table, config, _, _ = deployment
    defs = build_definitions(PipelineSettings(config_path=config, shard_table=table))
    repo = defs.get_repository_def()
    sensor = repo.get_sensor_def("shards_crawl_now")
    with dg.instance_for_test() as instance:
        with dg.SensorEvaluationContext(
            instance.get_ref(), last_tick_completion_time=None, last_run_key=None, cursor=None, log_key=None,
            repository_name=repo.name, repository_def=repo, sensor_name="shards_crawl_now",
            resources={"shards": repo.get_top_level_resources()["shards"]}, last_sensor_start_time=None,
        ) as context:
            data = sensor.evaluate_tick(context)
    [request] = data.run_requests
    [add] = data.dynamic_partitions_requests
    assert add == dg.AddDynamicPartitionsRequest(partitions_def_name=CRAWL_RUNS, partition_keys=[request.partition_key])
    assert request.job_name in (None, "shards_job") and sensor.job_name == "shards_job"
    assert request.tags["textpile/trigger"] == "shards_crawl_now"

