"""Text Piles Gen1 stored as spans of the Gen2 text, so that each text is stored once.

Source: unobtanium-documentation.txt, pages "Text Pile Gen1" (six fields; ``text`` and
``secondary_text`` together hold all of the page's content, the other fields repeat parts
of it) and "Text Pile Gen2" (the page text in reading order). A Gen1 field is a list of
lines of the Gen2 text of the same page (the main content lines, the other lines, the
headlines, the lines inside ``pre`` ...), so textpile keeps only where those lines are.

Storage (schemas/summary/0.0.0.sql): the table ``text_pile_gen1`` holds per Gen1 text pile
its id, its digest, the Gen2 text pile its spans point into, and per field a JSON array
whose elements, joined by ``"\\n"``, give the field:

- ``[start, length]``: ``length`` bytes of the UTF-8 text ``text_pile_v0_2.text`` from
  byte ``start`` (from 0): in SQL ``CAST(substr(CAST(text AS BLOB), start + 1, length)
  AS TEXT)``. Bytes, not code points, because ``substr`` over a BLOB jumps to its offset,
  where over TEXT it walks every character before it (5x slower on big pages);
- a JSON string: that text itself (a line not found in the Gen2 text, or shorter written
  out than as a span).

The arrays of ``text`` and ``secondary_text`` are a few spans each (runs of lines), kept
as they are (``text_spans``, ``secondary_text_spans``: a snippet reads them, and packing
them would save 1-5%); the other four fields pick single lines (headlines, lines of
code, quotes), so their arrays are long: they are kept packed as the Gen2 texts are
(:func:`textpile.store.gen2_piles.pack`: ``code_text_spans_packed`` and
``code_text_spans_size`` ...), about 2.5x smaller on documentation. (A database of an
older textpile kept them plain too, ``code_text_spans`` ...: it is moved when opened for
writing, :func:`finish_spans_migration`, and read as it is otherwise.)

``text_pile`` is a view over it with the documented columns (plain SQL: ``json_each``,
``substr``, ``group_concat``), read by the FTS5 index through ``full_text_entity_source``,
by Datasette and by the sqlite3 shell as before. An ``INSERT`` into the view (plain SQL
clients) stores each field as one literal; :func:`store_gen1` stores spans.

The elements are concatenated in array order by ``group_concat`` over ``json_each``, which
SQLite 3.40 produces in that order but does not promise; :func:`store_gen1` therefore
reads each new pile back through the view and refuses to store one that does not read
back exactly (:class:`TextPileStoreError`).
"""

from __future__ import annotations

import codecs
import functools
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack

from textpile.errors import DatabaseError
from textpile.store.gen2_piles import STREAM_BYTES, PackedText, open_blob, pack, restart_points, unpack

#: The Gen1 fields, in the seed's (and the digest's) order.
GEN1_FIELDS = ("text", "secondary_text", "big_headlines", "small_headlines", "code_text", "quote_text")
#: The Gen1 fields whose spans text_pile_gen1 keeps packed (the others as plain JSON).
PACKED_FIELDS = GEN1_FIELDS[2:]
#: The columns of text_pile_gen1 that hold the fields' spans, in field order: plain JSON
#: (``text_spans``), or packed and their length (``code_text_spans_packed``, ``code_text_spans_size``).
SPAN_COLUMNS = tuple(column for name in GEN1_FIELDS for column in (
    (f"{name}_spans_packed", f"{name}_spans_size") if name in PACKED_FIELDS else (f"{name}_spans",)))
#: The columns of an older text_pile_gen1 that held the packed fields' spans as plain JSON.
LEGACY_SPAN_COLUMNS = tuple(f"{name}_spans" for name in PACKED_FIELDS)


class TextPileStoreError(DatabaseError):
    """A Gen1 text pile would not read back exactly as given through the text_pile view."""


