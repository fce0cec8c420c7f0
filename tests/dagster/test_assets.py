"""The asset graph materialized against a site on 127.0.0.1: two crawl runs, a backfill."""

import sqlite3
import time
from contextlib import closing

import dagster as dg
import pytest

from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS, CRAWL_RUNS, new_crawl_run_key
from textpile_dagster.assets.checks import schema_versions, summary_outcomes
from conftest import ChangingSite, page, write_config
from textpile_dagster.resources import PipelineSettings, RecordedHttpFetcher, RecordedResponse, build_resources
from textpile.search.engine import search
from textpile.store.gen2_piles import register_functions

EVERYTHING = [*ALL_ASSETS, *ALL_CHECKS]


def _run(instance, settings, key, selection=None):
    result = dg.materialize(EVERYTHING, instance=instance, resources=build_resources(settings),
                            partition_key=key, selection=selection, raise_on_error=False)
    assert result.success, [str(e.step_failure_data.error.cause or e.step_failure_data.error)
                            for e in result.get_step_failure_events()]
    return result


def _metadata(result, asset):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey(asset)]
    return {k: getattr(v, "value", v) for k, v in event.event_specific_data.materialization.metadata.items()}


def _checks(result):
    return {(c.asset_key.to_user_string(), c.check_name): c.passed for c in result.get_asset_check_evaluations()}


def _dump(path):
    """Every row of every table (FTS included, shadow tables excluded), sorted."""
    with closing(register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'full_text_entity_index_%' ORDER BY name")]
        dump = {}
        for table in tables:
            rowid = ", rowid" if table == "full_text_entity_index" else ""
            dump[table] = sorted(conn.execute(f"SELECT *{rowid} FROM {table}").fetchall(), key=repr)
        return dump


def _generations(path, base_url):
    with closing(register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))) as conn:
        rows = conn.execute(
            "SELECT url.str_url, eg.first_seen_unix_utc, eg.last_seen_unix_utc, eg.confirmed_end_unix_utc, "
            "eg.marked_duplicate, eg.text_pile_id IS NOT NULL FROM entity_generation eg "
            "JOIN url ON url.url_id = eg.url_id ORDER BY url.str_url, eg.first_seen_unix_utc")
        gens = {}
        for url, first, last, end, dup, pile in rows:
            gens.setdefault(url.removeprefix(base_url), []).append((first, last, end, dup, pile))
        return gens


@pytest.fixture
def site():
    s = ChangingSite()
    with s.server:
        yield s


