"""Links between shards: two sites on 127.0.0.1, each on its own shard, linking to pages of
each other that only those links reach. Each site is crawled by its shard alone; the
cross-links arrive through the finding shard's outbox and the owner's next crawl."""

import sqlite3
import zlib
from contextlib import closing

import pytest

from dagster_sites import page, write_config
from sites import Response, SiteServer
from textpile.crawl.crawldb.sql import CrawlStore
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.shards.config import load_shards
from textpile.shards.handoff import handoff_of, links_into_site, take_handoffs
from textpile.shards.move import move_site
from textpile.store.database import open_crawler_db
from textpile.store.urls import parse_url

ROBOTS = Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})


def _feed(items: list[str]) -> Response:
    entries = "".join(f"<item><title>{url}</title><link>{url}</link></item>" for url in items)
    return Response(200, f'<?xml version="1.0"?><rss version="2.0"><channel><title>feed</title>{entries}'
                         "</channel></rss>", {"Content-Type": "application/rss+xml"})


@pytest.fixture
def linked_sites(tmp_path):
    """Sites x (shard a) and y (shard b): x's start page links y's /hidden-y and announces
    y's feed (which lists y's /from-feed); y's start page links x's /hidden-x. Yields
    (x, y, table path, config)."""
    x, y = SiteServer(), SiteServer()
    x.routes.update({
        "/robots.txt": ROBOTS,
        "/": Response(200, page("Walnut start", "Walnut pages.", ["/x1", y.base_url + "/hidden-y"]).replace(
            "</head>", f'<link rel="alternate" type="application/rss+xml" href="{y.base_url}/feed.xml"></head>')),
        "/x1": Response(200, page("Walnut one", "More walnut.", ["/"])),
        "/hidden-x": Response(200, page("Walnut hidden", "Only the quokka site links this walnut page.", ["/"])),
    })
    y.routes.update({
        "/robots.txt": ROBOTS,
        "/": Response(200, page("Quokka start", "Quokka pages.", ["/y1", x.base_url + "/hidden-x"])),
        "/y1": Response(200, page("Quokka one", "More quokka.", ["/"])),
        "/hidden-y": Response(200, page("Quokka hidden", "Only the walnut site links this quokka page.", ["/"])),
        "/feed.xml": _feed([y.base_url + "/from-feed"]),
        "/from-feed": Response(200, page("Quokka feed item", "A quokka item from the feed.", ["/"])),
    })
    with x, y:
        table = tmp_path / "shards.toml"
        table.write_text(f'shards = ["a", "b"]\n[overrides]\n"{x.base_url}" = "a"\n"{y.base_url}" = "b"\n', "utf-8")
        config = load_config(write_config(tmp_path / "crawl.toml", [x.base_url + "/", y.base_url + "/"]))
        yield x, y, table, config


def _crawl(table, config, shard, force_recrawl=False):
    """One crawl run of ``shard``: its own seeds, handing off the others' links."""
    shards = load_shards(table)
    own = config.model_copy(update={"seeds": shards.seeds_by_shard(config.seeds)[shard]})
    folder = shards.folder(shard)
    folder.mkdir(exist_ok=True)
    report = run_crawl(own, folder / "crawler.db", progress=False, page_readers=0, force_recrawl=force_recrawl,
                       handoff=handoff_of(shards, config.crawl_seeds, shard))
    assert report.failure is None
    return report


def _query(path, sql, params=()):
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql, params).fetchall()


def _crawled(path):
    return sorted(r[0] for r in _query(path, "SELECT DISTINCT u.str_url FROM crawl_log c JOIN url u USING (url_id)"))


def _candidate_origins(path):
    return sorted(r[0] for r in _query(path, "SELECT DISTINCT o.str_origin FROM crawl_candidate c "
                                             "JOIN url u USING (url_id) JOIN origin o USING (origin_id)"))


