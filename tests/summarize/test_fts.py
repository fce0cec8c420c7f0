"""The FTS5 index and the token index of the summary database."""

from __future__ import annotations

import sqlite3

from textpile.store.database import open_summary_db
from textpile.index.update import update_search_index
from textpile.summarize.pipeline import summarize
from textpile.summarize.tokens import regenerate_token_index, tokenize
from textpile.store.gen2_piles import register_functions

from search.builder import SummaryBuilder

from .summary_fixtures import CrawlerRows, page

BASE = "http://site.test"


def q(path, sql, params=()):
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_fts_rows_match_searchable_generations(tmp_path):
    with CrawlerRows(tmp_path / "c.db") as rows:
        agent = rows.agent()
        rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Xylophone guide", "<p>Playing the xylophone well.</p>",
                                                          head='<meta name="description" content="All on mallets">'))
        rows.crawl(agent, f"{BASE}/b.html", 100,
                   html="<html><body><main><h1>Untitled garden</h1><p>Tomatoes grow in summer.</p></main></body></html>")
        rows.crawl(agent, f"{BASE}/c.html", 100, html=page("Gone", "<p>Ephemeral words.</p>"))
        rows.crawl(agent, f"{BASE}/c.html", 200, 44)
    summary = tmp_path / "s.db"
    report = summarize(tmp_path / "c.db", summary, progress=False)
    assert report.fts_rows == 2
    ids = dict(q(summary, "SELECT u.str_url, eg.entity_generation_id FROM entity_generation eg JOIN url u USING (url_id)"
                          " WHERE eg.confirmed_end_unix_utc IS NULL"))
    rows_ = q(summary, "SELECT rowid, text_pile_id, any, title, description FROM full_text_entity_index "
                    "WHERE full_text_entity_index MATCH 'any : \"any\"' ORDER BY rowid")
    tp = dict(q(summary, "SELECT entity_generation_id, text_pile_id FROM entity_generation"))
    assert rows_ == sorted([
        (ids[f"{BASE}/a.html"], tp[ids[f"{BASE}/a.html"]], "any", "Xylophone guide", "All on mallets"),
        # no <title>: the primary headline is the title column
        (ids[f"{BASE}/b.html"], tp[ids[f"{BASE}/b.html"]], "any", "Untitled garden", None),
    ])
    assert q(summary, "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH 'xylophone'") == [
        (ids[f"{BASE}/a.html"],)]
    assert q(summary, "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH 'tomatoes'") == [
        (ids[f"{BASE}/b.html"],)]
    assert q(summary, "SELECT count(*) FROM full_text_entity_index WHERE full_text_entity_index MATCH 'ephemeral'") == [
        (0,)]
    assert q(summary, "SELECT count(*) FROM full_text_entity_index WHERE full_text_entity_index MATCH "
                      "'any:any NOT xylophone'") == [(1,)]
    # rebuilding gives the same rows
    assert update_search_index(summary).pages == 2
    assert q(summary, "SELECT rowid, text_pile_id, any, title, description FROM full_text_entity_index "
                      "WHERE full_text_entity_index MATCH 'any : \"any\"' ORDER BY rowid") == rows_


def test_token_index_counts_words_per_text_pile(tmp_path):
    summary = tmp_path / "s.db"
    conn = open_summary_db(summary)
    with conn:
        conn.execute("INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines, small_headlines,"
                     " code_text, quote_text) VALUES (x'01', 'Hello World hello', 'Größe straße', 'Hello', '',"
                     " 'x = 1', '')")
        conn.execute("INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines, small_headlines,"
                     " code_text, quote_text) VALUES (x'02', 'world', '', '', '', '', '')")
    conn.close()
    report = regenerate_token_index(summary)
    assert (report.text_piles, report.tokens, report.statistics_rows) == (2, 6, 7)
    assert q(summary, "SELECT t.token_text, s.text_pile_id, s.occurances FROM token_statistics s JOIN token t "
                      "USING (token_id) ORDER BY s.text_pile_id, t.token_text") == [
        ("1", 1, 1), ("größe", 1, 1), ("hello", 1, 3), ("straße", 1, 1), ("world", 1, 1), ("x", 1, 1),
        ("world", 2, 1)]
    # regenerating replaces, and the seed's unused-token query finds none
    regenerate_token_index(summary)
    assert q(summary, "select count(*) from token where not exists (select 1 from token_statistics "
                      "where token_statistics.token_id = token.token_id limit 1)") == [(0,)]
    assert q(summary, "SELECT count(*) FROM token") == [(6,)]


def test_tokenize():
    assert tokenize("Don't STOP-me, naïve café_2!") == ["don", "t", "stop", "me", "naïve", "café_2"]


def test_fts_keeps_no_copy_of_the_text_and_an_old_table_is_made_anew(tmp_path):
    import sqlite3

    from textpile.index.fulltext import fts_row_count

    summary = tmp_path / "summary.db"
    b = SummaryBuilder(summary)
    b.add_page("https://a.example/x", title="Xylophone", text="A xylophone is struck with mallets.")
    b.close()
    conn = register_functions(sqlite3.connect(summary))
    # the table an older textpile made: it stored its own copy of every text
    conn.executescript("DROP TABLE full_text_vocabulary; DROP TABLE full_text_entity_index;"
                       "CREATE VIRTUAL TABLE full_text_entity_index USING fts5(text_pile_id UNINDEXED, any, title,"
                       " description, text, secondary_text, big_headlines, small_headlines, code_text, quote_text,"
                       " tokenize = 'unicode61 remove_diacritics 2');")
    conn.close()
    assert update_search_index(summary).pages == 1
    conn = register_functions(sqlite3.connect(summary))
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'").fetchone()[0]
    assert "content = 'full_text_entity_source'" in sql
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'full_text_entity_index_content'").fetchone() == (0,)
    assert fts_row_count(conn) == 1
    assert conn.execute("SELECT title, text FROM full_text_entity_index WHERE full_text_entity_index MATCH 'mallets'"
                        ).fetchall() == [("Xylophone", "A xylophone is struck with mallets.")]
    assert conn.execute("SELECT term, doc FROM full_text_vocabulary WHERE term = 'xylophone'").fetchall() == [("xylophone", 1)]
