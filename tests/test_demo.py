"""`textpile demo`: the main job on the embedded default (pydoc on 127.0.0.1), end to end."""

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from textpile.cli import main
from textpile.demo import DEFAULT_PORT, PydocServer, demo_config_text
from textpile.index.fulltext import fts_row_count
from textpile.store.gen2_piles import register_functions


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_demo_config_names_the_port():
    text = demo_config_text(8123)
    assert 'seeds = ["http://127.0.0.1:8123/"]' in text
    assert f"127.0.0.1:{DEFAULT_PORT}" not in text


def test_pydoc_server_refuses_a_busy_port():
    port = _free_port()
    with PydocServer(port):
        try:
            with PydocServer(port, timeout_s=10):
                raise AssertionError("a second server started on a busy port")
        except Exception as exc:  # TextpileError naming the port
            assert f"127.0.0.1:{port}" in str(exc)
            assert "--port" in str(exc)


def test_demo_runs_twice_and_finds_the_example_queries(tmp_path):
    port = _free_port()
    cmd = [sys.executable, "-m", "textpile.cli", "demo", "--no-serve", "--no-progress",
           "--port", str(port), "--data-dir", str(tmp_path / "demo")]
    first = subprocess.run([*cmd, "-m", "150"], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Three queries to try:" in first.stdout
    assert f"first: Pydoc: package json <http://127.0.0.1:{port}/json.html>" in first.stdout
    published = tmp_path / "demo" / "published" / "summary.db"
    conn = register_functions(sqlite3.connect(published))
    pages_first = fts_row_count(conn)
    conn.close()
    assert pages_first > 20
    # Running it again reuses the data folder: a second crawl run continues the crawl.
    second = subprocess.run([*cmd, "-m", "20"], capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    crawler = register_functions(sqlite3.connect(tmp_path / "demo" / "crawler.db"))
    assert crawler.execute("SELECT count(*) FROM agent").fetchone()[0] == 2
    crawler.close()
    conn = register_functions(sqlite3.connect(published))
    assert fts_row_count(conn) > pages_first
    conn.close()


def test_demo_refuses_a_busy_search_address_before_crawling(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "textpile.cli", "demo", "--port", str(_free_port()),
             "--data-dir", str(tmp_path / "demo"), "-l", f"127.0.0.1:{taken}"],
            capture_output=True, text=True, timeout=120,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{taken}: address already in use" in result.stderr
    assert not (tmp_path / "demo" / "crawler.db").exists()


@pytest.mark.parametrize(("options", "error"), [
    (["--port", "99999"], "argument --port: expected a whole number from 1 to 65535, got '99999' (too large)"),
    (["--port", "0"], "argument --port: expected a whole number from 1 to 65535, got '0'"),
    (["--port", "-1"], "argument --port: expected a whole number from 1 to 65535, got '-1'"),
    (["-m", "-5"], "argument -m/--max-commands: expected a whole number from 0 to 1000000000, got '-5'"),
    (["-m", "ten"], "argument -m/--max-commands: expected a whole number from 0 to 1000000000, got 'ten'"),
])
def test_demo_refuses_a_bad_port_or_max_commands_before_any_work(tmp_path, capsys, options, error):
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--no-serve", "--data-dir", str(tmp_path / "demo"), *options])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"textpile demo: error: {error}"
    assert not (tmp_path / "demo").exists()


def test_demo_refuses_a_busy_pydoc_port_or_the_same_port_twice_before_any_work(tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert main(["demo", "--no-serve", "--data-dir", str(tmp_path / "demo"), "--port", str(taken)]) == 1
    assert capsys.readouterr().err == (f"textpile: error: --port {taken}: 127.0.0.1:{taken} is in use (Address "
                                       "already in use); stop what uses it or pass another --port\n")
    port = _free_port()
    assert main(["demo", "--data-dir", str(tmp_path / "demo"), "--port", str(port), "-l", f"127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().err == (f"textpile: configuration error: --listen-on 127.0.0.1:{port}: that is "
                                       f"pydoc's port (--port {port}); give the search page another port\n")
    assert not (tmp_path / "demo").exists()


def test_pydoc_runs_outside_the_checkout_and_lists_no_project_folder(monkeypatch):
    import urllib.error
    import urllib.request
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(repo)  # as `scripts/demo` runs it
    port = _free_port()
    with PydocServer(port) as pydoc:
        assert pydoc.folder is not None and not Path(pydoc.folder).resolve().is_relative_to(repo)
        assert list(Path(pydoc.folder).iterdir()) == []
        index = urllib.request.urlopen(pydoc.base_url, timeout=60).read().decode("utf-8")
        folder = pydoc.folder
        assert urllib.request.urlopen(pydoc.base_url + "json.html", timeout=60).status == 200
        # pydoc's error pages (an unknown path, a module of another platform) are 404s, not pages.
        for path in ("robots.txt", "asyncio.windows_events.html", "no_such_module_here.html"):
            try:
                urllib.request.urlopen(pydoc.base_url + path, timeout=60)
            except urllib.error.HTTPError as exc:
                assert exc.code == 404, path
                assert b"<title>Pydoc: Error" in exc.read()
            else:
                raise AssertionError(f"{path}: no 404")
    assert 'href="json.html"' in index
    for name in ("assets", "resources", "sensors", "definitions", "tests", "bench"):
        assert f'href="{name}.html"' not in index, name
    assert not Path(folder).exists()  # removed when pydoc stopped


def test_demo_configuration_leaves_out_the_test_suites():
    from textpile.crawl.policy.config import load_config
    from textpile.demo import write_demo_config
    from textpile.store.urls import parse_url
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        config = load_config(write_demo_config(Path(folder), DEFAULT_PORT))
    base = f"http://127.0.0.1:{DEFAULT_PORT}"
    blocked = ["/test.html", "/test.support.html", "/test.test_json.html", "/unittest.test.html",
               "/unittest.test.test_case.html", "/lib2to3.tests.html", "/lib2to3.tests.data.html",
               "/ctypes.test.html", "/idlelib.idle_test.html", "/tkinter.html", "/antigravity.html",
               "/venv.__main__.html", "/json.__main__.html"]
    allowed = ["/", "/json.html", "/unittest.html", "/unittest.case.html", "/doctest.html", "/contextlib.html",
               "/lib2to3.html", "/test_json.html", "/keywords.html", "/topics.html"]
    assert [p for p in blocked if config.policy_verdict(parse_url(base + p)) is None] == []
    assert [p for p in allowed if config.policy_verdict(parse_url(base + p)) is not None] == []


def test_the_printed_dagster_command_has_an_absolute_dagster_home(tmp_path, monkeypatch):
    import shlex

    from textpile.cli.demo import dagster_dev_command

    monkeypatch.chdir(tmp_path)
    words = shlex.split(dagster_dev_command(Path("data/demo"), Path("data/demo/pydoc-demo.toml")))
    assert words[0] == f"DAGSTER_HOME={tmp_path / 'data/demo/dagster_home'}"  # Dagster refuses a relative one
    assert words[1:3] == ["TEXTPILE_DATA_DIR=data/demo", "TEXTPILE_CONFIG=data/demo/pydoc-demo.toml"]
    assert words[3].endswith("dagster") and words[4:] == ["dev", "-m", "textpile_dagster.definitions"]
