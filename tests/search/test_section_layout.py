"""search_section: docid its rowid and the section it indexes, nothing else (a search
analyzes the titles and anchor names it reranks); an older database's search_section (with
the analyzed strings, in three layouts) read as it is and moved on its next write-open,
and search reads every layout the same."""

from __future__ import annotations

import dataclasses
import sqlite3
from contextlib import closing

import pytest

from textpile.index.analysis import Analyzer
from textpile.search.candidates import section_candidates
from textpile.search.engine import search
from textpile.index.docids import section_docid
from textpile.index.pages import section_terms
from textpile.index.update import update_index
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


_ROWS = "SELECT section_summary_id, docid FROM search_section ORDER BY docid"
_TITLES = ("SELECT s.title, t.docid FROM search_section t JOIN section_summary s"
           " ON s.section_summary_id = t.section_summary_id ORDER BY t.docid")


def test_search_section_holds_docids_and_search_analyzes_the_sections_titles(tmp_path):
    path = tmp_path / "summary.db"
    ids = _site(path)
    with closing(open_summary_db(path, read_only=True)) as conn:
        assert [r[1] for r in conn.execute("PRAGMA table_info(search_section)")] == ["section_summary_id", "docid"]
        assert conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'search_section' AND type = 'index'"
                            ).fetchall() == []
        page = dict(conn.execute("SELECT entity_generation_id, docid FROM search_page").fetchall())
        json_page, sorting_page = page[ids["json"]], page[ids["sorting"]]
        assert json_page < sorting_page  # equal priors: the older generation first
        assert conn.execute(_TITLES).fetchall() == [
            ("Basic Usage", section_docid(json_page, 0)), ("json.dumps", section_docid(json_page, 1)),
            ("Decoders and encoders", section_docid(json_page, 2)), ("Key Functions", section_docid(sorting_page, 0))]
        hits = section_candidates(conn, Analyzer(), "decod OR function OR usag", (10.0, 5.0, 2.0), 10, 100)
        strings = {h.title: (h.title_terms, h.title_words, h.name_terms, h.name_words) for h in hits}
    assert strings == {
        "Basic Usage": ("basic usag", "basic usage", "basic usag", "basic usage"),  # anchor basic-usage
        "Decoders and encoders": ("decod and encod", "decoders and encoders", "decod", "decoders"),
        "Key Functions": ("key function", "key functions", "key function", "key functions"),
    }


def test_section_terms_of_a_generated_anchor_have_no_name():
    analyzer = Analyzer()
    assert section_terms(analyzer, "Sorting Basics", "id-1.9.3", "en") == ("sort basic", "sorting basics", "", "")
    assert section_terms(analyzer, "Sorting Basics", None, None) == ("sorting basics", "sorting basics", "", "")


def _strings(analyzer: Analyzer, title: str, anchor: str | None, language: str | None, layout: str) -> tuple:
    """The four strings an older textpile stored for a section, in ``layout``."""
    terms, words, name_terms, name_words = section_terms(analyzer, title, anchor, language)
    if layout == "keyed-by-section":  # every string
        return terms, words, name_terms, name_words
    if layout == "names-kept":  # title_words NULL where it is title_terms, name_words where it is name_terms
        return terms, None if words == terms else words, name_terms, None if name_words == name_terms else name_words
    if (name_terms, name_words) == (terms, words):  # "strings": the name's NULL where it is the title
        return terms, None if words == terms else words, None, None
    return terms, None if words == terms else words, name_terms, None if name_words == name_terms else name_words


_LAYOUTS = {
    "keyed-by-section": "section_summary_id INTEGER NOT NULL PRIMARY KEY, docid INTEGER NOT NULL UNIQUE, "
                        "entity_generation_id INTEGER NOT NULL, title_terms TEXT NOT NULL, title_words TEXT NOT NULL,"
                        " name_terms TEXT NOT NULL, name_words TEXT NOT NULL",
    "names-kept": "section_summary_id INTEGER NOT NULL, docid INTEGER NOT NULL PRIMARY KEY, "
                  "entity_generation_id INTEGER NOT NULL, title_terms TEXT NOT NULL, title_words TEXT, "
                  "name_terms TEXT NOT NULL, name_words TEXT",
    "strings": "section_summary_id INTEGER NOT NULL, docid INTEGER NOT NULL PRIMARY KEY, "
               "entity_generation_id INTEGER NOT NULL, title_terms TEXT NOT NULL, title_words TEXT, "
               "name_terms TEXT, name_words TEXT",
}


def _write_older_layout(path, layout: str) -> None:
    """search_section as an older textpile wrote it, strings and all."""
    analyzer = Analyzer()
    with closing(register_functions(sqlite3.connect(path))) as conn:
        rows = conn.execute(
            "SELECT t.section_summary_id, t.docid, s.entity_generation_id, s.title, s.anchor, sp.language"
            " FROM search_section t JOIN section_summary s ON s.section_summary_id = t.section_summary_id"
            " JOIN search_page sp ON sp.entity_generation_id = s.entity_generation_id ORDER BY t.docid").fetchall()
        conn.execute("DROP TABLE search_section")
        conn.execute(f"CREATE TABLE search_section ({_LAYOUTS[layout]})")  # a test constant, not input
        conn.executemany("INSERT INTO search_section VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(sid, docid, eg, *_strings(analyzer, title, anchor, language, layout))
                          for sid, docid, eg, title, anchor, language in rows])
        conn.commit()


@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_an_older_search_section_is_read_as_it_is_and_rebuilt_by_the_next_index_update(tmp_path, layout):
    path = tmp_path / "summary.db"
    _site(path)
    queries = ["json dumps", "decoders", "key functions", "basic usage", "encoders"]
    with closing(open_summary_db(path, read_only=True)) as conn:
        new = [dataclasses.asdict(search(conn, q)) for q in queries]
        fresh = conn.execute(_ROWS).fetchall()
    _write_older_layout(path, layout)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute(_ROWS).fetchall() == fresh
        assert conn.execute("SELECT count(*) FROM search_section WHERE title_terms <> ''").fetchone() == (4,)
    with closing(open_summary_db(path, read_only=True)) as conn:  # the old layout reads as it is
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new
    assert any(r["results"] and r["results"][0]["sections"] for r in new)  # the section path ran
    with closing(open_summary_db(path)) as conn:  # the next update makes the derived tables anew
        report = update_index(conn)
        assert report.rebuilt and report.rebuild_reason == ("the index was written by another textpile "
                                                            "(search_section in another layout)")
        assert [r[1] for r in conn.execute("PRAGMA table_info(search_section)")] == ["section_summary_id", "docid"]
        assert conn.execute(_ROWS).fetchall() == fresh
        assert conn.execute("SELECT pk FROM pragma_table_info('search_section') WHERE name = 'docid'").fetchone() == (1,)
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new


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


def test_an_older_search_page_with_anchor_texts_is_read_as_it_is_and_rebuilt_by_the_next_index_update(tmp_path):
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
        assert [r[1] for r in conn.execute("PRAGMA table_info(search_page)")][8] == "anchor_texts"
        assert [dataclasses.asdict(search(conn, q)) for q in queries] == new
    with closing(open_summary_db(path)) as conn:  # a write-open leaves it as it is
        assert [r[1] for r in conn.execute("PRAGMA table_info(search_page)")][8] == "anchor_texts"
        assert update_index(conn).rebuilt  # the next update makes it anew
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
