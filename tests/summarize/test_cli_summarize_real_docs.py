"""``textpile summarize`` on the crawler database of a real documentation site.

The site (Debian's sqlite3-doc HTML, or pydoc HTML as fallback) is served on
127.0.0.1 by the ``real_docs_site`` fixture and crawled with ``run_crawl``.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from textpile.cli import main
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import CrawlConfig
from textpile.enums import ExitCode


@pytest.fixture(scope="module")
def crawled_docs(real_docs_site, tmp_path_factory):
    base_url, root = real_docs_site
    db = tmp_path_factory.mktemp("real-docs") / "crawler.db"
    config = CrawlConfig(default_delay_ms=0, max_commands_per_run=120, recrawl_interval_s=86400,
                         seeds=[base_url + "/index.html"], allow_private_addresses=True)
    report = run_crawl(config, db, progress=False)
    assert report.ingested_files >= 20
    return base_url, Path(root), db


def _words(html: str) -> set[str]:
    text = re.sub(r"(?is)<(script|style)\b.*?</\1>|<[^>]+>", " ", html)
    return {w.lower() for w in re.findall(r"[A-Za-z]{7,}", text)}


def rare_word_of(url: str, base_url: str, root: Path, crawled_urls: list[str]) -> str:
    """A word of the page at ``url`` found in as few other crawled pages as possible."""
    def path_of(u: str) -> Path:
        return root / u[len(base_url) + 1:]

    document_frequency = Counter()
    for u in crawled_urls:
        document_frequency.update(_words(path_of(u).read_text("utf-8", "replace")))
    words = sorted(_words(path_of(url).read_text("utf-8", "replace")), key=lambda w: (document_frequency[w], w))
    return words[0]


def test_summarize_real_docs(crawled_docs, tmp_path, capsys):
    base_url, root, crawler_db = crawled_docs
    conn = sqlite3.connect(str(crawler_db))
    crawl_entries = conn.execute("SELECT count(*) FROM crawl_log").fetchone()[0]
    ingested = [r[0] for r in conn.execute(
        "SELECT u.str_url FROM crawl_log cl JOIN url u USING (url_id) WHERE cl.exit_code = ? AND cl.crawl_type = 0 "
        "ORDER BY cl.crawl_log_id", (int(ExitCode.file_ingested),))]
    conn.close()

    summary_db = tmp_path / "summary.db"
    code = main(["summarize", "-c", str(crawler_db), "-s", str(summary_db), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    report = dict(line.split(" = ", 1) for line in out.splitlines() if " = " in line)
    assert int(report["pages_processed"]) == crawl_entries
    assert int(report["files_scraped"]) == len(ingested)
    assert int(report["scrape_errors"]) == 0
    assert int(report["self_duplicates"]) == 0

    conn = sqlite3.connect(str(summary_db))
    searchable = conn.execute(
        "SELECT count(*) FROM entity_generation WHERE confirmed_end_unix_utc IS NULL AND NOT marked_duplicate "
        "AND text_pile_id IS NOT NULL").fetchone()[0]
    assert int(report["full_text_index_rows"]) == searchable
    assert searchable == len(ingested) - int(report["exact_duplicates"])
    assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone()[0] == crawl_entries
    # a word of the seed page finds the seed page
    seed = base_url + "/index.html"
    word = rare_word_of(seed, base_url, root, ingested)
    found = [r[0] for r in conn.execute(
        "SELECT u.str_url FROM full_text_entity_index f JOIN entity_generation eg ON eg.entity_generation_id = f.rowid "
        "JOIN url u ON u.url_id = eg.url_id WHERE full_text_entity_index MATCH ? ORDER BY rank", (word,))]
    assert seed in found, (word, found)
    # and so does a word of the last ingested page that is searchable (not a duplicate)
    searchable_urls = {r[0] for r in conn.execute(
        "SELECT u.str_url FROM entity_generation eg JOIN url u USING (url_id) WHERE eg.confirmed_end_unix_utc IS NULL "
        "AND NOT eg.marked_duplicate AND eg.text_pile_id IS NOT NULL")}
    last = [u for u in ingested if u in searchable_urls][-1]
    word = rare_word_of(last, base_url, root, ingested)
    found = [r[0] for r in conn.execute(
        "SELECT u.str_url FROM full_text_entity_index f JOIN entity_generation eg ON eg.entity_generation_id = f.rowid "
        "JOIN url u ON u.url_id = eg.url_id WHERE full_text_entity_index MATCH ? ORDER BY rank", (word,))]
    conn.close()
    assert last in found, (word, found)


def test_debug_commands_on_real_docs(crawled_docs, capsys):
    base_url, _root, crawler_db = crawled_docs
    assert main(["debug", "indexiness", "-c", str(crawler_db), "-u", base_url + "/index.html"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Indexiness of {base_url}/index.html")
    assert re.search(r"^  score\s+-?\d+$", out, re.M)
    assert main(["debug", "query-crawl-log", "-c", str(crawler_db), "--url", base_url + "/index.html"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "1 crawl log entries."
    assert "file_ingested (20)" in lines[1]
