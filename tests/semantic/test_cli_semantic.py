"""``textpile summarize`` embeds new and changed pages; ``textpile search --mode`` and
``--like`` on the command line."""

from __future__ import annotations

import json

import pytest

from textpile.cli import main
from textpile.search.service import NO_VECTORS

from summarize.summary_fixtures import CrawlerRows, page
from semantic.corpus import PAGES

BASE = "http://site.test"


def _crawl(path, t: int, pages: dict[str, dict]) -> None:
    with CrawlerRows(path) as rows:
        agent = rows.agent(started=t)
        for n, (name, fields) in enumerate(pages.items()):
            rows.crawl(agent, f"{BASE}/{name}.html", t + n, html=page(fields["title"], f"<p>{fields['text']}</p>"))


def _report(out: str) -> dict[str, str]:
    return dict(line.split(" = ", 1) for line in out.splitlines() if " = " in line)


def _summarize(tmp_path, capsys, *extra) -> dict[str, str]:
    code = main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db"), "--no-progress", *extra])
    out, _ = capsys.readouterr()
    assert code == 0
    return _report(out)


def _first_urls(capsys, *argv) -> list[str]:
    assert main(["search", "--format", "json", *argv]) == 0
    return [item["url"] for item in json.loads(capsys.readouterr().out)["list"]]


def test_summarize_embeds_incrementally_and_search_modes_use_the_vectors(tmp_path, capsys):
    _crawl(tmp_path / "c.db", 1_700_000_000, PAGES)
    report = _summarize(tmp_path, capsys)
    assert {k: report[k] for k in ("full_text_index_rows", "pages_embedded", "page_vectors_removed",
                                   "page_vectors", "page_vector_lists")} == {
        "full_text_index_rows": "6", "pages_embedded": "6", "page_vectors_removed": "0", "page_vectors": "6",
        "page_vector_lists": "0"}
    assert int(report["sections_embedded"]) >= 6  # each page's h1 at least

    db = str(tmp_path / "s.db")
    query = ["send", "mail", "from", "my", "web", "app"]
    assert _first_urls(capsys, "-s", db, "--mode", "keyword", *query)[:1] != [f"{BASE}/smtp.html"]
    assert _first_urls(capsys, "-s", db, *query) == _first_urls(capsys, "-s", db, "--mode", "hybrid", *query)
    assert _first_urls(capsys, "-s", db, "--mode", "semantic", *query)[0] == f"{BASE}/smtp.html"
    assert f"{BASE}/smtp.html" in _first_urls(capsys, "-s", db, "--mode=hybrid", *query)[:2]
    like = _first_urls(capsys, "-s", db, "--like", f"{BASE}/cats.html")
    assert len(like) == 5 and f"{BASE}/cats.html" not in like

    # one page changes: only its new generation is embedded
    changed = {"bread": dict(title="Baking rye bread", text="Rye flour makes a dense loaf; bake it slowly.")}
    _crawl(tmp_path / "c.db", 1_700_100_000, changed)
    report = _summarize(tmp_path, capsys)
    assert (report["pages_embedded"], report["page_vectors_removed"], report["page_vectors"]) == ("1", "1", "6")
    report = _summarize(tmp_path, capsys)
    assert (report["pages_embedded"], report["page_vectors_removed"], report["page_vectors"]) == ("0", "0", "6")


def test_summarize_without_embeddings_then_a_vector_mode_says_so(tmp_path, capsys):
    _crawl(tmp_path / "c.db", 1_700_000_000, PAGES)
    report = _summarize(tmp_path, capsys, "--no-embeddings")
    assert "pages_embedded" not in report
    assert main(["search", "-s", str(tmp_path / "s.db"), "--mode", "hybrid", "sourdough"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["1 result, showing 1-1", NO_VECTORS, "", "1. Baking sourdough bread"]


@pytest.mark.parametrize("argv, message", [
    (["--mode", "vector", "cats"], "argument --mode: expected one of keyword, semantic, hybrid, got 'vector'"),
    (["--like", "http://x/", "cats"], "argument --like: ranks pages like one page; give it no QUERY and no --mode"),
])
def test_bad_mode_or_like_is_a_usage_error(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(["search", "-s", str(tmp_path / "s.db"), *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_like_an_unknown_page_exits_1(tmp_path, capsys):
    _crawl(tmp_path / "c.db", 1_700_000_000, PAGES)
    _summarize(tmp_path, capsys)
    assert main(["search", "-s", str(tmp_path / "s.db"), "--like", f"{BASE}/missing.html"]) == 1
    assert "no searchable page of this index has that URL" in capsys.readouterr().err
