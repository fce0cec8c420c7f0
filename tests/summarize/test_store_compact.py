"""The documented text_pile and link_summary as views over compact tables: Gen1 text as
spans of the Gen2 text (textpile.store.text_piles), each distinct link once
(textpile.store.links). Exact stored rows, what plain SQL reads through the views,
inserts into text_pile, and moving an older database's tables (textpile.store.migrations)."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing

import pytest

from textpile.errors import DatabaseError
from textpile.store.database import BASE_SCHEMA_VERSION, extension_sql, open_summary_db, schema_sql
from textpile.store.gen2_piles import register_functions
from textpile.store.links import FLAG_COLUMNS, LinkStore, store_links
import textpile.store.links as links_module
from textpile.store.text_piles import (
    GEN1_FIELDS, PACKED_FIELDS, SPAN_COLUMNS, Gen2Lines, TextPileStoreError, decode_field, encode_field, pack_spans,
    read_gen1, store_gen1,
)
from textpile.index.update import update_search_index
from textpile.summarize.scrape.document import scrape_document
from textpile.summarize.scrape.piles import gen1_digest

def stored_spans(conn) -> list[tuple]:
    """text_pile_gen1's rows: (text_pile_id, text_pile_v0_2_id, the six fields' JSON spans, unpacked)."""
    packed = ", ".join(f"CAST(sqlar_uncompress({name}_spans_packed, {name}_spans_size) AS TEXT)" for name in PACKED_FIELDS)
    return conn.execute(f"SELECT text_pile_id, text_pile_v0_2_id, text_spans, secondary_text_spans, {packed}"
                        " FROM text_pile_gen1 ORDER BY 1").fetchall()


GEN2 = "Site\nHome\nMy Post\nFirst paragraph of the post.\nSecond paragraph with inline code.\nFooter"


def test_consecutive_lines_become_one_span():
    lines = Gen2Lines(GEN2)
    # "My Post" starts at 10; the three main lines are 7 + 1 + 28 + 1 + 34 = 71 code points
    assert encode_field("My Post\nFirst paragraph of the post.\nSecond paragraph with inline code.", lines) \
        == "[[10,71]]"
    assert encode_field("Site\nHome\nFooter", lines) == "[[0,9],[82,6]]"
    assert encode_field("e\nHome", lines) == '["e",[5,4]]'  # shorter written out than as [start,length]
    assert encode_field("", lines) == "[]"


def test_substrings_and_missing_lines():
    lines = Gen2Lines(GEN2)
    assert encode_field("inline code\nnot on the page at all", lines) == '[[69,11],"not on the page at all"]'
    assert encode_field("First paragraph of the post.", None) == '["First paragraph of the post."]'
    assert decode_field('[[69,11],"x",""]', GEN2) == "inline code\nx\n"


def test_offsets_count_utf8_bytes():
    text = "Grüße aus Köln\nÜber uns: ein längerer Absatz"
    assert encode_field("Über uns: ein längerer Absatz", Gen2Lines(text)) == "[[18,31]]"  # ü, ß, ö: 2 bytes each
    assert decode_field("[[18,31]]", text) == "Über uns: ein längerer Absatz"


@pytest.mark.parametrize("value", [
    "My Post\nMy Post", "Home\n\nHome", "\n", "e\nSite\nSite\nHome", "Footer\nSite", "ü\nGrüße ✓",
])
def test_encoding_gives_the_field_back(value):
    text = GEN2 + "\nGrüße ✓ ü"
    assert decode_field(encode_field(value, Gen2Lines(text)), text) == value


PAGE = """<!doctype html><html lang="en"><head><title>Tea</title></head><body>
<nav><a href="/">Home</a> <a href="/tea/">All teas</a></nav>
<main><h1>Green tea</h1><p>Green tea is made from leaves that are not oxidised, unlike black tea.</p>
<h2>Brewing</h2><p>Use water below boiling: <code>80 °C</code> for most green teas, for two minutes.</p>
<pre>steep(tea, minutes=2)
pour()</pre><blockquote><p>Tea is liquid wisdom, said someone once upon a time.</p></blockquote>
<p>Grüße aus Japan, where <q>sencha</q> is the everyday tea.</p></main>
<footer><p>Footer text of the tea site, on every page of it.</p></footer></body></html>"""


def _store_page(conn):
    result = scrape_document(PAGE, "https://tea.example/green.html", now_unix_utc=1_800_000_000)
    g1, g2 = result.text_pile, result.text_pile_v0_2
    conn.execute("INSERT INTO text_pile_v0_2(blake2b512_digest, text, metadata, segmentation_cache) VALUES (?, ?, ?, ?)",
                 (g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache))
    gen2_id = conn.execute("SELECT text_pile_id FROM text_pile_v0_2 WHERE blake2b512_digest = ?",
                           (g2.blake2b512_digest,)).fetchone()[0]
    fields = [getattr(g1, name) for name in GEN1_FIELDS]
    return store_gen1(conn, g1.blake2b512_digest, fields, gen2_id, g2.text), g1, g2, fields


def test_a_scraped_page_reads_back_through_the_view_and_stores_no_text(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        pile_id, g1, g2, fields = _store_page(conn)
        conn.commit()
        assert store_gen1(conn, g1.blake2b512_digest, fields, None, None) == pile_id  # stored once by digest
        row = conn.execute("SELECT * FROM text_pile").fetchall()
        assert row == [(pile_id, g1.blake2b512_digest, *fields)]
        assert gen1_digest(*row[0][2:]) == g1.blake2b512_digest
        [(_, _, *spans)] = stored_spans(conn)
        main_start = g2.text.encode().index("Green tea\n".encode())
        assert spans[0] == f"[[{main_start},{len(g1.text.encode())}]]"  # the main content lines: one span, in bytes
        for value in spans:
            assert "tea" not in re.sub(r'"[^"]{0,12}"', "", value)  # only short items written out
        assert "80 °C" in g1.code_text and "steep(tea, minutes=2)" in g1.code_text


def test_store_refuses_a_pile_that_would_not_read_back(tmp_path, monkeypatch):
    from textpile.store import text_piles

    monkeypatch.setattr(text_piles, "encode_field", lambda value, lines: "[]" if value else "[]")
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        with pytest.raises(TextPileStoreError, match="text, secondary_text.* would not read back"):
            _store_page(conn)


def test_plain_sql_inserts_into_the_view(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        conn.execute("INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines,"
                     " small_headlines, code_text, quote_text) VALUES (x'01', 'a\nb', '', 'a', '', '', '')")
        conn.execute("INSERT OR IGNORE INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines,"
                     " small_headlines, code_text, quote_text) VALUES (x'01', 'other', '', '', '', '', '')")
        assert conn.execute("SELECT * FROM text_pile").fetchall() == [(1, b"\x01", "a\nb", "", "a", "", "", "")]
        assert stored_spans(conn) == [(1, None, '["a\\nb"]', '[""]', '["a"]', '[""]', '[""]', '[""]')]



def test_piles_read_in_python_as_the_view_gives_them(tmp_path):
    """read_gen1 (the index update's reader) gives each field as the text_pile view does: a
    scraped page's spans, a plain SQL client's literal fields, and spans whose Gen2 text is
    not stored (NULL in the view, so group_concat leaves them out)."""
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        scraped, _, _, fields = _store_page(conn)
        conn.execute("INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines,"
                     " small_headlines, code_text, quote_text) VALUES (x'01', 'a\nb', '', 'ü', '', '', '')")
        literal = conn.execute("SELECT text_pile_id FROM text_pile_gen1 WHERE blake2b512_digest = x'01'").fetchone()[0]
        spans = ['["x",[0,4],"y"]', '[[2,3]]', '[]', '["h"]', '[[0,1]]', '[]']
        orphan = conn.execute(
            f"INSERT INTO text_pile_gen1(blake2b512_digest, text_pile_v0_2_id, {', '.join(SPAN_COLUMNS)}) "
            f"VALUES (x'02', NULL{', ?' * len(SPAN_COLUMNS)})", pack_spans(spans)).lastrowid
        ids = [scraped, literal, orphan]
        view = {row[0]: tuple(row[1:]) for row in conn.execute(
            f"SELECT text_pile_id, {', '.join(GEN1_FIELDS)} FROM text_pile")}
        assert read_gen1(conn, ids + [999]) == view  # a pile not stored is left out
        assert view[scraped] == tuple(fields)
        assert view[literal] == ("a\nb", "", "ü", "", "", "")
        assert view[orphan] == ("x\ny", "", "", "h", "", "")


OLD_LINK_SUMMARY = (
    "CREATE TABLE IF NOT EXISTS link_summary (\n    link_summary_id INTEGER NOT NULL PRIMARY KEY,\n"
    "    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),\n"
    "    link_to_url INTEGER NOT NULL REFERENCES url(url_id),\n    link_to_fragment TEXT,\n"
    + "".join(f"    {name} BOOL NOT NULL,\n" for name in FLAG_COLUMNS)
    + "    destination_type INTEGER,\n    link_locality INTEGER NOT NULL,\n    html_tag_name VARCHAR,\n"
    "    text VARCHAR\n);\nCREATE INDEX IF NOT EXISTS link_summary_by_entity_generation ON link_summary(entity_generation_id);\n\n")
OLD_TEXT_PILE_V0_2 = ("CREATE TABLE IF NOT EXISTS text_pile_v0_2 (\n    text_pile_id INTEGER NOT NULL PRIMARY KEY,\n"
                      "    blake2b512_digest BLOB NOT NULL UNIQUE,\n    text TEXT NOT NULL,\n"
                      "    metadata BLOB NOT NULL,\n    segmentation_cache BLOB NOT NULL\n);\n\n")
OLD_TEXT_PILE = ("CREATE TABLE IF NOT EXISTS text_pile (\n    text_pile_id INTEGER NOT NULL PRIMARY KEY,\n"
                 "    blake2b512_digest BLOB NOT NULL UNIQUE,\n"
                 + ",\n".join(f"    {name} TEXT NOT NULL" for name in GEN1_FIELDS) + "\n);\n\n")
#: Two links of generation 1 in the old table (link_summary_id, entity_generation_id, LINK_COLUMNS...).
OLD_LINKS = [
    (1, 1, 1, None, *(int(n in {"in_header", "in_list"}) for n in FLAG_COLUMNS), 1, 1, "a", "Home"),
    (2, 1, 1, "brewing", *(int(n in {"in_main", "in_paragraph"}) for n in FLAG_COLUMNS), 1, 0, "a", None),
]


def _old_summary_db(path):
    """A summary database as textpile wrote it before text_pile_gen2, text_pile_gen1 and
    link_target (text_pile_v0_2, text_pile and link_summary tables), with one page, two
    piles and two links."""
    ddl = schema_sql("summary", "0.0.0")
    links_at, links_end = ddl.index("-- Links parsed out of"), ddl.index("-- Document metadata, derived best effort.")
    piles_at, piles_end = ddl.index("-- Text piles Gen2, stored once per digest"), ddl.index("-- Token index (experimental)")
    ddl = (ddl[:links_at] + OLD_LINK_SUMMARY + ddl[links_end:piles_at] + OLD_TEXT_PILE_V0_2 + OLD_TEXT_PILE
           + ddl[piles_end:] + extension_sql("summary")).replace(
        "REFERENCES text_pile_gen1(", "REFERENCES text_pile(").replace("REFERENCES text_pile_gen2(", "REFERENCES text_pile_v0_2(")
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
        conn.executescript(ddl)
        conn.executemany("INSERT INTO unobtanium_database_info(key, value) VALUES (?, ?)", [
            ("unobtanium_base_schema_version", "0.1.0"), ("unobtanium_database_kind", "summary"),
            ("unobtanium_summary_schema_version", "0.0.0")])
        result = scrape_document(PAGE, "https://tea.example/green.html", now_unix_utc=1_800_000_000)
        g1, g2 = result.text_pile, result.text_pile_v0_2
        conn.execute("INSERT INTO origin(origin_id, port, scheme, host, str_origin)"
                     " VALUES (1, 443, 'https', 'tea.example', 'https://tea.example')")
        conn.execute("INSERT INTO url(url_id, origin_id, str_url, path, query)"
                     " VALUES (1, 1, 'https://tea.example/green.html', '/green.html', NULL)")
        conn.execute("INSERT INTO text_pile_v0_2 VALUES (7, ?, ?, ?, ?)",
                     (g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache))
        conn.execute("INSERT INTO text_pile VALUES (5, ?, ?, ?, ?, ?, ?, ?)",
                     (g1.blake2b512_digest, *(getattr(g1, n) for n in GEN1_FIELDS)))
        conn.execute("INSERT INTO text_pile VALUES (6, x'02', 'Only in Gen1', '', '', '', '', '')")
        conn.execute("INSERT INTO entity_generation VALUES (1, x'00', 1, NULL, 10, 20, NULL, 0, 5, 7)")
        conn.execute("INSERT INTO document_description(entity_generation_id, title, indexiness)"
                     " VALUES (1, 'Green tea', 0)")
        conn.execute("INSERT INTO token VALUES (1, 'tea')")
        conn.execute("INSERT INTO token_statistics VALUES (1, 5, 9)")
        conn.executemany("INSERT INTO link_summary VALUES (" + ", ".join("?" * 27) + ")", OLD_LINKS)
        conn.execute("CREATE VIEW my_piles AS SELECT text_pile_id, length(text) AS n FROM text_pile")
        conn.commit()
    return g1


def test_an_older_database_moves_its_text_pile_table_into_spans(tmp_path):
    path = tmp_path / "old.db"
    g1 = _old_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        before = conn.execute("SELECT * FROM text_pile ORDER BY text_pile_id").fetchall()
        gen2_before = conn.execute("SELECT * FROM text_pile_v0_2").fetchall()
    assert update_search_index(path).pages == 1  # opens for writing: the text_pile table becomes spans first
    with closing(register_functions(sqlite3.connect(path))) as conn:
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'text_pile'").fetchone() == ("view",)
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'text_pile_v0_2'").fetchone() == ("view",)
        assert conn.execute("SELECT * FROM text_pile_v0_2").fetchall() == gen2_before
        assert conn.execute("SELECT * FROM link_summary ORDER BY 1").fetchall() == OLD_LINKS
        assert conn.execute(LINK_LIST).fetchall() == [(1, 1, 2, "[[1,1],[2,2]]")]
        assert conn.execute("SELECT * FROM link_target").fetchall() == [(1, 1, None, "Home"), (2, 1, "brewing", None)]
        assert conn.execute("SELECT * FROM link_style").fetchall() == [
            (1, (1 << 3) | (1 << 16), 1, 1, "a"), (2, (1 << 8) | (1 << 17), 1, 0, "a")]
        assert conn.execute("SELECT * FROM text_pile ORDER BY text_pile_id").fetchall() == before
        gen2_text = conn.execute("SELECT text FROM text_pile_v0_2").fetchone()[0]
        assert [row[:3] for row in stored_spans(conn)] == [
            (5, 7, f"[[{gen2_text.encode().index(g1.text.encode())},{len(g1.text.encode())}]]"),
            (6, None, '["Only in Gen1"]')]
        references = " ".join(sql for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name IN ('entity_generation', 'token_statistics', 'page_embedding')"))
        assert references.count('REFERENCES "text_pile_gen1"(text_pile_id)') == 3
        assert references.count('REFERENCES "text_pile_gen2"(text_pile_id)') == 1  # entity_generation's
        assert "REFERENCES text_pile(" not in references and "REFERENCES text_pile_v0_2(" not in references
        assert conn.execute("SELECT * FROM my_piles ORDER BY 1").fetchall() == [(5, len(g1.text)), (6, 12)]
        assert conn.execute("SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH"
                            " 'oxidised'").fetchall() == [(1,)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    with closing(open_summary_db(path)) as conn:  # and it stays so
        conn.execute("INSERT INTO entity_generation VALUES (2, x'01', 1, NULL, 30, 40, NULL, 0, 6, NULL)")
        conn.commit()
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute("INSERT INTO entity_generation VALUES (3, x'02', 1, NULL, 30, 40, NULL, 0, 99, NULL)")


def test_a_move_that_fails_changes_nothing(tmp_path, monkeypatch):
    from textpile.store import text_piles

    path = tmp_path / "old.db"
    _old_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
        rows = conn.execute("SELECT * FROM text_pile ORDER BY text_pile_id").fetchall()
    monkeypatch.setattr(text_piles, "encode_field", lambda value, lines: "[]")
    with pytest.raises(TextPileStoreError, match="text pile 5: its spans would not give its text back"):
        open_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
        assert conn.execute("SELECT * FROM text_pile ORDER BY text_pile_id").fetchall() == rows


# --- links ---------------------------------------------------------------------------

#: link_list's rows with the [link_target_id, link_style_id] pairs unpacked.
LINK_LIST = ("SELECT entity_generation_id, first_link_summary_id, link_count,"
             " CAST(sqlar_uncompress(links_packed, links_size) AS TEXT) FROM link_list ORDER BY 1")


def _link(url_id, fragment=None, text=None, *, flags=(), tag="a", destination=1, locality=1):
    return (url_id, fragment, *(name in flags for name in FLAG_COLUMNS), destination, locality, tag, text)


def test_each_distinct_link_is_stored_once_and_reads_back(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        conn.execute("INSERT INTO origin VALUES (1, 443, 'https', 'tea.example', 'https://tea.example')")
        conn.executemany("INSERT INTO url(url_id, origin_id, str_url) VALUES (?, 1, ?)",
                         [(1, "https://tea.example/"), (2, "https://tea.example/green.html")])
        for eg in (1, 2, 3):
            conn.execute("INSERT INTO entity_generation VALUES (?, x'00', ?, NULL, 10, 20, NULL, 0, NULL, NULL)",
                         (eg, min(eg, 2)))
        nav = _link(1, text="Home", flags={"in_nav", "in_list"})
        own = _link(2, "brewing", "Brewing", flags={"in_main", "in_paragraph", "rel_nofollow"}, locality=0)
        store = LinkStore(conn)
        assert store.store(1, [nav, own, nav]) == 3
        assert store.store(2, [nav]) == 1
        assert store_links(conn, 3, []) == 0
        assert conn.execute(LINK_LIST).fetchall() == [(1, 1, 3, "[[1,1],[2,2],[1,1]]"), (2, 4, 1, "[[1,1]]")]
        assert conn.execute("SELECT links_packed, links_size FROM link_list WHERE"
                            " entity_generation_id = 1").fetchone() == (b"[[1,1],[2,2],[1,1]]", 19)  # too short to compress
        assert conn.execute("SELECT * FROM link_target ORDER BY 1").fetchall() == [
            (1, 1, None, "Home"), (2, 2, "brewing", "Brewing")]
        assert conn.execute("SELECT * FROM link_style ORDER BY 1").fetchall() == [
            (1, (1 << 6) | (1 << 16), 1, 1, "a"), (2, 1 | (1 << 8) | (1 << 17), 1, 0, "a")]
        same_target = _link(1, text="Home", flags={"in_main"}, tag="area")  # the same target, another style
        same_style = _link(2, text="Home", flags={"in_nav", "in_list"})  # another target, the same style
        assert store.store(3, [same_target, same_style]) == 2
        assert conn.execute(LINK_LIST + " LIMIT 1 OFFSET 2").fetchall() == [(3, 5, 2, "[[1,3],[3,1]]")]
        assert conn.execute("SELECT * FROM link_summary ORDER BY link_summary_id").fetchall() == [
            (1, 1, *nav), (2, 1, *own), (3, 1, *nav), (4, 2, *nav), (5, 3, *same_target), (6, 3, *same_style)]
        assert store_links(conn, 1, []) == 0
        with pytest.raises(sqlite3.IntegrityError):  # a generation's links are written once
            store_links(conn, 1, [own])
        assert LinkStore(conn).next_id == 7  # a new batch runs on
        assert conn.execute("SELECT count(*) FROM link_summary WHERE entity_generation_id = 1 AND in_nav").fetchone() \
            == (2,)


def test_links_whose_ids_do_not_run_on_are_not_moved(tmp_path):
    path = tmp_path / "old.db"
    _old_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE link_summary SET link_summary_id = 9 WHERE link_summary_id = 2")
        conn.commit()
        before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    with pytest.raises(DatabaseError, match="link ids of generation 1 do not run on one by one"):
        open_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
        assert conn.execute("SELECT link_summary_id FROM link_summary ORDER BY 1").fetchall() == [(1,), (9,)]


def test_the_store_and_the_scrape_agree_on_the_gen1_fields():
    import dataclasses
    import inspect

    from textpile.summarize.scrape.piles import gen1_digest, make_gen1
    from textpile.summarize.scrape.result import TextPileGen1

    # the digest's order, the text pile's and the columns' are one order
    assert tuple(inspect.signature(gen1_digest).parameters) == GEN1_FIELDS
    assert tuple(inspect.signature(make_gen1).parameters) == GEN1_FIELDS
    assert tuple(f.name for f in dataclasses.fields(TextPileGen1))[:-1] == GEN1_FIELDS


def test_a_new_batch_finds_the_stored_targets_by_destination_and_fragment(tmp_path):
    """A later batch (a new LinkStore) reuses a stored target of the same destination,
    fragment and text, a missing fragment included, and stores only the new ones; the
    lookup is one indexed search by destination and fragment."""
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        conn.execute("INSERT INTO origin VALUES (1, 443, 'https', 'tea.example', 'https://tea.example')")
        conn.executemany("INSERT INTO url(url_id, origin_id, str_url) VALUES (?, 1, ?)",
                         [(1, "https://tea.example/"), (2, "https://tea.example/green.html")])
        for eg in (1, 2):
            conn.execute("INSERT INTO entity_generation VALUES (?, x'00', 2, NULL, 10, 20, NULL, 0, NULL, NULL)", (eg,))
        LinkStore(conn).store(1, [_link(1, text="Home"), _link(1, "a", "A"), _link(1, "a", "Alpha")])
        later = LinkStore(conn)
        later.store(2, [_link(1, text="Home"), _link(1, "a", "Alpha"), _link(1, "a", "Beta"), _link(1, "b", "A"),
                        _link(1), _link(1), _link(2, "a", "A")])
        assert conn.execute("SELECT * FROM link_target ORDER BY 1").fetchall() == [
            (1, 1, None, "Home"), (2, 1, "a", "A"), (3, 1, "a", "Alpha"),
            (4, 1, "a", "Beta"), (5, 1, "b", "A"), (6, 1, None, None), (7, 2, "a", "A")]
        assert conn.execute(LINK_LIST).fetchall()[1][3] == "[[1,1],[3,1],[4,1],[5,1],[6,1],[6,1],[7,1]]"
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + links_module._TARGETS_OF_URL_FRAGMENT,
                                                         (1, None)))
        assert "USING INDEX link_target_by_url_fragment (link_to_url=? AND link_to_fragment=?)" in plan


def test_the_older_index_of_link_targets_is_replaced_on_the_next_write_open(tmp_path):
    path = tmp_path / "s.db"
    open_summary_db(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP INDEX link_target_by_url_fragment")
        conn.execute("CREATE INDEX link_target_by_url ON link_target(link_to_url)")
        conn.commit()
    open_summary_db(path, read_only=True).close()  # a reader changes nothing
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'link_target' AND type = 'index'"
                            ).fetchall() == [("link_target_by_url",)]
    open_summary_db(path).close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'link_target' AND type = 'index'"
                            ).fetchall() == [("link_target_by_url_fragment", "CREATE INDEX link_target_by_url_fragment "
                                              "ON link_target(link_to_url, link_to_fragment)")]
