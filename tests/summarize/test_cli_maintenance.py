"""``textpile optimize-db``, ``regenerate-token-index`` and ``delete old-crawl-log-entries``."""

from __future__ import annotations

import sqlite3

from textpile.cli import main
from textpile.summarize.pipeline import summarize
from textpile.store.gen2_piles import register_functions

from .summary_fixtures import CrawlerRows, page

BASE = "http://site.test"


def counts(path):
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("crawl_log", "request", "file", "file_text", "redirect", "crawl_candidate")}
    finally:
        conn.close()


def make_history(path):
    """a.html crawled 3 times, r redirected twice, b.html once; candidates for all."""
    with CrawlerRows(path) as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/a.html", 100, html=page("A", "<p>one</p>"))
        rows.crawl(agent, f"{BASE}/a.html", 200, html=page("A", "<p>two</p>"))
        rows.crawl(agent, f"{BASE}/a.html", 300, html=page("A", "<p>three</p>"))
        rows.crawl(agent, f"{BASE}/r", 150, 31, redirect_to=f"{BASE}/a.html")
        rows.crawl(agent, f"{BASE}/r", 250, 31, redirect_to=f"{BASE}/a.html")
        rows.crawl(agent, f"{BASE}/b.html", 120, html=page("B", "<p>bee</p>"))
        rows.conn.executemany("INSERT INTO crawl_candidate(url_id, last_crawl_time_unix_utc) "
                              "SELECT url_id, 1 FROM url WHERE str_url = ?",
                              [(f"{BASE}/a.html",), (f"{BASE}/r",), (f"{BASE}/b.html",)])


def test_delete_old_crawl_log_entries_simulates_then_applies(tmp_path, capsys):
    db = tmp_path / "c.db"
    make_history(db)
    before = counts(db)
    assert before == {"crawl_log": 6, "request": 6, "file": 4, "file_text": 4, "redirect": 2, "crawl_candidate": 3}
    assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"Would delete: 1970-01-01T00:01:40Z file_ingested {BASE}/a.html (crawl_log_id 1)",
        f"Would delete: 1970-01-01T00:03:20Z file_ingested {BASE}/a.html (crawl_log_id 2)",
        f"Would delete: 1970-01-01T00:02:30Z permanent_redirect {BASE}/r (crawl_log_id 4)",
        "Would delete 2 file_text, 2 file, 1 redirect, 3 request, 3 crawl_log "
        "(keeping the latest 1 crawl log entries per URL).",
        "This was a simulation; run again with --apply to delete.",
    ]
    assert counts(db) == before
    assert main(["delete", "old-crawl-log-entries", "--crawler-db", str(db), "--keep-latest", "1", "--apply"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("Deleted 2 file_text, 2 file, 1 redirect, 3 request, 3 crawl_log "
                       "(keeping the latest 1 crawl log entries per URL).")
    assert counts(db) == {"crawl_log": 3, "request": 3, "file": 2, "file_text": 2, "redirect": 1, "crawl_candidate": 3}
    conn = register_functions(sqlite3.connect(str(db)))
    assert conn.execute("SELECT time_started_unix_utc FROM crawl_log ORDER BY 1").fetchall() == [(120,), (250,), (300,)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()
    # nothing more to delete
    assert main(["delete", "old-crawl-log-entries", "-c", str(db), "--keep-latest", "1", "--apply"]) == 0
    assert capsys.readouterr().out.startswith("Deleted 0 file_text, 0 file, 0 redirect, 0 request, 0 crawl_log")


def test_delete_errors(tmp_path, capsys):
    assert main(["delete", "old-crawl-log-entries", "-c", str(tmp_path / "nope.db"), "--keep-latest", "2"]) == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'nope.db'}: no such crawler database\n"
    make_history(tmp_path / "c.db")
    for bad in ("-1", "0"):
        assert main(["delete", "old-crawl-log-entries", "-c", str(tmp_path / "c.db"), "--keep-latest", bad,
                     "--apply"]) == 2
        assert capsys.readouterr().err == (
            "textpile delete old-crawl-log-entries: --keep-latest must be 1 or more (0 would delete every crawl "
            f"log entry), got {bad}\n")
    conn = register_functions(sqlite3.connect(str(tmp_path / "c.db")))
    assert conn.execute("SELECT count(*) FROM crawl_log").fetchone() == (6,)  # nothing deleted
    conn.close()


def test_optimize_db_both_kinds(tmp_path, capsys):
    make_history(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "s.db", progress=False)
    assert main(["optimize-db", "-c", str(tmp_path / "c.db")]) == 0
    assert capsys.readouterr().out == f"Optimized and vacuumed {tmp_path / 'c.db'} (crawler database).\n"
    assert main(["optimize-db", "--database", str(tmp_path / "s.db")]) == 0
    assert capsys.readouterr().out == f"Optimized and vacuumed {tmp_path / 's.db'} (summary database).\n"
    conn = register_functions(sqlite3.connect(str(tmp_path / "s.db")))
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() == (1,)
    conn.close()
    assert main(["optimize-db", "-c", str(tmp_path / "missing.db")]) == 1
    assert capsys.readouterr().err == f"textpile: error: {tmp_path / 'missing.db'}: no such database\n"
    (tmp_path / "notes.txt").write_text("not a database")
    assert main(["optimize-db", "-c", str(tmp_path / "notes.txt")]) == 1
    assert "not a SQLite database" in capsys.readouterr().err


def test_regenerate_token_index(tmp_path, capsys):
    make_history(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "s.db", progress=False)
    assert main(["regenerate-token-index", "-s", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    conn = register_functions(sqlite3.connect(str(tmp_path / "s.db")))
    piles, tokens, stats = conn.execute(
        "SELECT (SELECT count(*) FROM text_pile), (SELECT count(*) FROM token), (SELECT count(*) FROM token_statistics)"
    ).fetchone()
    assert conn.execute("SELECT tp.text_pile_id FROM token t JOIN token_statistics s USING (token_id) "
                        "JOIN text_pile tp USING (text_pile_id) WHERE t.token_text = 'bee'").fetchall() != []
    conn.close()
    assert out == f"Token index regenerated: {tokens} tokens, {stats} statistics rows over {piles} text piles.\n"
    assert piles == 4
    assert main(["regenerate-token-index", "--summary-database", str(tmp_path / "c.db")]) == 1
    assert "is a crawler database, expected a summary database" in capsys.readouterr().err
