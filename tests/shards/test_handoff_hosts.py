"""Links between shards on two hosts, stood in for on one machine: shard a's folder is on
alpha, b's on beta, and neither host has the other's folder. Each host's shard table names
its own folders and the Redis database of the hand-offs (``handoff_redis``); the rows of
each outbox reach the other host through its mirror there (textpile.shards.mirror)."""

import pytest

from redis_server import free_port, needs_redis, redis_url  # noqa: F401 (a fixture)
from shards.test_handoff import _crawl, _crawled, _query, linked_sites  # noqa: F401 (a fixture)
from sites import Response
from textpile.shards.config import load_shards
from textpile.shards.mirror import MirrorError, MirroredOutbox, Published, connect

pytestmark = needs_redis

OUTBOX = "SELECT handoff_id, shard, str_url FROM textpile_handoff ORDER BY handoff_id"


def _hosts(linked_sites, tmp_path, redis: str):
    """(x, y, config, alpha's table, beta's table, a's crawler database on alpha) of the
    linked sites: x on shard a, y on b, each host with its own table (:func:`_tables`)
    naming ``redis``."""
    x, y, _, config = linked_sites
    alpha, beta = _tables(tmp_path, f'shards = ["a", "b"]\nhandoff_redis = "{redis}"\n[overrides]\n'
                                    f'"{x.base_url}" = "a"\n"{y.base_url}" = "b"\n[folders]\na = "a"\nb = "b"\n')
    return x, y, config, alpha, beta, load_shards(alpha).folder("a") / "crawler.db"


def _tables(tmp_path, text: str):
    """(alpha's shard table, beta's): both ``text``, each in its host's folder, so that
    each host's data folders are its own (the other's does not exist there)."""
    out = []
    for host in ("alpha", "beta"):
        table = tmp_path / host / "shards.toml"
        table.parent.mkdir()
        table.write_text(text, "utf-8")
        out.append(table)
    return out


def test_the_cross_links_arrive_through_the_mirror_and_go_when_no_longer_linked(linked_sites, redis_url, tmp_path):
    url = f"{redis_url}/2"
    x, y, config, alpha, beta, a = _hosts(linked_sites, tmp_path, url)
    X, Y = x.base_url, y.base_url
    b = load_shards(beta).folder("b") / "crawler.db"
    start = x.routes["/"]
    x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">', f'<li><a href="{Y}/y1">'
                                                     f'{Y}/y1</a></li><li><a href="{Y}/hidden-y">'))

    first_a = _crawl(alpha, config, "a")
    # b has no folder on alpha and mirrored nothing yet; a's three rows for b are mirrored
    assert first_a.handoffs_unread == {"b": f"no crawler database at {tmp_path}/alpha/b/crawler.db (not crawled yet, "
                                             f"or on another host), and none of its crawls mirrored its outbox into "
                                             f"{url} yet"}
    assert first_a.handoffs_mirrored == {"added": 3, "deleted": 0} and first_a.handoffs_mirror_error is None
    assert first_a.outbox_kept == {"*": f"no crawler database of shard b at {tmp_path}/alpha/b/crawler.db (not "
                                        "crawled yet, or on another host), and no mirror of its outbox yet"}

    first_b = _crawl(beta, config, "b")
    # b took a's rows from the mirror: it crawled the page and the feed a found, and the feed's item
    assert first_b.handoffs_taken == {"a": 3} and first_b.handoffs_unread == {}
    assert {f"{Y}/hidden-y", f"{Y}/feed.xml", f"{Y}/from-feed"} <= set(_crawled(b))
    assert _query(b, "SELECT from_shard, last_handoff_id FROM textpile_handoff_taken") == [("a", 3)]
    assert first_b.handoffs_mirrored == {"added": 1, "deleted": 0}  # x's hidden page, for a

    second_a = _crawl(alpha, config, "a", force_recrawl=True)
    assert second_a.handoffs_taken == {"b": 1}
    assert f"{X}/hidden-x" in _crawled(a)

    # x's start page no longer links y's hidden page or y1: a reads b's position in the
    # mirror, drops y1's row and empties hidden-y's (the largest), and mirrors that
    x.routes["/"] = Response(200, start.body.replace(f'<li><a href="{Y}/hidden-y">{Y}/hidden-y</a></li>', ""))
    third_a = _crawl(alpha, config, "a", force_recrawl=True)
    assert third_a.outbox_kept == {} and third_a.outbox_pruned == {"b": 2}
    assert _query(a, OUTBOX) == [(1, "b", f"{Y}/feed.xml"), (3, "", "")]
    assert third_a.handoffs_mirrored == {"added": 0, "deleted": 2}
    mirrored = MirroredOutbox(connect(url), url, "a")
    assert (mirrored.published, mirrored.last) == (True, 3)
    assert mirrored.urls(["b"]) == [f"{Y}/feed.xml"]
    # b counts as reached what a's mirror addresses to it: y1 from its own start page, the
    # feed; nothing leads to hidden-y any more
    second_b = _crawl(beta, config, "b", force_recrawl=True)
    assert second_b.pruned == {Y: [f"{Y}/hidden-y"]}
    # and a's hidden page, which b's start page links, stays in a
    fourth_a = _crawl(alpha, config, "a", force_recrawl=True)
    assert fourth_a.pruned == {X: []} and fourth_a.handoffs_taken == {"b": 0}


