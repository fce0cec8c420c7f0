"""SQL exploration under hostile queries (issue 12): printf cannot run past the time
limit, requests beyond the SQL threads are refused at once instead of queueing, and
methods other than GET/HEAD get 405 (POST to a canned query gave a 500)."""

import asyncio
import sqlite3
import sys
import threading
import time
from urllib.parse import quote

import pytest

from textpile.web.app import build_datasette
from textpile.web.guard import BUSY_MESSAGE, READ_ONLY_MESSAGE, read_only_methods, sql_admission
from textpile.web.printf import install_bounded_printf, largest_field
from web.client import aget, get, one_app_client

LIMIT = 16 * 1024 * 1024
HUGE = ["select printf('%.*c', 2000000000, 'x')", "select format('%.*c', 2147483647, 'x')",
        "select printf('%!.*c', 1999999999, 'x')", "select printf('%.2000000000c', 'x')",
        "select printf('%s %.*c', 'a', '2000000000 apples', 'x')"]


def _in_thread(function, timeout_s=10):
    """``function()`` in a thread; None when it did not end within ``timeout_s`` (far more
    than the microseconds the bounded printf takes; SQLite's own takes 20 s or more)."""
    box = []
    worker = threading.Thread(target=lambda: box.append(function()), daemon=True)
    worker.start()
    worker.join(timeout_s)
    return box[0] if box else None


def test_largest_field():
    assert largest_field("%d %s", (1, "x")) == 0
    assert largest_field("%5.2f|%-8s", (1.0, "x")) == 8
    assert largest_field("%*d %.*c", (-12, 3, 40, "x")) == 40
    assert largest_field("%.*s", ("300 apples", "x")) == 300
    assert largest_field("%%%.9c", ("x",)) == 9
    assert largest_field("%.*c", ()) == 0


@pytest.mark.parametrize("sql", [
    "select printf('%d-%s-%5.2f|%-8s|%08.3f', 42, 'abc', 3.14159, 'x', -2.5)", "select printf('%*d', -6, 7)",
    "select format('%q %Q %w', 'it''s', NULL, 'a\"b')", "select printf('%%d %d', 5)", "select printf(NULL)",
    "select printf('%c%c', 'ab', 'cd')", "select printf('%!.3g', 1e10)", "select printf(12, 3)",
    "select printf('%.*s', '3abc', 'hello')", "select printf('%lld %,d', 9999999999, 1234567)",
    "select printf('%')", "select length(printf('%.*c', 16777216, 'x'))", "select printf('%2147483647d', 1)",
])
def test_bounded_printf_gives_sqlites_results(sql):
    bounded, plain = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    for conn in (bounded, plain):
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LIMIT)
    install_bounded_printf(bounded, LIMIT)
    assert bounded.execute(sql).fetchone() == plain.execute(sql).fetchone()


@pytest.mark.parametrize("sql", HUGE)
def test_huge_widths_give_null_at_once(sql):
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LIMIT)
    install_bounded_printf(conn, LIMIT)
    assert _in_thread(lambda: conn.execute(sql).fetchone()) == (None,)


def test_explorer_answers_huge_printf_within_the_time_limit(summary_path):
    ds = build_datasette(summary_path)
    for sql in HUGE:
        r = _in_thread(lambda: get(ds, "/summary.json?_shape=arrays&sql=" + quote(sql)))
        assert r is not None and r.status_code == 200, sql
        assert r.json()["rows"] == [[None]]


def test_requests_beyond_the_sql_threads_are_refused_at_once(summary_path):
    """Five slow queries at once on three SQL threads: three run until the time limit
    stops them (400), two are refused at once (503 with Retry-After); the search page is
    not counted, and afterwards SQL runs again."""
    ds = build_datasette(summary_path, sql_time_limit_ms=2000)
    assert ds.setting("num_sql_threads") == 3
    slow = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000000) select count(*) from c"

    async def scenario():
        async with one_app_client(ds) as client:
            requests = [client.get("/summary.json?sql=" + quote(slow)) for _ in range(5)]
            responses = await asyncio.gather(*requests)
            return responses, await client.get("/summary.json?_shape=arrays&sql=select+1")

    responses, after = asyncio.run(scenario())
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [400, 400, 400, 503, 503]
    refused = [r for r in responses if r.status_code == 503]
    for r in refused:
        assert r.headers["retry-after"] == "2"
        assert "script-src 'self' 'nonce-" in r.headers["content-security-policy"]
        assert r.json() == {"ok": False, "status": 503, "error": BUSY_MESSAGE.format(running=3, retry=2)}
    assert all(r.json()["title"] == "SQL Interrupted" for r in responses if r.status_code == 400)
    assert after.status_code == 200 and after.json()["rows"] == [[1]]


