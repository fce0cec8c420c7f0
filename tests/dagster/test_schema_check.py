"""The schema_versions check (sqlite-utils introspection): documented tables and columns."""

import sqlite3
from contextlib import closing

from textpile.store.database import open_crawler_db, open_summary_db
from textpile_dagster.assets.checks import documented_columns, schema_versions
from textpile.store.gen2_piles import register_functions


def test_documented_columns_come_from_the_ddl():
    summary = documented_columns("summary", "0.0.0")
    assert summary["full_text_entity_index"][:3] == ["text_pile_id", "any", "title"]
    assert "full_text_entity_index_data" not in summary
    assert summary["unobtanium_database_info"] == ["key", "value"]
    assert "crawl_log" in documented_columns("crawler", "1.0.0")


def test_missing_table_and_column_are_named(tmp_path):
    crawler, summary = tmp_path / "crawler.db", tmp_path / "summary.db"
    open_crawler_db(crawler).close()
    open_summary_db(summary).close()
    assert schema_versions(str(crawler), str(summary)).passed
    with closing(register_functions(sqlite3.connect(summary))) as conn:
        conn.execute("DROP TABLE token_statistics")
        conn.execute("ALTER TABLE document_description DROP COLUMN primary_language")
        conn.execute("CREATE TABLE textpile_extension (x)")  # extra tables are allowed
        conn.commit()
    outcome = schema_versions(str(crawler), str(summary))
    assert not outcome.passed
    assert outcome.description == ("summary: table document_description lacks column(s) primary_language; "
                                   "summary: table token_statistics missing")
