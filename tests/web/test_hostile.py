"""Adversarial findings (issue 4) on the web frontend: huge SQL values, raw ``..``
paths, debug endpoints, file paths in JSON, database names with # ? %."""

import asyncio
import resource
import shutil
import sqlite3
from urllib.parse import quote

import pytest

from textpile.web.app import build_datasette
from textpile.web.limits import EXPLORER_MAX_RESULT_BYTES, MIB, budget_row_factory
from web.client import SQL_ERROR_PAGE_STATUS, get

SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy")


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("sql", [
    "select zeroblob(200000000)",
    "select zeroblob(1000000000)",
    "select randomblob(999999999)",
    "select hex(zeroblob(9000000))",
    "select zeroblob(16777217)",
])
def test_huge_values_fail_fast_with_400(ds, sql):
    before = peak_rss_mib()
    r = get(ds, "/summary.json?sql=" + quote(sql))
    assert r.status_code == 400
    assert r.json()["error"] == "string or blob too big"
    r = get(ds, "/summary?sql=" + quote(sql))
    assert r.status_code == SQL_ERROR_PAGE_STATUS and "string or blob too big" in r.text
    assert all(h in r.headers for h in SECURITY_HEADERS)
    assert peak_rss_mib() - before < 200


def test_result_byte_budget(ds):
    before = peak_rss_mib()
    sql = "select zeroblob(10000000), zeroblob(10000000) from url"  # 20 MB a row, several rows
    r = get(ds, "/summary.json?sql=" + quote(sql))
    assert r.status_code == 400
    assert r.json()["error"] == (
        "result too big: the rows of one query may hold at most 32 MiB of text and blobs here; "
        "select fewer rows or columns, or shorten values with substr()")
    sql = "select " + ", ".join(["zeroblob(16000000)"] * 65)
    r = get(ds, "/summary.json?sql=" + quote(sql))
    assert r.status_code == 400 and r.json()["error"] == "too many columns in result set"
    assert peak_rss_mib() - before < 300
    # ordinary values still come back, and a value just under the cap too
    r = get(ds, "/summary.json?_shape=arrays&sql=" + quote("select length(zeroblob(16777216)) as n, 'ok' as s"))
    assert r.status_code == 200 and r.json()["rows"] == [[16777216, "ok"]]
    r = get(ds, "/summary.json?sql=" + quote("select count(*) from url"))
    assert r.status_code == 200


def test_budget_row_factory_counts_per_cursor():
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.row_factory = budget_row_factory(None, limit_bytes=10)
    assert conn.execute("select 'abcde', x'0102'").fetchall() == [("abcde", b"\x01\x02")]
    assert conn.execute("select 'abcdefgh'").fetchall() == [("abcdefgh",)]  # a new cursor starts at 0
    cur = conn.execute("select 'abcdef' union all select 'ghijkl'")
    assert cur.fetchone() == ("abcdef",)
    with pytest.raises(sqlite3.DataError, match="at most 0 MiB"):
        cur.fetchone()
    assert EXPLORER_MAX_RESULT_BYTES == 32 * MIB


def test_settings_bound_responses(ds):
    assert (ds.setting("max_returned_rows"), ds.setting("max_csv_mb"), ds.setting("truncate_cells_html")) == \
        (1000, 16, 2048)


async def raw_get(app, raw_path: bytes):
    """Send one request whose path is exactly ``raw_path`` (no client normalization)."""
    from urllib.parse import unquote

    path = unquote(raw_path.decode("latin-1"))
    scope = {"type": "http", "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": raw_path, "query_string": b"", "root_path": "",
             "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    messages = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        messages.append(message)

    await app(scope, receive, send)
    start = next(m for m in messages if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, body


@pytest.mark.parametrize("raw", [
    b"/static/../../../etc/passwd",
    b"/-/static/../../../../etc/passwd",
    b"/-/textpile/static/../../../../etc/passwd",
    b"/-/textpile/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    b"/-/static-plugins/textpile/x",
    b"/search/../-/databases",
    b"/nonexistent",
])
def test_odd_paths_are_404_with_security_headers(ds, raw, capsys):
    status, headers, body = asyncio.run(raw_get(ds.app(), raw))
    assert status == 404, body[:300]
    assert all(h in headers for h in SECURITY_HEADERS)
    assert b"root:" not in body
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("path", [
    "/-/threads", "/-/threads.json", "/-/messages", "/-/allow-debug", "/-/patterns",
    "/-/databases", "/-/databases.json", "/-/permissions", "/-/versions", "/-/versions.json", "/-/plugins",
    "/-/plugins.json", "/-/settings", "/-/settings.json", "/-/metadata", "/-/metadata.json", "/-/config",
    "/-/config.json", "/-/actor", "/-/actor.json",
])
def test_debug_endpoints_hidden(ds, path):
    r = get(ds, path)
    assert r.status_code == 404
    assert all(h in r.headers for h in SECURITY_HEADERS)


def test_no_absolute_paths_in_json(ds, summary_path):
    for path in ("/.json", "/summary.json", "/summary/url.json", "/summary/entity_generation.json"):
        r = get(ds, path)
        assert r.status_code == 200, path
        assert str(summary_path.parent) not in r.text, path


def test_bad_sort_and_where_are_400(ds):
    r = get(ds, "/summary/url.json?_sort=nonexistent")
    assert (r.status_code, r.json()["error"]) == (400, "Cannot sort table by nonexistent")
    r = get(ds, "/summary/url.json?_where=" + quote("1=1;drop"))
    assert (r.status_code, r.json()["error"]) == (400, "You can only execute one statement at a time.")


def test_database_name_with_uri_characters(summary_path, tmp_path):
    path = tmp_path / "a#b%20c?.db"
    shutil.copy(summary_path, path)
    ds = build_datasette(path)
    r = get(ds, "/search?format=json&search=cats")
    assert r.status_code == 200
    assert [x["title"] for x in r.json()["list"]] == ["Why cats sleep all day", "Warum Katzen schlafen"]
    (name,) = [n for n in ds.databases if n != "_internal"]
    route = ds.urls.database(ds.databases[name].route)
    r = get(ds, route + ".json?_shape=arrays&sql=" + quote("select count(*) from url"))
    assert r.status_code == 200 and r.json()["rows"][0][0] > 0
    r = get(ds, route + "/url.json")
    assert r.status_code == 200 and r.json()["rows"]
    # nothing but the summary database and the query counts beside it (textpile.web.analytics)
    counts = "a#b%20c?-analytics.db"
    assert {p.name for p in tmp_path.iterdir()} <= {path.name, path.name + "-wal", path.name + "-shm",
                                                    counts, counts + "-wal", counts + "-shm"}
    assert sqlite3.connect(tmp_path / counts).execute("SELECT query, searches FROM query_day").fetchall() == [
        ("cats", 1)]