def test_a_mirror_that_cannot_be_reached_is_reported_and_the_rows_wait(linked_sites, redis_url, tmp_path):
    down = f"redis://127.0.0.1:{free_port()}/2"
    x, y, config, alpha, beta, a = _hosts(linked_sites, tmp_path, down)
    Y = y.base_url
    first_a = _crawl(alpha, config, "a")
    assert first_a.handoffs_mirror_error.startswith(f"the hand-offs' Redis database {down}: ")
    assert first_a.handoffs_mirrored == {}
    assert first_a.handoffs_unread["b"].startswith(f"the hand-offs' Redis database {down}: ")
    assert _query(a, OUTBOX) == [(1, "b", f"{Y}/feed.xml"), (2, "b", f"{Y}/hidden-y")]
    first_b = _crawl(beta, config, "b")
    assert first_b.handoffs_taken == {} and first_b.handoffs_unread["a"].startswith(
        f"the hand-offs' Redis database {down}: ")
    # Redis is up again (the tables name it): the rows a kept are mirrored by a's next crawl
    up = f"{redis_url}/2"
    for table in (alpha, beta):
        table.write_text(table.read_text("utf-8").replace(down, up), "utf-8")
    assert _crawl(alpha, config, "a").handoffs_mirrored == {"added": 2, "deleted": 0}
    assert _crawl(beta, config, "b").handoffs_taken == {"a": 2}


def test_a_mirror_of_a_database_made_anew_is_made_anew(linked_sites, redis_url, tmp_path):
    url = f"{redis_url}/2"
    x, y, config, alpha, beta, a = _hosts(linked_sites, tmp_path, url)
    Y = y.base_url
    _crawl(alpha, config, "a")
    assert _crawl(beta, config, "b").handoffs_taken == {"a": 2}
    for suffix in ("", "-wal", "-shm"):
        a.with_name(a.name + suffix).unlink(missing_ok=True)
    x.routes["/"] = Response(200, x.routes["/"].body.replace(f"{Y}/hidden-y", f"{Y}/y1"))
    again = _crawl(alpha, config, "a")
    assert _query(a, OUTBOX) == [(1, "b", f"{Y}/feed.xml"), (2, "b", f"{Y}/y1")]
    assert again.handoffs_mirrored == {"added": 2, "deleted": 0}  # the old streams went with the old identity
    assert MirroredOutbox(connect(url), url, "a").urls(["b"]) == [f"{Y}/feed.xml", f"{Y}/y1"]
    assert _crawl(beta, config, "b").handoffs_taken == {"a": 2}  # read from its start again


def test_a_bad_handoff_redis_is_refused_with_the_table_named(tmp_path):
    from textpile.errors import ConfigError

    table = tmp_path / "shards.toml"
    table.write_text('shards = ["a"]\nhandoff_redis = "http://alpha:6379"\n', "utf-8")
    with pytest.raises(ConfigError, match=r"shards\.toml: handoff_redis: found 'http://alpha:6379'; expected a "
                                          r"Redis URL"):
        load_shards(table)


