"""The summary database read by other SQLite tools (issue 31): the text_pile view, which
unpacks the stored texts with sqlar_uncompress, reads the same in sqlite-utils (textpile's
sqlite-utils plugin), a plain `datasette summary.db` (textpile's Datasette plugin) and
Python's sqlite3 with the README's three lines; a NULL in a documented NOT NULL column is
refused on insert, and a database made before keeps no trigger that accepted one."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from search.builder import sample_site
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import register_functions

BIN = Path(sys.executable).parent
README = Path(__file__).resolve().parents[1] / "README.md"


def command(name: str, module: str) -> list[str]:
    """The command ``name`` installed beside this Python (``python -m module`` in an
    environment that borrows its packages: tests/web/test_datasette_1.py)."""
    script = BIN / name
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


@pytest.fixture(scope="module")
def summary(tmp_path_factory) -> tuple[Path, list[str]]:
    """A summary database of the sample site, and its text piles' text as textpile reads them."""
    path = tmp_path_factory.mktemp("tools") / "summary.db"
    sample_site(path)
    with closing(register_functions(sqlite3.connect(path))) as conn:
        texts = [row[0] for row in conn.execute("SELECT text FROM text_pile ORDER BY text_pile_id")]
    assert len(texts) >= 5 and all(texts)
    return path, texts


def test_sqlite_utils_query_reads_text_pile(summary):
    path, texts = summary
    run = subprocess.run([*command("sqlite-utils", "sqlite_utils"), "query", str(path),
                          "select text from text_pile order by text_pile_id"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [row["text"] for row in json.loads(run.stdout)] == texts


def test_a_plain_datasette_reads_text_pile(summary):
    path, texts = summary
    run = subprocess.run([*command("datasette", "datasette"), str(path), "--get",
                          "/summary/text_pile.json?_shape=array&_col=text&_sort=text_pile_id&_size=max"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [row["text"] for row in json.loads(run.stdout)] == texts


def test_python_sqlite3_reads_text_pile_with_the_readmes_three_lines(summary):
    path, texts = summary
    [block] = [b for b in re.findall(r"```python\n(.*?)```", README.read_text("utf-8"), flags=re.S)
               if "sqlar_uncompress" in b]
    lines = block.strip().splitlines()
    assert len(lines) == 3
    scope: dict = {}
    exec(block.replace('"summary.db"', repr(str(path))), scope)  # noqa: S102 (the README's own code)
    with closing(scope["conn"]) as conn:
        assert [row[0] for row in conn.execute("SELECT text FROM text_pile ORDER BY text_pile_id")] == texts
        assert conn.execute("SELECT count(*) FROM text_pile_v0_2 WHERE text IS NULL").fetchone() == (0,)


def test_without_the_function_the_error_names_it(summary):
    path, _texts = summary
    with closing(sqlite3.connect(path)) as conn, pytest.raises(sqlite3.OperationalError,
                                                                match="no such function: sqlar_uncompress"):
        conn.execute("SELECT text FROM text_pile").fetchall()


GEN1 = ("blake2b512_digest", "text", "secondary_text", "big_headlines", "small_headlines", "code_text", "quote_text")
GEN2 = ("blake2b512_digest", "text", "metadata", "segmentation_cache")


@pytest.mark.parametrize("column", GEN1)
def test_a_null_field_inserted_into_text_pile_is_refused(tmp_path, column):
    conn = open_summary_db(tmp_path / "s.db")
    values = {name: "" for name in GEN1} | {"blake2b512_digest": b"\x01" * 64, column: None}
    with pytest.raises(sqlite3.IntegrityError, match=rf"^NOT NULL constraint failed: text_pile\.{column}$"):
        conn.execute(f"INSERT INTO text_pile({', '.join(GEN1)}) VALUES ({', '.join('?' * len(GEN1))})",
                     [values[name] for name in GEN1])
    assert conn.execute("SELECT count(*) FROM text_pile_gen1").fetchone() == (0,)
    values[column] = b"" if column == "blake2b512_digest" else ""
    conn.execute(f"INSERT INTO text_pile({', '.join(GEN1)}) VALUES ({', '.join('?' * len(GEN1))})",
                 [values[name] for name in GEN1])
    assert conn.execute("SELECT text, quote_text FROM text_pile").fetchone() == ("", "")
    conn.close()


@pytest.mark.parametrize("column", GEN2)
def test_a_null_field_inserted_into_text_pile_v0_2_is_refused(tmp_path, column):
    conn = open_summary_db(tmp_path / "s.db")
    values = {"blake2b512_digest": b"\x02" * 64, "text": "Hello", "metadata": b"", "segmentation_cache": b""}
    values[column] = None
    with pytest.raises(sqlite3.IntegrityError, match=rf"^NOT NULL constraint failed: text_pile_v0_2\.{column}$"):
        conn.execute(f"INSERT INTO text_pile_v0_2({', '.join(GEN2)}) VALUES (?, ?, ?, ?)",
                     [values[name] for name in GEN2])
    assert conn.execute("SELECT count(*) FROM text_pile_gen2").fetchone() == (0,)
    conn.close()


def test_an_older_databases_insert_trigger_is_made_again_when_opened_for_writing(tmp_path):
    path = tmp_path / "old.db"
    open_summary_db(path).close()
    with closing(sqlite3.connect(path)) as conn:  # the trigger as textpile made it before issue 31
        conn.execute("DROP TRIGGER text_pile_insert")
        conn.execute("CREATE TRIGGER text_pile_insert INSTEAD OF INSERT ON text_pile BEGIN "
                     "INSERT INTO text_pile_gen1(blake2b512_digest, text_spans, secondary_text_spans, "
                     "big_headlines_spans_packed, big_headlines_spans_size, small_headlines_spans_packed, "
                     "small_headlines_spans_size, code_text_spans_packed, code_text_spans_size, "
                     "quote_text_spans_packed, quote_text_spans_size) VALUES (NEW.blake2b512_digest, "
                     "json_array(NEW.text), '[]', x'', 0, x'', 0, x'', 0, x'', 0); END")
        conn.commit()
    with closing(open_summary_db(path, read_only=True)) as reader:  # read-only: read as it is
        assert "RAISE" not in reader.execute("SELECT sql FROM sqlite_master WHERE name = 'text_pile_insert'").fetchone()[0]
    conn = open_summary_db(path)
    assert "RAISE(ABORT, 'NOT NULL constraint failed: text_pile.text')" in conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'text_pile_insert'").fetchone()[0]
    with pytest.raises(sqlite3.IntegrityError, match="text_pile.text"):
        conn.execute("INSERT INTO text_pile VALUES (1, x'03', NULL, '', '', '', '', '')")
    conn.close()
