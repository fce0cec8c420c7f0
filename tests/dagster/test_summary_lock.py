"""The Dagster assets writing the summary database and ``textpile summarize`` hold one and
the same lock: a summarize during an asset's write is refused."""

import os

from textpile_dagster.resources.databases import SummaryDatabaseResource
from textpile.cli import main
from textpile.store.database import open_crawler_db


def test_summarize_is_refused_while_an_asset_writes_the_summary_db(tmp_path, capsys):
    summary = tmp_path / "summary.db"
    open_crawler_db(tmp_path / "crawler.db").close()
    with SummaryDatabaseResource(path=str(summary)).write_lock():
        status = main(["summarize", "-c", str(tmp_path / "crawler.db"), "-s", str(summary), "--no-progress"])
    assert status == 1
    assert capsys.readouterr().err == (f"textpile: error: {summary}: another summarize or pipeline run is writing "
                                       f"this summary database (lock {summary}.lock held by pid {os.getpid()})\n")