def test_a_key_that_is_no_mirror_is_an_error_naming_it(redis_url):
    url = f"{redis_url}/3"
    client = connect(url)
    client.hset("textpile:handoff:z:outbox", mapping={"last": "many", "first_agent": ""})
    with pytest.raises(MirrorError, match=r"textpile:handoff:z:outbox is no outbox mirror"):
        MirroredOutbox(client, url, "z")
    assert not MirroredOutbox(client, url, "nobody").published


def _candidates(path):
    return sorted(r[0] for r in _query(path, "SELECT u.str_url FROM crawl_candidate c JOIN url u USING (url_id)"))


def test_an_emptied_redis_prunes_nothing_the_other_host_handed_in(linked_sites, redis_url, tmp_path):
    """b took rows of a's mirror in; Redis then restarted empty: until a mirrors again, b
    prunes nothing (a's rows may still lead to its pages), and x's link keeps hidden-y."""
    url = f"{redis_url}/2"
    x, y, config, alpha, beta, a = _hosts(linked_sites, tmp_path, url)
    Y = y.base_url
    b = load_shards(beta).folder("b") / "crawler.db"
    _crawl(alpha, config, "a")
    _crawl(beta, config, "b")
    _crawl(alpha, config, "a")
    assert _crawl(beta, config, "b", force_recrawl=True).pruned == {Y: []}
    connect(url).flushdb()
    emptied = _crawl(beta, config, "b", force_recrawl=True)
    why = (f"no crawler database of shard a at {tmp_path}/beta/a/crawler.db, and no mirror of its outbox in {url}, "
           "although rows of it were taken in here")
    assert emptied.pruned == {} and emptied.not_pruned == {
        Y: f"the outbox of shard a could not be read ({why}): pages it handed here may still be linked"}
    assert f"{Y}/hidden-y" in _candidates(b)
    assert _crawl(alpha, config, "a", force_recrawl=True).handoffs_mirrored == {"added": 2, "deleted": 0}
    assert _crawl(beta, config, "b", force_recrawl=True).pruned == {Y: []}
    assert f"{Y}/hidden-y" in _candidates(b)


def test_a_row_forwarded_on_the_other_host_keeps_its_page(linked_sites, redis_url, tmp_path):
    """Shards a on alpha, b and c on beta. a hands y's hidden page to b; y's site then goes
    to c: b forwards the row to c, and c keeps the page while x links it (c counts a's
    mirrored row to b as reached, as it counts a's outbox on one host)."""
    x, y, _, config = linked_sites
    X, Y = x.base_url, y.base_url
    url = f"{redis_url}/2"
    alpha, beta = tables = _tables(tmp_path, f'shards = ["a", "b", "c"]\nhandoff_redis = "{url}"\n[overrides]\n'
                                             f'"{X}" = "a"\n"{Y}" = "b"\n[folders]\na = "a"\nb = "b"\nc = "c"\n')
    _crawl(alpha, config, "a")
    for table in tables:
        table.write_text(table.read_text("utf-8").replace(f'"{Y}" = "b"', f'"{Y}" = "c"'), "utf-8")
    assert _crawl(beta, config, "b").handoffs_forwarded == 2
    c = load_shards(beta).folder("c") / "crawler.db"
    _crawl(beta, config, "c")
    assert f"{Y}/hidden-y" in _crawled(c)
    _crawl(beta, config, "b")
    assert _crawl(beta, config, "c", force_recrawl=True).pruned == {Y: []}
    assert f"{Y}/hidden-y" in _candidates(c)


def _store(shards, shard):
    """(connection, CrawlStore) of a new crawler database of ``shard``."""
    from textpile.crawl.crawldb.sql import CrawlStore
    from textpile.store.database import open_crawler_db

    shards.folder(shard).mkdir(exist_ok=True)
    conn = open_crawler_db(shards.folder(shard) / "crawler.db")
    return conn, CrawlStore(conn)


