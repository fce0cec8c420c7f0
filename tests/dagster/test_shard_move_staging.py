"""A site moved between shards that Dagster runs: ``textpile shards move`` re-stages the
partitions of the site's crawl runs on both shards, so that the next materialization of
either shard's assets (integrating, rebuilding from staging, or a new crawl run) gives
each shard's summary its own sites only, with nothing lost."""

import sqlite3
from contextlib import closing

import dagster as dg
import duckdb
import pytest

from conftest import page, write_config
from sites import Response, SiteServer
from textpile.cli import main
from textpile.search.engine import search
from textpile.shards.config import load_shards
from textpile.store.gen2_piles import register_functions
from textpile_dagster.assets import CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.assets.shards import shard_assets
from textpile_dagster.resources import CrawlConfigResource, RecordedHttpFetcher
from textpile_dagster.resources.http import LiveHttpFetcher
from textpile_dagster.resources.shards import ShardsResource

ROBOTS = Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})


def _site(word: str) -> SiteServer:
    return SiteServer({"/robots.txt": ROBOTS,
                       "/": Response(200, page(f"{word} index", f"The {word} index.", ["/one"])),
                       "/one": Response(200, page(f"{word} one", f"All about the {word}.", ["/"]))})


@pytest.fixture
def deployment(tmp_path):
    """Sites x (walnut) and y (quokka), both on shard a of shards a and b."""
    x, y = _site("walnut"), _site("quokka")
    with x, y:
        table = tmp_path / "shards.toml"
        table.write_text(f'shards = ["a", "b"]\nroot = "data"\n[overrides]\n"{x.base_url}" = "a"\n'
                         f'"{y.base_url}" = "a"\n', "utf-8")
        config = write_config(tmp_path / "crawl.toml", [x.base_url + "/", y.base_url + "/"])
        yield x, y, table, config


def _materialize(instance, table, config, key=None, select=None, run_config=None):
    shards = load_shards(table)
    result = dg.materialize(
        shard_assets(shards), instance=instance, partition_key=key, selection=select, run_config=run_config,
        resources={"shards": ShardsResource(table_path=str(table), crawl_config=CrawlConfigResource(
            config_path=str(config)), scrape_processes=0), "http_fetcher": LiveHttpFetcher()},
        raise_on_error=False)
    assert result.success, [str(e.step_failure_data.error) for e in result.get_step_failure_events()]
    return result


def _hits(folder, word):
    with closing(register_functions(sqlite3.connect(f"file:{folder / 'published' / 'summary.db'}?mode=ro",
                                                    uri=True))) as conn:
        return sorted(h.url for h in search(conn, word).results)


def _staged_urls(folder, key):
    files = sorted((folder / "staging" / key).rglob("crawl_log*.parquet"))
    with duckdb.connect() as con:
        return sorted(r[0] for r in con.execute("SELECT str_url FROM read_parquet(?)", [[str(f) for f in files]])
                      .fetchall()) if files else []


def _summary_sites(folder):
    with closing(sqlite3.connect(folder / "summary.db")) as conn:
        return sorted({r[0] for r in conn.execute(
            "SELECT o.str_origin FROM entity_generation g JOIN url u USING (url_id) JOIN origin o USING (origin_id)")})


def test_a_move_restages_the_site_so_both_shards_materialize_consistently(deployment, capsys):
    x, y, table, config = deployment
    shards = load_shards(table)
    a, b = shards.folder("a"), shards.folder("b")
    X, Y = x.base_url, y.base_url
    with dg.instance_for_test() as instance:
        first = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [first])
        _materialize(instance, table, config, first)
        assert _staged_urls(a, first) == sorted([f"{X}/", f"{X}/one", f"{X}/robots.txt", f"{Y}/", f"{Y}/one",
                                                 f"{Y}/robots.txt"])
        assert _staged_urls(b, first) == []

        table.write_text(table.read_text("utf-8").replace(f'"{Y}" = "a"', f'"{Y}" = "b"'), "utf-8")
        assert main(["shards", "move", "-t", str(table), Y + "/", "--no-embeddings", "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert f"restaged = b:{first}, a:{first}\n" in out
        # the staging areas follow the crawler databases: y's entries left a's partition for b's
        assert _staged_urls(a, first) == sorted([f"{X}/", f"{X}/one", f"{X}/robots.txt"])
        assert _staged_urls(b, first) == sorted([f"{Y}/", f"{Y}/one", f"{Y}/robots.txt"])
        for folder in (a, b):
            assert (folder / "staging" / first / "_textpile_scraped.json").is_file()
            assert (folder / "staging" / first / "_textpile_integrated.json").is_file()

        # integrating: nothing to do, both summaries as the move left them
        summaries = [dg.AssetKey([f"shard_{s}", n]) for s in ("a", "b")
                     for n in ("summary_db", "fts_index", "published_index")]
        _materialize(instance, table, config, select=summaries)
        assert _summary_sites(a) == [X] and _summary_sites(b) == [Y]
        # rebuilding both summaries from their staging areas: the same
        _materialize(instance, table, config, select=summaries, run_config={"ops": {
            f"shard_{s}__summary_db": {"config": {"rebuild": True}} for s in ("a", "b")}})
        assert _summary_sites(a) == [X] and _summary_sites(b) == [Y]
        assert _hits(a, "walnut") == [f"{X}/", f"{X}/one"] and _hits(a, "quokka") == []
        assert _hits(b, "quokka") == [f"{Y}/", f"{Y}/one"] and _hits(b, "walnut") == []

        # a new crawl run of both shards: each crawls its own site, and both summaries keep it
        second = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [second])
        _materialize(instance, table, config, second)
        assert _staged_urls(a, second) == [f"{X}/robots.txt"] and _staged_urls(b, second) == [f"{Y}/robots.txt"]
        assert _hits(a, "walnut") == [f"{X}/", f"{X}/one"] and _hits(a, "quokka") == []
        assert _hits(b, "quokka") == [f"{Y}/", f"{Y}/one"] and _hits(b, "walnut") == []