def test_a_slow_query_does_not_hold_up_the_others(summary_path):
    """One visitor's slow query runs on one SQL thread until its time limit; quick queries
    and the search page beside it are answered while it still runs."""
    ds = build_datasette(summary_path, sql_time_limit_ms=15_000)
    slow = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000000) select count(*) from c"

    async def scenario():
        running = asyncio.ensure_future(aget(ds, "/summary.json?sql=" + quote(slow)))
        await asyncio.sleep(0.5)  # time to reach its SQL thread (later only makes the test weaker, never red)
        quick = [await aget(ds, "/summary.json?_shape=arrays&sql=select+1") for _ in range(3)]
        page = await aget(ds, "/search?search=quokka&format=json")
        still_running = not running.done()
        return quick, page, still_running, await running

    quick, page, still_running, slow_response = asyncio.run(scenario())
    assert [(r.status_code, r.json()["rows"]) for r in quick] == [(200, [[1]])] * 3
    assert page.status_code == 200
    assert still_running  # answered while the slow query ran (it runs 15 s)
    assert slow_response.status_code == 400 and slow_response.json()["title"] == "SQL Interrupted"


def _asgi(app, path, method="GET"):
    """Call ASGI ``app`` with one request; return (status, headers, body)."""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    async def run():
        await app({"type": "http", "method": method, "path": path, "headers": []}, receive, send)

    return run, sent


def test_admission_counts_only_the_database_route():
    gates = {}

    async def app(scope, receive, send):
        await gates[scope["path"]].wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guarded = sql_admission(app, lambda: "summary", lambda: 2, lambda: 3000)

    async def scenario():
        for path in ("/summary/a", "/summary.json", "/search", "/summaryx", "/summary/b"):
            gates[path] = asyncio.Event()
        runs = {path: _asgi(guarded, path) for path in gates}
        tasks = {path: asyncio.create_task(run()) for path, (run, _) in runs.items() if path != "/summary/b"}
        await asyncio.sleep(0)
        third, third_sent = _asgi(guarded, "/summary")
        await third()  # two under /summary already run: refused at once
        gates["/search"].set()
        gates["/summaryx"].set()
        await tasks["/search"], tasks["/summaryx"]  # not counted: they ran beside the two
        gates["/summary/a"].set()
        await tasks["/summary/a"]
        gates["/summary/b"].set()
        run_b, sent_b = runs["/summary/b"]
        await run_b()  # a permit is free again
        gates["/summary.json"].set()
        await tasks["/summary.json"]
        return third_sent, sent_b, runs

    third_sent, sent_b, runs = asyncio.run(scenario())
    start = third_sent[0]
    assert start["status"] == 503
    assert dict(start["headers"])[b"retry-after"] == b"3"
    assert third_sent[1]["body"] == (BUSY_MESSAGE.format(running=2, retry=3) + "\n").encode()
    assert sent_b[0]["status"] == 200
    assert all(sent[0]["status"] == 200 for path, (_, sent) in runs.items())


def test_post_to_a_canned_query_is_405(summary_path):
    ds = build_datasette(summary_path)

    async def scenario():
        return [await ds.client.post("/summary/count_active_entity_generations"),
                await ds.client.post("/summary/count_active_entity_generations.json", json={}),
                await ds.client.request("DELETE", "/summary/url"),
                await ds.client.post("/search", data={"search": "cats"}),
                await aget(ds, "/summary/count_active_entity_generations.json?_shape=array")]

    html, json_post, delete, search, get = asyncio.run(scenario())
    for r in (html, delete, search):
        assert (r.status_code, r.headers["allow"], r.text) == (405, "GET, HEAD", READ_ONLY_MESSAGE + "\n")
        assert r.headers["x-content-type-options"] == "nosniff"
    assert (json_post.status_code, json_post.json()) == (405, {"ok": False, "status": 405, "error": READ_ONLY_MESSAGE})
    assert (get.status_code, get.json()) == (200, [{"count(*)": 7}])


def test_read_only_methods_leave_other_instances_alone():
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    run, sent = _asgi(read_only_methods(app, lambda: False), "/db/table/-/insert", "POST")
    asyncio.run(run())
    assert sent[0]["status"] == 201