def _remote(tmp_path, url):
    """A table of shards a (x.test) and b (y.test) naming the mirror ``url``."""
    table = tmp_path / "host" / "shards.toml"
    table.parent.mkdir()
    table.write_text(f'shards = ["a", "b"]\nhandoff_redis = "{url}"\n[overrides]\n"http://x.test" = "a"\n'
                     f'"http://y.test" = "b"\n[folders]\na = "a"\nb = "b"\n', "utf-8")
    return load_shards(table)


@pytest.mark.parametrize("fields", [{"foo": "bar"}, {"url": "http://y.test/p", "kind": "", "via": "", "depth": "x"},
                                    {"url": "http://y.test/p"}])
def test_an_entry_that_is_no_outbox_row_leaves_the_shard_unread(redis_url, tmp_path, fields):
    from textpile.shards.handoff import handoff_of, take_handoffs

    url = f"{redis_url}/4"
    shards = _remote(tmp_path, url)
    client = connect(url)
    client.hset("textpile:handoff:a:outbox", mapping={"first_agent": "00", "last": "1"})
    client.xadd("textpile:handoff:a:to:b", fields, id="1-1")
    conn, store = _store(shards, "b")
    with conn:
        report = take_handoffs(store, handoff_of(shards, ["http://x.test/", "http://y.test/"], "b"))
    assert report.unread == {"a": f"the hand-offs' Redis database {url}: textpile:handoff:a:to:b holds an entry "
                                  "that is no outbox row"} and report.taken == {}
    assert store.handoff_position("a") == 0


def test_a_read_position_that_is_none_keeps_the_rows(redis_url, tmp_path):
    from textpile.shards.handoff import handoff_of, prune_outbox

    url = f"{redis_url}/4"
    shards = _remote(tmp_path, url)
    client = connect(url)
    client.hset("textpile:handoff:b:outbox", mapping={"first_agent": "00", "last": "0"})
    client.hset("textpile:handoff:b:taken", "a", "three zz")
    conn, store = _store(shards, "a")
    with conn:
        with conn:
            store._hand_off([("b", "http://y.test/p", None, None, None)])
        result = prune_outbox(store, handoff_of(shards, ["http://x.test/", "http://y.test/"], "a"), set())
    assert result.pruned == {} and result.kept == {
        "b": f"the hand-offs' Redis database {url}: textpile:handoff:b:taken field a: 'three zz' is no read position"}


def test_a_stream_holding_an_entry_of_no_row_is_made_again(redis_url, tmp_path):
    """An entry above the outbox's rows (left by another database in the same Redis
    database): the stream is made again from the outbox, and a reader gets every row."""
    from textpile.shards.mirror import publish

    url = f"{redis_url}/4"
    shards = _remote(tmp_path, url)
    client = connect(url)
    client.xadd("textpile:handoff:a:to:b", {"url": "junk", "kind": "", "via": "", "depth": ""}, id="1000-1")
    conn, store = _store(shards, "a")
    with conn:
        with conn:
            store._hand_off([("b", "http://y.test/p1", None, None, None)])
        assert publish(client, url, store, "a", ["b"]) == Published(1, 0)
        assert MirroredOutbox(client, url, "a").urls(["b"]) == ["http://y.test/p1"]
        with conn:
            store._hand_off([("b", "http://y.test/p2", "feed", "link", 0)])
        assert publish(client, url, store, "a", ["b"]) == Published(1, 0)  # the rows before it are as they were
        mirrored = MirroredOutbox(client, url, "a")
        assert mirrored.last == 2 and mirrored.rows("b", 0, 2, 10) == [
            (1, "http://y.test/p1", None, None, None), (2, "http://y.test/p2", "feed", "link", 0)]


@pytest.mark.parametrize("value, why", [
    ("redis://127.0.0.1:abc/2", "Port could not be cast to integer value as 'abc'"),
    ("redis://127.0.0.1:6379/two", "the database 'two' is no number"),
])
def test_a_handoff_redis_redis_cannot_read_is_refused(tmp_path, value, why):
    from textpile.errors import ConfigError

    table = tmp_path / "shards.toml"
    table.write_text(f'shards = ["a"]\nhandoff_redis = "{value}"\n', "utf-8")
    with pytest.raises(ConfigError) as raised:
        load_shards(table)
    assert str(raised.value) == (f"{table}: handoff_redis: {value!r}: {why}; expected a Redis URL "
                                 "(redis://host:port/db, rediss://... or unix://...)")


