"""``max_commands_per_run = 0`` (or ``-m 0``): nothing can be crawled, and the crawl says so."""

from __future__ import annotations

from textpile.cli import main

from .crawlsite import write_config


def test_zero_commands_says_nothing_was_crawled(tmp_path, capsys):
    cfg = write_config(tmp_path, ["http://127.0.0.1:1/"], max_commands=0)
    assert main(["crawl", "--config", str(cfg), "--database", str(tmp_path / "crawl.db"), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("textpile: warning: 0 requests allowed (max_commands_per_run = 0, or --max-commands 0): "
                            "nothing crawled\n")
    assert "total_requests = 0\n" in captured.out