@pytest.mark.parametrize(("sql", "error"), [
    ("select sqlar_uncompress(x'0001', 10)",
     "sqlar_uncompress: not a zlib stream (Error -3 while decompressing data: incorrect header check)"),
    ("select sqlar_uncompress(x'0001', 100000000)",
     f"sqlar_uncompress: 100000000 bytes is above this connection's limit of {LIMIT}"),
])
def test_a_bad_sqlar_uncompress_call_is_an_sql_error_naming_it_without_a_traceback(summary_path, monkeypatch,
                                                                                    sql, error):
    """Datasette turns on callback tracebacks: a raising SQL function printed a traceback
    and failed with "user-defined function raised exception"."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    ds = build_datasette(summary_path)

    async def scenario():
        bad = await aget(ds, "/summary.json?sql=" + quote(sql))
        where = await aget(ds, "/summary/text_pile.json?_where=" + quote(sql.removeprefix("select ") + " IS NULL"))
        good = await aget(ds, "/summary.json?_shape=arrays&sql=" + quote(
            "select sqlar_uncompress(sqlar_compress(zeroblob(100)), 100) = zeroblob(100), sqlar_uncompress('a', 0)"))
        return bad, where, good

    bad, where, good = asyncio.run(scenario())
    assert (bad.status_code, bad.json()["error"]) == (400, error)
    assert (where.status_code, where.json()["error"]) == (400, error)
    assert (good.status_code, good.json()["rows"]) == (200, [[1, "a"]])  # the connection's next statement runs
    assert unraisable == []


SLOW = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000000) select count(*) from c"


def test_the_queries_of_one_request_share_its_time_limit(summary_path):
    """A table page runs several queries (rows, count, facets); the request's time limit
    bounds them together: each gets what is left, and one that would start after it ran out
    is Datasette's "took too long" without running."""
    from datasette.database import QueryInterrupted

    from textpile.web.explorer_sql import REQUEST_DEADLINE
    from textpile.web.state import find_target

    ds = build_datasette(summary_path, sql_time_limit_ms=600_000)  # each query alone: 10 minutes
    db = find_target(ds)

    async def scenario():
        outcomes = []
        for left_s, sql in ((-1.0, "select 1"), (0.5, SLOW), (None, "select 7")):
            token = REQUEST_DEADLINE.set(None if left_s is None else time.monotonic() + left_s)
            try:
                outcomes.append((await db.execute(sql)).rows[0][0])
            except QueryInterrupted:
                outcomes.append("interrupted")
            finally:
                REQUEST_DEADLINE.reset(token)
        return outcomes

    # The slow query runs for minutes unless the request's deadline stops it.
    assert _in_thread(lambda: asyncio.run(scenario()), timeout_s=120) == ["interrupted", "interrupted", 7]


def test_a_statement_prepared_after_the_requests_time_is_refused():
    from textpile.web.explorer_sql import CURRENT_STATEMENT, REQUEST_DEADLINE, StatementReport, authorize

    report = StatementReport()
    tokens = CURRENT_STATEMENT.set(report), REQUEST_DEADLINE.set(time.monotonic() - 0.001)
    try:
        assert authorize(sqlite3.SQLITE_SELECT, None, None, None, None) == sqlite3.SQLITE_DENY
        assert report.time_up and report.refused is None
        assert authorize(sqlite3.SQLITE_READ, "url", "url_id", "main", None) == sqlite3.SQLITE_OK
    finally:
        CURRENT_STATEMENT.reset(tokens[0])
        REQUEST_DEADLINE.reset(tokens[1])
    # Datasette's own statements outside textpile's execute (introspection) are not cut off.
    token = REQUEST_DEADLINE.set(time.monotonic() - 0.001)
    try:
        assert authorize(sqlite3.SQLITE_SELECT, None, None, None, None) == sqlite3.SQLITE_OK
    finally:
        REQUEST_DEADLINE.reset(token)


def test_admission_gives_each_sql_request_its_deadline():
    from textpile.web.explorer_sql import REQUEST_DEADLINE

    seen = {}

    async def app(scope, receive, send):
        deadline = REQUEST_DEADLINE.get()
        seen[scope["path"]] = None if deadline is None else deadline - time.monotonic()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guarded = sql_admission(app, lambda: "summary", lambda: 3, lambda: 4000)
    for path in ("/summary/url", "/summary/-/query.json", "/summary", "/summary.json", "/search"):
        run, _sent = _asgi(guarded, path)
        asyncio.run(run())
    assert 0 < seen["/summary/url"] <= 4.0 and 0 < seen["/summary/-/query.json"] <= 4.0
    # the database page (every table's introspection) keeps the limit per query
    assert seen["/summary"] is seen["/summary.json"] is seen["/search"] is None
    assert REQUEST_DEADLINE.get() is None
