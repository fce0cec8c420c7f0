"""``textpile summarize`` on the command line: options, end report, exit codes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from textpile.cli import main
from textpile.store.gen2_piles import register_functions

from .summary_fixtures import CrawlerRows, page

BASE = "http://site.test"


def make_crawler_db(path):
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/robots.txt", 99, 44, crawl_type=1)
        rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", "<p>Xylophone lessons for beginners.</p>"))
        rows.crawl(agent, f"{BASE}/copy-of-a.html", 101, html=page("Alpha", "<p>Xylophone lessons for beginners.</p>"))
        rows.crawl(agent, f"{BASE}/a.html", 102, html=page("Alpha", "<p>Xylophone lessons for beginners.</p>"))
        rows.crawl(agent, f"{BASE}/b.html", 103, html=page("Beta", "<p>Old words.</p>"))
        rows.crawl(agent, f"{BASE}/b.html", 104, html=page("Beta", "<p>New words.</p>"))


def report_lines(out: str) -> dict[str, str]:
    return dict(line.split(" = ", 1) for line in out.splitlines() if " = " in line)


def test_summarize_reports_counts(tmp_path, capsys):
    make_crawler_db(tmp_path / "c.db")
    work = tmp_path / "work"
    code = main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db"), "--work-dir", str(work),
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0
    assert err == ""
    report = report_lines(out)
    assert out.startswith("[Summary_Report]\n")
    assert {k: report[k] for k in ("pages_processed", "self_duplicates", "exact_duplicates", "generations_opened",
                                   "generations_closed", "placeholder_generations", "full_text_index_rows",
                                   "files_scraped", "scrape_errors")} == {
        "pages_processed": "6", "self_duplicates": "1", "exact_duplicates": "1", "generations_opened": "4",
        "generations_closed": "1", "placeholder_generations": "1", "full_text_index_rows": "2",
        "files_scraped": "5", "scrape_errors": "0"}
    assert float(report["seconds"]) >= 0
    assert list((work / "staging").iterdir()) == []  # batches are removed once integrated

    code = main(["summarize", "--crawler-db", str(tmp_path / "c.db"), "--summary-db", str(tmp_path / "s.db"),
                 "--no-progress"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert report_lines(out)["pages_processed"] == "0"
    conn = sqlite3.connect(str(tmp_path / "s.db"))
    assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone() == (6,)
    conn.close()


def test_summarize_progress_lines(tmp_path, capsys):
    make_crawler_db(tmp_path / "c.db")
    assert main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db")]) == 0
    err = capsys.readouterr().err
    for line in ("Summarizing page 1 (6 crawl log entries) ...", "Found 1 self duplicates.",
                 "Found 1 exact duplicates.", "Updating the full text index ...",
                 "Tidying the summary database ..."):
        assert line in err


def test_summarize_missing_crawler_db(tmp_path, capsys):
    code = main(["summarize", "-c", str(tmp_path / "nope.db"), "-s", str(tmp_path / "s.db"), "--no-progress"])
    assert code == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'nope.db'}: no such crawler database\n"
    assert not (tmp_path / "s.db").exists()


def test_summarize_refuses_crawler_db_as_summary_db(tmp_path, capsys):
    make_crawler_db(tmp_path / "c.db")
    make_crawler_db(tmp_path / "other.db")
    code = main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "other.db"), "--no-progress"])
    assert code == 1
    assert "is a crawler database, expected a summary database" in capsys.readouterr().err


def test_summarize_bad_batch_size(tmp_path, capsys):
    make_crawler_db(tmp_path / "c.db")
    code = main(["summarize", "-c", str(tmp_path / "c.db"), "-s", str(tmp_path / "s.db"), "--batch-size", "0"])
    assert code == 2
    assert "--batch-size must be at least 1, got 0" in capsys.readouterr().err


def test_summarize_requires_options():
    textpile = Path(sys.executable).with_name("textpile")  # the installed entry point
    proc = subprocess.run([str(textpile), "summarize", "-c", "x.db"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "-s/--summary-db" in proc.stderr


def test_texts_stored_as_blobs_are_read_as_their_utf8(tmp_path, capsys):
    """A file text stored as a BLOB (the documented column is TEXT; a hand edit or another
    tool can do it) is summarized as the text its bytes are; a text that is not UTF-8,
    BLOB or TEXT, stops the run with one line naming the crawler database and the file
    (was a traceback, or SQLite's message quoting the whole text)."""
    for name in ("text", "blob", "bad", "bad-text"):
        make_crawler_db(tmp_path / f"{name}.db")
    with sqlite3.connect(tmp_path / "blob.db") as conn:
        assert conn.execute("UPDATE file_text SET text = CAST(text AS BLOB)").rowcount == 5
    for name, kind in (("bad", "BLOB"), ("bad-text", "TEXT")):
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            conn.execute(f"UPDATE file_text SET text = CAST(CAST(text AS BLOB) || x'ff' AS {kind})"
                         " WHERE file_id = (SELECT max(file_id) FROM file_text)")
            assert conn.execute("SELECT typeof(text) FROM file_text ORDER BY file_id DESC LIMIT 1").fetchone() == (
                kind.lower(),)
    for name in ("text", "blob"):
        assert main(["summarize", "-c", str(tmp_path / f"{name}.db"), "-s", str(tmp_path / f"{name}-s.db"),
                     "--no-progress", "--no-embeddings"]) == 0
    capsys.readouterr()
    texts = []
    for name in ("text", "blob"):
        with closing(register_functions(sqlite3.connect(tmp_path / f"{name}-s.db"))) as conn:
            texts.append(conn.execute("SELECT text FROM text_pile ORDER BY text").fetchall())
    assert texts[0] == texts[1] == [("Alpha\nXylophone lessons for beginners.",), ("Beta\nNew words.",),
                                    ("Beta\nOld words.",)]
    with sqlite3.connect(tmp_path / "bad.db") as conn:
        (file_id, size), = conn.execute("SELECT file_id, length(text) FROM file_text ORDER BY file_id DESC LIMIT 1")
    for name in ("bad", "bad-text"):
        assert main(["summarize", "-c", str(tmp_path / f"{name}.db"), "-s", str(tmp_path / f"{name}-s.db"),
                     "--no-progress", "--no-embeddings"]) == 1
        assert capsys.readouterr().err == (
            f"textpile: error: {tmp_path / f'{name}.db'}: the file_text of file {file_id} is not UTF-8 text "
            f"(invalid start byte at byte {size - 1} of {size})\n")
