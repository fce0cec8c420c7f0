"""search_section: docid its rowid, the unstemmed strings NULL where they equal the stemmed
ones, the name's strings NULL where the name is the title; an older database's
search_section (keyed by section_summary_id, every string kept; or every name string kept)
moved on its next write-open, and search reads every layout the same."""

from __future__ import annotations

import dataclasses
import sqlite3
from contextlib import closing

import pytest

from textpile.search.engine import search
from textpile.search.index import rebuild_search_index
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import register_functions

from search.builder import SummaryBuilder

BASE = "https://docs.example.org"


def _site(path) -> dict[str, int]:
    b = SummaryBuilder(path)
    ids = {
        "json": b.add_page(f"{BASE}/json.html", title="json: JSON encoder and decoder", lang="en",
                           text="Encoding basic Python object hierarchies. json.dumps serializes obj; "
                                "json.loads deserializes a document. Decoders read documents."),
        "sorting": b.add_page(f"{BASE}/sorting.html", title="Sorting HOW TO", lang="en",
                              text="Sorting basics. Key functions are called on each element. Sorts are stable."),
    }
    rows = [(ids["json"], 0, "basic-usage", "Basic Usage", 2, 0, 40),
            (ids["json"], 1, "json.dumps", "json.dumps", 7, 40, 70),
            (ids["json"], 2, "decoders", "Decoders and encoders", 2, 70, 120),
            (ids["sorting"], 0, "key-functions", "Key Functions", 2, 0, 40)]
    b.conn.executemany("INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level,"
                       " start_offset, end_offset) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    b.build_fts()
    b.close()
    return ids


_ROWS = "SELECT section_summary_id, docid, entity_generation_id, title_terms, title_words, name_terms, name_words " \
        "FROM search_section ORDER BY docid"


def test_unstemmed_strings_are_null_where_they_equal_the_stemmed_ones_and_names_where_they_are_titles(tmp_path):
    path = tmp_path / "summary.db"
    ids = _site(path)
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(_ROWS).fetchall()
        assert conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'search_section' AND type = 'index'"
                            ).fetchall() == []
    by_title = {r[3]: r for r in rows}
    assert sorted(r[2] for r in rows) == sorted([ids["json"]] * 3 + [ids["sorting"]])
    assert by_title["basic usag"][3:] == ("basic usag", "basic usage", None, None)  # anchor basic-usage
    assert by_title["json dump"][3:] == ("json dump", "json dumps", None, None)
    assert by_title["decod and encod"][3:] == ("decod and encod", "decoders and encoders", "decod", "decoders")
    assert by_title["key function"][3:] == ("key function", "key functions", None, None)
    assert [r[1] for r in rows] == [1, 2, 3, 4]


_OLD = """
ALTER TABLE search_section RENAME TO search_section_new;
CREATE TABLE search_section (
    section_summary_id INTEGER NOT NULL PRIMARY KEY REFERENCES section_summary(section_summary_id),
    docid INTEGER NOT NULL UNIQUE,
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
    title_terms TEXT NOT NULL, title_words TEXT NOT NULL, name_terms TEXT NOT NULL, name_words TEXT NOT NULL);
INSERT INTO search_section SELECT section_summary_id, docid, entity_generation_id, title_terms,
    coalesce(title_words, title_terms), coalesce(name_terms, title_terms),
    CASE WHEN name_terms IS NULL THEN coalesce(title_words, title_terms) ELSE coalesce(name_words, name_terms) END
    FROM search_section_new;
DROP TABLE search_section_new;
"""


