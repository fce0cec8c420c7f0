"""Moving a site to another shard: every crawler row arrives, none stays behind, the
summaries and published copies follow, the other site is untouched."""

import sqlite3
from contextlib import closing

import pytest

from dagster_sites import page, write_config
from sites import Response, SiteServer
from textpile.cli import main
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.errors import TextpileError
from textpile.publish import publish
from textpile.shards.config import load_shards, site_of
from textpile.shards.move import MOVED_TABLES, holders_of, move_crawler_rows, move_site, site_rows
from textpile.store.locks import exclusive_lock
from textpile.summarize.pipeline import summarize


def _site(word: str) -> SiteServer:
    return SiteServer({
        "/robots.txt": Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
        "/": Response(200, page(f"{word} index", f"The {word} index page.", ["/one", "/moved", "/gone"])),
        "/one": Response(200, page(f"{word} one", f"First {word} page about lanterns.", ["/"])),
        "/moved": Response(301, "", {"Location": "/one"}),
        "/gone": Response(404, "not here"),
    })


def _summary_rows(path, site):
    """The site's entity generations and integrated crawls in a summary database, without ids."""
    with closing(sqlite3.connect(path)) as conn:
        generations = conn.execute(
            "SELECT u.str_url, g.url_fragment, g.first_seen_unix_utc, g.last_seen_unix_utc, g.confirmed_end_unix_utc, "
            "g.marked_duplicate, g.text_pile_id IS NOT NULL FROM entity_generation g JOIN url u USING (url_id) "
            "JOIN origin o USING (origin_id) WHERE o.str_origin = ? ORDER BY 1, 3", (site,)).fetchall()
        crawls = conn.execute(
            "SELECT c.crawl_uuid, c.exit_code, u.str_url FROM crawl_summary c JOIN entity_generation g "
            "USING (entity_generation_id) JOIN url u USING (url_id) JOIN origin o USING (origin_id) "
            "WHERE o.str_origin = ? ORDER BY 1", (site,)).fetchall()
    return generations, crawls


def _write_table(path, overrides):
    """A shard table of shards a and b with ``overrides`` (origin -> shard)."""
    lines = [f'"{site}" = "{shard}"' for site, shard in overrides.items()]
    path.write_text('shards = ["a", "b"]\n[overrides]\n' + "\n".join(lines) + "\n", "utf-8")
    return path


def _crawler_rows(path, site):
    with closing(sqlite3.connect(path)) as conn:
        return site_rows(conn, site)


@pytest.fixture
def two_sites_on_one_shard(tmp_path):
    first, second = _site("walnut"), _site("quokka")
    with first, second:
        table = _write_table(tmp_path / "shards.toml", {first.base_url: "a", second.base_url: "a"})
        folder = tmp_path / "a"
        folder.mkdir()
        config = load_config(write_config(tmp_path / "crawl.toml", [first.base_url + "/", second.base_url + "/"]))
        report = run_crawl(config, folder / "crawler.db", progress=False)
        assert report.failure is None
        summarize(folder / "crawler.db", folder / "summary.db", progress=False, embeddings=False, scrape_processes=0)
        publish(folder / "summary.db", folder / "published" / "summary.db")
        yield table, site_of(first.base_url), site_of(second.base_url)


def test_move_carries_every_row_and_leaves_none(tmp_path, two_sites_on_one_shard, capsys):
    table, stays, moves = two_sites_on_one_shard
    a, b = tmp_path / "a", tmp_path / "b"
    crawler_before = _crawler_rows(a / "crawler.db", moves)
    staying_before = _crawler_rows(a / "crawler.db", stays)
    summary_before = _summary_rows(a / "summary.db", moves)
    staying_summary = _summary_rows(a / "summary.db", stays)
    # the site really has rows of every kind the crawl makes
    assert {t: len(r) for t, r in crawler_before.items() if r}.keys() >= {"crawl_log", "request", "file", "redirect",
                                                                         "crawl_candidate", "textpile_recrawl",
                                                                         "textpile_page_links"}
    assert len(summary_before[0]) >= 3 and summary_before[1]
    assert holders_of(load_shards(table), moves) == ["a"]

    _write_table(table, {stays: "a", moves: "b"})
    assert load_shards(table).shard_of(moves) == "b" and load_shards(table).shard_of(stays) == "a"

    assert main(["shards", "move", "-t", str(table), moves + "/", "--no-embeddings", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"site = {moves}\ntarget = b\nsources = a\n" in out
    assert f"crawl_log = {len(crawler_before['crawl_log'])}\n" in out

    assert _crawler_rows(b / "crawler.db", moves) == crawler_before
    assert _crawler_rows(a / "crawler.db", moves) == {t: [] for t in MOVED_TABLES}
    assert _crawler_rows(a / "crawler.db", stays) == staying_before
    assert _summary_rows(b / "summary.db", moves) == summary_before
    assert _summary_rows(a / "summary.db", moves) == ([], [])
    assert _summary_rows(a / "summary.db", stays) == staying_summary
    assert _summary_rows(a / "published" / "summary.db", moves) == ([], [])
    assert holders_of(load_shards(table), moves) == ["b"]

    # moving again finds it on its shard already: nothing happens
    assert main(["shards", "move", "-t", str(table), moves, "--no-embeddings", "--no-progress"]) == 0
    assert "sources = (none: already on its shard)" in capsys.readouterr().out
    assert _crawler_rows(b / "crawler.db", moves) == crawler_before


def test_an_interrupted_move_is_finished_by_moving_again(tmp_path, two_sites_on_one_shard):
    table, stays, moves = two_sites_on_one_shard
    a, b = tmp_path / "a", tmp_path / "b"
    before = _crawler_rows(a / "crawler.db", moves)
    # the state a crash between the copy's commit and the deletion's leaves: rows in both
    with closing(sqlite3.connect(a / "crawler.db")) as live, closing(sqlite3.connect(tmp_path / "a.db")) as saved:
        live.backup(saved)
    move_crawler_rows(a / "crawler.db", b / "crawler.db", moves)
    with closing(sqlite3.connect(tmp_path / "a.db")) as saved, closing(sqlite3.connect(a / "crawler.db")) as live:
        saved.backup(live)  # the source as it was before the deletion
    assert holders_of(load_shards(table), moves) == ["a", "b"]
    _write_table(table, {stays: "a", moves: "b"})
    report = move_site(load_shards(table), moves)
    assert report.sources == ["a"] and report.rows["crawl_log"] == 0  # already there, not copied twice
    assert _crawler_rows(b / "crawler.db", moves) == before
    assert _crawler_rows(a / "crawler.db", moves) == {t: [] for t in MOVED_TABLES}


def test_a_running_crawl_stops_the_move_before_anything_moves(tmp_path, two_sites_on_one_shard):
    table, stays, moves = two_sites_on_one_shard
    a = tmp_path / "a"
    before = _crawler_rows(a / "crawler.db", moves)
    _write_table(table, {stays: "a", moves: "b"})
    with exclusive_lock(a / "crawler.db.lock"):
        with pytest.raises(TextpileError, match="a crawl is running on this crawler database"):
            move_site(load_shards(table), moves)
    assert _crawler_rows(a / "crawler.db", moves) == before
    assert not (tmp_path / "b" / "crawler.db").exists()
