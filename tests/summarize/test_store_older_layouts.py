"""Summary databases of the two previous compact layouts (textpile.store.migrations):
link_target holding each link's markup with link_list's ids plain or packed, and
text_pile_gen1 with one JSON column of spans per field. Read as they are when opened
read-only; moved (every row kept, checked) when opened for writing, also after a move
that was killed midway or failed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import ExitStack, closing

import pytest

from textpile.errors import DatabaseError
from textpile.store import links
from textpile.store.database import BASE_SCHEMA_VERSION, extension_sql, open_summary_db, schema_sql
from textpile.store.gen2_piles import pack, register_functions
from textpile.store.links import FLAG_COLUMNS, LinkStore
from textpile.store.text_piles import GEN1_FIELDS, Gen2Lines, encode_field, main_text_readers
from textpile.summarize.scrape.document import scrape_document

from tests.summarize.test_store_compact import LINK_LIST, PAGE, stored_spans

_FLAGS_SQL = ", ".join(f"(t.flags >> {bit}) & 1 AS {name}" for bit, name in enumerate(FLAG_COLUMNS))


def _old_links_ddl(plain_ids: bool) -> str:
    """link_target, link_list and the link_summary view as textpile made them before link_style."""
    ids = ("link_target_ids TEXT NOT NULL" if plain_ids else
           "link_count INTEGER NOT NULL, link_target_ids_packed BLOB NOT NULL, link_target_ids_size INTEGER NOT NULL")
    read = ("l.link_target_ids" if plain_ids else
            "CAST(sqlar_uncompress(l.link_target_ids_packed, l.link_target_ids_size) AS TEXT)")
    return f"""
CREATE TABLE IF NOT EXISTS link_target (
    link_target_id INTEGER NOT NULL PRIMARY KEY, link_to_url INTEGER NOT NULL REFERENCES url(url_id),
    link_to_fragment TEXT, flags INTEGER NOT NULL, destination_type INTEGER, link_locality INTEGER NOT NULL,
    html_tag_name VARCHAR, text VARCHAR);
CREATE INDEX IF NOT EXISTS link_target_by_url ON link_target(link_to_url);
CREATE TABLE IF NOT EXISTS link_list (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
    first_link_summary_id INTEGER NOT NULL UNIQUE, {ids});
CREATE VIEW IF NOT EXISTS link_summary AS
SELECT l.first_link_summary_id + j.key AS link_summary_id, l.entity_generation_id AS entity_generation_id,
       t.link_to_url AS link_to_url, t.link_to_fragment AS link_to_fragment, {_FLAGS_SQL},
       t.destination_type AS destination_type, t.link_locality AS link_locality, t.html_tag_name AS html_tag_name,
       t.text AS text
FROM link_list l, json_each({read}) j JOIN link_target t ON t.link_target_id = j.value;