class Gen2Lines:
    """The lines of one Gen2 text, UTF-8 encoded, with their byte offsets (for :func:`encode_field`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.starts: dict[bytes, list[int]] = {}
        position = 0
        for line in self.data.split(b"\n") if self.data else ():
            self.starts.setdefault(line, []).append(position)
            position += len(line) + 1

    def find(self, part: bytes, cursor: int) -> int:
        """Byte offset of ``part`` in the text, -1 when absent: a whole line at or after
        ``cursor`` first, then any line, then any substring at or after ``cursor``, then
        anywhere. (A match of UTF-8 in UTF-8 always starts on a character.)"""
        starts = self.starts.get(part)
        if starts:
            for start in starts:
                if start >= cursor:
                    return start
            return starts[0]
        found = self.data.find(part, cursor)
        return found if found >= 0 else self.data.find(part)


def encode_field(value: str, lines: Gen2Lines | None) -> str:
    """The JSON spans of one Gen1 field ``value`` over the Gen2 text of ``lines`` (None: no
    Gen2 text, every line is written out). Consecutive lines of the Gen2 text become one
    span; decoding (the view, or :func:`decode_field`) gives ``value`` back exactly."""
    if not value:
        return "[]"
    elements: list[list[int] | str] = []
    cursor = 0
    data = lines.data if lines is not None else b""
    for text_part in value.split("\n"):
        part = text_part.encode("utf-8")
        last = elements[-1] if elements else None
        if isinstance(last, list):
            end = last[0] + last[1]
            if part and data.startswith(b"\n" + part, end):
                last[1] += 1 + len(part)
                cursor = end + 1 + len(part)
                continue
        start = lines.find(part, cursor) if lines is not None and part else -1
        if start < 0 or len(json.dumps(text_part, ensure_ascii=False)) <= len(f"[{start},{len(part)}]"):
            elements.append(text_part)
            continue
        elements.append([start, len(part)])
        cursor = start + len(part)
    return json.dumps(elements, ensure_ascii=False, separators=(",", ":"))


def pack_spans(spans: Sequence[str]) -> list[str | bytes | int]:
    """The values of :data:`SPAN_COLUMNS` for the six fields' JSON ``spans`` (in
    :data:`GEN1_FIELDS` order): as they are, or packed and their length (:data:`PACKED_FIELDS`)."""
    if len(spans) != len(GEN1_FIELDS):
        raise ValueError(f"spans of {len(spans)} fields given, a Gen1 text pile has {len(GEN1_FIELDS)}")
    return [value for name, field in zip(GEN1_FIELDS, spans)
            for value in (pack(field.encode("utf-8")) if name in PACKED_FIELDS else (field,))]


def decode_field(spans: str, gen2_text: str | bytes | None, limit: int | None = None) -> str:
    """The field given by the JSON ``spans`` over ``gen2_text`` (what the view computes;
    the Gen2 text as str, or as its UTF-8 bytes: ``CAST(text AS BLOB)`` reads it without
    decoding all of it). With ``limit`` (characters) the field is decoded only until it
    is that long: its start, at least ``limit`` characters of it when it has them."""
    data = gen2_text if isinstance(gen2_text, bytes) else (gen2_text or "").encode("utf-8")
    parts = []
    length = 0
    for element in json.loads(spans):
        if isinstance(element, str):
            parts.append(element)
        else:
            start, size = element
            parts.append(data[start:start + size].decode("utf-8"))
        length += len(parts[-1]) + 1
        if limit is not None and length > limit:
            break
    return "\n".join(parts)


class FieldPrefix:
    """A Gen1 field given by the JSON ``spans`` over the packed Gen2 text ``gen2_text``,
    decoded from its start only as far as asked: :meth:`prefix` parses the spans, and
    inflates the text, that the code points asked for need, and a later call for more
    goes on from there (a snippet reads a page's first part, and the rest only when the
    query's words are not all in it; a long page's spans run to thousands). ``spans`` is
    the JSON text, or a handle on it in its row (:func:`textpile.store.gen2_piles.open_blob`),
    read :data:`SPANS_READ_BYTES` at a time as the parsing needs.

    Raises (from :meth:`prefix`):
        ValueError: the spans are no JSON array of strings and [start, length] pairs.
        sqlite3.DataError: streamed spans that are no UTF-8.
    """

    def __init__(self, spans: str | sqlite3.Blob, gen2_text: PackedText | None) -> None:
        if isinstance(spans, str):
            self._spans, self._blob = spans, None
        else:
            self._spans, self._blob, self._read, self._decoder = "", spans, 0, codecs.getincrementaldecoder("utf-8")()
            self._at = 0
            while "[" not in self._spans and self._read_more():
                pass
        self._at = self._spans.find("[") + 1  # where the next element of the JSON array starts
        if not self._at:
            raise ValueError(f"spans {self._spans[:40]!r}: no JSON array")
        self._text = gen2_text
        self._parts: list[str] = []
        self._count = 0  # code points of the parts read, with the line breaks between them

    def _read_more(self) -> bool:
        """Read the next part of streamed spans (what was parsed is let go); False at their end."""
        if self._blob is None:
            return False
        data = self._blob[self._read:self._read + SPANS_READ_BYTES]
        self._read += len(data)
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:  # as sqlite3 reports a TEXT value read whole
            raise sqlite3.DataError(f"spans: could not decode to UTF-8 ({exc.reason} at byte "
                                    f"{self._read - len(data) + exc.start})") from None
        self._spans = self._spans[self._at:] + text
        self._at = 0
        if not data:
            self._blob = None
        return bool(data)

    def _next_element(self) -> str | list[int] | None:
        """The next element of the spans array, None after the last."""
        while True:
            spans, at = self._spans, self._at
            try:
                while spans[at] in " \n\t\r,":
                    at += 1
                if spans[at] == "]":
                    self._at = at
                    return None
                element, self._at = _JSON.raw_decode(spans, at)
                return element
            except (IndexError, json.JSONDecodeError):
                # the end of what was read: a part of streamed spans cuts an element
                self._at = at
                if not self._read_more():
                    raise ValueError(f"spans: no JSON array of text elements and spans at {at}") from None

    def prefix(self, chars: int) -> str:
        """The field's first ``chars`` code points (all of it when it is shorter):
        ``decode_field(spans, text)[:chars]``."""
        parts = self._parts
        while self._count < chars:
            element = self._next_element()
            if element is None:
                break
            if parts:
                self._count += 1  # the line break before it
            if isinstance(element, str):
                part = element
            else:
                start, length = element
                part = self._text.read(start, start + length).decode("utf-8") if self._text is not None else ""
            parts.append(part)
            self._count += len(part)
        return "\n".join(parts)[:chars]


#: Parses one JSON value at a time (the spans of :class:`FieldPrefix`).
_JSON = json.JSONDecoder()
#: Bytes of streamed spans read at a time (:class:`FieldPrefix`).
SPANS_READ_BYTES = 8192


class MainText:
    """A Gen1 pile's main text, else (when that is empty) its secondary text, as the
    ``text_pile`` view gives them, read from its start as far as asked (:class:`FieldPrefix`).
    ``secondary_spans`` is the JSON, or a function giving a handle on it, called only when
    the main text is empty."""

    def __init__(self, text_spans: str | sqlite3.Blob, secondary_spans: str | Callable[[], sqlite3.Blob],
                 gen2_text: PackedText | None) -> None:
        self._main = FieldPrefix(text_spans, gen2_text)
        self._secondary = secondary_spans
        self._gen2_text = gen2_text

    def prefix(self, chars: int) -> str:
        """The first ``chars`` code points (``chars`` >= 1 tells an empty main text)."""
        got = self._main.prefix(chars)
        if not got and chars > 0 and self._secondary is not None:
            secondary = self._secondary if isinstance(self._secondary, str) else self._secondary()
            self._main = FieldPrefix(secondary, self._gen2_text)  # the main text is empty
            self._secondary = None
            got = self._main.prefix(chars)
        return got


def main_text_readers(conn: sqlite3.Connection, piles: Sequence[int],
                      opened: ExitStack) -> Iterator[tuple[int, MainText]]:
    """Yield ``(text_pile_id, reader)`` for the Gen1 ``piles``: a :class:`MainText` of
    each pile, reading each packed Gen2 text once and only as far as its reader is asked;
    a pile whose packed Gen2 text is longer than
    :data:`textpile.store.gen2_piles.STREAM_BYTES` has it and its spans read from their rows
    as far as needed, through handles that ``opened`` closes. Needs ``text_pile_gen2``
    (:func:`textpile.store.gen2_piles.has_packed_texts`).

    Raises:
        sqlite3.Error: database problems.
    """
    marks = ", ".join("?" * len(piles))
    big = "length(g2.text_packed) > ?"  # a BLOB's length: its row's header, not its bytes
    rows = []
    for pile, text_spans, secondary_spans, gen2, packed, size, streamed in conn.execute(
            f"SELECT g1.text_pile_id, CASE WHEN {big} THEN NULL ELSE g1.text_spans END,"
            f" CASE WHEN {big} THEN NULL ELSE g1.secondary_text_spans END, g2.text_pile_id,"
            f" CASE WHEN {big} THEN NULL ELSE g2.text_packed END, g2.text_size, coalesce({big}, 0) "
            "FROM text_pile_gen1 g1 LEFT JOIN text_pile_gen2 g2 ON g2.text_pile_id = g1.text_pile_v0_2_id "
            f"WHERE g1.text_pile_id IN ({marks})", [STREAM_BYTES] * 4 + list(piles)):
        if streamed:  # opened while the statement runs: the handles read the rows it read
            text_spans = open_blob(conn, "text_pile_gen1", "text_spans", pile, opened)
            secondary_spans = functools.partial(open_blob, conn, "text_pile_gen1", "secondary_text_spans", pile, opened)
            packed = open_blob(conn, "text_pile_gen2", "text_packed", gen2, opened)
        rows.append((pile, text_spans, secondary_spans, gen2, packed, size))
    points = restart_points(conn, [row[3] for row in rows if row[3] is not None])
    for pile, text_spans, secondary_spans, gen2, packed, size in rows:
        text = PackedText(packed, size, points.get(gen2, ())) if packed is not None else None
        yield pile, MainText(text_spans, secondary_spans, text)


#: The columns of text_pile_gen1 :func:`read_gen1` reads, in :data:`GEN1_FIELDS` order.
_GEN1_READ_SQL = (f"SELECT g1.text_pile_id, {', '.join('g1.' + c for c in SPAN_COLUMNS)}, g2.text_packed, g2.text_size "
                  "FROM text_pile_gen1 g1 LEFT JOIN text_pile_gen2 g2 ON g2.text_pile_id = g1.text_pile_v0_2_id "
                  "WHERE g1.text_pile_id IN (SELECT value FROM json_each(?))")


def _view_field(spans: str | None, data: bytes | None) -> str:
    """One field as the text_pile view computes it from its JSON ``spans`` and the UTF-8
    Gen2 text ``data``: the elements joined by line breaks, an element written out as it
    is and a span as its bytes of ``data``; a span over no Gen2 text (None) is NULL in the
    view, and ``group_concat`` leaves it out."""
    if not spans:
        return ""
    return "\n".join(element if isinstance(element, str) else data[element[0]:element[0] + element[1]].decode("utf-8")
                     for element in json.loads(spans) if isinstance(element, str) or data is not None)


def read_gen1(conn: sqlite3.Connection, piles: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The six :data:`GEN1_FIELDS` of each Gen1 text pile of ``piles`` (text_pile_id ->
    fields; a pile not stored is left out), as the ``text_pile`` view gives them, decoded in
    Python: each pile's Gen2 text is unpacked once, where the view unpacks it (through
    ``sqlar_uncompress``, a call into Python) for every span of every field, about 0.3
    against 0.13 ms a page of the growth corpus. :func:`store_gen1` stores a pile only when
    it reads back through the view as given, so both give the same fields. Needs the
    current layout of text_pile_gen1 (a database opened for writing has it:
    :func:`finish_spans_migration`).

    Raises:
        ValueError: a packed value does not unpack (``sqlar_uncompress`` refuses it too).
    """
    out: dict[int, tuple[str, ...]] = {}
    for pile, *values in conn.execute(_GEN1_READ_SQL, (json.dumps(list(piles)),)):
        gen2_packed, gen2_size = values[-2:]
        data = unpack(gen2_packed, gen2_size) if gen2_packed is not None else None
        if isinstance(data, str):  # a value SQLite holds as TEXT: its UTF-8 bytes, as CAST AS BLOB
            data = data.encode("utf-8")
        fields, at = [], 0
        for name in GEN1_FIELDS:
            if name in PACKED_FIELDS:
                spans = unpack(values[at], values[at + 1])
                at += 2
            else:
                spans, at = values[at], at + 1
            fields.append(_view_field(spans.decode("utf-8") if isinstance(spans, bytes) else spans, data))
        out[pile] = tuple(fields)
    return out