#: The layout before: name_terms NOT NULL, every name string kept (name_words NULL where
#: it is name_terms).
_MIDDLE = """
ALTER TABLE search_section RENAME TO search_section_new;
CREATE TABLE search_section (
    section_summary_id INTEGER NOT NULL REFERENCES section_summary(section_summary_id),
    docid INTEGER NOT NULL PRIMARY KEY,
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
    title_terms TEXT NOT NULL, title_words TEXT, name_terms TEXT NOT NULL, name_words TEXT);
INSERT INTO search_section SELECT section_summary_id, docid, entity_generation_id, title_terms, title_words,
    coalesce(name_terms, title_terms),
    nullif(CASE WHEN name_terms IS NULL THEN coalesce(title_words, title_terms) ELSE coalesce(name_words, name_terms) END,
           coalesce(name_terms, title_terms))
    FROM search_section_new;
DROP TABLE search_section_new;
"""


@pytest.mark.parametrize("layout", [_OLD, _MIDDLE], ids=["keyed-by-section", "names-kept"])
def test_an_older_search_section_is_read_as_it_is_and_moved_on_the_next_write_open(tmp_path, layout):
    path = tmp_path / "summary.db"
    _site(path)
    queries = ["json dumps", "decoders", "key functions", "basic usage", "encoders"]
    with closing(open_summary_db(path, read_only=True)) as conn:
        new = [dataclasses.asdict(search(conn, q)) for q in queries]
        fresh = conn.execute(_ROWS).fetchall()
    with closing(register_functions(sqlite3.connect(path))) as conn:
        conn.executescript(layout)
        old_rows = conn.execute(_ROWS).fetchall()
    assert all(r[5] is not None for r in old_rows) and old_rows != fresh
    with closing(open_summary_db(path, read_only=True)) as conn:  # the old layout reads as it is
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new
    assert any(r["results"] and r["results"][0]["sections"] for r in new)  # the section path ran
    with closing(open_summary_db(path)) as conn:  # moved
        assert conn.execute(_ROWS).fetchall() == fresh
        assert conn.execute("SELECT pk FROM pragma_table_info('search_section') WHERE name = 'docid'").fetchone() == (1,)
        assert conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%legacy%'").fetchall() == []
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new
        rebuild_search_index(conn)  # and rebuilt in the new layout
        assert conn.execute(_ROWS).fetchall() == fresh


_OLD_PAGES = """
ALTER TABLE search_page RENAME TO search_page_new;
CREATE TABLE search_page (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
    docid INTEGER NOT NULL UNIQUE, language TEXT, term_count INTEGER NOT NULL, text_length INTEGER NOT NULL,
    in_links INTEGER NOT NULL, content_in_links INTEGER NOT NULL, link_density REAL NOT NULL,
    anchor_texts TEXT NOT NULL, title_terms TEXT NOT NULL, title_words TEXT NOT NULL, url_terms TEXT NOT NULL,
    url_last_terms TEXT NOT NULL, anchor_terms TEXT NOT NULL);
INSERT INTO search_page SELECT entity_generation_id, docid, language, term_count, text_length, in_links,
    content_in_links, link_density, 'Basic usage', title_terms, title_words, url_terms, url_last_terms, anchor_terms
    FROM search_page_new;
DROP TABLE search_page_new;
"""


def test_an_older_search_page_with_anchor_texts_is_read_as_it_is_and_moved_on_the_next_write_open(tmp_path,
                                                                                                   monkeypatch):
    from textpile.errors import DatabaseError
    from textpile.store import migrations

    path = tmp_path / "summary.db"
    _site(path)
    queries = ["json dumps", "decoders", "key functions"]
    pages = "SELECT * FROM search_page ORDER BY docid"
    with closing(open_summary_db(path, read_only=True)) as conn:
        new = [dataclasses.asdict(search(conn, q)) for q in queries]
        fresh = conn.execute(pages).fetchall()
    with closing(register_functions(sqlite3.connect(path))) as conn:  # search_page as an older textpile wrote it
        conn.executescript(_OLD_PAGES)
    with closing(open_summary_db(path, read_only=True)) as conn:  # read as it is
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new
    real = migrations.drop_anchor_texts

    def fail(conn):
        real(conn)
        raise sqlite3.IntegrityError("failed after dropping")

    monkeypatch.setattr(migrations, "MOVES", tuple(m if m.table != "search_page" else
                                                   dataclasses.replace(m, finish=fail) for m in migrations.MOVES))
    try:
        open_summary_db(path).close()
    except DatabaseError as exc:
        assert "failed after dropping" in str(exc)
    else:
        raise AssertionError("the failing move did not fail")
    with closing(sqlite3.connect(path)) as conn:  # nothing changed
        assert [r[1] for r in conn.execute("PRAGMA table_info(search_page)")][8] == "anchor_texts"
        assert {r[8] for r in conn.execute(pages)} == {"Basic usage"}
    monkeypatch.undo()
    with closing(open_summary_db(path)) as conn:  # moved
        assert "anchor_texts" not in [r[1] for r in conn.execute("PRAGMA table_info(search_page)")]
        assert conn.execute(pages).fetchall() == fresh
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new