def test_each_site_is_crawled_by_its_shard_and_the_cross_links_arrive(linked_sites):
    x, y, table, config = linked_sites
    a, b = (load_shards(table).folder(s) / "crawler.db" for s in ("a", "b"))
    X, Y = x.base_url, y.base_url

    first_a = _crawl(table, config, "a")
    # a crawled its own site only; y's pages and feed wait in a's outbox, addressed to b
    assert _crawled(a) == [f"{X}/", f"{X}/robots.txt", f"{X}/x1"]
    assert _candidate_origins(a) == [X]
    assert _query(a, "SELECT handoff_id, shard, str_url, kind, found_via, depth FROM textpile_handoff") == [
        (1, "b", f"{Y}/feed.xml", "feed", "link", 0), (2, "b", f"{Y}/hidden-y", None, None, None)]
    assert first_a.handed_off == {"b": 2}
    assert first_a.handoffs_taken == {} and first_a.handoffs_unread == {
        "b": f"no crawler database at {b} (not crawled yet, or on another host)"}

    first_b = _crawl(table, config, "b")
    # b took a's two rows in before it started: it crawled the page and the feed a found,
    # and the feed's item; x's hidden page waits in b's outbox
    assert first_b.handoffs_taken == {"a": 2} and first_b.handoffs_forwarded == 0
    assert _crawled(b) == [f"{Y}/", f"{Y}/feed.xml", f"{Y}/from-feed", f"{Y}/hidden-y", f"{Y}/robots.txt",
                           f"{Y}/y1"]
    assert _query(b, "SELECT u.str_url, m.kind, m.found_via FROM textpile_meta_resource m JOIN url u USING (url_id)") \
        == [(f"{Y}/feed.xml", "feed", "link")]
    assert _query(b, "SELECT from_shard, last_handoff_id FROM textpile_handoff_taken") == [("a", 2)]
    assert _query(b, "SELECT shard, str_url FROM textpile_handoff") == [("a", f"{X}/hidden-x")]
    assert first_b.handed_off == {"a": 1}

    second_a = _crawl(table, config, "a")
    assert second_a.handoffs_taken == {"b": 1} and second_a.handed_off == {}
    assert _crawled(a) == [f"{X}/", f"{X}/hidden-x", f"{X}/robots.txt", f"{X}/x1"]
    second_b = _crawl(table, config, "b")
    assert second_b.handoffs_taken == {"a": 0}  # nothing new: each row is taken once
    # pruning counts what another shard handed in as reached (its linking page is in that
    # shard's database): x's hidden page stays after complete crawls of a
    assert second_a.pruned == {X: []} and second_b.pruned == {Y: []}
    third_a = _crawl(table, config, "a")
    assert third_a.pruned == {X: []} and third_a.not_pruned == {}
    assert _query(a, "SELECT count(*) FROM crawl_log c JOIN url u USING (url_id) WHERE c.exit_code = 182") == [(0,)]

    # never the wrong shard: each database holds crawls and candidates of its own site only,
    # and each hidden page was asked for once, by its own shard's crawl
    assert _candidate_origins(a) == [X]
    assert _candidate_origins(b) == [Y]
    assert all(url.startswith(Y) for url in _crawled(b))
    assert len(x.requests_for("/hidden-x")) == 1 and len(y.requests_for("/hidden-y")) == 1


def test_a_row_for_a_shard_that_no_longer_holds_the_site_is_forwarded(linked_sites, tmp_path):
    x, y, table, config = linked_sites
    _crawl(table, config, "a")  # a's outbox: two rows for b (y's feed and hidden page)
    Y = y.base_url
    # y's site goes to a new shard c before b took the rows in
    table.write_text(table.read_text("utf-8").replace('= "b"', '= "c"').replace('["a", "b"]', '["a", "b", "c"]'),
                     "utf-8")
    shards = load_shards(table)
    b, c = shards.folder("b") / "crawler.db", shards.folder("c") / "crawler.db"
    b.parent.mkdir()
    c.parent.mkdir()
    with closing(open_crawler_db(b)) as conn:
        report = take_handoffs(CrawlStore(conn), handoff_of(shards, config.crawl_seeds, "b"))
    assert report.taken == {"a": 2} and report.forwarded == 2
    assert _candidate_origins(b) == []  # b crawls none of them
    assert _query(b, "SELECT shard, str_url, kind FROM textpile_handoff ORDER BY handoff_id") == [
        ("c", f"{Y}/feed.xml", "feed"), ("c", f"{Y}/hidden-y", None)]
    with closing(open_crawler_db(c)) as conn:
        report = take_handoffs(CrawlStore(conn), handoff_of(shards, config.crawl_seeds, "c"))
    assert report.taken == {"a": 0, "b": 2} and report.forwarded == 0
    assert _query(c, "SELECT u.str_url FROM crawl_candidate JOIN url u USING (url_id) ORDER BY 1") == [
        (f"{Y}/feed.xml",), (f"{Y}/hidden-y",)]