def store_gen1(conn: sqlite3.Connection, digest: bytes, fields: Sequence[str], gen2_id: int | None,
               gen2_text: str | None) -> int:
    """Store the Gen1 text pile ``fields`` (the six :data:`GEN1_FIELDS`, in order) with its
    ``digest`` once, as spans of the Gen2 text pile ``gen2_id`` whose text is ``gen2_text``
    (both None: written out); return its text_pile_id (the existing one when the digest is
    stored already). Runs inside the caller's transaction.

    Raises:
        TextPileStoreError: the pile would not read back as ``fields`` through the view.
    """
    row = conn.execute("SELECT text_pile_id FROM text_pile_gen1 WHERE blake2b512_digest = ?", (digest,)).fetchone()
    if row is not None:
        return row[0]
    if gen2_text is None or gen2_id is None:
        gen2_id, lines = None, None
    else:
        lines = Gen2Lines(gen2_text)
    spans = [encode_field(value, lines) for value in fields]
    pile_id = conn.execute(
        f"INSERT INTO text_pile_gen1(blake2b512_digest, text_pile_v0_2_id, {', '.join(SPAN_COLUMNS)})"
        f" VALUES (?, ?{', ?' * len(SPAN_COLUMNS)})", (digest, gen2_id, *pack_spans(spans))).lastrowid
    stored = conn.execute(f"SELECT {', '.join(GEN1_FIELDS)} FROM text_pile WHERE text_pile_id = ?",
                          (pile_id,)).fetchone()
    if tuple(stored) != tuple(fields):
        wrong = [name for name, a, b in zip(GEN1_FIELDS, stored, fields) if a != b]
        raise TextPileStoreError(
            f"text pile {digest.hex()[:16]}: {', '.join(wrong)} would not read back through the text_pile view "
            f"(SQLite {sqlite3.sqlite_version}); nothing stored")
    return pile_id


