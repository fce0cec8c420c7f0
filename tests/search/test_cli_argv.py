"""``textpile search`` takes every token that is not one of its own options as query.

The query language has tokens that look like options (``-site:…``, ``-host:…``,
``-lang:…``, ``-"phrase"``, a pasted ``-word``); argparse used to read them as options.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from search.builder import SummaryBuilder
from textpile.cli import main
from textpile.errors import ConfigError


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("argv") / "summary.db"
    b = SummaryBuilder(path)
    b.add_page("https://docs.example.org/vacuum", title="VACUUM command",
               text="The vacuum command rebuilds the database file.", lang="en")
    b.add_page("http://127.0.0.1:8080/notes", title="Local notes",
               text="Nach dem big delete vacuum laufen lassen.", lang="de")
    b.add_page("https://tools.example.org/flags", title="Output flags",
               text="Pass -json to print json instead of text.", lang="en")
    b.build_fts()
    b.close()
    return str(path)


def run(capsys, *argv):
    code = main(["search", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def titles(lines):
    return [line for line in lines if line[:1].isdigit() and ". " in line]


def test_negated_site_is_query_not_summary_db(db, capsys):
    code, out, err = run(capsys, "-s", db, "vacuum", "-site:127.0.0.1")
    assert (code, err) == (0, "")
    assert out == [
        "1 result, showing 1-1",
        "",
        "1. VACUUM command",
        "   https://docs.example.org/vacuum",
        "   The vacuum command rebuilds the database file.",
        "   language en",
    ]


def test_negated_host_and_lang(db, capsys):
    code, out, err = run(capsys, "-s", db, "vacuum", "-host:docs.example.org")
    assert (code, err, titles(out)) == (0, "", ["1. Local notes"])
    code, out, err = run(capsys, "-s", db, "vacuum", "-lang:de")
    assert (code, err, titles(out)) == (0, "", ["1. VACUUM command"])


def test_bare_dash_word_is_a_word(db, capsys):
    code, out, err = run(capsys, "-s", db, "-json")
    assert (code, err) == (0, "")
    assert out[:3] == ["1 result, showing 1-1", "", "1. Output flags"]


def test_negated_phrase(db, capsys):
    code, out, err = run(capsys, "-s", db, "vacuum", '-"big delete"')
    assert (code, err, titles(out)) == (0, "", ["1. VACUUM command"])


def test_options_after_the_query(db, capsys):
    code, out, err = run(capsys, "vacuum", "-site:127.0.0.1", "--format", "json", "--summary-db", db)
    assert (code, err) == (0, "")
    data = json.loads("\n".join(out))
    assert data["query"] == "vacuum -site:127.0.0.1"
    assert [x["url"] for x in data["list"]] == ["https://docs.example.org/vacuum"]
    code, out, err = run(capsys, "vacuum", f"--summary-db={db}", "--format=json", "--per-page=1", "--page=1")
    data = json.loads("\n".join(out))
    assert (data["page"], data["per_page"], data["total"], len(data["list"])) == (1, 1, 2, 1)


def test_option_twice_or_without_value_is_a_usage_error(db, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", db, "-s", db, "vacuum"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"textpile search: error: argument -s/--summary-db: {db!r} given twice"
    with pytest.raises(SystemExit) as exc:
        main(["search", "vacuum", "-s"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "textpile search: error: argument -s/--summary-db: expected one argument"
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", db])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "textpile search: error: the following arguments are required: QUERY"
    with pytest.raises(SystemExit) as exc:
        main(["search", "--format", "xml", "x"])
    assert capsys.readouterr().err.splitlines()[-1] == "textpile search: error: argument --format: expected text or json, got 'xml'"


def test_help_anywhere(capsys):
    assert main(["search", "--help", "--bogus", "--page", "-1"]) == 0  # help, whatever else the line holds
    assert capsys.readouterr().out.startswith("usage: textpile search")
    assert main(["search", "vacuum", "-h"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: textpile search [-h] [-s FILE] [--shard URL] [--page N] [--per-page N]")
    assert "-site:example.org" in out


def test_parse_search_argv_forms():
    from textpile.cli.search import SearchArgs, parse_search_argv

    assert parse_search_argv(["-s", "a.db", "x", "-sb.db", "-s=c.db", "y", "---", "--5"]) == SearchArgs(
        summary_dbs=["a.db"], query="x -sb.db -s=c.db y --- --5")
    # shards: -s more than once, --shard URLs
    got = parse_search_argv(["-s", "a.db", "x", "--summary-db=b.db", "--shard", "http://h:3000/", "--shard=http://i/"])
    assert got == SearchArgs(summary_dbs=["a.db", "b.db"], shards=["http://h:3000/", "http://i/"], query="x")
    assert got.summary_db == "a.db" and got.sharded and not SearchArgs(summary_dbs=["a.db"]).sharded
    assert parse_search_argv(["-s", "a.db", "-s", "b.db", "--like", "http://x/"]) == SearchArgs(
        summary_dbs=["a.db", "b.db"], like="http://x/")  # over shards too
    assert parse_search_argv(["x", "--", "--page", "3", "-s", "d.db"]) == SearchArgs(query="x --page 3 -s d.db")
    assert parse_search_argv(["--", "-h"]) == SearchArgs(query="-h")
    assert parse_search_argv(["--page", "2", "--per-page", "5", "--format", "json", "-x"]) == SearchArgs(
        page=2, per_page=5, format="json", query="-x")
    with pytest.raises(ConfigError, match=r"^argument --page: expected a whole number >= 0, got '-1'$"):
        parse_search_argv(["--page", "-1", "x"])
    with pytest.raises(ConfigError, match=r"^argument --per-page: given twice$"):
        parse_search_argv(["--per-page=1", "x", "--per-page", "2"])
    assert parse_search_argv(["x", "--", "--amend"]) == SearchArgs(query="x --amend")


def test_a_word_of_dashes_and_no_letter_is_a_query_word(db, capsys):
    code, out, err = run(capsys, "-s", db, "--format", "json", "vacuum", "--=x")
    assert (code, err, json.loads("\n".join(out))["query"]) == (0, "", "vacuum --=x")


@pytest.mark.parametrize("tokens, message", [
    (["--per-pgae", "3", "json"], "unrecognized option --per-pgae (did you mean --per-page?)"),
    (["x", "--summ", "y"], "unrecognized option --summ (did you mean --summary-db?)"),
    (["--per", "3", "x"], "unrecognized option --per (did you mean --per-page?)"),
    (["--fromat=json", "x"], "unrecognized option --fromat (did you mean --format?)"),
    (["git", "--amend"], "unrecognized option --amend"),
    (["--MODE=keyword", "x"], "unrecognized option --MODE (did you mean --mode?)"),
])
def test_a_misspelled_option_is_refused_not_searched(tokens, message):
    from textpile.cli.search import parse_search_argv

    with pytest.raises(ConfigError) as caught:
        parse_search_argv(tokens)
    token = next(t for t in tokens if t.startswith(message.split()[2]))
    assert str(caught.value) == f"{message}; to search for it, write it after --: textpile search -- {token}"


@pytest.mark.parametrize("tokens, message", [
    (["--facets=1", "x"], "argument --facets: takes no value, got '--facets=1'"),
    (["--synonyms=", "x"], "argument --synonyms: expected a value, got ''"),
    (["-s", " ", "x"], "argument -s/--summary-db: expected a value, got ' '"),
])
def test_an_option_without_its_value_is_refused(tokens, message):
    from textpile.cli.search import parse_search_argv

    with pytest.raises(ConfigError) as caught:
        parse_search_argv(tokens)
    assert str(caught.value) == message


def test_a_misspelled_option_exits_2_naming_it(db, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", db, "--per-pgae", "3", "json"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "textpile search: error: unrecognized option --per-pgae (did you mean --per-page?); to search for it, "
        "write it after --: textpile search -- --per-pgae")


def test_closed_pipe_gives_no_traceback(db):
    # The reader closes the pipe before textpile writes; textpile flushes inside
    # cli.main, which handles BrokenPipeError quietly.
    exe = str(Path(sys.executable).parent / "textpile")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout block-buffered
    proc = subprocess.Popen([exe, "search", "-s", db, "vacuum"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert err == b""


def test_page_past_the_last_one(db, capsys):
    code, out, err = run(capsys, "-s", db, "vacuum", "--page", "3")
    assert (code, err) == (0, "")
    assert out == ["No results on page 3 (--page counts from 0); there are 2 results on 1 page."]
    code, out, err = run(capsys, "-s", db, "vacuum", "--page", "1", "--per-page", "1")
    assert out[0] == "2 results, showing 2-2"


def test_no_fallback_sentence_when_nothing_at_all(db, capsys):
    code, out, err = run(capsys, "-s", db, '"exact phrase"', "words", "site:example.org")
    assert (code, out, err) == (0, ["No results."], "")


@pytest.mark.parametrize("url, why", [
    ("http://[::1", " (Invalid IPv6 URL)"),
    ("http://a b/", " (no spaces or control characters)"),
    ("http://", ""),
    ("ftp://a.example/", ""),
])
def test_a_bad_shard_url_is_refused_naming_it(db, capsys, url, why):
    message = f"argument --shard: expected the http(s) URL of a textpile server{why}, got {url!r}"
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", db, "--shard", url, "cats"])
    assert exc.value.code == 2 and capsys.readouterr().err.splitlines()[-1] == f"textpile search: error: {message}"
    with pytest.raises(SystemExit) as exc:
        main(["serve", "-s", db, "--shard", url])
    assert exc.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith(f"error: {message}")


def test_explain_prints_each_result_s_score_and_features(db, capsys):
    """``--explain``: each shown result's score and the rerank features behind it (the
    ranking rules' boost among them), in JSON under "explained", in text a line each."""
    rules = Path(db).with_name("rules.toml")
    rules.write_text('[[ranking_rules]]\nif.url.host.equals = "docs.example.org"\nboost = 2.5\n')
    code, out, _ = run(capsys, "-s", db, "--mode", "keyword", "--format", "json", "--explain",
                       "--ranking-rules", str(rules), "vacuum")
    doc = json.loads("\n".join(out))
    assert code == 0 and [r["url"] for r in doc["list"]] == ["https://docs.example.org/vacuum",
                                                              "http://127.0.0.1:8080/notes"]
    explained = doc["explained"]
    assert [e["url"] for e in explained] == [r["page_url"] for r in doc["list"]]
    assert [e["held"] for e in explained] == [1.0, 1.0]
    assert explained[0]["features"]["ranking_rules"] == 2.5 and "ranking_rules" not in explained[1]["features"]
    assert explained[0]["features"]["title_cover"] == 1.0 and explained[1]["features"]["title_cover"] == 0.0
    assert explained[0]["score"] - explained[1]["score"] > 2.5
    code, out, _ = run(capsys, "-s", db, "--mode", "keyword", "--explain", "vacuum")
    lines = [line for line in out if line.startswith("   score ")]
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith("   score ") and " · held 1.00 · bm25 1, title_cover 1," in lines[0]
    code, out, _ = run(capsys, "-s", db, "--format", "json", "vacuum")
    assert "explained" not in json.loads("\n".join(out))  # the JSON fields stay as they are without it
    with pytest.raises(ConfigError, match="^argument --explain: explains a search of one summary database, "
                                          "not over shards$"):
        from textpile.cli.search import parse_search_argv
        parse_search_argv(["-s", db, "-s", "b.db", "--explain", "vacuum"])
