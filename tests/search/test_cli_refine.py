"""``textpile search`` with what the search page and JSON API have (issue 32): facets
printed, grouping by site, the date order and a ranking rules file, on the three sites
of :mod:`search.versions_site`."""

import json

import pytest

from search.versions_site import BLOG, DOCS, FORUM, versions_site
from textpile.cli import main


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_refine") / "summary.db"
    versions_site(path)
    return str(path)


def lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_facets_printed_and_grouping_with_its_more_line(db, capsys):
    assert main(["search", "-s", db, "--mode", "keyword", "--facets", "--per-page", "4",
                 "--results-per-site", "2", "asyncio", "library"]) == 0
    out = lines(capsys)
    assert out[:7] == [
        "8 results, showing 1-4",
        "Few pages hold all the words; pages holding most of them follow.",
        "Facets of 8 matching pages; narrow with site:, lang:, after:/before:",
        "  site      docs.pytest.test 5 · blog.pytest.test 2 · forum.pytest.test 1",
        "  section   docs.pytest.test/docs/3.12/ 3 · docs.pytest.test/docs/3.11/ 2 · blog.pytest.test/2022/ 1 · "
        "blog.pytest.test/2024/ 1",
        "  language  en 7 · de 1",
        "  year      2024 4 · 2023 2",
    ]
    results = [line for line in out if line.startswith("   https://")]
    assert results == [f"   {DOCS}/docs/3.11/library/asyncio.html", f"   {DOCS}/docs/3.12/library/asyncio.html",
                       f"   {BLOG}/2022/asyncio-einfuehrung", f"   {FORUM}/t/asyncio-question"]
    assert [line for line in out if "More from" in line] == [
        "   More from docs.pytest.test: asyncio library site:docs.pytest.test"]