def _table(folder, text: str):
    """The shard table ``text`` loaded from ``folder`` (made when missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shards.toml").write_text(text, "utf-8")
    return load_shards(folder / "shards.toml")


SEEDS = ["http://x.test/", "http://y.test/"]
THREE = ('shards = ["a", "b", "c"]\nhandoff_redis = "{url}"\n[overrides]\n"http://x.test" = "a"\n'
         '"http://y.test" = "c"\n[folders]\na = "a"\nb = "b"\nc = "c"\n')
TWO = ('shards = ["a", "b"]\nhandoff_redis = "{url}"\n[overrides]\n"http://x.test" = "a"\n'
       '"http://y.test" = "b"\n[folders]\na = "a"\nb = "b"\n')


def _agent(store):
    import uuid

    store.start_agent(uuid.uuid4(), "w", "u")
    return store


def test_rows_to_a_shard_that_left_the_table_count_through_the_mirror_too(redis_url, tmp_path):
    """a's outbox holds a row for y's hidden page addressed to c; y then moved to b and c
    left the table. b counts the row reached through a's mirror, as it does reading a's
    file on one host (the row's stream, to a shard no longer in the table, is read too)."""
    from textpile.shards.handoff import handed_in_urls, handoff_of
    from textpile.shards.mirror import publish

    url = f"{redis_url}/6"
    client = connect(url)
    conn_a, a = _store(_table(tmp_path / "alpha", THREE.format(url=url)), "a")
    with conn_a:
        with conn_a:
            _agent(a)._hand_off([("c", "http://y.test/hidden", None, None, None)])
        publish(client, url, a, "a", ["b", "c"])
        assert publish(client, url, a, "a", ["b"]) == Published(0, 0)  # c left the table: its stream stays as it was
    beta = _table(tmp_path / "beta", TWO.format(url=url))
    conn_b, b = _store(beta, "b")
    with conn_b:
        assert handed_in_urls(handoff_of(beta, SEEDS, "b"), b) == ({"http://y.test/hidden"}, {})
    one = _table(tmp_path / "alpha", TWO.replace('handoff_redis = "{url}"\n', ""))
    conn_b1, b1 = _store(one, "b")
    with conn_b1:
        assert handed_in_urls(handoff_of(one, SEEDS, "b"), b1) == ({"http://y.test/hidden"}, {})


def test_a_database_made_anew_leaves_no_stream_of_the_one_before(redis_url, tmp_path):
    """a's first database mirrored a row to c; c left the table, and a's database was made
    anew (rows to b only). c, back in the table, takes nothing of the old database."""
    from textpile.shards.handoff import handed_in_urls, handoff_of, take_handoffs
    from textpile.shards.mirror import publish

    url = f"{redis_url}/7"
    client = connect(url)
    alpha = _table(tmp_path / "alpha", THREE.format(url=url))
    conn, a = _store(alpha, "a")
    with conn:
        with conn:
            _agent(a)._hand_off([("b", "http://x2.test/1", None, None, None), ("c", "http://y.test/old", None, None,
                                                                              None)])
        publish(client, url, a, "a", ["b", "c"])
    for suffix in ("", "-wal", "-shm"):
        (alpha.folder("a") / ("crawler.db" + suffix)).unlink(missing_ok=True)
    conn, a = _store(alpha, "a")
    with conn:
        with conn:
            _agent(a)._hand_off([("b", f"http://x2.test/n{i}", None, None, None) for i in range(3)])
        assert publish(client, url, a, "a", ["b"]) == Published(3, 0)
    assert sorted(client.scan_iter(match="textpile:handoff:a:to:*")) == ["textpile:handoff:a:to:b"]
    beta = _table(tmp_path / "beta", THREE.format(url=url))
    conn_c, c = _store(beta, "c")
    with conn_c:
        assert take_handoffs(c, handoff_of(beta, SEEDS, "c")).taken == {"a": 0}
        assert handed_in_urls(handoff_of(beta, SEEDS, "c"), c) == (set(), {})
