"""The crawl's running total when stderr is no terminal (a log file, cron, a pipe):
``Crawling: done/total requests (s)`` lines at the cadence of the other long jobs."""

from __future__ import annotations

import re

from sites import Response, SiteServer
from textpile import progress
from textpile.cli import main
from textpile.crawl.loop.report import CrawlDisplay
from textpile.enums import ExitCode

from .crawlsite import write_config


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_crawl_display_off_a_terminal_prints_running_totals(monkeypatch, capsys):
    clock = Clock()
    monkeypatch.setattr(progress, "time", clock)
    # the heartbeat (tested in tests/summarize/test_progress.py) stays out of the way
    monkeypatch.setattr(progress.PlainProgress, "_heartbeat", lambda self: None)
    with CrawlDisplay(enabled=True, total_commands=400) as display:
        display.entry(ExitCode.file_ingested, "http://a.example/robots.txt", robots=True)
        clock.now += progress.PLAIN_INTERVAL_S
        display.entry(ExitCode.file_ingested, "http://a.example/")
        display.entry(ExitCode.blocked_by_robots_txt, "http://a.example/private")  # no command used
        clock.now += 30
        display.note("Finished http://a.example:80")
        display.entry(ExitCode.file_not_found, "http://a.example/gone")
    assert capsys.readouterr().err.splitlines() == [
        "fetched robots.txt: [ file_ingested ] http://a.example/robots.txt",
        "[ file_ingested ] http://a.example/",
        "Crawling: 2/400 requests (5 s)",
        "[ blocked_by_robots_txt ] http://a.example/private",
        "Finished http://a.example:80",
        "[ file_not_found ] http://a.example/gone",
        "Crawling: 3/400 requests (35 s)",
        "Crawling: 3/400 requests (35 s)",  # the last line, at the end
    ]


def test_crawl_cli_off_a_terminal_ends_with_the_total(tmp_path, capsys):
    with SiteServer({"/": Response(200, '<a href="/a">a</a>'), "/a": Response(200, "<p>a</p>")}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"], max_commands=40)
        assert main(["crawl", "--config", str(cfg), "--database", str(tmp_path / "crawl.db")]) == 0
    lines = capsys.readouterr().err.splitlines()
    # entries are shown as they are written, which can be after the origin finished
    assert sorted(line for line in lines if not line.startswith("Crawling: ")) == sorted([
        f"fetched robots.txt: [ file_not_found ] {site.base_url}/robots.txt",
        f"[ file_ingested ] {site.base_url}/", f"[ file_ingested ] {site.base_url}/a",
        f"Finished {site.base_url}", "Tidying the database ..."])
    assert re.fullmatch(r"Crawling: 3/40 requests \(\d+ s\)", lines[-1]), lines
