"""One ``textpile summarize`` at a time per summary database: a second one is refused at
once, naming the lock and its holder, and does no work."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing

from textpile.cli import main
from textpile.store.locks import exclusive_lock
from textpile.summarize.pipeline import summary_lock_path

from .test_cli_summarize import make_crawler_db


def crawl_summaries(db) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT COUNT(*) FROM crawl_summary").fetchone()[0]


def test_second_summarize_on_a_locked_summary_db_is_refused_at_once(tmp_path, capsys):
    make_crawler_db(tmp_path / "c.db")
    summary = tmp_path / "s.db"
    assert summary_lock_path(summary) == tmp_path / "s.db.lock"
    argv = ["summarize", "-c", str(tmp_path / "c.db"), "-s", str(summary), "--work-dir", str(tmp_path / "w"),
            "--no-progress"]
    with exclusive_lock(summary_lock_path(summary), wait=False) as held:  # the first run
        assert held
        assert main(argv) == 1
        captured = capsys.readouterr()
        assert captured.err == (f"textpile: error: {summary}: another summarize or pipeline run is writing this "
                                f"summary database (lock {summary}.lock held by pid {os.getpid()})\n")
        assert captured.out == ""  # no report: nothing was done
        assert crawl_summaries(summary) == 0
        assert not (tmp_path / "w").exists()  # nothing staged
    # once it is released, the next run does the work and leaves no lock file behind
    assert main(argv) == 0
    assert "pages_processed = 6\n" in capsys.readouterr().out
    assert crawl_summaries(summary) == 6
    assert not summary_lock_path(summary).exists()
