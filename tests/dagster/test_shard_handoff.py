"""Links between shards under Dagster: each shard's ``crawl_run`` crawls its own sites,
hands the links to the other shard's sites to it, and takes in what the other handed it.
Two sites on 127.0.0.1 linking each other's pages that only those links reach; the crawl
configuration admits a third site (``allow_sites``), crawled by its shard alone."""

import sqlite3
from contextlib import closing

import dagster as dg
import pytest

from conftest import page, write_config
from sites import Response, SiteServer
from textpile.shards.config import load_shards
from textpile_dagster.assets import CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.definitions import build_definitions
from textpile_dagster.resources import PipelineSettings

ROBOTS = Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})


@pytest.fixture
def sites():
    """x (shard a) links y's /hidden-y, y (shard b) links x's /hidden-x; z (shard b) is an
    admitted site. Yields (x, y, z)."""
    x, y, z = SiteServer(), SiteServer(), SiteServer()
    x.routes.update({"/robots.txt": ROBOTS,
                     "/": Response(200, page("Walnut", "Walnut start.", [y.base_url + "/hidden-y"])),
                     "/hidden-x": Response(200, page("Walnut hidden", "Hidden walnut.", ["/"]))})
    y.routes.update({"/robots.txt": ROBOTS,
                     "/": Response(200, page("Quokka", "Quokka start.", [x.base_url + "/hidden-x"])),
                     "/hidden-y": Response(200, page("Quokka hidden", "Hidden quokka.", ["/"]))})
    z.routes.update({"/robots.txt": ROBOTS, "/": Response(200, page("Zither", "Zither start.", []))})
    with x, y, z:
        yield x, y, z


def _crawled(folder):
    with closing(sqlite3.connect(folder / "crawler.db")) as conn:
        return sorted(r[0] for r in conn.execute(
            "SELECT DISTINCT u.str_url FROM crawl_log c JOIN url u USING (url_id) WHERE c.crawl_type = 0"))


def _crawl_runs(job, instance, shards):
    key = new_crawl_run_key()
    instance.add_dynamic_partitions(CRAWL_RUNS, [key])
    result = job.execute_in_process(instance=instance, partition_key=key, raise_on_error=False,
                                    asset_selection=[dg.AssetKey([f"shard_{s}", "crawl_run"]) for s in shards])
    assert result.success, [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
    return {s: result.asset_materializations_for_node(f"shard_{s}__crawl_run")[0].metadata for s in shards}


def test_shards_hand_links_to_each_other_and_crawl_only_their_own_sites(tmp_path, sites):
    x, y, z = sites
    table = tmp_path / "shards.toml"
    table.write_text(f'shards = ["a", "b"]\nroot = "data"\n[overrides]\n"{x.base_url}" = "a"\n'
                     f'"{y.base_url}" = "b"\n"{z.base_url}" = "b"\n', "utf-8")
    config = write_config(tmp_path / "crawl.toml", [x.base_url + "/", y.base_url + "/"])
    config.write_text(config.read_text("utf-8") + f'allow_sites = ["{z.base_url}/"]\n', "utf-8")
    defs = build_definitions(PipelineSettings(config_path=config, shard_table=table))
    job = defs.resolve_job_def("shards_job")
    shards = load_shards(table)
    with dg.instance_for_test() as instance:
        first = _crawl_runs(job, instance, ["a", "b"])  # in process: a, then b
        assert first["a"]["handed_off"].data == {"b": 1}
        assert first["b"]["handoffs_taken"].data == {"a": 1} and first["b"]["handed_off"].data == {"a": 1}
        assert _crawled(shards.folder("a")) == [x.base_url + "/"]
        assert _crawled(shards.folder("b")) == sorted([y.base_url + "/", y.base_url + "/hidden-y", z.base_url + "/"])
        second = _crawl_runs(job, instance, ["a", "b"])
        assert second["a"]["handoffs_taken"].data == {"b": 1}
    assert _crawled(shards.folder("a")) == [x.base_url + "/", x.base_url + "/hidden-x"]
    # z, admitted by the configuration, is b's: a never asked for it (its robots.txt once
    # per run of b, its page once: not due again)
    assert len(z.requests_for("/")) == 1 and len(z.requests_for("/robots.txt")) == 2
    with closing(sqlite3.connect(shards.folder("a") / "crawler.db")) as conn:
        assert conn.execute("SELECT DISTINCT o.str_origin FROM crawl_log c JOIN url u USING (url_id) "
                            "JOIN origin o USING (origin_id)").fetchall() == [(x.base_url,)]
    assert len(x.requests_for("/hidden-x")) == 1 and len(y.requests_for("/hidden-y")) == 1
