"""A killed ``textpile summarize`` leaves its temporary work folder; the next one removes
it (issue 12), and never touches the folder of a summarize that still runs."""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from textpile.summarize.pipeline import TEMP_PREFIX, summarize

from .test_interrupt import build_crawler_db


def test_the_next_summarize_removes_a_killed_ones_work_folder(tmp_path):
    crawler = build_crawler_db(tmp_path / "c.db", 60)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("textpile")), "summarize", "-c", str(crawler),
                             "-s", str(tmp_path / "s.db"), "--batch-size", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in proc.stderr:
        if line.startswith("Summarizing page 2 "):
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    [left] = list(temp.iterdir())
    assert left.name.startswith(f"{TEMP_PREFIX}{proc.pid}-") and any(left.rglob("*.parquet"))
    mine = temp / f"{TEMP_PREFIX}{os.getpid()}-still-running"
    mine.mkdir()
    rerun = subprocess.run([str(Path(sys.executable).with_name("textpile")), "summarize", "-c", str(crawler),
                            "-s", str(tmp_path / "s.db"), "--no-progress"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(p.name for p in temp.iterdir()) == [mine.name]  # only the live process's folder
    whole = tmp_path / "whole.db"
    summarize(crawler, whole, progress=False)
    with sqlite3.connect(tmp_path / "s.db") as a, sqlite3.connect(whole) as b:
        assert a.execute("SELECT count(*) FROM crawl_summary").fetchone() == \
            b.execute("SELECT count(*) FROM crawl_summary").fetchone()