def test_an_outbox_made_anew_is_read_from_its_start(linked_sites):
    x, y, table, config = linked_sites
    _crawl(table, config, "a")
    shards = load_shards(table)
    a, b = shards.folder("a") / "crawler.db", shards.folder("b") / "crawler.db"
    b.parent.mkdir()
    with closing(open_crawler_db(b)) as conn:
        store = CrawlStore(conn)
        assert take_handoffs(store, handoff_of(shards, config.crawl_seeds, "b")).taken == {"a": 2}
        # a's crawler database is made anew with one row: b reads it from the start
        for suffix in ("", "-wal", "-shm"):
            a.with_name(a.name + suffix).unlink(missing_ok=True)
        with closing(open_crawler_db(a)) as fresh, fresh:
            fresh.execute("INSERT INTO textpile_handoff(shard, str_url, found_unix_utc) VALUES ('b', ?, 1)",
                          (y.base_url + "/y1",))
        assert take_handoffs(store, handoff_of(shards, config.crawl_seeds, "b")).taken == {"a": 1}
        assert store.handoff_position("a") == 1


def test_an_outbox_row_goes_once_taken_in_and_no_longer_linked(linked_sites):
    x, y, table, config = linked_sites
    a, b = (load_shards(table).folder(s) / "crawler.db" for s in ("a", "b"))
    X, Y = x.base_url, y.base_url
    start = x.routes["/"]
    both = x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">', f'<li><a href="{Y}/y1">'
                                                            f'{Y}/y1</a></li><li><a href="{Y}/hidden-y">'))
    outbox = "SELECT handoff_id, shard, str_url FROM textpile_handoff ORDER BY handoff_id"

    first_a = _crawl(table, config, "a")
    assert _query(a, outbox) == [(1, "b", f"{Y}/feed.xml"), (2, "b", f"{Y}/y1"), (3, "b", f"{Y}/hidden-y")]
    # x's start page no longer links y's pages: nothing goes before b took the rows in
    x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">{Y}/hidden-y</a></li>', ""))
    second_a = _crawl(table, config, "a", force_recrawl=True)
    assert first_a.outbox_pruned == {} and second_a.outbox_pruned == {} and second_a.not_pruned == {}
    assert second_a.outbox_kept == {"*": f"no crawler database of shard b at {b} (not crawled yet, or on another host)"}
    assert len(_query(a, outbox)) == 3

    first_b = _crawl(table, config, "b")
    assert first_b.handoffs_taken == {"a": 3} and first_b.outbox_pruned == {}  # a has no row of b's to take yet
    assert f"{Y}/hidden-y" in _crawled(b)
    # taken in and no longer linked: a drops y1's row, and empties hidden-y's, the largest
    # (its id stays taken: handoff_ids are never reused); the feed is still announced
    third_a = _crawl(table, config, "a", force_recrawl=True)
    assert third_a.outbox_pruned == {"b": 2}
    assert _query(a, outbox) == [(1, "b", f"{Y}/feed.xml"), (3, "", "")]
    # b reaches y1 from its own start page, so pruning there keeps it; nothing leads to
    # hidden-y any more
    second_b = _crawl(table, config, "b", force_recrawl=True)
    assert second_b.pruned == {Y: [f"{Y}/hidden-y"]}

    # a page of a links y1 and hidden-y again: new rows (new handoff_ids), which b takes in
    x.routes["/"] = both
    fourth_a = _crawl(table, config, "a", force_recrawl=True)
    assert fourth_a.handed_off == {"b": 2} and fourth_a.outbox_pruned == {}
    assert _query(a, outbox) == [(1, "b", f"{Y}/feed.xml"), (3, "", ""), (4, "b", f"{Y}/y1"),
                                 (5, "b", f"{Y}/hidden-y")]
    assert _crawl(table, config, "b").handoffs_taken == {"a": 2}
    assert _query(b, "SELECT count(*) FROM crawl_candidate JOIN url USING (url_id) WHERE str_url = ?",
                  (f"{Y}/hidden-y",)) == [(1,)]
    # the emptied row goes when another row is emptied
    x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">{Y}/hidden-y</a></li>', ""))
    assert _crawl(table, config, "a", force_recrawl=True).outbox_pruned == {"b": 2}
    assert _query(a, outbox) == [(1, "b", f"{Y}/feed.xml"), (5, "", "")]