def test_two_crawl_runs_a_recrawl_and_a_backfill(tmp_path, site):
    config = write_config(tmp_path / "crawl.toml", [site.base_url + "/"])
    first_settings = PipelineSettings(data_dir=tmp_path / "data", config_path=config)
    recrawl_settings = PipelineSettings(data_dir=tmp_path / "data", config_path=config, force_recrawl=True)
    with dg.instance_for_test() as instance:
        first = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [first])
        result = _run(instance, first_settings, first)
        crawl = _metadata(result, "crawl_run")
        # Four pages and robots.txt (a crawl log entry of crawl type robotstxt_fetch).
        assert (crawl["pages"], crawl["total_requests"], crawl["exit_code_counts"]) == (4, 5, {"file_ingested": 5})
        assert crawl["dagster/row_count"] == 5
        [record] = crawl["exit_codes"].records
        assert record.data == {"exit_code": 20, "name": "file_ingested", "crawl_log_entries": 5}
        assert [c.name for c in crawl["exit_codes"].schema.columns] == ["exit_code", "name", "crawl_log_entries"]
        summary = _metadata(result, "summary_db")
        assert summary["partitions_integrated"] == [first]
        assert summary["generations_opened"] == 4
        assert summary["generations_closed"] == 0
        assert _metadata(result, "fts_index")["rows"] == 4
        assert all(_checks(result).values()) and len(_checks(result)) == 5
        published = tmp_path / "data" / "published" / "summary.db"
        assert _metadata(result, "published_index")["fts_rows"] == 4
        with closing(register_functions(sqlite3.connect(f"file:{published}?mode=ro", uri=True))) as conn:
            hits = search(conn, "pumpernickel")
            assert [h.url for h in hits.results] == [site.base_url + "/b"]
        after_first = _generations(tmp_path / "data" / "summary.db", site.base_url)

        time.sleep(1.1)  # so that last_seen of the recrawl is a later second
        site.bump()
        second = new_crawl_run_key()
        assert second > first
        instance.add_dynamic_partitions(CRAWL_RUNS, [second])
        result = _run(instance, recrawl_settings, second)
        assert _metadata(result, "crawl_run")["pages"] == 4
        summary = _metadata(result, "summary_db")
        assert summary["partitions_integrated"] == [second]
        assert summary["partitions_already_integrated"] == 1
        assert (summary["generations_opened"], summary["generations_closed"], summary["self_duplicates"]) == (1, 1, 3)
        # 4 pages + the new /b + the summarizer's closed, pile-less generation of robots.txt.
        assert summary["db_generations"] == 6
        assert summary["db_open_generations"] == 4
        assert summary["db_searchable_generations"] == 4
        assert _metadata(result, "fts_index")["rows"] == 4
        assert all(_checks(result).values()) and len(_checks(result)) == 5

        gens = _generations(tmp_path / "data" / "summary.db", site.base_url)
        assert sorted(gens) == ["/", "/a", "/b", "/c", "/robots.txt"]
        assert gens["/robots.txt"] == after_first["/robots.txt"]
        [(_, _, robots_end, _, robots_pile)] = gens["/robots.txt"]
        assert robots_end is not None and robots_pile == 0
        for path in ("/", "/a", "/c"):
            [(first_seen, last_seen, end, dup, pile)] = gens[path]
            [(old_first, old_last, _, _, _)] = after_first[path]
            assert (first_seen, end, dup, pile) == (old_first, None, 0, 1)
            assert last_seen > old_last  # moved by the self-duplicate crawl
        [(b1_first, _, b1_end, _, b1_pile), (b2_first, _, b2_end, _, b2_pile)] = gens["/b"]
        assert b1_end == b2_first and b2_end is None and b1_pile == b2_pile == 1
        with closing(register_functions(sqlite3.connect(f"file:{published}?mode=ro", uri=True))) as conn:
            assert [h.url for h in search(conn, "quinoa").results] == [site.base_url + "/b"]
            assert search(conn, "pumpernickel").results == []

        # Backfill: re-stage and re-scrape the first partition, integrate, rebuild FTS: no change.
        before = _dump(tmp_path / "data" / "summary.db")
        result = _run(instance, first_settings, first,
                      selection=["crawl_log_staging", "scrape_results", "summary_db", "fts_index"])
        summary = _metadata(result, "summary_db")
        assert summary["partitions_integrated"] == [first]
        assert (summary["crawls_integrated"], summary["generations_opened"]) == (0, 0)
        assert summary["crawls_skipped"] == _metadata(result, "crawl_log_staging")["crawl_log_entries"] > 0
        assert all(_checks(result).values()) and len(_checks(result)) == 5
        assert _dump(tmp_path / "data" / "summary.db") == before

        with closing(register_functions(sqlite3.connect(tmp_path / "data" / "summary.db"))) as conn:
            assert all(o.passed for o in summary_outcomes(conn).values())
        assert schema_versions(str(tmp_path / "data" / "crawler.db"), str(tmp_path / "data" / "summary.db")).passed
        assert sorted(instance.get_dynamic_partitions(CRAWL_RUNS)) == [first, second]

        # A crawl run happens once: materializing crawl_run of the first partition again fails
        # clearly and leaves the crawler database as it was.
        crawler = tmp_path / "data" / "crawler.db"
        before = _dump(crawler)
        again = dg.materialize(EVERYTHING, instance=instance, resources=build_resources(first_settings),
                               partition_key=first, selection=["crawl_run"], raise_on_error=False)
        assert not again.success
        [failure] = again.get_step_failure_events()
        assert f"crawl run {first} already took place" in str(failure.step_failure_data.error)
        assert _dump(crawler) == before


def test_offline_crawl_from_recorded_responses(tmp_path):
    origin = "http://recorded.example"
    recorded = [
        RecordedResponse(url=f"{origin}/robots.txt", headers={"content-type": "text/plain"}, body="User-agent: *\n"),
        RecordedResponse(url=f"{origin}/", body=page("Recorded index", "Recorded walrus chronicles.", ["/one"])),
        RecordedResponse(url=f"{origin}/one", body=page("Recorded one", "A recorded narwhal page.", ["/"])),
    ]
    config = tmp_path / "crawl.toml"
    config.write_text(f'seeds = ["{origin}/"]\ndefault_delay_ms = 0\nmax_commands_per_run = 20\n'
                      'recrawl_interval = "1 day"\nuser_agent = "textpile-test/0.1"\n')
    settings = PipelineSettings(data_dir=tmp_path / "data", config_path=config,
                                http_fetcher=RecordedHttpFetcher(responses=recorded))
    with dg.instance_for_test() as instance:
        key = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        result = _run(instance, settings, key)
        assert _metadata(result, "crawl_run")["pages"] == 2
        assert _metadata(result, "fts_index")["rows"] == 2
        assert all(_checks(result).values())
        with closing(register_functions(sqlite3.connect(tmp_path / "data" / "published" / "summary.db"))) as conn:
            assert [h.url for h in search(conn, "narwhal").results] == [f"{origin}/one"]
