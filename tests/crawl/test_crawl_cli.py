"""``textpile crawl`` end to end: a real documentation site (Debian sqlite3-doc HTML)
served on 127.0.0.1, the documented schema, continuing runs, --force-recrawl, Ctrl+C."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from sites import DirectoryServer, Response, SiteServer
from textpile.cli import main

from .crawlsite import write_config

# Column (name, declared type, NOT NULL, primary key position) per table, from the seed's
# pages "Crawler Database" and "Base Database" (agent_id an INTEGER, time_finished_unix_utc:
# see schemas/crawler/1.0.0.sql for the two contradictions resolved).
EXPECTED_COLUMNS = {
    "unobtanium_database_info": [("key", "TEXT", 1, 1), ("value", "TEXT", 1, 0)],
    "origin": [("origin_id", "INTEGER", 1, 1), ("port", "INTEGER", 0, 0), ("scheme", "VARCHAR", 1, 0),
               ("host", "VARCHAR", 0, 0), ("str_origin", "TEXT", 1, 0)],
    "url": [("url_id", "INTEGER", 1, 1), ("origin_id", "INTEGER", 1, 0), ("path", "TEXT", 0, 0),
            ("query", "TEXT", 0, 0), ("username", "TEXT", 0, 0), ("password", "TEXT", 0, 0),
            ("str_url", "TEXT", 1, 0)],
    "mimetype": [("mimetype_id", "INTEGER", 1, 1), ("mime_type", "TEXT", 1, 0), ("mime_subtype", "TEXT", 1, 0),
                 ("mime_suffix", "TEXT", 0, 0), ("charset", "TEXT", 0, 0), ("str_mimetype", "TEXT", 1, 0)],
    "mime_parameter": [("mime_parameter_id", "INTEGER", 1, 1), ("mimetype_id", "INTEGER", 1, 0),
                       ("key", "TEXT", 1, 0), ("value", "TEXT", 1, 0)],
    "agent": [("agent_id", "INTEGER", 1, 1), ("time_started_unix_utc", "INTEGER", 1, 0),
              ("time_finished_unix_utc", "INTEGER", 0, 0), ("agent_uuid", "BLOB", 1, 0), ("name", "TEXT", 1, 0),
              ("http_user_agent", "TEXT", 0, 0)],
    "crawl_log": [("crawl_log_id", "INTEGER", 1, 1), ("agent_id", "INTEGER", 1, 0), ("url_id", "INTEGER", 1, 0),
                  ("crawl_type", "INTEGER", 1, 0), ("crawl_uuid", "BLOB", 1, 0),
                  ("time_started_unix_utc", "INTEGER", 1, 0), ("time_taken_ms", "INTEGER", 1, 0),
                  ("exit_code", "INTEGER", 1, 0), ("message", "TEXT", 0, 0)],
    "request": [("request_id", "INTEGER", 1, 1), ("crawl_log_id", "INTEGER", 1, 0), ("url_id", "INTEGER", 1, 0),
                ("time_sent_unix_utc", "INTEGER", 1, 0), ("request_duration_ms", "INTEGER", 0, 0),
                ("robotstxt_approved", "BOOL", 1, 0), ("exit_code", "INTEGER", 1, 0),
                ("server_last_modified_unix_utc", "INTEGER", 0, 0), ("http_status_code", "INTEGER", 0, 0),
                ("http_etag", "VARCHAR", 0, 0)],
    "file": [("file_id", "INTEGER", 1, 1), ("crawl_log_id", "INTEGER", 1, 0), ("request_id", "INTEGER", 0, 0),
             ("url_id", "INTEGER", 1, 0), ("last_modified_unix_utc", "INTEGER", 0, 0), ("file_size", "INTEGER", 0, 0),
             ("mimetype_id", "INTEGER", 1, 0), ("canonical_url_id", "INTEGER", 0, 0)],
    "file_text": [("file_id", "INTEGER", 1, 1), ("text", "TEXT", 1, 0)],
    "redirect": [("redirect_id", "INTEGER", 1, 1), ("crawl_log_id", "INTEGER", 1, 0), ("request_id", "INTEGER", 0, 0),
                 ("url_id", "INTEGER", 1, 0), ("last_modified_unix_utc", "INTEGER", 0, 0),
                 ("to_url_id", "INTEGER", 1, 0), ("information_source", "INTEGER", 1, 0),
                 ("is_permanent", "BOOL", 1, 0), ("by_security_policy", "BOOL", 1, 0)],
    "crawl_candidate": [("url_id", "INTEGER", 1, 1), ("last_crawl_time_unix_utc", "INTEGER", 0, 0),
                        ("last_crawl_exit_code", "INTEGER", 0, 0),
                        ("last_contentful_crawl_time_unix_utc", "INTEGER", 0, 0),
                        ("last_contentful_http_etag", "TEXT", 0, 0)],
}


def file_crawls(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute(
            "SELECT u.str_url FROM crawl_log l JOIN url u USING(url_id) WHERE l.crawl_type = 0 ORDER BY crawl_log_id")]
    finally:
        conn.close()


def test_crawl_real_docs_site_with_the_cli(real_docs_site, tmp_path, capsys):
    base_url, root = real_docs_site
    cfg = write_config(tmp_path, [base_url + "/index.html"], max_commands=1000)
    db = tmp_path / "crawl.db"
    status = main(["crawl", "--config", str(cfg), "--database", str(db), "--max-commands", "150",
                   "--worker-name", "bee", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0
    assert out.startswith("[Crawl_Statistics_Report]\nout_of_patience_origins = []\nrefused_origins = []\n"
                          "total_requests = 150\n")
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    # the documented tables exactly, and textpile's discovery, import, recrawl and links extensions beside them
    assert {t for t in tables if not t.startswith("textpile_")} == set(EXPECTED_COLUMNS)
    assert {t for t in tables if t.startswith("textpile_")} == {
        "textpile_meta_resource", "textpile_listed_url", "textpile_listed_change", "textpile_site_link",
        "textpile_site_check", "textpile_archive_import", "textpile_recrawl", "textpile_page_links",
        "textpile_handoff", "textpile_handoff_taken", "textpile_handoff_source"}
    for table, columns in EXPECTED_COLUMNS.items():
        found = [(r[1], r[2], r[3], r[5]) for r in conn.execute(f"PRAGMA table_info({table})")]
        assert found == columns, table
    index = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'crawl_log_quickinfo'").fetchone()[0]
    assert "crawl_log(url_id, time_started_unix_utc, exit_code)" in index
    assert conn.execute("SELECT name FROM agent").fetchall() == [("bee",)]
    # 150 commands: robots.txt and 149 file crawls of real pages, each URL once
    first = file_crawls(db)
    assert len(first) == 149 and len(set(first)) == 149
    ingested = conn.execute("SELECT COUNT(*) FROM crawl_log WHERE crawl_type = 0 AND exit_code = 20").fetchone()[0]
    assert ingested >= 100
    text = conn.execute("SELECT t.text FROM file_text t JOIN file f USING(file_id) JOIN url u USING(url_id)"
                        " WHERE u.str_url = ?", (base_url + "/index.html",)).fetchone()[0]
    assert text == (Path(root) / "index.html").read_bytes().decode("utf-8")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()

    # a second run continues with URLs not crawled yet (recrawl_interval not reached)
    assert main(["crawl", "--config", str(cfg), "--database", str(db), "-m", "50", "--no-progress"]) == 0
    second = file_crawls(db)[149:]
    assert len(second) == 49 and not set(second) & set(first)



def test_no_recrawl_before_interval_and_force_recrawl(tmp_path):
    site_root = tmp_path / "site"
    site_root.mkdir()
    (site_root / "index.html").write_text('<a href="a.html">a</a><a href="b.txt">b</a>')
    (site_root / "a.html").write_text("<p>a</p>")
    (site_root / "b.txt").write_text("b")
    with DirectoryServer(site_root) as site:
        cfg = write_config(tmp_path, [site.base_url + "/index.html"])
        db = tmp_path / "crawl.db"
        for extra in ([], [], ["--force-recrawl"]):
            assert main(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress", *extra]) == 0
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT l.agent_id, replace(u.str_url, ?, ''), l.crawl_type, l.exit_code FROM crawl_log l"
                        " JOIN url u USING(url_id) ORDER BY crawl_log_id", (site.base_url,)).fetchall()
    # run 2: nothing due (recrawl_interval 1 week), only robots.txt; run 3: forced, and
    # the conditional requests (If-Modified-Since) get 304
    assert rows == [
        (1, "/robots.txt", 1, 44), (1, "/index.html", 0, 20), (1, "/a.html", 0, 20), (1, "/b.txt", 0, 20),
        (2, "/robots.txt", 1, 44),
        (3, "/robots.txt", 1, 44), (3, "/index.html", 0, 34), (3, "/a.html", 0, 34), (3, "/b.txt", 0, 34),
    ]


def test_cli_subprocess_with_options_only(tmp_path):
    routes = {"/": Response(200, '<a href="/a">a</a>'), "/a": Response(200, "<p>a</p>")}
    with SiteServer(routes) as site:
        db = tmp_path / "c.db"
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from textpile.cli import main; sys.exit(main())", "crawl",
             "-c", str(db), "--schedule", site.base_url + "/", "-m", "10", "-d", "0", "--force-recrawl",
             "--allow-private-addresses", "-u", "probe-bot (for tests)"],
            capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # robots.txt, the well-known /sitemap.xml and /sitemap_index.xml (sitemaps are on by
    # default; all three 404 here), / and /a
    assert "total_requests = 5" in proc.stdout
    assert "file_ingested = 2" in proc.stdout and "file_not_found = 3" in proc.stdout
    assert "[ file_ingested ] " + site.base_url + "/a" in proc.stderr
    assert site.log[0].headers["User-Agent"] == "probe-bot (for tests)"


def test_crawl_log_lines_are_never_wrapped_when_stderr_is_no_terminal(tmp_path):
    long_path = "/" + "-".join(["documentation"] * 12) + ".html"  # the line is far wider than 80 columns
    routes = {"/": Response(200, f'<a href="{long_path}">a</a>'), long_path: Response(200, "<p>a</p>")}
    with SiteServer(routes) as site:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from textpile.cli import main; sys.exit(main())", "crawl",
             "-c", str(tmp_path / "c.db"), "--schedule", site.base_url + "/", "-m", "10", "-d", "0",
             "--force-recrawl", "--allow-private-addresses"],
            capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert f"[ file_ingested ] {site.base_url}{long_path}" in lines
    assert f"fetched robots.txt: [ file_not_found ] {site.base_url}/robots.txt" in lines


def test_cli_configuration_errors(tmp_path, capsys):
    db = tmp_path / "c.db"
    assert main(["crawl", "-c", str(db), "-m", "10", "-d", "0", "--force-recrawl"]) == 2
    assert "no seeds" in capsys.readouterr().err
    cfg = write_config(tmp_path, ["http://127.0.0.1:9/"], extra='database_file = "other.db"')
    assert main(["crawl", "--config", str(cfg), "-c", str(db)]) == 2
    assert "--ignore-db-name-from-config" in capsys.readouterr().err
    assert not db.exists()


def test_ctrl_c_keeps_a_consistent_database_and_the_next_run_completes(tmp_path, capsys, sigint_default):
    pages = [f"/p{i}.html" for i in range(30)]
    served = []

    def index(req):
        return Response(200, "".join(f'<a href="{p}">{p}</a>' for p in pages))

    def leaf(req):
        served.append(req.path)
        if len(served) == 8:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C while the 8th page is being served
        return Response(200, f"<p>{req.path}</p>")

    routes = {"/": index, **{p: leaf for p in pages}}
    with SiteServer(routes) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"], delay_ms=20)
        db = tmp_path / "crawl.db"
        status = main(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress"])
        assert status == 130
        assert "interrupted = true" in capsys.readouterr().out
        conn = sqlite3.connect(db)
        # whole entries only: every file crawl has its request and, for 20, its file and text
        assert conn.execute("SELECT COUNT(*) FROM crawl_log l WHERE crawl_type = 0 AND NOT EXISTS"
                            " (SELECT 1 FROM request r WHERE r.crawl_log_id = l.crawl_log_id)").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM crawl_log l WHERE exit_code = 20 AND crawl_type = 0 AND NOT EXISTS"
                            " (SELECT 1 FROM file f JOIN file_text t USING(file_id)"
                            "  WHERE f.crawl_log_id = l.crawl_log_id)").fetchone() == (0,)
        crawled_first = {r[0] for r in conn.execute(
            "SELECT u.str_url FROM crawl_log l JOIN url u USING(url_id) WHERE crawl_type = 0")}
        assert 1 + 6 <= len(crawled_first) <= 1 + 8
        done = conn.execute("SELECT COUNT(*) FROM crawl_candidate WHERE last_crawl_time_unix_utc IS NOT NULL").fetchone()
        assert done == (len(crawled_first),)
        assert conn.execute("SELECT COUNT(*) FROM agent WHERE time_finished_unix_utc IS NOT NULL").fetchone() == (1,)
        conn.close()

        served.append("x")  # no second interrupt
        assert main(["crawl", "--config", str(cfg), "-c", str(db), "--no-progress"]) == 0
    crawled = file_crawls(db)
    assert sorted(crawled) == sorted([site.base_url + "/"] + [site.base_url + p for p in pages])


def test_crawl_of_a_refused_local_site_says_why_and_fails(tmp_path, capsys):
    with SiteServer({"/": Response(200, "<p>local</p>")}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"], allow_private=False)
        db = tmp_path / "crawl.db"
        status = main(["crawl", "--config", str(cfg), "--database", str(db), "--no-progress"])
        assert site.log == []
    captured = capsys.readouterr()
    refusal = (f"refused to connect to 127.0.0.1:{site.port}: 127.0.0.1 is a loopback address; crawling loopback, "
               "private, link-local or reserved addresses needs allow_private_addresses = true in the "
               "configuration or --allow-private-addresses")
    assert status == 1
    assert captured.err == (f"{refusal}\n"
                            f"textpile: error: nothing crawled: every seed origin was refused: {refusal}\n")
    assert captured.out.startswith("[Crawl_Statistics_Report]\n"
                                   'out_of_patience_origins = []\n'
                                   f'refused_origins = ["{site.base_url}"]\n'
                                   "total_requests = 0\n")
    assert f'"{site.base_url}" = "{refusal}"\n' in captured.out
    # the option allows it
    with SiteServer({"/": Response(200, "<p>local</p>")}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"], allow_private=False)
        status = main(["crawl", "--config", str(cfg), "--database", str(db), "--no-progress",
                       "--allow-private-addresses"])
        assert [r.path for r in site.log] == ["/robots.txt", "/"]
    assert status == 0
    assert "refused_origins = []\n" in capsys.readouterr().out