def test_a_page_only_another_shard_linked_is_pruned_once_its_row_goes(linked_sites):
    x, y, table, config = linked_sites
    a, b = (load_shards(table).folder(s) / "crawler.db" for s in ("a", "b"))
    X, Y = x.base_url, y.base_url
    start = y.routes["/"]
    # y's start page links x's hidden page and x1: hidden-x's row is not the largest
    y.routes["/"] = Response(200, start.body.replace(f'<li><a href="{X}/hidden-x">', f'<li><a href="{X}/hidden-x">'
                                                     f'{X}/hidden-x</a></li><li><a href="{X}/x1">'))
    _crawl(table, config, "a")
    _crawl(table, config, "b")
    assert _query(b, "SELECT handoff_id, str_url FROM textpile_handoff ORDER BY 1") == [
        (1, f"{X}/hidden-x"), (2, f"{X}/x1")]
    assert _crawl(table, config, "a").handoffs_taken == {"b": 2}
    assert f"{X}/hidden-x" in _crawled(a)
    # y no longer links x's hidden page: b drops its row, and a's next complete crawl
    # prunes the page (only that row reached it)
    y.routes["/"] = Response(200, start.body.replace(f'<li><a href="{X}/hidden-x">{X}/hidden-x</a></li>',
                                                     f'<li><a href="{X}/x1">{X}/x1</a></li>'))
    assert _crawl(table, config, "b", force_recrawl=True).outbox_pruned == {"a": 1}
    pruned = _crawl(table, config, "a")
    assert pruned.pruned == {X: [f"{X}/hidden-x"]}
    assert _query(a, "SELECT u.str_url FROM crawl_log c JOIN url u USING (url_id) WHERE c.exit_code = 182") == [
        (f"{X}/hidden-x",)]


def _assign(path, assign: dict[str, str], shards: tuple[str, ...] = ()) -> None:
    """Write the shard table ``path``: ``shards`` and those of ``assign`` (origin ->
    shard), its overrides."""
    over = "".join(f'"{origin}" = "{shard}"\n' for origin, shard in assign.items())
    names = ", ".join(f'"{name}"' for name in sorted(set(assign.values()) | set(shards)))
    path.write_text(f'shards = [{names}]\n[overrides]\n{over}', "utf-8")


def _pruned(path):
    return [r[0] for r in _query(path, "SELECT u.str_url FROM crawl_log c JOIN url u USING (url_id)"
                                       " WHERE c.exit_code = 182 ORDER BY 1")]


@pytest.fixture
def three_sites(tmp_path):
    """Sites x and s (shard a) and y (shard b, with pages only other sites link). Yields
    (x, y, s, table path, config)."""
    x, y, s = SiteServer(), SiteServer(), SiteServer()
    for site in (x, y, s):
        site.routes["/robots.txt"] = ROBOTS
    y.routes.update({"/": Response(200, page("Quokka", "Quokka pages.", ["/y1"])),
                     "/y1": Response(200, page("Quokka one", "More quokka.", ["/"])),
                     "/y2": Response(200, page("Quokka two", "More quokka two.", ["/"])),
                     "/hidden-y": Response(200, page("Quokka hidden", "Only others link this.", ["/"])),
                     "/listed-y": Response(200, page("Quokka listed", "Only x's feed lists this.", ["/"]))})
    s.routes["/"] = Response(200, page("Sparrow", "Sparrow pages.", []))
    with x, y, s:
        table = tmp_path / "shards.toml"
        _assign(table, {x.base_url: "a", y.base_url: "b", s.base_url: "a"})
        config = load_config(write_config(tmp_path / "crawl.toml", [x.base_url + "/", y.base_url + "/",
                                                                      s.base_url + "/"]))
        yield x, y, s, table, config


