"""``textpile crawl`` on seeds that never answer (a port with nothing listening on
127.0.0.1): no seed answering fails with each origin's cause; some answering stays exit 0
and names the ones that did not."""

from __future__ import annotations

import socket
import sqlite3
from contextlib import closing

import pytest

from sites import Response, SiteServer
from textpile.cli import main

from .crawlsite import write_config


@pytest.fixture
def refusing_origin():
    """``http://127.0.0.1:PORT`` where connections are refused: the port is bound (so
    nothing else takes it) but not listening."""
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def crawl_log(db) -> list[tuple[int, str]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT exit_code, message FROM crawl_log ORDER BY crawl_log_id").fetchall()


def test_no_seed_answering_fails_with_the_cause(tmp_path, refusing_origin, capsys):
    cfg = write_config(tmp_path, [refusing_origin + "/"], max_commands=3)
    db = tmp_path / "crawl.db"
    status = main(["crawl", "--config", str(cfg), "--database", str(db), "--no-progress"])
    captured = capsys.readouterr()
    port = refusing_origin.rsplit(":", 1)[1]
    cause = f"ConnectError: cannot connect to 127.0.0.1:{port}: 127.0.0.1: All connection attempts failed"
    # the cause shown is the one kept in the crawl log
    assert crawl_log(db) == [(100, cause)] * 3
    assert status == 1
    assert captured.err == f"textpile: error: nothing crawled: no seed origin answered: {refusing_origin}: {cause}\n"
    assert captured.out.endswith("[Crawl_Statistics_Report.exit_codes]\nconnection_failed = 3\n\n"
                                 "[Crawl_Statistics_Report.unreachable_origins]\n"
                                 f'"{refusing_origin}" = "{cause}"\n')


def test_some_seeds_answering_names_the_others(tmp_path, refusing_origin, capsys):
    with SiteServer({"/": Response(200, "<p>up</p>")}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/", refusing_origin + "/"], max_commands=20)
        db = tmp_path / "crawl.db"
        status = main(["crawl", "--config", str(cfg), "--database", str(db), "--no-progress"])
        assert sorted(r.path for r in site.log) == ["/", "/robots.txt"]
    captured = capsys.readouterr()
    port = refusing_origin.rsplit(":", 1)[1]
    cause = f"ConnectError: cannot connect to 127.0.0.1:{port}: 127.0.0.1: All connection attempts failed"
    assert status == 0
    assert captured.err == f"textpile: warning: no answer from {refusing_origin}: {cause}\n"
    assert "ingested_files = 1\n" in captured.out
    assert captured.out.endswith("[Crawl_Statistics_Report.unreachable_origins]\n"
                                 f'"{refusing_origin}" = "{cause}"\n')


def test_an_origin_answering_with_errors_is_not_unreachable(tmp_path, capsys):
    with SiteServer({"/robots.txt": Response(500, "down"), "/": Response(503, "down")}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"], max_commands=2)
        status = main(["crawl", "--config", str(cfg), "--database", str(tmp_path / "crawl.db"), "--no-progress"])
    captured = capsys.readouterr()
    assert status == 0
    assert captured.err == ""
    assert "unreachable_origins" not in captured.out
