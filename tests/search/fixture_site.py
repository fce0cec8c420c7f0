"""A small site summarized for real: HTML pages in a crawler database, then `summarize`.

Search tests that depend on what the scrape finds (sections and their anchors, links
and their texts, languages) build their summary database this way instead of writing
summary rows by hand.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from summarize.summary_fixtures import CrawlerRows

from textpile.summarize.pipeline import summarize
from textpile.store.gen2_piles import register_functions


def html_page(title: str, body: str, *, lang: str = "en", head: str = "") -> str:
    """A page with ``title`` and ``body`` (HTML) inside ``<main>``."""
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
            f"<body><main>{body}</main></body></html>")


def summarized_site(tmp_path: Path, pages: dict[str, str]) -> sqlite3.Connection:
    """Summarize ``pages`` ({url: html}) into ``tmp_path/summary.db``; return a read-only
    connection to it."""
    crawler_db = tmp_path / "crawler.db"
    with CrawlerRows(crawler_db) as rows:
        agent = rows.agent()
        for i, (url, html) in enumerate(pages.items()):
            rows.crawl(agent, url, 1_700_000_000 + i, html=html)
    summary_db = tmp_path / "summary.db"
    summarize(crawler_db, summary_db, progress=False)
    return register_functions(sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True))