def test_a_page_a_feed_of_another_shard_lists_stays(three_sites):
    x, y, s, table, config = three_sites
    X, Y = x.base_url, y.base_url
    a, b = (load_shards(table).folder(n) / "crawler.db" for n in ("a", "b"))
    x.routes.update({
        "/": Response(200, page("Walnut", "Walnut pages.", ["/x1"]).replace(
            "</head>", f'<link rel="alternate" type="application/rss+xml" href="{X}/feed.xml"></head>')),
        "/x1": Response(200, page("Walnut one", "More walnut.", ["/", f"{Y}/y2"])),
        "/feed.xml": _feed([f"{X}/x1", f"{Y}/listed-y"])})
    _crawl(table, config, "a")
    assert sorted(_query(a, "SELECT shard, str_url FROM textpile_handoff")) == [
        ("b", f"{Y}/listed-y"), ("b", f"{Y}/y2")]
    # the feed's listing names y's page in a's own database (a url row, no candidate)
    assert sorted(_query(a, "SELECT lu.str_url FROM textpile_listed_url l JOIN url lu ON lu.url_id = l.url_id")) \
        == sorted([(f"{X}/x1",), (f"{Y}/listed-y",)])
    assert _candidate_origins(a) == sorted([X, s.base_url])
    assert _crawl(table, config, "b").handoffs_taken == {"a": 2}
    x.routes["/x1"] = Response(200, page("Walnut one", "More walnut.", ["/"]))  # y2 no longer linked
    x.routes["/"] = Response(200, x.routes["/"].body.replace('href="/x1"', f'href="/x1"></a><a href="{Y}/y1"'))
    pruned_a = _crawl(table, config, "a", force_recrawl=True)
    # y2's row goes; listed-y's stays (the feed lists it), and so does y1's (the largest)
    assert pruned_a.outbox_pruned == {"b": 1}
    assert f"{Y}/listed-y" in [u for (u,) in _query(a, "SELECT str_url FROM textpile_handoff")]
    assert _crawl(table, config, "b", force_recrawl=True).pruned == {Y: [f"{Y}/y2"]}
    assert _pruned(b) == [f"{Y}/y2"]


def test_a_move_hands_off_the_moved_sites_links(three_sites):
    x, y, s, table, config = three_sites
    X, Y, S = x.base_url, y.base_url, s.base_url
    a, b = (load_shards(table).folder(n) / "crawler.db" for n in ("a", "b"))
    x.routes["/"] = Response(200, page("Walnut", "Walnut pages.", []))
    s.routes["/"] = Response(200, page("Sparrow", "Sparrow pages.", [f"{Y}/hidden-y", X + "/"]))
    _crawl(table, config, "a")
    _crawl(table, config, "b")
    assert f"{Y}/hidden-y" in _crawled(b)
    # s goes to shard c; until it is moved, a's outbox is not pruned (its pages' links are a's still)
    _assign(table, {X: "a", Y: "b", S: "c"})
    x.routes["/"] = Response(200, page("Walnut", "Walnut pages.", [f"{Y}/y2"]))
    waiting = _crawl(table, config, "a", force_recrawl=True)
    assert waiting.outbox_pruned == {} and list(waiting.outbox_kept) == ["*"]
    assert S in waiting.outbox_kept["*"] and "shard c" in waiting.outbox_kept["*"]
    report = move_site(load_shards(table), S + "/")
    c = load_shards(table).folder("c") / "crawler.db"
    # the move hands off s's links from c: hidden-y to b, x's start page to a
    assert report.rows["textpile_handoff"] == 2
    assert _query(c, "SELECT handoff_id, shard, str_url FROM textpile_handoff") == [
        (1, "a", f"{X}/"), (2, "b", f"{Y}/hidden-y")]
    assert _crawl(table, config, "a", force_recrawl=True).outbox_pruned == {"b": 1}  # a's hidden-y row goes
    assert _crawl(table, config, "b", force_recrawl=True).pruned == {Y: []}  # c's row keeps hidden-y
    assert _pruned(b) == []


