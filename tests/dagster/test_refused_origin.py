"""The pipeline stops with a clear error when the SSRF filter refuses every seed origin
(a local site crawled without allow_private_addresses), instead of publishing an empty index."""

import sqlite3
from contextlib import closing

import dagster as dg

from conftest import write_config
from textpile.cli import main


def test_pipeline_stops_when_every_seed_origin_is_refused(tmp_path, changing_site, capsys):
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"], max_commands=20)
    config.write_text(config.read_text().replace("allow_private_addresses = true", "allow_private_addresses = false"))
    data = tmp_path / "data"
    status = main(["pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress"])
    err = capsys.readouterr().err
    port = changing_site.base_url.rsplit(":", 1)[1]
    refusal = (f"refused to connect to 127.0.0.1:{port}: 127.0.0.1 is a loopback address; crawling loopback, "
               "private, link-local or reserved addresses needs allow_private_addresses = true in the "
               "configuration or --allow-private-addresses")
    assert status == 1
    assert "textpile: error: crawl_run failed" in err
    assert f"nothing crawled: every seed origin was refused: {refusal}" in err
    assert changing_site.server.log == []
    assert not (data / "published" / "summary.db").exists()
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        assert instance.get_materialized_partitions(dg.AssetKey("crawl_run")) == set()
        assert instance.fetch_materializations(dg.AssetKey("published_index"), limit=1).records == []
    with closing(sqlite3.connect(data / "crawler.db")) as conn:
        assert conn.execute("SELECT exit_code, message FROM crawl_log").fetchall() == [(172, refusal)]


def test_pipeline_stops_when_no_seed_origin_answers(tmp_path, capsys):
    import socket

    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = write_config(tmp_path / "crawl.toml", [origin + "/"], max_commands=3)
        data = tmp_path / "data"
        status = main(["pipeline", "--config", str(config), "--data-dir", str(data), "--no-progress"])
    err = capsys.readouterr().err
    cause = f"ConnectError: cannot connect to {origin[7:]}: 127.0.0.1: All connection attempts failed"
    assert status == 1
    assert "textpile: error: crawl_run failed" in err
    assert f"crawl_run: nothing crawled: no seed origin answered: {origin}: {cause}; not materialized: " in err
    assert not (data / "published" / "summary.db").exists()
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        assert instance.get_materialized_partitions(dg.AssetKey("crawl_run")) == set()
        assert instance.fetch_materializations(dg.AssetKey("published_index"), limit=1).records == []
    with closing(sqlite3.connect(data / "crawler.db")) as conn:
        assert conn.execute("SELECT exit_code, message FROM crawl_log").fetchall() == [(100, cause)] * 3
