"""Progress of the long jobs: a real total, movement during the first batch, plain lines
(with a heartbeat) when stderr is no terminal."""

from __future__ import annotations

import contextlib
import io
import re
import time

from textpile import progress
from textpile.semantic import embed
from textpile.index import update as index_update
from textpile.index.update import update_search_index
from textpile.summarize import pipeline

from .summary_fixtures import CrawlerRows, page
from .test_cli_summarize import BASE, make_crawler_db


class Recorder:
    """A Progress that records every call."""

    def __init__(self, description, total):
        self.calls = [("start", description, total)]

    def advance(self, amount=1, description=None):
        self.calls.append(("advance", amount))

    def update_total(self, total):
        self.calls.append(("total", total))


def _recording(monkeypatch):
    bars = []

    @contextlib.contextmanager
    def fake(description, total=None, *, enabled=True):
        bar = Recorder(description, total)
        bars.append(bar)
        yield bar

    for module in (pipeline, index_update, embed):
        monkeypatch.setattr(module, "progress_bar", fake)
    return bars


def test_summarize_bar_has_a_total_and_moves_per_file_within_the_first_batch(tmp_path, monkeypatch):
    make_crawler_db(tmp_path / "c.db")  # 6 crawl log entries: robots.txt and 5 HTML pages
    bars = _recording(monkeypatch)
    report = pipeline.summarize(tmp_path / "c.db", tmp_path / "s.db", progress=True)
    assert report.batches == 1
    bar, indexing, embedding = bars
    assert bar.calls == [("start", "Summarizing", None), ("total", 6),
                         ("advance", 1), ("advance", 1), ("advance", 1), ("advance", 1), ("advance", 1),
                         ("advance", 1)]  # 5 files as they are scraped, then robots.txt with the batch
    pages = report.embedding.pages_embedded
    assert pages == report.fts_rows == 2  # a.html and b.html (a copy, a recrawl, a change)
    assert indexing.calls == [("start", "Indexing", None), ("total", pages), *[("advance", 1)] * pages]
    assert embedding.calls == [("start", "Embedding", None), ("total", pages), *[("advance", 1)] * pages]


def test_the_pipeline_index_and_embedding_stages_show_progress_with_a_total_off_a_terminal(tmp_path, capsys):
    """What the fts_index and embeddings assets call (textpile pipeline, the demo): plain
    lines on stderr when it is no terminal, the last one with the real total."""
    make_crawler_db(tmp_path / "c.db")  # 5 crawls of HTML pages, 2 searchable pages
    pipeline.summarize(tmp_path / "c.db", tmp_path / "s.db", progress=False, embeddings=False)
    assert capsys.readouterr().err == ""
    assert update_search_index(tmp_path / "s.db", rebuild=True, progress=True).pages == 2
    assert re.fullmatch(r"Indexing: 2/2 \([0-9]+ s\)\n", capsys.readouterr().err)
    report = embed.embed_summary(tmp_path / "s.db", progress=True)
    assert report.pages_embedded == 2
    assert re.fullmatch(r"Embedding: 2/2 \([0-9]+ s\)\n", capsys.readouterr().err)
    assert update_search_index(tmp_path / "s.db", rebuild=True).pages == 2  # progress off: nothing
    assert capsys.readouterr().err == ""


def test_scrape_bar_total_is_the_files_to_scrape(tmp_path, monkeypatch):
    with CrawlerRows(tmp_path / "c.db") as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/robots.txt", 99, 44, crawl_type=1)
        for n in range(3):
            rows.crawl(agent, f"{BASE}/{n}.html", 100 + n, html=page(f"Page {n}", "<p>Words.</p>"))
    pipeline.stage_crawl_log(tmp_path / "c.db", tmp_path / "staging", batch_size=2, progress=False)
    bars = _recording(monkeypatch)
    report = pipeline.scrape_staged(tmp_path / "staging", progress=True)
    assert report.files_scraped == 3
    [bar] = bars
    assert bar.calls == [("start", "Scraping", None), ("total", 3), ("advance", 1), ("advance", 1), ("advance", 1)]


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _lines_at_least(out: io.StringIO, count: int) -> list[str]:
    deadline = time.monotonic() + 120
    while out.getvalue().count("\n") < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return out.getvalue().splitlines()


def test_plain_progress_lines_and_heartbeat(monkeypatch):
    """The heartbeat prints when the last line is an interval old, also when nothing
    advances. The clock is the test's: a loaded machine that holds this thread back for
    longer than the interval changes nothing."""
    clock = Clock()
    monkeypatch.setattr(progress, "time", clock)
    out = io.StringIO()
    bar = progress.PlainProgress("Scraping", 4, out=out, interval_s=0.2).start()
    bar.advance(1)  # within the interval: no line
    time.sleep(0.1)  # the heartbeat looks every 0.04 s and finds the last line 0 s old
    assert out.getvalue() == ""
    clock.now += 0.2  # nothing advances: the heartbeat still prints
    assert _lines_at_least(out, 1) == ["Scraping: 1/4 (0 s)"]
    clock.now += 1.3
    assert _lines_at_least(out, 2) == ["Scraping: 1/4 (0 s)", "Scraping: 1/4 (2 s)"]
    bar.update_total(5)
    clock.now += 0.1
    bar.advance(2)  # 0.1 s after the last line: none
    bar.stop()
    assert out.getvalue().splitlines() == ["Scraping: 1/4 (0 s)", "Scraping: 1/4 (2 s)", "Scraping: 3/5 (2 s)"]


def test_progress_bar_is_plain_off_a_terminal_and_silent_when_disabled(capsys):
    with progress.progress_bar("Staging", 2) as bar:
        bar.advance(2)
    assert capsys.readouterr().err.startswith("Staging: 2/2 (")
    with progress.progress_bar("Staging", 2, enabled=False) as bar:
        bar.advance(2)
    assert capsys.readouterr().err == ""