def test_an_outbox_made_anew_is_read_from_its_start_even_when_it_grew_past_the_position(linked_sites):
    x, y, table, config = linked_sites
    X, Y = x.base_url, y.base_url
    shards = load_shards(table)
    a, b = shards.folder("a") / "crawler.db", shards.folder("b") / "crawler.db"
    for path in ("/n1", "/n2", "/n3"):
        y.routes[path] = Response(200, page("Quokka " + path, "A quokka page " + path, ["/"]))
    _crawl(table, config, "a")  # a's outbox: y's feed and hidden page
    assert _crawl(table, config, "b").handoffs_taken == {"a": 2}
    assert _query(b, "SELECT from_shard, last_handoff_id FROM textpile_handoff_taken") == [("a", 2)]
    first = _query(a, "SELECT agent_uuid FROM agent ORDER BY agent_id LIMIT 1")
    assert _query(b, "SELECT from_shard, first_agent_uuid FROM textpile_handoff_source") == [("a", first[0][0])]
    # a's crawler database is made anew, and its new outbox grows past b's position before b reads it
    for suffix in ("", "-wal", "-shm"):
        a.with_name(a.name + suffix).unlink(missing_ok=True)
    x.routes["/"] = Response(200, page("Walnut start", "Walnut pages.", ["/x1", f"{Y}/n1", f"{Y}/n2", f"{Y}/n3"]))
    _crawl(table, config, "a")
    assert [u for (u,) in _query(a, "SELECT str_url FROM textpile_handoff ORDER BY handoff_id")] == [
        f"{Y}/n1", f"{Y}/n2", f"{Y}/n3"]
    # before b read it, a prunes nothing of it (b's position is of the old database)
    assert _crawl(table, config, "a", force_recrawl=True).outbox_kept == {
        "b": "it read this outbox before its crawler database was made anew"}
    assert _crawl(table, config, "b").handoffs_taken == {"a": 3}  # n1 and n2 too, not only n3
    assert {f"{Y}/n1", f"{Y}/n2", f"{Y}/n3"} <= set(_crawled(b))


def test_a_moved_sites_page_that_other_sites_lead_to_stays(three_sites):
    x, y, s, table, config = three_sites
    X, Y, S = x.base_url, y.base_url, s.base_url
    s.routes["/hidden-s"] = Response(200, page("Sparrow hidden", "Only walnut links this sparrow page.", ["/"]))
    s.routes["/listed-s"] = Response(200, page("Sparrow listed", "Only walnut's feed lists this.", ["/"]))
    x.routes.update({
        "/": Response(200, page("Walnut", "Walnut pages.", [f"{S}/hidden-s", f"{Y}/hidden-y"]).replace(
            "</head>", f'<link rel="alternate" type="application/rss+xml" href="{X}/feed.xml"></head>')),
        "/feed.xml": _feed([f"{S}/listed-s"])})
    for shard in ("a", "a", "b"):
        _crawl(table, config, shard)
    # s (shard a, linked and listed by x on a: plain candidates) and y (shard b, linked by
    # x through a's outbox) both move to c
    _assign(table, {X: "a", Y: "c", S: "c"}, shards=("b",))
    moved_s = move_site(load_shards(table), S + "/")
    move_site(load_shards(table), Y + "/")
    a = load_shards(table).folder("a") / "crawler.db"
    # the move handed s's pages that x leads to off from a, to c
    assert sorted(_query(a, "SELECT shard, str_url FROM textpile_handoff WHERE shard = 'c'")) == [
        ("c", f"{S}/hidden-s"), ("c", f"{S}/listed-s")]
    assert moved_s.rows["textpile_handoff"] == 0  # s leads nowhere off its shard
    for shard in ("a", "b"):
        _crawl(table, config, shard)
    # c counts them reached: a's rows addressed to c, and a's row for hidden-y addressed to b
    assert _crawl(table, config, "c", force_recrawl=True).pruned == {S: [], Y: []}