_LEGACY_GEN2 = """
SELECT tp.text_pile_id, tp.blake2b512_digest, {fields},
       (SELECT eg.text_pile_v0_2_id FROM entity_generation eg
        WHERE eg.text_pile_id = tp.text_pile_id AND eg.text_pile_v0_2_id IS NOT NULL
        ORDER BY eg.entity_generation_id LIMIT 1) AS gen2_id
FROM text_pile_legacy tp ORDER BY tp.text_pile_id
""".format(fields=", ".join(f"tp.{name}" for name in GEN1_FIELDS))


def finish_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made text_pile_gen1 and the view: every old pile as spans
    of the Gen2 text of the first generation that has both piles (ids kept), each checked
    to read back exactly through the view, then the old table dropped; return the piles moved.

    Raises:
        TextPileStoreError: a pile would not read back exactly (nothing is changed).
    """
    rows = conn.execute(_LEGACY_GEN2).fetchall()
    gen2_texts: dict[int, str] = {}
    for pile_id, digest, *fields, gen2_id in rows:
        gen2_text = None
        if gen2_id is not None:
            gen2_text = gen2_texts.get(gen2_id)
            if gen2_text is None:
                gen2_texts.clear()
                gen2_text = gen2_texts[gen2_id] = conn.execute(
                    "SELECT text FROM text_pile_v0_2 WHERE text_pile_id = ?", (gen2_id,)).fetchone()[0]
        lines = Gen2Lines(gen2_text) if gen2_text is not None else None
        spans = [encode_field(value, lines) for value in fields]
        if [decode_field(s, gen2_text) for s in spans] != fields:
            raise TextPileStoreError(f"text pile {pile_id}: its spans would not give its text back; nothing changed")
        conn.execute(
            f"INSERT INTO text_pile_gen1(text_pile_id, blake2b512_digest, text_pile_v0_2_id, {', '.join(SPAN_COLUMNS)})"
            f" VALUES (?, ?, ?{', ?' * len(SPAN_COLUMNS)})", (pile_id, digest, gen2_id if lines else None,
                                                           *pack_spans(spans)))
    different = conn.execute(
        "SELECT count(*) FROM text_pile_legacy o LEFT JOIN text_pile n USING (text_pile_id) WHERE n.text_pile_id IS NULL"
        " OR " + " OR ".join(f"o.{name} IS NOT n.{name}" for name in ("blake2b512_digest", *GEN1_FIELDS))).fetchone()[0]
    if different:
        raise TextPileStoreError(f"{different} text piles would not read back through the text_pile view "
                                 f"(SQLite {sqlite3.sqlite_version}); nothing changed")
    conn.execute("DROP TABLE text_pile_legacy")
    return len(rows)


def spans_need_migration(conn: sqlite3.Connection) -> bool:
    """True when ``conn``'s text_pile_gen1 keeps every field's spans as plain JSON (made by
    a textpile before the spans of :data:`PACKED_FIELDS` were packed)."""
    return conn.execute("SELECT 1 FROM pragma_table_info('text_pile_gen1') WHERE name = 'code_text_spans'").fetchone() \
        is not None


def finish_spans_migration(conn: sqlite3.Connection) -> int:
    """Step 2 of packing an older text_pile_gen1 (set aside as ``text_pile_gen1_legacy``,
    :func:`textpile.store.migrations.set_aside`), after the schema made the new table and
    the view: every row copied with the spans of :data:`PACKED_FIELDS` packed (ids,
    digests, Gen2 references and the other spans kept), each checked to unpack to exactly
    the old column, then the old table dropped; return the rows moved.

    Raises:
        TextPileStoreError: a row would not unpack exactly (nothing is changed: the caller rolls back).
    """
    values = ", ".join(f"sqlar_compress(CAST(o.{column} AS BLOB)), length(CAST(o.{column} AS BLOB))"
                       if column in LEGACY_SPAN_COLUMNS else f"o.{column}" for column in (
                           f"{name}_spans" for name in GEN1_FIELDS))
    conn.execute(f"INSERT INTO text_pile_gen1(text_pile_id, blake2b512_digest, text_pile_v0_2_id, {', '.join(SPAN_COLUMNS)})"
                 f" SELECT o.text_pile_id, o.blake2b512_digest, o.text_pile_v0_2_id, {values}"
                 " FROM text_pile_gen1_legacy o ORDER BY o.text_pile_id")
    unpacked = " OR ".join(f"CAST(sqlar_uncompress(n.{column}_packed, n.{column}_size) AS TEXT) IS NOT o.{column}"
                           for column in LEGACY_SPAN_COLUMNS)
    different = conn.execute(
        "SELECT count(*) FROM text_pile_gen1_legacy o LEFT JOIN text_pile_gen1 n USING (text_pile_id)"
        " WHERE n.text_pile_id IS NULL OR n.blake2b512_digest IS NOT o.blake2b512_digest"
        " OR n.text_pile_v0_2_id IS NOT o.text_pile_v0_2_id OR n.text_spans IS NOT o.text_spans"
        f" OR n.secondary_text_spans IS NOT o.secondary_text_spans OR {unpacked}").fetchone()[0]
    if different:
        raise TextPileStoreError(f"text_pile_gen1: {different} text piles would not read back packed; nothing changed")
    moved = conn.execute("SELECT count(*) FROM text_pile_gen1_legacy").fetchone()[0]
    conn.execute("DROP TABLE text_pile_gen1_legacy")
    return moved
