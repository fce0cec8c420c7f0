"""``textpile search`` and ``textpile serve`` argument handling."""

import json
from pathlib import Path

import pytest

from search.builder import sample_site
from textpile.cli import main


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "summary.db"
    sample_site(path)
    return str(path)


def test_search_text_output(db, capsys):
    assert main(["search", "-s", db, "cats"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "2 results, showing 1-2",
        "",
        "1. Why cats sleep all day",
        "   https://blog.example.org/2024/cats",
        "   Cats sleep for sixteen hours a day. A sleeping cat saves energy for hunting.",
        "   published 2023-07-22 · language en",
        "",
        "2. Warum Katzen schlafen",
        "   https://de.example.net/katzen",
        "   Katzen schlafen sechzehn Stunden am Tag. Cats sleep too, sagt man.",
        "   language de",
    ]


def test_search_paging_and_words_joined(db, capsys):
    assert main(["search", "-s", db, "--page", "1", "--per-page", "1", '"full-text', 'search"']) == 0
    assert capsys.readouterr().out.splitlines()[:4] == [
        "2 results, showing 2-2", "", "2. JSON Functions", "   https://docs.example.org/json1.html"]


def test_search_json_output_same_as_api(db, capsys):
    assert main(["search", "-s", db, "--format", "json", "marmalade"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 1 and data["page"] == 0
    assert data["list"][0]["title"] == "<script>alert('xss')</script> Marmalade recipe"
    assert data["list"][0]["url"] == "https://evil.example.com/page#section-2"


def test_search_nothing_found_and_messages(db, capsys):
    assert main(["search", "-s", db, "*"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Ignored for having no letters or digits: '*'. Nothing searchable remained in the query."]
    assert main(["search", "-s", db, "unicornword"]) == 0
    assert capsys.readouterr().out.splitlines() == ["No results."]


def test_search_bad_database(tmp_path, capsys):
    assert main(["search", "-s", str(tmp_path / "missing.db"), "x"]) == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'missing.db'}: no such summary database\n"
    junk = tmp_path / "junk.db"
    junk.write_text("hello")
    assert main(["search", "-s", str(junk), "x"]) == 1
    assert str(junk) in capsys.readouterr().err


def test_search_without_s_and_no_default_database_hints_at_s(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["search", "cats"]) == 1
    assert capsys.readouterr().err == (
        f"textpile: error: summary.db: no such summary database (the default, in the current folder "
        f"{tmp_path}); give the summary database with -s/--summary-db FILE\n")


def test_serve_refuses_missing_database_and_bad_options(tmp_path, capsys):
    assert main(["serve", "-s", str(tmp_path / "missing.db")]) == 1
    assert "missing.db: no such summary database" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["serve", "-l", "nonsense"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["search", "--per-page", "0", "x"])
    assert exc.value.code == 2


def test_serve_runs_datasette_on_the_address(db):
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "textpile"), "serve", "-s", db, "-l", f"127.0.0.1:{port}",
                             "--request-workers", "2"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # a loaded machine starts Datasette slowly
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/search?format=json&search=quokka", timeout=60)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert r.status_code == 200
        assert [x["title"] for x in r.json()["list"]] == ["Quokka facts"]
        assert r.headers["x-content-type-options"] == "nosniff"
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def test_search_undecodable_argument(db, capsys):
    assert main(["search", "-s", db, "--format", "json", "cats\udcff"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"] == "cats?" and data["total"] == 2


def test_serve_address_in_use_fails_before_announcing(db, capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["serve", "-s", db, "-l", f"127.0.0.1:{port}"]) == 1
        assert capsys.readouterr() == ("", (
            f"textpile: error: cannot listen on 127.0.0.1:{port}: address already in use; "
            "stop what uses it or pass --listen-on IP:PORT\n"))


@pytest.mark.parametrize(("value", "why"), [
    ("127.0.0.1", "no port"),
    ("127.0.0.1:", "the port must be a number from 0 to 65535"),
    ("127.0.0.1:http", "the port must be a number from 0 to 65535"),
    ("127.0.0.1:65536", "the port must be a number from 0 to 65535"),
    (":3000", "no IP address"),
    ("::1:3000", "write an IPv6 address in brackets"),
])
def test_serve_malformed_listen_on(value, why, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["serve", "-l", value])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"textpile serve: error: argument -l/--listen-on: {why}; "
        f"expected IP:PORT such as 127.0.0.1:3000, got {value!r}")


def test_bind_listen_socket():
    import socket

    from textpile.errors import ConfigError, TextpileError
    from textpile.web.app import bind_listen_socket

    sock = bind_listen_socket("127.0.0.1:0")
    try:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # listening already: the server can be handed this socket
        with pytest.raises(TextpileError, match=rf"^cannot listen on 127\.0\.0\.1:{port}: address already in use; "):
            bind_listen_socket(("127.0.0.1", port))
    finally:
        sock.close()
    bind_listen_socket(f"127.0.0.1:{port}").close()  # free again once closed (SO_REUSEADDR)
    with pytest.raises(ConfigError, match=r"^--listen-on: no port; "):
        bind_listen_socket("localhost")


def test_search_does_not_import_the_web_stack(db):
    import subprocess
    import sys

    code = ("import sys\nfrom textpile.cli import main\n"
            f"status = main(['search', '-s', {str(db)!r}, '--format', 'json', 'cats'])\n"
            "heavy = sorted(m for m in ('datasette', 'uvicorn', 'jinja2', 'dagster', 'textpile.web.views', "
            "'textpile.web.app') if m in sys.modules)\n"
            "print('IMPORTED', heavy, status)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "IMPORTED [] 0"
    assert '"title": "Why cats sleep all day"' in out.stdout


def test_search_imports_nothing_of_the_web_frontend(db):
    import subprocess
    import sys

    code = ("import sys\nfrom textpile.cli import main\n"
            f"status = main(['search', '-s', {str(db)!r}, 'cats'])\n"
            "print('IMPORTED', sorted(m for m in sys.modules if m.startswith('textpile.web')), status)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "IMPORTED [] 0"