def test_a_read_position_that_does_not_say_of_which_database_prunes_nothing(linked_sites):
    x, y, table, config = linked_sites
    Y = y.base_url
    shards = load_shards(table)
    a, b = shards.folder("a") / "crawler.db", shards.folder("b") / "crawler.db"
    start = x.routes["/"]
    x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">', f'<li><a href="{Y}/y1">'
                                                     f'{Y}/y1</a></li><li><a href="{Y}/hidden-y">'))
    _crawl(table, config, "a")
    assert _crawl(table, config, "b").handoffs_taken == {"a": 3}
    with closing(sqlite3.connect(b)) as conn, conn:  # a position recorded by a textpile before the source table
        conn.execute("DELETE FROM textpile_handoff_source")
    x.routes["/"] = start  # y1 no longer linked
    report = _crawl(table, config, "a", force_recrawl=True)
    assert report.outbox_pruned == {} and report.outbox_kept == {
        "b": "its read position does not say of which crawler database (until its next take-in)"}
    _crawl(table, config, "b")  # its take-in records the source again
    assert _crawl(table, config, "a", force_recrawl=True).outbox_pruned == {"b": 1}
    assert f"{Y}/y1" not in [u for (u,) in _query(a, "SELECT str_url FROM textpile_handoff")]


def test_a_shard_left_without_sites_empties_its_outbox(three_sites):
    x, y, s, table, config = three_sites
    X, Y, S = x.base_url, y.base_url, s.base_url
    for path in ("/h1", "/h2"):
        y.routes[path] = Response(200, page("Quokka " + path, "Only sparrow links this " + path, ["/"]))
    s.routes["/"] = Response(200, page("Sparrow", "Sparrow pages.", [f"{Y}/h1", f"{Y}/h2"]))
    _assign(table, {X: "a", Y: "b", S: "c"})
    for shard in ("c", "b", "a"):
        _crawl(table, config, shard)
    shards = load_shards(table)
    b, c = (shards.folder(n) / "crawler.db" for n in ("b", "c"))
    # s goes back to shard a, which now hands its links off; c stays, with no site
    _assign(table, {X: "a", Y: "b", S: "a"}, shards=("c",))
    move_site(load_shards(table), S + "/")
    s.routes["/"] = Response(200, page("Sparrow", "Sparrow pages.", [f"{Y}/y1"]))  # h1 and h2 no longer linked
    assert _crawl(table, config, "a", force_recrawl=True).outbox_pruned == {}  # b has not taken a's rows in yet
    _crawl(table, config, "b", force_recrawl=True)
    emptied = _crawl(table, config, "c")  # no origin of its own: nothing of c leads anywhere
    assert emptied.outbox_pruned == {"b": 2}
    assert _query(c, "SELECT shard, str_url FROM textpile_handoff") == [("", "")]
    assert _crawl(table, config, "a", force_recrawl=True).outbox_pruned == {"b": 2}
    assert _crawl(table, config, "b", force_recrawl=True).pruned == {Y: [f"{Y}/h1", f"{Y}/h2"]}
    assert _pruned(b) == [f"{Y}/h1", f"{Y}/h2"]


def test_links_into_a_site_on_a_default_port(tmp_path):
    # a site is named with its port; its stored URLs drop a default one (http://h/x)
    db = tmp_path / "crawler.db"
    with closing(open_crawler_db(db)) as conn, conn:
        store = CrawlStore(conn)
        site, other = (store.url_id(parse_url(u)) for u in ("http://moved.example/hidden", "http://stays.example/"))
        store.url_id(parse_url("http://moved.example/unlinked"))
        conn.execute("INSERT INTO textpile_page_links(url_id, links) VALUES (?, ?)", (other, zlib.compress(
            b"http://moved.example/hidden\nhttp://moved.example:8080/other-port\nhttp://stays.example/a")))
        origin = conn.execute("SELECT origin_id FROM origin WHERE str_origin = 'http://moved.example:80'").fetchone()
        assert site and origin is not None
        assert links_into_site(conn, "main", origin[0]) == ["http://moved.example/hidden"]
