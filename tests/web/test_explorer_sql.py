"""SQL exploration that untrusted visitors may use (issue 31): fts3_tokenizer, load_extension,
ATTACH and the pragmas that reveal or change the server's setup are refused with a 400 that
names what was refused, in ?sql= and in a table page's ?_where= alike; ordinary SQL, the
canned queries, the table pages and the README's examples keep working."""

import asyncio
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest

from textpile.web.app import build_datasette
from textpile.web.explorer_sql import ALLOWED_PRAGMAS, SQLRefused, authorize, guard_connection
from textpile.web.state import find_target
from web.client import get

README = Path(__file__).resolve().parents[2] / "README.md"

FTS3 = "fts3_tokenizer() is not allowed in SQL exploration: it registers and reveals native pointers"
LOAD = "load_extension() is not allowed in SQL exploration: it loads native code into the server"
ALLOWED = ", ".join("pragma_" + p for p in sorted(ALLOWED_PRAGMAS))


def pragma_refused(name: str) -> str:
    return f"pragma_{name} is not allowed in SQL exploration (it reveals or changes the server's setup); allowed: {ALLOWED}"


REFUSED = [
    ("select fts3_tokenizer('x', x'4141414141414141')", FTS3),  # registers a pointer
    ("select hex(fts3_tokenizer('porter'))", FTS3),  # reveals a native address
    ("select fts3_tokenizer('simple') is null", FTS3),
    ("select load_extension('/tmp/evil.so')", LOAD),
    ("select load_extension('/tmp/evil.so', 'entry')", LOAD),
    ("select * from pragma_database_list", pragma_refused("database_list")),
    ("select file from pragma_database_list where seq = 0", pragma_refused("database_list")),
]
#: Pragmas Datasette's own check refuses in ?sql= already ("Statement contained a
#: disallowed PRAGMA"); in a table page's ?_where= the authorizer refuses them.
REFUSED_IN_WHERE = [("select * from pragma_hard_heap_limit", pragma_refused("hard_heap_limit")),
                    ("select * from pragma_quick_check", pragma_refused("quick_check")),
                    ("select * from pragma_cache_size", pragma_refused("cache_size"))]


@pytest.mark.parametrize(("sql", "message"), REFUSED)
def test_refused_sql_is_a_400_naming_what_was_refused(ds, summary_path, sql, message):
    r = get(ds, "/summary.json?sql=" + quote(sql))
    assert (r.status_code, r.json()["error"], r.json()["title"]) == (400, message, "Invalid SQL")
    assert str(summary_path.parent) not in r.text
    page = get(ds, "/summary?sql=" + quote(sql))
    assert page.status_code == 400 and message.split(" (")[0] in page.text
    assert_refused_in_where(ds, sql, message)


def assert_refused_in_where(ds, sql: str, message: str) -> None:
    """A table page whose ``?_where=`` holds ``sql`` is a 400 with ``message``."""
    where = f"({sql.removeprefix('select ')}) is not null" if " from " not in sql else f"exists ({sql})"
    r = get(ds, "/summary/url.json?_where=" + quote(where))
    assert (r.status_code, r.json()["error"]) == (400, message)
    page = get(ds, "/summary/url?_where=" + quote(where))
    assert page.status_code == 400 and message.split(" (")[0] in page.text


@pytest.mark.parametrize(("sql", "message"), REFUSED_IN_WHERE)
def test_pragmas_datasette_lets_through_in_a_where_clause_are_refused(ds, sql, message):
    assert get(ds, "/summary.json?sql=" + quote(sql)).status_code == 400  # Datasette's own check
    assert_refused_in_where(ds, sql, message)


