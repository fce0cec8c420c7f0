"""The documented text_pile_v0_2 as a view over compressed values (textpile.store.gen2_piles):
exact packed rows, what plain SQL (textpile's connections, the sqlite3 shell) reads through
the views, inserts into the view, and moving a database whose text_pile_v0_2 is a table."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import zlib
from contextlib import ExitStack, closing

import deflate
import pytest

from textpile.errors import DatabaseError
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import PACK_LEVEL, pack, register_functions, unpack
from textpile.store.text_piles import GEN1_FIELDS, store_gen1
from textpile.summarize.scrape.document import scrape_document

LONG = "\n".join(f"Line {i} of a page about green tea, brewed at 80 °C for two minutes." for i in range(200))


def test_pack_keeps_what_compression_would_not_shorten():
    assert pack(b"") == (b"", 0)
    assert pack(b"tea") == (b"tea", 3)
    packed, size = pack(LONG.encode())
    assert size == len(LONG.encode()) and len(packed) < size // 10
    assert zlib.decompress(packed) == LONG.encode()  # a plain zlib stream, as sqlar keeps files
    assert unpack(packed, size) == LONG.encode()
    assert unpack(b"tea", 3) == b"tea" and unpack("tea", 0) == "tea" and unpack(None, 3) is None


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the function's ValueError, reported
def test_unpack_refuses_a_bad_stream_and_a_size_above_the_limit():
    packed, size = pack(LONG.encode())
    with pytest.raises(ValueError, match="not a zlib stream"):
        unpack(b"not zlib at all", 100)
    with pytest.raises(ValueError, match="longer than 10 bytes"):
        unpack(packed, 10)
    with pytest.raises(ValueError, match=f"{size} bytes is above this connection's limit of 1000"):
        unpack(packed, size, max_size=1000)
    conn = register_functions(sqlite3.connect(":memory:"))
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000)
    register_functions(conn)
    with pytest.raises(sqlite3.OperationalError, match="user-defined function raised exception"):
        conn.execute("SELECT sqlar_uncompress(?, ?)", (packed, size)).fetchone()
    assert conn.execute("SELECT sqlar_uncompress(?, 8)", (zlib.compress(b"sencha!!"),)).fetchone() == (b"sencha!!",)


PAGE = ("<html><head><title>Green tea</title></head><body><nav><a href='/'>Home</a></nav><main>"
        "<h1>Green tea</h1>" + "".join(f"<p>{line}</p>" for line in LONG.splitlines()[:60])
        + "<pre>steep(tea, minutes=2)</pre><p>Grüße aus Japan.</p></main></body></html>")


def _store_page(conn):
    result = scrape_document(PAGE, "https://tea.example/green.html", now_unix_utc=1_800_000_000)
    g1, g2 = result.text_pile, result.text_pile_v0_2
    insert = "INSERT OR IGNORE INTO text_pile_v0_2(blake2b512_digest, text, metadata, segmentation_cache) VALUES (?, ?, ?, ?)"
    conn.execute(insert, (g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache))
    conn.execute(insert, (g2.blake2b512_digest, "other", b"", b""))  # once per digest
    gen2_id = conn.execute("SELECT text_pile_id FROM text_pile_v0_2 WHERE blake2b512_digest = ?",
                           (g2.blake2b512_digest,)).fetchone()[0]
    gen1_id = store_gen1(conn, g1.blake2b512_digest, [getattr(g1, n) for n in GEN1_FIELDS], gen2_id, g2.text)
    conn.commit()
    return gen1_id, gen2_id, g1, g2


def test_a_page_is_stored_packed_and_reads_back_through_both_views(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        gen1_id, gen2_id, g1, g2 = _store_page(conn)
        text = g2.text.encode()
        row = conn.execute("SELECT * FROM text_pile_gen2").fetchone()
        assert row == (gen2_id, g2.blake2b512_digest, bytes(deflate.zlib_compress(text, PACK_LEVEL)), len(text),
                       *pack(g2.metadata), *pack(g2.segmentation_cache))
        assert len(row[2]) < len(text) // 5
        assert conn.execute("SELECT * FROM text_pile_v0_2").fetchall() == [
            (gen2_id, g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache)]
        assert conn.execute("SELECT typeof(text), typeof(metadata) FROM text_pile_v0_2").fetchone() == ("text", "blob")
        assert conn.execute("SELECT * FROM text_pile").fetchall() == [
            (gen1_id, g1.blake2b512_digest, *(getattr(g1, n) for n in GEN1_FIELDS))]
        assert "steep(tea, minutes=2)" in g1.code_text


def test_the_sqlite3_shell_reads_the_views(tmp_path):
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell on this machine")
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        _, _, g1, g2 = _store_page(conn)
    if subprocess.run([shell, ":memory:", "SELECT sqlar_uncompress(x'00', 0)"], capture_output=True).returncode:
        pytest.skip("this sqlite3 shell is built without zlib (no sqlar_uncompress)")
    out = subprocess.run([shell, "-readonly", str(tmp_path / "s.db"),
                          "SELECT hex(CAST(text AS BLOB)), hex(metadata) FROM text_pile_v0_2;"
                          " SELECT hex(CAST(code_text AS BLOB)) FROM text_pile;"],
                         capture_output=True, text=True, check=True).stdout.replace("|", " ").split()
    assert out == [g2.text.encode().hex().upper(), g2.metadata.hex().upper(), g1.code_text.encode().hex().upper()]


def test_plain_sql_inserts_into_the_view(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        conn.execute("INSERT INTO text_pile_v0_2(blake2b512_digest, text, metadata, segmentation_cache)"
                     " VALUES (x'01', 'Grüße', x'0102', x'')")
        conn.execute("INSERT OR IGNORE INTO text_pile_v0_2(blake2b512_digest, text, metadata, segmentation_cache)"
                     " VALUES (x'01', 'other', x'', x'')")
        assert conn.execute("SELECT * FROM text_pile_v0_2").fetchall() == [(1, b"\x01", "Grüße", b"\x01\x02", b"")]
        assert conn.execute("SELECT text_packed, text_size FROM text_pile_gen2").fetchall() == [
            ("Grüße".encode(), 7)]  # kept as it is: compressing would not make it shorter
        conn.execute("INSERT INTO text_pile_v0_2 VALUES (5, x'05', ?, x'', x'')", (LONG,))
        assert conn.execute("SELECT text_packed, text_size FROM text_pile_gen2 WHERE text_pile_id = 5").fetchone() == (
            bytes(deflate.zlib_compress(LONG.encode(), PACK_LEVEL)), len(LONG.encode()))
        assert conn.execute("SELECT text FROM text_pile_v0_2 WHERE text_pile_id = 5").fetchone() == (LONG,)


def test_a_plain_connection_needs_the_function(tmp_path):
    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        _store_page(conn)
    with closing(sqlite3.connect(tmp_path / "s.db")) as plain:
        with pytest.raises(sqlite3.OperationalError, match="no such function: sqlar_uncompress"):
            plain.execute("SELECT text FROM text_pile_v0_2").fetchall()
        assert plain.execute("SELECT count(*) FROM text_pile_gen2").fetchone() == (1,)  # the tables read as ever
        register_functions(plain)
        assert plain.execute("SELECT length(text) > 1000 FROM text_pile_v0_2").fetchone() == (1,)


def _previous_layout(path):
    """A summary database as textpile wrote it with text_pile_v0_2 a table (text_pile and
    link_summary already views): one page with both piles, a second Gen2 pile."""
    with closing(open_summary_db(path)) as conn:
        gen1_id, gen2_id, g1, g2 = _store_page(conn)
        conn.execute("INSERT INTO origin(origin_id, port, scheme, host, str_origin)"
                     " VALUES (1, 443, 'https', 'tea.example', 'https://tea.example')")
        conn.execute("INSERT INTO url(url_id, origin_id, str_url, path, query)"
                     " VALUES (1, 1, 'https://tea.example/green.html', '/green.html', NULL)")
        conn.execute("INSERT INTO entity_generation VALUES (1, x'00', 1, NULL, 10, 20, NULL, 0, ?, ?)",
                     (gen1_id, gen2_id))
        conn.execute("INSERT INTO document_description(entity_generation_id, title, indexiness) VALUES (1, 'Tea', 0)")
        conn.commit()
        rows = [(gen2_id, g2.blake2b512_digest, g2.text, g2.metadata, g2.segmentation_cache),
                (9, b"\x09", "Sencha", b"\x00", b"")]
        piles = conn.execute("SELECT * FROM text_pile").fetchall()
        schema = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    old = {}
    for name, sql in schema.items():
        old[name] = sql.replace("text_pile_gen2", "text_pile_v0_2")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA foreign_keys=OFF")
        for name in ("text_pile_v0_2_insert", "text_pile_v0_2", "text_pile", "full_text_entity_source"):
            conn.execute(f"DROP {'TRIGGER' if name.endswith('insert') else 'VIEW'} {name}")
        for name in ("entity_generation", "text_pile_gen1"):  # their references name text_pile_v0_2 again
            conn.execute("PRAGMA writable_schema=ON")
            conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (old[name], name))
            conn.execute("PRAGMA writable_schema=OFF")
        conn.execute("DROP TABLE text_pile_gen2")
        conn.execute("CREATE TABLE text_pile_v0_2 (text_pile_id INTEGER NOT NULL PRIMARY KEY, blake2b512_digest BLOB"
                     " NOT NULL UNIQUE, text TEXT NOT NULL, metadata BLOB NOT NULL, segmentation_cache BLOB NOT NULL)")
        conn.executemany("INSERT INTO text_pile_v0_2 VALUES (?, ?, ?, ?, ?)", rows)
        for name in ("text_pile", "full_text_entity_source"):
            conn.execute(old[name].replace("sqlar_uncompress(g2.text_packed, g2.text_size)", "CAST(g2.text AS BLOB)"))
        conn.execute("CREATE VIEW my_texts AS SELECT text_pile_id, length(text) AS n FROM text_pile_v0_2")
        conn.commit()
    return rows, piles


def test_a_database_with_a_text_pile_v0_2_table_is_moved_when_opened_for_writing(tmp_path):
    path = tmp_path / "old.db"
    rows, piles = _previous_layout(path)
    with closing(open_summary_db(path, read_only=True)) as conn:  # read as it is
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'text_pile_v0_2'").fetchone() == ("table",)
        assert conn.execute("SELECT * FROM text_pile_v0_2 ORDER BY 1").fetchall() == rows
        assert conn.execute("SELECT * FROM text_pile").fetchall() == piles
    with closing(open_summary_db(path)) as conn:
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'text_pile_v0_2'").fetchone() == ("view",)
        assert conn.execute("SELECT * FROM text_pile_v0_2 ORDER BY 1").fetchall() == rows
        assert conn.execute("SELECT * FROM text_pile").fetchall() == piles
        assert conn.execute("SELECT * FROM my_texts ORDER BY 1").fetchall() == [(rows[0][0], len(rows[0][2])), (9, 6)]
        assert conn.execute("SELECT text_pile_id, text_size, length(text_packed) < text_size FROM text_pile_gen2"
                            " ORDER BY 1").fetchall() == [(rows[0][0], len(rows[0][2].encode()), 1), (9, 6, 0)]
        references = " ".join(sql for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name IN ('entity_generation', 'text_pile_gen1')"))
        assert references.count('REFERENCES "text_pile_gen2"(text_pile_id)') == 2
        assert "text_pile_v0_2(" not in references
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute("INSERT INTO entity_generation VALUES (2, x'01', 1, NULL, 30, 40, NULL, 0, NULL, 99)")


def test_a_move_that_would_not_read_back_changes_nothing(tmp_path, monkeypatch):
    from textpile.store import gen2_piles

    path = tmp_path / "old.db"
    rows, _ = _previous_layout(path)
    with closing(sqlite3.connect(path)) as conn:
        before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    monkeypatch.setattr(gen2_piles, "pack", lambda value: (zlib.compress(value[::-1]), len(value)))  # wrong bytes
    with pytest.raises(DatabaseError, match="text_pile_v0_2: 2 text piles would not read back through the view"):
        open_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
        assert conn.execute("SELECT * FROM text_pile_v0_2 ORDER BY 1").fetchall() == rows


# --- reading parts of packed texts (the snippets' way) -------------------------------

MIXED = "\n".join(f"Zeile {i}: Grüße, 緑茶 and 🍵 at 80 °C." for i in range(4000))


@pytest.mark.parametrize("step", [7, 16384])
def test_a_packed_text_gives_exact_parts_inflating_only_what_they_need(monkeypatch, step):
    from textpile.store.gen2_piles import PackedText

    monkeypatch.setattr(PackedText, "STEP", step)
    data = MIXED.encode()
    packed, size = pack(data)
    text = PackedText(packed, size)
    assert text.text(0, 20) == MIXED[:20]
    assert len(text.data) < len(data) // 4  # the rest is not inflated yet
    for start, length in [(5, 40), (1000, 3), (0, 0), (len(MIXED) - 5, 50), (len(MIXED) + 10, 5), (3, 10**6)]:
        assert text.text(start, length) == MIXED[start:start + length]
    assert PackedText(packed, size).read(10, 30) == data[10:30]
    assert PackedText(b"plain", 5).text(1, 3) == "lai"  # kept as it is


@pytest.mark.parametrize("stream", [False, True])
def test_parts_and_main_texts_read_as_the_views_do(tmp_path, monkeypatch, stream):
    from textpile.store import gen2_piles, text_piles
    from textpile.store.gen2_piles import has_packed_texts, packed_texts
    from textpile.store.text_piles import main_text_readers

    if stream:  # every value read from its row in parts, the spans a few bytes at a time (elements cut anywhere)
        for module in (gen2_piles, text_piles):
            monkeypatch.setattr(module, "STREAM_BYTES", 0)
        monkeypatch.setattr(gen2_piles, "READ_BYTES", 5)
        monkeypatch.setattr(text_piles, "SPANS_READ_BYTES", 3)
    with closing(open_summary_db(tmp_path / "s.db")) as conn, ExitStack() as opened:
        gen1_id, gen2_id, g1, g2 = _store_page(conn)
        conn.execute("INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines, small_headlines,"
                     " code_text, quote_text) VALUES (x'07', '', 'only secondary', '', '', '', '')")
        conn.commit()
        assert has_packed_texts(conn)
        texts = packed_texts(conn, [gen2_id, 999, gen2_id], opened)
        assert list(texts) == [gen2_id]  # a pile that does not exist gives nothing
        assert isinstance(texts[gen2_id].packed, sqlite3.Blob) is stream
        assert [texts[gen2_id].text(0, 30), texts[gen2_id].text(100, 500), texts[gen2_id].text(10**6, 5)] == [
            g2.text[:30], g2.text[100:600], ""]
        for chars in (1, 50, 10**6):
            assert {pile: r.prefix(chars) for pile, r in main_text_readers(conn, [gen1_id, gen1_id + 1], opened)} == {
                gen1_id: g1.text[:chars], gen1_id + 1: "only secondary"[:chars]}
        # one reader asked for more and more (as a snippet does) reads on where it stopped
        reader = dict(main_text_readers(conn, [gen1_id, gen1_id + 1], opened))
        assert [reader[gen1_id].prefix(n) for n in (5, 80, 3, 10**6)] == [g1.text[:5], g1.text[:80], g1.text[:3], g1.text]
        assert [reader[gen1_id + 1].prefix(n) for n in (4, 100)] == ["only", "only secondary"]
    if stream:  # the handles are closed with the stack
        with pytest.raises(sqlite3.ProgrammingError):
            texts[gen2_id].packed.read(1)


def test_streamed_spans_are_read_only_as_far_as_the_text_asked_for_needs(tmp_path, monkeypatch):
    from textpile.store import gen2_piles, text_piles
    from textpile.store.text_piles import main_text_readers

    monkeypatch.setattr(gen2_piles, "STREAM_BYTES", 0)
    monkeypatch.setattr(text_piles, "STREAM_BYTES", 0)
    with closing(open_summary_db(tmp_path / "s.db")) as conn, ExitStack() as opened:
        long_id = gen2_piles.store_gen2(conn, b"\x01" * 64, LONGER, b"", b"")
        lines, at = [], 0
        for line in LONGER.encode().split(b"\n"):
            lines.append([at, len(line)])
            at += len(line) + 1
        spans = json.dumps(["Grüße zuerst 🍵", *lines])
        conn.execute("INSERT INTO text_pile_gen1(blake2b512_digest, text_pile_v0_2_id, text_spans, secondary_text_spans,"
                     " big_headlines_spans_packed, big_headlines_spans_size, small_headlines_spans_packed,"
                     " small_headlines_spans_size, code_text_spans_packed, code_text_spans_size, quote_text_spans_packed,"
                     " quote_text_spans_size) VALUES (x'01', ?, ?, '[]', x'', 0, x'', 0, x'', 0, x'', 0)", (long_id, spans))
        conn.commit()
        ((pile, reader),) = main_text_readers(conn, [1], opened)
        expected = "Grüße zuerst 🍵\n" + LONGER
        assert reader.prefix(2000) == expected[:2000]
        field = reader._main
        assert field._read <= 2 * text_piles.SPANS_READ_BYTES < len(spans) // 10  # the spans' start only
        assert field._text._run.at <= 2 * gen2_piles.READ_BYTES  # and the packed text's
        assert reader.prefix(len(expected) + 5) == expected  # then all of it, exactly
        conn.execute("UPDATE text_pile_gen1 SET secondary_text_spans = CAST(x'5b22ff225d' AS TEXT) WHERE text_pile_id = 1")
        conn.execute("UPDATE text_pile_gen1 SET text_spans = '[]' WHERE text_pile_id = 1")  # to the secondary text
        conn.commit()
        ((pile, reader),) = main_text_readers(conn, [1], opened)
        with pytest.raises(sqlite3.DataError, match="could not decode to UTF-8"):  # as a TEXT read whole: an sqlite3.Error
            reader.prefix(10)
        conn.execute("UPDATE text_pile_gen1 SET text_spans = ? WHERE text_pile_id = 1", (spans,))
        conn.commit()
        monkeypatch.setattr(text_piles, "SPANS_READ_BYTES", 3)  # every element and code point cut somewhere
        ((pile, reader),) = main_text_readers(conn, [1], opened)
        assert [reader.prefix(n) for n in (1, 16, 3000, len(expected))] == [
            expected[:1], expected[:16], expected[:3000], expected]


# --- restart points: long texts read from the nearest point before a part ------------

LONGER = "\n".join(f"Zeile {i}: Grüße, 緑茶 and 🍵 at {i % 97} °C." for i in range(12000))  # about 480 KB


def test_a_long_text_is_one_zlib_stream_with_restart_points_at_code_points():
    from textpile.store.gen2_piles import BLOCK_BYTES, pack_text

    data = LONGER.encode()
    packed, size, points = pack_text(data)
    assert size == len(data) and zlib.decompress(packed) == data and unpack(packed, size) == data
    assert len(points) == len(data) // BLOCK_BYTES
    previous = 0
    for chars, byte, offset in points:
        assert 0 < byte - previous <= BLOCK_BYTES and (data[byte] & 0xC0) != 0x80  # a code point's first byte
        assert chars == len(data[:byte].decode())
        assert zlib.decompressobj(-zlib.MAX_WBITS).decompress(packed[offset:]).startswith(data[byte:byte + 4096])
        previous = byte
    assert pack_text(b"short text")[2] == [] and pack_text(LONG.encode())[:2] == pack(LONG.encode())


@pytest.mark.parametrize("step", [7, 16384])
def test_parts_of_a_long_text_read_from_the_nearest_restart_point(monkeypatch, step):
    import random

    from textpile.store.gen2_piles import BLOCK_BYTES, PackedText, pack_text

    monkeypatch.setattr(PackedText, "STEP", step)
    data = LONGER.encode()
    packed, size, points = pack_text(data)
    deep = len(LONGER) - 100
    text = PackedText(packed, size, points)
    assert text.text(deep, 50) == LONGER[deep:deep + 50]
    assert len(text.data) <= BLOCK_BYTES + 200 + step  # inflated from the last point only
    assert text.read(len(data) - 30, len(data)) == data[-30:]
    rng = random.Random(4)
    for _ in range(200 if step > 7 else 40):
        start, length = rng.randrange(len(LONGER) + 10), rng.choice([0, 1, 40, 3000, 70000])
        assert text.text(start, length) == LONGER[start:start + length], (start, length)
        begin = rng.randrange(len(data))
        assert text.read(begin, begin + 100) == data[begin:begin + 100]
    assert PackedText(packed, size).text(deep, 50) == LONGER[deep:deep + 50]  # without points: from the start


def test_stored_gen2_texts_keep_their_restart_points_and_read_back_through_the_view(tmp_path):
    from textpile.store.gen2_piles import pack_text, packed_texts, store_gen2

    with closing(open_summary_db(tmp_path / "s.db")) as conn:
        long_id = store_gen2(conn, b"\x01" * 64, LONGER, b"meta", b"")
        short_id = store_gen2(conn, b"\x02" * 64, "short", "m", b"cache")
        assert store_gen2(conn, b"\x01" * 64, "other text", b"", b"") == long_id  # once per digest
        conn.commit()
        points = pack_text(LONGER.encode())[2]
        assert conn.execute("SELECT text_pile_id, char_offset, byte_offset, packed_offset FROM text_pile_gen2_block"
                            " ORDER BY 1, 2").fetchall() == [(long_id, *p) for p in points]
        assert conn.execute("SELECT text_pile_id, text, metadata, segmentation_cache FROM text_pile_v0_2 ORDER BY 1"
                            ).fetchall() == [(long_id, LONGER, b"meta", b""), (short_id, "short", b"m", b"cache")]
        deep = len(LONGER) - 2000
        texts = packed_texts(conn, [long_id, short_id], ExitStack())
        assert [texts[long_id].text(deep, 500), texts[long_id].text(0, 9), texts[short_id].text(1, 3)] == [
            LONGER[deep:deep + 500], LONGER[:9], "hor"]


def test_restart_points_give_exact_parts_for_any_text_and_block_size(monkeypatch):
    import random

    from textpile.store import gen2_piles
    from textpile.store.gen2_piles import PackedText, pack_text

    rng = random.Random(9)
    alphabet = ["a", " ", "\n", "é", "緑", "🍵", "ß", "x" * 20]
    with_points = 0
    for _ in range(300):
        monkeypatch.setattr(gen2_piles, "BLOCK_BYTES", rng.choice([4, 5, 17, 64, 1000]))
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 400)))
        data = text.encode()
        packed, size, points = pack_text(data)
        assert unpack(packed, size) == data
        assert all(chars == len(data[:byte].decode()) for chars, byte, _ in points)
        with_points += bool(points)
        reader = PackedText(packed, size, points)
        for _ in range(5):
            start, length = rng.randrange(len(text) + 2), rng.randrange(60)
            assert reader.text(start, length) == text[start:start + length]
            begin = rng.randrange(len(data) + 2)
            assert reader.read(begin, begin + length) == data[begin:begin + length]
    assert with_points >= 100  # many texts were packed with restart points (a flush costs bytes: short texts are kept as they are)
