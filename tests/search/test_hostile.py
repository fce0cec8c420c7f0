"""Adversarial findings (issue 4): terminal escapes in crawled text, site: on IP
addresses, bad --page/--per-page values, database file names with # ? %."""

import json

import pytest

from search.builder import SummaryBuilder
from textpile.cli import main
from textpile.search.engine import search
from textpile.search.query import matches_subdomains
from textpile.search.terminal import json_terminal_safe, terminal_text
from textpile.store.database import open_summary_db

HOSTILE_TITLE = "\x1b]0;PWNED-TITLE\x07\x1b[31mRED\x1b[2J title \x9b2Jend\u202eevil"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "summary.db"
    b = SummaryBuilder(path)
    b.add_page("http://127.0.0.1:8080/alpha", title="Alpha on localhost", text="alpha words here", lang="en")
    b.add_page("http://10.0.0.1/alpha", title="Alpha on ten", text="alpha words there", lang="en")
    b.add_page("https://docs.example.org/alpha", title="Alpha docs", text="alpha documented", lang="en")
    b.add_page("https://example.org/alpha", title="Alpha root", text="alpha at the root", lang="en")
    b.add_page("http://[::1]:8000/alpha", title="Alpha on v6", text="alpha over ipv6", lang="en")
    b.add_page("https://evil.example.net/x#frag\x1b[2J\x9bKment", title=HOSTILE_TITLE,
               text="zebra \x1b]52;c;cm0gLXJmIC8=\x07clipboard \x1b[1;31mbold zebra", lang="en\x1b[5m")
    b.build_fts()
    b.close()
    return str(path)


def titles(path, query):
    conn = open_summary_db(path, create=False, read_only=True)
    try:
        return sorted(r.title for r in search(conn, query).results)
    finally:
        conn.close()


def test_terminal_text_removes_escape_sequences_and_controls():
    assert terminal_text(HOSTILE_TITLE) == "RED title end evil"
    assert terminal_text("a\tb\nc\x00d\x7fe\x85f") == "a b c d e f"
    assert terminal_text("\x1bPdcs string\x1b\\after \x1b(Bcharset \x1b7save") == "after charset save"
    assert terminal_text(None) == ""
    assert terminal_text("Ünïcode · ok") == "Ünïcode · ok"


def test_text_output_has_no_escape_sequences(db, capsys):
    assert main(["search", "-s", db, "zebra"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "1 result, showing 1-1\n"
        "\n"
        "1. RED title end evil\n"
        # WHATWG URL parsing percent-encodes the controls of the stored fragment
        "   https://evil.example.net/x#frag%1B[2J%C2%9BKment\n"
        "   zebra clipboard bold zebra\n"
        "   language en\n"
    )
    assert not any(0x80 <= ord(c) <= 0x9f or (ord(c) < 0x20 and c != "\n") for c in out)


def test_json_output_escapes_controls(db, capsys):
    assert main(["search", "-s", db, "--format", "json", "zebra"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\u001b]0;PWNED-TITLE\\u0007" in out and "\\u009b2Jend" in out
    item = json.loads(out)["list"][0]
    assert item["title"] == HOSTILE_TITLE  # JSON keeps the data, escaped
    assert json_terminal_safe('"\x7f\x9f\xa0"') == '"\\u007f\\u009f\xa0"'


def test_site_on_ip_addresses_matches_only_that_host(db):
    assert titles(db, "alpha site:0.0.1") == []
    assert titles(db, "alpha site:1") == []
    assert titles(db, "alpha site:0.1") == []
    assert titles(db, "alpha site:127.0.0.1") == ["Alpha on localhost"]
    assert titles(db, "alpha site:[::1]") == ["Alpha on v6"]
    assert titles(db, "alpha site:1]") == []
    assert titles(db, "alpha site:example.org") == ["Alpha docs", "Alpha root"]
    assert titles(db, "alpha site:org") == []  # one label: exact host only
    assert titles(db, "alpha -site:0.0.1") == sorted(
        ["Alpha on localhost", "Alpha on ten", "Alpha docs", "Alpha root", "Alpha on v6"])


def test_matches_subdomains():
    for value in ("example.org", "a.b.example.org", "xn--bcher-kva.example", "1.example"):
        assert matches_subdomains(value), value
    for value in ("127.0.0.1", "0.0.1", "1", "::1", "fe80::1", "localhost", "org", "10.0.0.256"):
        assert not matches_subdomains(value), value


@pytest.mark.parametrize("option, value, message", [
    ("--page", "²", "argument --page: expected a whole number >= 0, got '²'"),
    ("--page", "-1", "argument --page: expected a whole number >= 0, got '-1'"),
    ("--page", "1e3", "argument --page: expected a whole number >= 0, got '1e3'"),
    ("--page", "1001", "argument --page: expected a whole number from 0 to 1000, got '1001'"),
    ("--page", "9" * 5000, "argument --page: expected a whole number from 0 to 1000, got '" + "9" * 30 + "...'"),
    ("--per-page", "٣", "argument --per-page: expected a whole number >= 1, got '٣'"),
    ("--per-page", "0", "argument --per-page: expected a whole number from 1 to 100, got '0'"),
    ("--per-page", "101", "argument --per-page: expected a whole number from 1 to 100, got '101'"),
    ("--per-page", "18446744073709551616", "argument --per-page: expected a whole number from 1 to 100, "
                                           "got '18446744073709551616'"),
])
def test_paging_option_errors_name_the_option(db, capsys, option, value, message):
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", db, option, value, "alpha"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"textpile search: error: {message}\n")
    assert "_non_negative" not in err and "Traceback" not in err


def test_paging_bounds_accepted(db, capsys):
    assert main(["search", "-s", db, "--page", "1000", "--per-page", "100", "--format", "json", "alpha"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["page"], data["per_page"], data["total"], data["list"]) == (1000, 100, 5, [])
    assert main(["search", "-s", db, "--page", "0007", "--per-page", "001", "--format", "json", "alpha"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["page"], data["per_page"]) == (7, 1)


def test_database_name_with_uri_characters(db, tmp_path, capsys, monkeypatch):
    name = "a#b%20c?.db"
    (tmp_path / name).write_bytes(open(db, "rb").read())
    monkeypatch.chdir(tmp_path)
    assert main(["search", "-s", name, "--format", "json", "alpha", "site:example.org"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(x["title"] for x in data["list"]) == ["Alpha docs", "Alpha root"]
    assert main(["search", "-s", str(tmp_path / name), "alpha", "site:127.0.0.1"]) == 0
    assert "1. Alpha on localhost" in capsys.readouterr().out
    # no stray file "a" (the part before '#') nor "a#b c" (a decoded %20)
    assert {p.name for p in tmp_path.iterdir()} <= {name, name + "-wal", name + "-shm"}
    # a missing name with '#' is reported as missing, and nothing is created
    assert main(["search", "-s", "x#y.db", "alpha"]) == 1
    assert main(["search", "-s", "100%25.db", "alpha"]) == 1
    err = capsys.readouterr().err
    assert "x#y.db: no such summary database" in err and "100%25.db: no such summary database" in err
    assert {p.name for p in tmp_path.iterdir()} <= {name, name + "-wal", name + "-shm"}
