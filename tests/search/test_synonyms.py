"""Synonyms from the index's table (issue 29): a member of a group finds the others'
pages; the empty table changes nothing; a bad table is refused naming its entry."""

from __future__ import annotations

import pytest

from search.fixture_site import html_page, summarized_site
from textpile.errors import ConfigError
from textpile.search.engine import search
from textpile.search.synonyms import NO_SYNONYMS, synonym_table

FILLER = "Other words fill this paragraph so that the page is of an ordinary length for a page. " * 3


def urls(results):
    return [r.url for r in results.results]


@pytest.fixture
def site(tmp_path):
    return summarized_site(tmp_path, {
        "https://k.example/kubernetes.html": html_page("Running on Kubernetes", f"""
            <p>Deploy the service to a Kubernetes cluster with the chart. {FILLER}</p>"""),
        "https://k.example/docker.html": html_page("Running in Docker", f"""
            <p>Deploy the service as a container image. {FILLER}</p>"""),
        "https://k.example/postgres.html": html_page("Database setup", f"""
            <p>The service stores its data in PostgreSQL. {FILLER}</p>"""),
        "https://k.example/about.html": html_page("About", f"<p>Who made this service. {FILLER}</p>"),
    })


def test_a_synonym_from_the_table_finds_its_page(site):
    table = synonym_table([["k8s", "kubernetes"], ["postgres", "PostgreSQL"]])
    assert search(site, "k8s").total == 0
    got = search(site, "deploy k8s", synonyms=table)
    assert urls(got) == ["https://k.example/kubernetes.html", "https://k.example/docker.html"]
    assert urls(search(site, "Kubernetes", synonyms=table)) == ["https://k.example/kubernetes.html"]
    assert urls(search(site, "postgres", synonyms=table)) == ["https://k.example/postgres.html"]
    # exclusions stay as typed (the semantic modes read them from the query)
    assert urls(search(site, 'deploy -"kubernetes"', synonyms=table)) == ["https://k.example/docker.html"]
    assert sorted(urls(search(site, 'deploy -"k8s"', synonyms=table))) == [
        "https://k.example/docker.html", "https://k.example/kubernetes.html"]


def test_the_empty_table_changes_nothing(site):
    for query in ["deploy k8s", "deploy service", 'kubernetes -"docker"', "postgres"]:
        plain = search(site, query, explain=True)
        empty = search(site, query, explain=True, synonyms=synonym_table([]))
        assert empty.explained == plain.explained and urls(empty) == urls(plain)
    assert not NO_SYNONYMS and not synonym_table([])


@pytest.mark.parametrize("groups, message", [
    ({"k8s": "kubernetes"}, "synonyms: expected a list of groups"),
    ([["k8s"]], "synonyms[0]: expected a list of 2 to 20 words or phrases"),
    ([["k8s", "kubernetes"], ["pg", 5]], "synonyms[1][1]: expected a string, got 5"),
    ([["k8s", "--"]], "synonyms[0][1]: '--' holds no letters or digits"),
    ([["k8s", "kubernetes"], ["K8S", "kube"]], "synonyms[1][0]: 'K8S' is already in group 0"),
])
def test_a_bad_table_is_refused_naming_its_entry(groups, message):
    with pytest.raises(ConfigError) as caught:
        synonym_table(groups)
    assert str(caught.value).startswith(message)


def test_the_command_line_reads_the_table_from_a_file(site, tmp_path, capsys):
    """``textpile search --synonyms FILE`` and ``textpile serve --synonyms FILE``: the
    TOML file's ``synonyms``, checked before anything is searched or served."""
    import asyncio
    import json

    from textpile.cli import main
    from textpile.web.app import build_datasette

    db = str(tmp_path / "summary.db")
    table = tmp_path / "synonyms.toml"
    table.write_text('synonyms = [["k8s", "kubernetes"], ["postgres", "PostgreSQL"]]\n')
    keyword = ["search", "-s", db, "--format", "json", "--mode", "keyword"]
    assert main([*keyword, "--synonyms", str(table), "deploy", "k8s"]) == 0
    assert [r["url"] for r in json.loads(capsys.readouterr().out)["list"]] == [
        "https://k.example/kubernetes.html", "https://k.example/docker.html"]
    assert main([*keyword, "k8s"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0  # no table: k8s is a word no page holds
    assert main(["search", "-s", db, "--format", "json", "--synonyms", str(table), "deploy", "k8s"]) == 0
    assert json.loads(capsys.readouterr().out)["list"][0]["url"] == "https://k.example/kubernetes.html"
    ds = build_datasette(db, synonyms=[["k8s", "kubernetes"]])  # what serve --synonyms builds
    asyncio.run(ds.invoke_startup())
    answer = json.loads(asyncio.run(ds.client.get("/search?format=json&mode=keyword&search=k8s")).text)
    assert [r["url"] for r in answer["list"]] == ["https://k.example/kubernetes.html"]
    table.write_text('synonyms = [["k8s", "kubernetes"], ["postgres"]]\n')
    for command in (["search", "-s", db, "--synonyms", str(table), "k8s"],
                    ["serve", "-s", db, "--synonyms", str(table), "--listen-on", "127.0.0.1:1"]):
        code = main(command)
        assert code == 2, command
        assert capsys.readouterr().err.strip().endswith(
            f"{table}: synonyms[1]: expected a list of 2 to 20 words or phrases, got ['postgres']"), command
    for command in (["search", "-s", db, "--synonyms", str(table), "k8s"],
                    ["search", "-s", db, "--ranking-rules", str(table), "k8s"],
                    ["serve", "-s", db, "--synonyms", str(table), "--listen-on", "127.0.0.1:1"]):
        table.write_bytes(b"synonyms = [[\"caf\xe9\", \"coffee\"]]\n")  # Latin-1, not UTF-8
        assert main(command) == 2, command
        assert capsys.readouterr().err.strip().endswith(
            f"{table}: not UTF-8 text ('utf-8' codec can't decode byte 0xe9 in position 17: invalid continuation "
            "byte); expected a TOML file"), command
    table.write_text('synonym = [["k8s", "kubernetes"]]\n')
    assert main(["search", "-s", db, "--synonyms", str(table), "k8s"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"{table}: unknown key 'synonym' (expected synonyms = [[...], ...])")
