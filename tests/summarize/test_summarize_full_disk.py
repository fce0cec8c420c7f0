"""A full disk under ``summarize --work-dir`` (the Parquet staging files) stops the run as
a full summary database does: the report, then one line naming the folder, the cause and
what was kept; the partial batch is removed."""

from __future__ import annotations

import errno
import sqlite3
from contextlib import closing

import pyarrow.parquet as pq

from textpile.cli import main

from .test_cli_summarize import make_crawler_db

REAL_WRITER = pq.ParquetWriter


class FullDiskWriter(REAL_WRITER):
    """A ParquetWriter whose disk fills up while batch 2's file texts are written (after
    a first row group reached the file), as pyarrow says it."""

    def __init__(self, where, *args, **kwargs):
        super().__init__(where, *args, **kwargs)
        self.where = str(where)

    def write_table(self, table, *args, **kwargs):
        super().write_table(table, *args, **kwargs)
        if "batch-00002" in self.where and self.where.endswith("file_text.parquet"):
            raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")


def test_full_disk_under_the_work_dir_names_the_folder_and_prints_the_report(tmp_path, monkeypatch, capsys):
    make_crawler_db(tmp_path / "c.db")  # 6 crawl log entries: robots.txt and 5 HTML pages
    work = tmp_path / "w"
    monkeypatch.setattr(pq, "ParquetWriter", FullDiskWriter)
    status = main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db"), "--work-dir", str(work),
                   "--batch-size", "2", "--no-progress", "--no-embeddings"])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.startswith("[Summary_Report]\npages_processed = 2\n")
    assert captured.err == (f"textpile: error: {work / 'staging'}: no space left on device while writing the staging "
                            "files (free some disk space); summarizing stopped: the 2 crawl log entries integrated "
                            "before are kept, and the next run continues from there\n")
    assert sorted(p.name for p in (work / "staging").iterdir()) == []  # no partial batch left
    with closing(sqlite3.connect(tmp_path / "s.db")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM crawl_summary").fetchone() == (2,)
    # with space again, the next run goes on from there
    monkeypatch.setattr(pq, "ParquetWriter", REAL_WRITER)
    assert main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db"), "--work-dir", str(work),
                 "--no-progress", "--no-embeddings"]) == 0
    assert "pages_processed = 4\n" in capsys.readouterr().out