def test_boilerplate_headings_are_left_out_of_the_search_tables(tmp_path):
    """An anchorless heading that more than half of a site's pages (at least 20) have is
    neither a section nor a heading; one with an anchor, or on fewer pages, stays."""
    b = SummaryBuilder(tmp_path / "summary.db")
    ids = [b.add_page(f"{BASE}/page{i}.html", title=f"Page {i}", lang="en", text=f"Text of page {i} about tea.")
           for i in range(24)]
    rows = []
    for i, eg_id in enumerate(ids):
        rows.append((eg_id, 0, None, "Navigation", 3, 0, 5))  # on every page, no anchor: boilerplate
        if i < 4:
            rows.append((eg_id, 1, "brewing", "Navigation", 2, 5, 10))  # an anchor: a section
        if i < 12:  # on half of the pages only: not boilerplate
            rows.append((eg_id, 2, None, "Next topic", 4, 10, 15))
    b.conn.executemany("INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level,"
                       " start_offset, end_offset) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    b.build_fts()
    b.close()
    with closing(sqlite3.connect(tmp_path / "summary.db")) as conn:
        kept = conn.execute("SELECT s.anchor, s.title, count(*) FROM search_section t JOIN section_summary s"
                            " ON s.section_summary_id = t.section_summary_id GROUP BY s.anchor, s.title"
                            " ORDER BY s.title").fetchall()
        assert kept == [("brewing", "Navigation", 4), (None, "Next topic", 12)]
        assert conn.execute("SELECT count(*) FROM section_search_index WHERE section_search_index MATCH 'navig'"
                            ).fetchone() == (4,)
        # the page's headings: the anchored Navigation and, on half the pages, Next topic
        assert conn.execute("SELECT count(*) FROM search_index WHERE search_index MATCH 'headings : navig'"
                            ).fetchone() == (4,)
        assert conn.execute("SELECT count(*) FROM search_index WHERE search_index MATCH 'headings : next'"
                            ).fetchone() == (12,)


def test_secondary_lines_that_repeat_a_title_are_not_indexed_again(tmp_path):
    """A sidebar's table of contents repeats the page's section titles: those lines of the
    secondary text are left out of search_index's secondary_text, the others stay."""
    b = SummaryBuilder(tmp_path / "summary.db")
    eg_id = b.add_page(f"{BASE}/tea.html", title="Green tea", lang="en", text="Steeping green tea leaves.",
                       secondary_text="Green tea\nBrewing temperature\nOolong recipes elsewhere\nCopyright teahouse")
    b.conn.execute("INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level,"
                   " start_offset, end_offset) VALUES (?, 0, 'brewing', 'Brewing  temperature', 2, 0, 10)", (eg_id,))
    b.build_fts()
    b.close()
    with closing(sqlite3.connect(tmp_path / "summary.db")) as conn:
        def count(match):
            return conn.execute("SELECT count(*) FROM search_index WHERE search_index MATCH ?", (match,)).fetchone()[0]

        assert [count(f"secondary_text : {w}") for w in ("green", "temperatur", "oolong", "copyright")] == [0, 0, 1, 1]
        assert [count("headings : temperatur"), count("title : green")] == [1, 1]
