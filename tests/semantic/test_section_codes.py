"""Section vectors as binary codes, one packed blob per page (page_section_embedding), read
per section through the section_embedding view; an older database's int8 section_embedding
table moved on its next write-open (also after a failed or killed move)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing

import numpy as np
import pytest

from textpile.errors import DatabaseError
from textpile.semantic.embed import embed_summary, section_text
from textpile.semantic.model import DIMENSIONS
from textpile.store import embeddings
from textpile.store.database import open_summary_db
from textpile.store.embeddings import decode_bits, encode_bits, encode_vectors, int8_to_bits, pack_section_codes

from semantic.corpus import PAGES, build

#: (page, section_index, anchor, title, level, start, end) in the page's text.
SECTIONS = [
    ("sorting", 0, "key-functions", "Key functions", 2, 0, 120),
    ("sorting", 1, "stability", "Sort stability", 2, 120, 300),
    ("smtp", 0, None, "SMTP objects", 2, 0, 90),
]


def _with_sections(path, ids) -> list[tuple[int, int, str]]:
    """Add :data:`SECTIONS` to the corpus; return (section_summary_id, entity_generation_id, its embedded text)."""
    out = []
    with closing(sqlite3.connect(path)) as conn, conn:
        for page, index, anchor, title, level, start, end in SECTIONS:
            sid = conn.execute(
                "INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level, start_offset,"
                " end_offset) VALUES (?, ?, ?, ?, ?, ?, ?)", (ids[page], index, anchor, title, level, start, end)
            ).lastrowid
            out.append((sid, ids[page], section_text(PAGES[page]["title"], title, PAGES[page]["text"][start:end])))
    return out


def test_codes_are_the_signs_of_the_int8_vectors():
    v = np.array([[0.6, -0.8, 0.0, 0.001, 0.5, -0.1, 0.2, 0.3], [0.0] * 8], dtype=np.float32)
    assert encode_bits(v).tolist() == [[0b10001011], [0]]  # 0.001 rounds to int8 0: no bit
    int8 = np.frombuffer(b"".join(encode_vectors(v)), dtype=np.int8).reshape(2, 8)
    assert int8_to_bits(int8).tolist() == encode_bits(v).tolist()
    blob = pack_section_codes([2, 0], np.array([[0xFF], [0x01]], dtype=np.uint8))
    assert blob == b"\x01\x00\xff"  # section 0, a gap, section 2
    back = decode_bits(b"\x80", 8)
    assert back.tolist() == [[s / np.sqrt(np.float32(8)) for s in (1, -1, -1, -1, -1, -1, -1, -1)]]
    with pytest.raises(ValueError, match="multiple of 8"):
        int8_to_bits(np.zeros((1, 7), dtype=np.int8))
    with pytest.raises(ValueError, match="not made of 2-byte codes"):
        decode_bits(b"\x00\x00\x00", 16)


def test_each_page_keeps_its_section_codes_in_one_row(tmp_path, embedder):
    path = tmp_path / "summary.db"
    ids = build(path)
    sections = _with_sections(path, ids)
    report = embed_summary(path, embedder)
    assert report.sections_embedded == 3
    expected = encode_bits(embedder.embed([text for _, _, text in sections]))
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT * FROM section_embedding ORDER BY 1").fetchall() == [
            (sid, eg_id, expected[n].tobytes()) for n, (sid, eg_id, _) in enumerate(sections)]
        assert conn.execute("SELECT entity_generation_id, length(codes) FROM page_section_embedding ORDER BY 1"
                            ).fetchall() == sorted([(ids["sorting"], 2 * DIMENSIONS // 8), (ids["smtp"], DIMENSIONS // 8)])
        # the codes rank as the vectors do here: each section's own text finds it first
        codes = decode_bits(b"".join(r[0] for r in conn.execute("SELECT vector FROM section_embedding ORDER BY section_summary_id")),
                            DIMENSIONS)
    queries = embedder.embed([text for _, _, text in sections])
    assert np.argmax(queries @ codes.T, axis=1).tolist() == [0, 1, 2]
    # a page no longer searchable loses its section codes with its vector
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE entity_generation SET marked_duplicate = 1 WHERE entity_generation_id = ?", (ids["smtp"],))
    embed_summary(path, embedder)
    with closing(sqlite3.connect(path)) as conn:
        assert [r[0] for r in conn.execute("SELECT section_summary_id FROM section_embedding ORDER BY 1")] == [
            sections[0][0], sections[1][0]]


_OLD_TABLE = """
DROP VIEW section_embedding;
DROP TABLE page_section_embedding;
CREATE TABLE section_embedding (
    section_summary_id INTEGER NOT NULL PRIMARY KEY REFERENCES section_summary(section_summary_id),
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
    vector BLOB NOT NULL
);
CREATE INDEX section_embedding_by_generation ON section_embedding(entity_generation_id, section_summary_id);
"""


def _old_vector(n: int) -> bytes:
    return ((np.arange(DIMENSIONS) * (n + 3)) % 255 - 127).astype(np.int8).tobytes()


def _old_database(tmp_path, embedder):
    """The corpus embedded, then section_embedding as textpile made it before the codes:
    a table, an int8 vector per section (synthetic values), one row of a section gone."""
    path = tmp_path / "old.db"
    ids = build(path)
    sections = _with_sections(path, ids)
    embed_summary(path, embedder)
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(_OLD_TABLE)
        with conn:
            conn.executemany("INSERT INTO section_embedding VALUES (?, ?, ?)",
                             [(sid, eg_id, _old_vector(n)) for n, (sid, eg_id, _) in enumerate(sections)]
                             + [(99, ids["cats"], _old_vector(9))])
    expected = {sid: int8_to_bits(np.frombuffer(_old_vector(n), dtype=np.int8)[None, :])[0].tobytes()
                for n, (sid, _, _) in enumerate(sections)}
    return path, ids, expected


def test_an_older_section_table_reads_as_it_is_read_only_and_is_moved_for_writing(tmp_path, embedder):
    path, ids, expected = _old_database(tmp_path, embedder)
    with closing(open_summary_db(path, read_only=True)) as conn:
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'section_embedding'").fetchone() == ("table",)
        assert conn.execute("SELECT count(*), min(length(vector)) FROM section_embedding").fetchone() == (4, DIMENSIONS)
    with closing(open_summary_db(path)) as conn:
        assert dict(conn.execute("SELECT section_summary_id, vector FROM section_embedding")) == expected
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'section_embedding'").fetchone() == ("view",)
        assert conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%legacy%' "
                            "OR name = 'section_embedding_by_generation'").fetchall() == []
        assert conn.execute("SELECT count(*) FROM page_section_embedding").fetchone() == (2,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    report = embed_summary(path, embedder)  # the moved codes are kept
    assert (report.pages_embedded, report.pages_removed) == (0, 0)
    with closing(sqlite3.connect(path)) as conn:
        assert dict(conn.execute("SELECT section_summary_id, vector FROM section_embedding")) == expected


def test_a_failed_section_move_changes_nothing(tmp_path, embedder, monkeypatch):
    path, _, _ = _old_database(tmp_path, embedder)
    with closing(sqlite3.connect(path)) as conn:
        schema = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
        rows = conn.execute("SELECT * FROM section_embedding ORDER BY 1").fetchall()
    monkeypatch.setattr(embeddings, "pack_section_codes", lambda indexes, codes: bytes(len(indexes) * 32))
    with pytest.raises(DatabaseError, match="do not read back through the section_embedding view"):
        open_summary_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema
        assert conn.execute("SELECT * FROM section_embedding ORDER BY 1").fetchall() == rows


_KILLED_MOVE = """
import sys, time
from textpile.store import migrations
at = [m.table for m in migrations.MOVES].index("section_embedding")
move = migrations.MOVES[at]
def stop(conn, finish=move.finish):
    print("moved", finish(conn), flush=True)
    time.sleep(600)
migrations.MOVES = (*migrations.MOVES[:at], migrations.Move(move.table, move.needed, move.prepare, stop),
                    *migrations.MOVES[at + 1:])
from textpile.store.database import open_summary_db
open_summary_db(sys.argv[1])
"""


def test_a_section_move_killed_before_its_commit_is_done_again(tmp_path, embedder):
    path, _, expected = _old_database(tmp_path, embedder)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_MOVE, str(path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout.readline() == "moved 3\n"  # moved, not committed
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'section_embedding'").fetchone() == ("table",)
        assert conn.execute("SELECT count(*) FROM section_embedding").fetchone() == (4,)
    with closing(open_summary_db(path)) as conn:
        assert dict(conn.execute("SELECT section_summary_id, vector FROM section_embedding")) == expected