"""


def _field_sql(name: str) -> str:
    return ("(SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value ELSE CAST(substr("
            "sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1,"
            f" json_extract(s.value, '$[1]')) AS TEXT) END, char(10)), '') FROM json_each(g1.{name}_spans) s) AS {name}")


OLD_GEN1_DDL = (
    "CREATE TABLE IF NOT EXISTS text_pile_gen1 (\n    text_pile_id INTEGER NOT NULL PRIMARY KEY,\n"
    "    blake2b512_digest BLOB NOT NULL UNIQUE,\n"
    "    text_pile_v0_2_id INTEGER REFERENCES text_pile_gen2(text_pile_id),\n"
    + ",\n".join(f"    {name}_spans TEXT NOT NULL" for name in GEN1_FIELDS) + "\n);\n"
    "CREATE VIEW IF NOT EXISTS text_pile AS SELECT g1.text_pile_id AS text_pile_id,"
    " g1.blake2b512_digest AS blake2b512_digest, " + ", ".join(_field_sql(name) for name in GEN1_FIELDS)
    + " FROM text_pile_gen1 g1 LEFT JOIN text_pile_gen2 g2 ON g2.text_pile_id = g1.text_pile_v0_2_id;\n\n")


def _link(url_id, fragment, text, flags, locality=1, tag="a"):
    return (url_id, fragment, *(int(name in flags) for name in FLAG_COLUMNS), 1, locality, tag, text)


#: The links the old database holds: the first and third differ only in their markup.
HOME = _link(1, None, "Home", {"in_nav", "in_list"})
BREWING = _link(1, "brewing", None, {"in_main", "in_paragraph"}, locality=0)
HOME_FOOTER = _link(1, None, "Home", {"in_footer"})


def _old_database(path, *, plain_ids: bool = False):
    """A summary database of the previous layout: one page (Gen2 pile 7, Gen1 pile 5, as
    textpile stored them), a Gen1 pile written out (6), links of two generations, and a
    user's view over text_pile and link_summary; returns (the Gen1 fields, the link rows)."""
    ddl = schema_sql("summary", "0.0.0")
    links_at, links_end = ddl.index("-- Each distinct link once"), ddl.index("-- Document metadata, derived best effort.")
    gen1_at, gen1_end = ddl.index("-- Text piles Gen1, stored once per digest"), ddl.index("-- Token index (experimental)")
    ddl = (ddl[:links_at] + _old_links_ddl(plain_ids) + ddl[links_end:gen1_at] + OLD_GEN1_DDL + ddl[gen1_end:]
           + extension_sql("summary"))
    result = scrape_document(PAGE, "https://tea.example/green.html", now_unix_utc=1_800_000_000)
    g1, g2 = result.text_pile, result.text_pile_v0_2
    fields = [getattr(g1, name) for name in GEN1_FIELDS]
    with closing(register_functions(sqlite3.connect(path))) as conn:
        conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
        conn.executescript(ddl)
        conn.executemany("INSERT INTO unobtanium_database_info(key, value) VALUES (?, ?)", [
            ("unobtanium_base_schema_version", "0.1.0"), ("unobtanium_database_kind", "summary"),
            ("unobtanium_summary_schema_version", "0.0.0")])
        conn.execute("INSERT INTO origin(origin_id, port, scheme, host, str_origin)"
                     " VALUES (1, 443, 'https', 'tea.example', 'https://tea.example')")
        conn.execute("INSERT INTO url(url_id, origin_id, str_url, path, query)"
                     " VALUES (1, 1, 'https://tea.example/green.html', '/green.html', NULL)")
        conn.execute("INSERT INTO text_pile_v0_2(text_pile_id, blake2b512_digest, text, metadata, segmentation_cache)"
                     " VALUES (7, ?, ?, ?, ?)", (g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache))
        lines = Gen2Lines(g2.text)
        conn.execute("INSERT INTO text_pile_gen1 VALUES (5, ?, 7, ?, ?, ?, ?, ?, ?)",
                     (g1.blake2b512_digest, *(encode_field(value, lines) for value in fields)))
        conn.execute("""INSERT INTO text_pile_gen1 VALUES (6, x'02', NULL, '["Only in Gen1"]', '[]', '[]', '[]', '[]', '[]')""")
        conn.execute("INSERT INTO entity_generation VALUES (1, x'00', 1, NULL, 10, 20, NULL, 0, 5, 7)")
        conn.execute("INSERT INTO entity_generation VALUES (2, x'01', 1, NULL, 30, 40, NULL, 0, 6, NULL)")
        for target_id, link in enumerate((HOME, BREWING, HOME_FOOTER), 1):
            conn.execute("INSERT INTO link_target VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (target_id, *links._split(link)[0][:2], *links._split(link)[1], link[-1]))
        for generation_id, first, ids in ((1, 1, "[1,2,3,1]"), (2, 5, "[3]")):
            if plain_ids:
                conn.execute("INSERT INTO link_list VALUES (?, ?, ?)", (generation_id, first, ids))
            else:
                conn.execute("INSERT INTO link_list VALUES (?, ?, ?, ?, ?)",
                             (generation_id, first, ids.count(",") + 1, *pack(ids.encode())))
        conn.execute("CREATE VIEW my_links AS SELECT ls.link_summary_id, length(tp.text) AS n FROM link_summary ls"
                     " JOIN entity_generation eg USING (entity_generation_id) JOIN text_pile tp USING (text_pile_id)")
        conn.commit()
    rows = [(1, 1, *HOME), (2, 1, *BREWING), (3, 1, *HOME_FOOTER), (4, 1, *HOME), (5, 2, *HOME_FOOTER)]
    return fields, rows


def _texts_and_links(conn):
    return (conn.execute("SELECT * FROM text_pile ORDER BY text_pile_id").fetchall(),
            conn.execute("SELECT * FROM link_summary ORDER BY link_summary_id").fetchall())


def test_an_older_layout_reads_as_it_is_when_opened_read_only(tmp_path):
    path = tmp_path / "old.db"
    fields, rows = _old_database(path)
    with closing(open_summary_db(path, read_only=True)) as conn:
        piles, link_rows = _texts_and_links(conn)
        assert [row[2:] for row in piles] == [tuple(fields), ("Only in Gen1", "", "", "", "", "")]
        assert link_rows == rows
        assert {pile: r.prefix(20) for pile, r in main_text_readers(conn, [5, 6], ExitStack())} == {5: fields[0][:20], 6: "Only in Gen1"}
        assert conn.execute("SELECT 1 FROM pragma_table_info('text_pile_gen1') WHERE name = 'text_spans'").fetchone()


@pytest.mark.parametrize("plain_ids", [False, True], ids=["packed ids", "plain ids"])
def test_an_older_layout_is_moved_when_opened_for_writing(tmp_path, plain_ids, caplog):
    path = tmp_path / "old.db"
    fields, rows = _old_database(path, plain_ids=plain_ids)
    with closing(register_functions(sqlite3.connect(path))) as conn:
        old_spans = conn.execute("SELECT * FROM text_pile_gen1 ORDER BY 1").fetchall()
        old_view = conn.execute("SELECT * FROM my_links ORDER BY 1").fetchall()
    with closing(open_summary_db(path)) as conn:
        assert _texts_and_links(conn) == (
            [(5, old_spans[0][1], *fields), (6, b"\x02", "Only in Gen1", "", "", "", "", "")], rows)
        assert stored_spans(conn) == [row[:1] + row[2:] for row in old_spans]  # the same spans, packed
        assert conn.execute("SELECT * FROM link_target ORDER BY 1").fetchall() == [
            (1, 1, None, "Home"), (2, 1, "brewing", None)]
        assert conn.execute("SELECT link_style_id, flags, link_locality FROM link_style ORDER BY 1").fetchall() == [
            (1, (1 << 6) | (1 << 16), 1), (2, (1 << 8) | (1 << 17), 0), (3, 1 << 4, 1)]
        assert conn.execute(LINK_LIST).fetchall() == [(1, 1, 4, "[[1,1],[2,2],[1,3],[1,1]]"), (2, 5, 1, "[[1,3]]")]
        assert conn.execute("SELECT * FROM my_links ORDER BY 1").fetchall() == old_view  # the user's view made again
        assert conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%legacy%'").fetchall() == []
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        references = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'entity_generation'").fetchone()[0]
        assert 'REFERENCES "text_pile_gen1"(text_pile_id)' in references or "REFERENCES text_pile_gen1(" in references
        assert {pile: r.prefix(20) for pile, r in main_text_readers(conn, [5, 6], ExitStack())} == {5: fields[0][:20], 6: "Only in Gen1"}
        store = LinkStore(conn)
        assert store.next_id == 6  # new links run on
        assert store.store(2, []) == 0
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute("UPDATE entity_generation SET text_pile_id = 99 WHERE entity_generation_id = 2")
    converted = [r.getMessage() for r in caplog.records if r.name == "textpile.store.database"]
    assert len(converted) == 2 and converted[0].startswith(f"{path}: converted from an older textpile's layout (")
    assert converted[1] == f"{path}: switching to incremental vacuum, which rewrites the file once"
    caplog.clear()
    with closing(open_summary_db(path)) as conn:  # and it stays so
        assert _texts_and_links(conn)[1] == rows
    assert [r for r in caplog.records if r.name == "textpile.store.database"] == []  # nothing moved again


def test_a_failed_move_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    _old_database(path)
    with closing(sqlite3.connect(path)) as conn:
        schema = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
        tables = {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in ("text_pile_gen1", "link_target", "link_list")}
    monkeypatch.setattr(links, "pack", lambda value: (b"[]", 2))  # link lists that would read back empty
    with pytest.raises(DatabaseError, match="link_summary: link 1 would not read back through the view"):
        open_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema
        assert {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in tables} == tables


_KILLED_MOVE = """
import sys, time
from textpile.store import migrations
def stop(conn, finish=migrations.MOVES[-1].finish):
    moved = finish(conn)
    print("moved", moved, flush=True)
    time.sleep(600)
migrations.MOVES = (*migrations.MOVES[:-1], migrations.Move(migrations.MOVES[-1].table, migrations.MOVES[-1].needed,
                                                             migrations.MOVES[-1].prepare, stop))
from textpile.store.database import open_summary_db
open_summary_db(sys.argv[1])
"""


def test_a_move_killed_midway_is_done_again_by_the_next_write_open(tmp_path):
    path = tmp_path / "old.db"
    fields, rows = _old_database(path)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_MOVE, str(path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout.readline() == "moved 5\n"  # every move done, not committed
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    with closing(register_functions(sqlite3.connect(path))) as conn:  # still the old layout
        assert conn.execute("SELECT count(*) FROM pragma_table_info('link_target') WHERE name = 'flags'").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM link_summary").fetchone() == (5,)
    with closing(open_summary_db(path)) as conn:
        assert _texts_and_links(conn)[1] == rows
        assert [row[2:] for row in _texts_and_links(conn)[0]][0] == tuple(fields)
        assert conn.execute("SELECT count(*) FROM link_style").fetchone() == (3,)
        assert stored_spans(conn)[1] == (6, None, '["Only in Gen1"]', "[]", "[]", "[]", "[]", "[]")