def test_rank_order_by_default_as_the_json_api(db, capsys):
    assert main(["search", "-s", db, "--mode", "keyword", "--per-page", "4", "--format", "json",
                 "asyncio", "library"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["results_per_site"] == 0 and body["facets"] is None
    assert [r["url"] for r in body["list"]] == [
        f"{DOCS}/docs/3.11/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio.html",
        f"{DOCS}/docs/3.11/library/asyncio-task.html", f"{DOCS}/docs/3.12/library/asyncio-task.html"]
    assert main(["search", "-s", db, "--mode", "keyword", "--per-page", "4", "--format", "json", "--facets",
                 "--results-per-site=1", "asyncio", "library"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["results_per_site"] == 1
    assert [r["site"] for r in body["list"]] == ["docs.pytest.test", "blog.pytest.test", "forum.pytest.test",
                                               "docs.pytest.test"]
    assert [(v["value"], v["count"]) for v in body["facets"]["site"]] == [
        ("docs.pytest.test", 5), ("blog.pytest.test", 2), ("forum.pytest.test", 1)]


def test_sort_by_date(db, capsys):
    assert main(["search", "-s", db, "--mode", "keyword", "--sort", "date", "--per-page", "3", "asyncio"]) == 0
    out = lines(capsys)
    assert out[0] == "8 results, showing 1-3, newest first"
    assert [line for line in out if line.startswith("   https://")] == [
        f"   {DOCS}/docs/3.12/whatsnew/3.12.html", f"   {DOCS}/docs/3.12/library/asyncio-task.html",
        f"   {DOCS}/docs/3.12/library/asyncio.html"]
    assert main(["search", "-s", db, "--mode", "keyword", "--sort=date", "--format", "json", "asyncio"]) == 0
    assert json.loads(capsys.readouterr().out)["sort"] == "date"


def test_ranking_rules_file(db, tmp_path, capsys):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[ranking_rules]]\nif.url.path.has_prefix = "/docs/3.12/"\nboost = 1.5\n\n'
                     '[[ranking_rules]]\nif.url.host.equals = "blog.pytest.test"\nboost = -3\n')
    assert main(["search", "-s", db, "--mode", "keyword", "--format", "json", "--ranking-rules", str(rules),
                 "asyncio"]) == 0
    assert [r["url"] for r in json.loads(capsys.readouterr().out)["list"]] == [
        f"{DOCS}/docs/3.12/library/asyncio.html", f"{DOCS}/docs/3.12/library/asyncio-task.html",
        f"{DOCS}/docs/3.12/whatsnew/3.12.html", f"{FORUM}/t/asyncio-question",
        f"{DOCS}/docs/3.11/library/asyncio.html", f"{DOCS}/docs/3.11/library/asyncio-task.html",
        f"{BLOG}/2022/asyncio-einfuehrung", f"{BLOG}/2024/asyncio-tips"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[ranking_rules]]\nif.url.path.has_prefx = "/docs/"\nboost = 1\n')
    assert main(["search", "-s", db, "--ranking-rules", str(bad), "asyncio"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"textpile: configuration error: {bad}: ranking_rules[0].if.url.path")


@pytest.mark.parametrize(("argv", "message"), [
    (["--sort", "newest", "x"], "argument --sort: expected one of relevance, date, got 'newest'"),
    (["--results-per-site", "-1", "x"], "argument --results-per-site: expected a whole number >= 0, got '-1'"),
    (["--results-per-site", "101", "x"], "argument --results-per-site: expected a whole number from 0 to 100, got '101'"),
    (["--facets", "x", "--facets"], "argument --facets: given twice"),
])
def test_bad_options_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", *argv])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"textpile search: error: {message}"


def test_the_options_over_shards_print_what_one_index_prints(tmp_path, capsys):
    """--facets, --sort, --results-per-site and --ranking-rules over three shards (-s more
    than once): the same JSON answer as the one index of the same pages."""
    from search.builder import sharded_sites

    one, shards = sharded_sites(tmp_path)
    rules = tmp_path / "rules.toml"
    rules.write_text('[[ranking_rules]]\nif.url.path.has_prefix = "/ref/"\nboost = 1.5\n')
    options = ["--mode", "keyword", "--format", "json", "--per-page", "5", "--time-limit-ms", "60000"]
    for refine in (["--facets", "--sort", "date"], ["--results-per-site", "1", "--ranking-rules", str(rules)]):
        assert main(["search", "-s", str(one), *options, *refine, "index", "table"]) == 0
        expected = json.loads(capsys.readouterr().out)
        argv = [a for p in shards for a in ("-s", str(p))]
        assert main(["search", *argv, *options, *refine, "index", "table"]) == 0
        got = json.loads(capsys.readouterr().out)
        assert [r["url"] for r in got["list"]] == [r["url"] for r in expected["list"]] and got["list"], refine
        assert (got["sort"], got["results_per_site"], got["facets"]) == (
            expected["sort"], expected["results_per_site"], expected["facets"])
        assert got["partial"] is False


def test_like_over_shards_prints_what_one_index_prints(tmp_path, capsys):
    """--like with -s more than once: the pages of every shard nearest to the page, as the
    one index of the same pages lists them; a page no shard holds is an error naming it."""
    from search.builder import SHARD_HOSTS, sharded_sites
    from textpile.semantic.embed import embed_summary
    from textpile.semantic.model import load_embedder

    one, shards = sharded_sites(tmp_path)
    embedder = load_embedder()
    for path in (one, *shards):
        embed_summary(path, embedder)
    options = ["--format", "json", "--per-page", "60", "--time-limit-ms", "60000"]
    page = f"https://{SHARD_HOSTS[2]}/doc/5.html"
    argv = [a for p in shards for a in ("-s", str(p))]
    assert main(["search", "-s", str(one), *options, "--like", page]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["search", *argv, *options, "--like", page]) == 0
    got = json.loads(capsys.readouterr().out)
    assert len(got["list"]) == expected["total"] == got["total"] == 59 and got["partial"] is False
    assert [r["url"] for r in got["list"]] == [r["url"] for r in expected["list"]]
    assert got["query"] == expected["query"] and got["mode"] == "semantic"
    assert main(["search", *argv, "--like", "https://nowhere.example/"]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "'https://nowhere.example/': no searchable page of the shards has that URL or entity generation UUID")
