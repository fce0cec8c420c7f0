"""``textpile debug indexiness``, ``query-crawl-log`` and ``sqlite-version``."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

from textpile.cli import main

from .summary_fixtures import CrawlerRows, page

BASE = "http://site.test"

INDEX_PAGE = page("Index", """
<ul><li><a href="/a.html">A</a></li><li><a href="/b.html">B</a></li><li><a href="#top">top</a></li></ul>
<h2><a href="/c.html">C</a></h2>
<p>See <a href="http://other.test/">elsewhere</a> and <a href="http://third.test/x">there</a>.</p>
""") .replace("<body>", '<body><nav><a href="/nav.html">nav</a></nav>')


@pytest.fixture()
def crawler_db(tmp_path):
    path = tmp_path / "c.db"
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        uuids = {
            "robots": rows.crawl(agent, f"{BASE}/robots.txt", 100, 44, crawl_type=1),
            "old": rows.crawl(agent, f"{BASE}/index.html", 101, html=page("Old", "<p>old</p>")),
            "index": rows.crawl(agent, f"{BASE}/index.html", 102, html=INDEX_PAGE),
            "other": rows.crawl(agent, "http://other.test/page", 103, 50),
        }
    return path, uuids


def test_indexiness_breakdown_of_latest_file(crawler_db, capsys):
    path, _ = crawler_db
    assert main(["debug", "indexiness", "-c", str(path), "-u", f"{BASE}/index.html#frag"]) == 0
    out = capsys.readouterr().out.splitlines()
    # 2 inlinks in a list, 1 selflink in a list, 1 inlink in a headline, 2 outlinks; nav is not counted
    # score = 11*1 + 5*2 - 5*1 - 1*2 - 10 = 4
    assert out == [
        f"Indexiness of {BASE}/index.html (fetched 1970-01-01T00:01:42Z):",
        "  has_publishing_date   false",
        "  selflinks_in_headers  0",
        "  selflinks_in_lists    1",
        "  inlinks_in_headers    1",
        "  inlinks_in_lists      2",
        "  number_of_outlinks    2",
        "  relevant_links        6",
        "  links_total           7",
        "  score                 4",
    ]


def test_indexiness_errors(crawler_db, tmp_path, capsys):
    path, _ = crawler_db
    assert main(["debug", "indexiness", "--database", str(path), "--url", f"{BASE}/missing.html"]) == 1
    assert capsys.readouterr().err == (f"textpile debug indexiness: {path}: no stored file text for "
                                       f"{BASE}/missing.html\n")
    assert main(["debug", "indexiness", "-c", str(path), "-u", "not a url"]) == 2
    assert "--url: not an absolute URL" in capsys.readouterr().err
    assert main(["debug", "indexiness", "-c", str(tmp_path / "nope.db"), "-u", f"{BASE}/"]) == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'nope.db'}: no such crawler database\n"


def rows_of(out: str) -> list[list[str]]:
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["time_started", "exit_code", "crawl_type", "time_taken_ms", "crawl_uuid", "url"]
    return [line.split() for line in lines[1:-1]]


def test_query_crawl_log_filters(crawler_db, capsys):
    path, uuids = crawler_db
    assert main(["debug", "query-crawl-log", "-c", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "4 crawl log entries."
    assert rows_of(out) == [
        ["1970-01-01T00:01:40Z", "file_not_found", "(44)", "robotstxt_fetch", "12", str(uuid.UUID(bytes=uuids["robots"])),
         f"{BASE}/robots.txt"],
        ["1970-01-01T00:01:41Z", "file_ingested", "(20)", "file_crawl", "12", str(uuid.UUID(bytes=uuids["old"])),
         f"{BASE}/index.html"],
        ["1970-01-01T00:01:42Z", "file_ingested", "(20)", "file_crawl", "12", str(uuid.UUID(bytes=uuids["index"])),
         f"{BASE}/index.html"],
        ["1970-01-01T00:01:43Z", "server_internal_error", "(50)", "file_crawl", "12",
         str(uuid.UUID(bytes=uuids["other"])), "http://other.test/page"],
    ]
    assert main(["debug", "query-crawl-log", "-c", str(path), "--exit-code", "file_ingested"]) == 0
    assert [r[5] for r in rows_of(capsys.readouterr().out)] == [str(uuid.UUID(bytes=uuids[k])) for k in ("old", "index")]
    assert main(["debug", "query-crawl-log", "-c", str(path), "--exit-code", "44"]) == 0
    assert [r[6] for r in rows_of(capsys.readouterr().out)] == [f"{BASE}/robots.txt"]
    assert main(["debug", "query-crawl-log", "-c", str(path), "--host", "OTHER.test"]) == 0
    assert [r[6] for r in rows_of(capsys.readouterr().out)] == ["http://other.test/page"]
    assert main(["debug", "query-crawl-log", "-c", str(path), "--url", f"{BASE}/index.html#x",
                 "--exit-code", "20"]) == 0
    assert len(rows_of(capsys.readouterr().out)) == 2
    assert main(["debug", "query-crawl-log", "--crawler-db", str(path), "--uuid", uuid.UUID(bytes=uuids["index"]).hex]) == 0
    assert [r[5] for r in rows_of(capsys.readouterr().out)] == [str(uuid.UUID(bytes=uuids["index"]))]
    assert main(["debug", "query-crawl-log", "-c", str(path), "--host", "nowhere.test"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0 crawl log entries."


def test_query_crawl_log_bad_input(crawler_db, tmp_path, capsys):
    path, _ = crawler_db
    assert main(["debug", "query-crawl-log", "-c", str(path), "--exit-code", "file_eaten"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("textpile debug query-crawl-log: --exit-code: unknown exit code 'file_eaten'; expected one of:")
    assert "file_ingested (20)" in err
    assert main(["debug", "query-crawl-log", "-c", str(path), "--uuid", "12345"]) == 2
    assert "--uuid: not a UUID: '12345'" in capsys.readouterr().err
    assert main(["debug", "query-crawl-log", "-c", str(tmp_path / "nope.db")]) == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'nope.db'}: no such crawler database\n"


def test_sqlite_version(capsys):
    assert main(["debug", "sqlite-version"]) == 0
    assert capsys.readouterr().out == sqlite3.sqlite_version + "\n"