def test_attach_is_refused_by_datasette_and_by_the_authorizer(ds, tmp_path):
    """ATTACH is no SELECT, so Datasette refuses it in ?sql= already; a statement that reaches
    SQLite through Datasette's connections (a plugin's, a writable canned query's) is refused
    by the authorizer, naming it."""
    r = get(ds, "/summary.json?sql=" + quote(f"attach database '{tmp_path}/x.db' as x"))
    assert (r.status_code, r.json()["error"]) == (400, "Statement must be a SELECT")
    db = find_target(ds)
    for sql, verb in ((f"attach database '{tmp_path}/x.db' as x", "ATTACH"), ("detach database main", "DETACH")):
        with pytest.raises(SQLRefused) as refused:
            asyncio.run(db.execute(sql))
        assert (refused.value.status, refused.value.message) == (
            400, f"{verb} is not allowed in SQL exploration: only the published database is served")
    assert not (tmp_path / "x.db").exists()


def test_the_authorizer_outside_a_reported_statement(tmp_path):
    """On a connection of its own (another database of the instance) the authorizer refuses
    the same, with SQLite's message; reading and the schema pragmas stay allowed."""
    conn = guard_connection(sqlite3.connect(":memory:"))
    conn.execute("create table t(a)")  # before: nothing refused creating tables
    for sql in ("select fts3_tokenizer('porter')", "select * from pragma_database_list",
                f"attach database '{tmp_path}/y.db' as y", "pragma cache_size = 100000"):
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            conn.execute(sql)
    assert conn.execute("select name, type from pragma_table_info('t')").fetchall() == [("a", "")]
    assert conn.execute("select count(*) from t").fetchone() == (0,)
    assert authorize(sqlite3.SQLITE_PRAGMA, "table_info", "t", None, None) == sqlite3.SQLITE_OK
    assert authorize(sqlite3.SQLITE_PRAGMA, "user_version", "3", None, None) == sqlite3.SQLITE_DENY
    assert authorize(sqlite3.SQLITE_PRAGMA, "user_version", None, None, None) == sqlite3.SQLITE_OK
    assert authorize(sqlite3.SQLITE_FUNCTION, None, "FTS3_TOKENIZER", None, None) == sqlite3.SQLITE_DENY
    assert not (tmp_path / "y.db").exists()


def _readme_sql_examples() -> list[str]:
    """The SELECT statements of the README's SQL examples (```sql blocks)."""
    blocks = re.findall(r"```sql\n(.*?)```", README.read_text("utf-8"), flags=re.S)
    return [b.strip().rstrip(";") for b in blocks if b.strip().lower().startswith(("select", "with"))]


def test_ordinary_sql_keeps_working(ds):
    examples = _readme_sql_examples()
    assert examples, "the README shows SQL examples"
    for sql in [*examples,
                "select count(*) from pragma_table_info('url')",
                "select substr(text, 1, 20) from text_pile limit 1",
                "with recursive c(x) as (select 1 union all select x + 1 from c where x < 5) select sum(x) from c",
                "select json_extract('{\"a\": 2}', '$.a') * printf('%d', 3)"]:
        r = get(ds, "/summary.json?_shape=arrays&sql=" + quote(sql))
        assert r.status_code == 200, (sql, r.text[:300])
    r = get(ds, "/summary.json?_shape=arrays&sql=" + quote("select count(*) from pragma_table_info('url')"))
    assert r.json()["rows"] == [[7]]
    for path in ("/summary", "/summary/url", "/summary/text_pile", "/summary/entity_generation?_facet=marked_duplicate",
                 "/summary/url?_where=" + quote("url_id < 3"), "/summary/count_active_entity_generations",
                 "/summary/count_unused_tokens", "/summary/url/1"):
        assert get(ds, path).status_code == 200, path
    rows = get(ds, "/summary/url.json?_shape=array&_where=" + quote("url_id < 3")).json()
    assert [row["url_id"] for row in rows] == [1, 2]


def test_datasette_pages_read_no_file_path(summary_path):
    """The database page asks for attached databases; textpile answers none (ATTACH is refused)
    instead of letting Datasette read PRAGMA database_list."""
    ds = build_datasette(summary_path)
    r = get(ds, "/summary.json")
    assert r.status_code == 200 and str(summary_path) not in r.text
    assert asyncio.run(find_target(ds).attached_databases()) == []
