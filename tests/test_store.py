"""Database opening, version checks, URL and media type storage (textpile.store)."""

import sqlite3

import pytest

from textpile.errors import DatabaseError
from textpile.store.database import open_crawler_db, open_summary_db
from textpile.store.mimetypes import intern_mimetype, parse_media_type
from textpile.store.urls import intern_url, parse_url


def test_create_crawler_db_writes_info_keys(tmp_path):
    conn = open_crawler_db(tmp_path / "c.db")
    info = dict(conn.execute("SELECT key, value FROM unobtanium_database_info"))
    assert info == {
        "unobtanium_base_schema_version": "0.1.0",
        "unobtanium_database_kind": "crawler",
        "unobtanium_crawler_schema_version": "1.0.0",
    }
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"agent", "crawl_log", "request", "file", "file_text", "redirect", "crawl_candidate",
            "origin", "url", "mimetype", "mime_parameter", "unobtanium_database_info"} <= tables
    idx = conn.execute("SELECT sql FROM sqlite_master WHERE name='crawl_log_quickinfo'").fetchone()[0]
    assert "url_id, time_started_unix_utc, exit_code" in idx


def test_summary_db_refused_as_crawler_db(tmp_path):
    open_summary_db(tmp_path / "s.db").close()
    with pytest.raises(DatabaseError, match="is a summary database, expected a crawler"):
        open_crawler_db(tmp_path / "s.db")
    open_crawler_db(tmp_path / "c.db").close()
    with pytest.raises(DatabaseError, match="is a crawler database, expected a summary"):
        open_summary_db(tmp_path / "c.db")


def test_newer_version_refused_and_not_altered(tmp_path):
    path = tmp_path / "c.db"
    open_crawler_db(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE unobtanium_database_info SET value='2.0.0' WHERE key='unobtanium_crawler_schema_version'")
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseError, match="2.0.0"):
        open_crawler_db(path)
    assert path.read_bytes() == before


def test_foreign_files_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(DatabaseError, match="not a SQLite database"):
        open_crawler_db(text)
    assert text.read_text() == "hello"
    other = tmp_path / "other.db"
    raw = sqlite3.connect(other)
    raw.execute("CREATE TABLE t(x)")
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseError, match="no unobtanium_database_info"):
        open_summary_db(other)


def test_parse_url_splits_and_normalizes():
    u = parse_url("HTTPS://Example.ORG:443/a/./b/../c?x=1#frag")
    assert (u.scheme, u.host, u.port, u.path, u.query, u.fragment) == ("https", "example.org", 443, "/a/c", "x=1", "frag")
    assert u.str_url == "https://example.org/a/c?x=1"
    assert u.str_origin == "https://example.org:443"
    assert parse_url("http://127.0.0.1:8080").str_url == "http://127.0.0.1:8080/"
    assert parse_url("http://bücher.example/").host == "xn--bcher-kva.example"
    assert parse_url("../x y", base="http://h/a/b/c").str_url == "http://h/a/x%20y"


def test_intern_url_stores_origin_and_url_without_fragment():
    conn = sqlite3.connect(":memory:")
    from textpile.store.database import BASE_SCHEMA_VERSION, schema_sql

    conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
    a = intern_url(conn, "http://example.org/page#one")
    b = intern_url(conn, "http://example.org/page#two")
    assert a == b
    assert conn.execute("SELECT origin_id, path, query, str_url FROM url").fetchall() == [(1, "/page", None, "http://example.org/page")]
    assert conn.execute("SELECT port, scheme, host, str_origin FROM origin").fetchall() == [(80, "http", "example.org", "http://example.org:80")]


def test_media_type_parameters_sorted_and_stored():
    mt = parse_media_type('text/html; Charset="UTF-8"; a=b')
    assert mt.str_mimetype == "text/html; a=b; charset=utf-8"
    assert parse_media_type("application/atom+xml").mime_suffix == "xml"
    assert parse_media_type(None).essence == "application/octet-stream"
    conn = sqlite3.connect(":memory:")
    from textpile.store.database import BASE_SCHEMA_VERSION, schema_sql

    conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
    mid = intern_mimetype(conn, mt)
    assert intern_mimetype(conn, "text/html; a=b; charset=UTF-8") == mid
    assert conn.execute("SELECT key, value FROM mime_parameter ORDER BY key").fetchall() == [("a", "b"), ("charset", "utf-8")]
