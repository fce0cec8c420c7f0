"""Text Piles Gen2 stored compressed: the documented ``text_pile_v0_2`` as a view.

Source: unobtanium-documentation.txt, page "Summary Database" (text_pile_v0_2: text,
metadata and segmentation_cache of each Gen2 text pile, once per digest). The Gen2 text
is the only copy of a page's text (the Gen1 ``text_pile`` is spans of it, the FTS index
reads it through external content), and documentation text compresses about 3x.

Storage (schemas/summary/0.0.0.sql): the table ``text_pile_gen2`` keeps each value
*packed* as the SQLite archive format (sqlar, sqlite.org/sqlar.html) keeps a file: the
zlib stream (RFC 1950, :func:`zlib.compress`) of its bytes beside their length in bytes,
or the bytes themselves when compressing would not make them shorter (then the two
lengths are equal). ``sqlar_uncompress(packed, size)`` gives the value back. The sqlite3
shell has that function built in (when built with zlib, as Debian's and Homebrew's are);
textpile registers the same function on its connections (:func:`register_functions`:
:mod:`textpile.store.database`, the web frontend, :func:`textpile.search.engine.search`),
so Datasette, the sqlite3 shell, FTS5 external content and textpile's readers read
``text_pile_v0_2`` and ``text_pile`` as before. An ``INSERT`` into the view (the
integration's, or any client's) packs the values with ``sqlar_compress``, the shell's
other sqlar function, through an INSTEAD OF trigger. A plain Python ``sqlite3``
connection must call :func:`register_functions` first, else any statement reading the
view fails with "no such function: sqlar_uncompress".
"""

from __future__ import annotations

import codecs
import sqlite3
import zlib
from collections.abc import Iterator, Sequence

#: The names under which the sqlite3 shell (sqlar) and textpile provide unpacking and packing.
UNPACK_FUNCTION = "sqlar_uncompress"
PACK_FUNCTION = "sqlar_compress"
#: zlib's compression level (6, its default: level 9 is 20% slower for 0.2% less on
#: documentation text).
PACK_LEVEL = 6
#: Unpacked values a connection keeps, newest first: the text_pile view unpacks the same
#: Gen2 text once per span of each field; the shell does the work again each time.
_CACHED = 4


def pack(value: bytes) -> tuple[bytes, int]:
    """``(packed, size)`` of ``value``: its zlib stream when shorter, else ``value`` itself;
    ``size`` is ``len(value)`` (``sqlar_uncompress(packed, size)`` gives ``value`` back)."""
    packed = zlib.compress(value, PACK_LEVEL)
    return (packed, len(value)) if len(packed) < len(value) else (bytes(value), len(value))


def unpack(packed: bytes | str | None, size: int | None, *, max_size: int | None = None) -> bytes | str | None:
    """The value of ``packed`` with ``size`` bytes, as the sqlite3 shell's ``sqlar_uncompress``
    computes it: ``packed`` itself when ``size`` is at most 0 or its length (stored as it
    is), else its zlib stream inflated to at most ``size`` bytes.

    Raises:
        ValueError: ``size`` is above ``max_size``, or ``packed`` is no zlib stream of at
            most ``size`` bytes (in SQL: the statement fails with that message).
    """
    if packed is None or size is None:
        return packed
    if size <= 0 or size == len(packed):
        return packed
    if isinstance(packed, str):
        packed = packed.encode("utf-8")
    if max_size is not None and size > max_size:
        raise ValueError(f"{UNPACK_FUNCTION}: {size} bytes is above this connection's limit of {max_size}")
    inflater = zlib.decompressobj()
    try:
        value = inflater.decompress(packed, size)
    except zlib.error as exc:
        raise ValueError(f"{UNPACK_FUNCTION}: not a zlib stream ({exc})") from exc
    if not inflater.eof:
        raise ValueError(f"{UNPACK_FUNCTION}: the zlib stream is longer than {size} bytes, or cut short")
    return value


class _Unpacker:
    """``sqlar_uncompress`` for one connection: :func:`unpack`, remembering the last few
    values (a view reads the same packed text many times within one statement)."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.cache: list[tuple[bytes, int, bytes]] = []

    def __call__(self, packed, size):
        if isinstance(packed, bytes) and isinstance(size, int) and 0 < size != len(packed):
            for entry in self.cache:
                if entry[1] == size and entry[0] == packed:
                    return entry[2]
            value = unpack(packed, size, max_size=self.max_size)
            self.cache.insert(0, (packed, size, value))
            del self.cache[_CACHED:]
            return value
        return unpack(packed, size, max_size=self.max_size)


def pack_value(value):
    """``sqlar_compress(value)``, as the sqlite3 shell computes it: the packed form of a
    BLOB (:func:`pack`), any other value unchanged."""
    return pack(value)[0] if isinstance(value, bytes) else value


def register_functions(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Give ``conn`` the SQL functions of the sqlite3 shell's sqlar extension that the
    ``text_pile_v0_2`` and ``text_pile`` views and the view's insert trigger use:
    ``sqlar_uncompress(packed, size)`` (:func:`unpack`; values up to the connection's
    ``SQLITE_LIMIT_LENGTH`` at the time of the call) and ``sqlar_compress(value)``
    (:func:`pack_value`); return ``conn``. Calling it again replaces them (for instance
    after lowering the length limit)."""
    conn.create_function(UNPACK_FUNCTION, 2, _Unpacker(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)),
                         deterministic=True)
    conn.create_function(PACK_FUNCTION, 1, pack_value, deterministic=True)
    return conn


def ensure_functions(conn: sqlite3.Connection) -> sqlite3.Connection:
    """:func:`register_functions` unless ``conn`` has ``sqlar_uncompress`` already (a search
    calls this every time: registering a function again expires every prepared statement of
    the connection, so each search would prepare all its statements again, about 2 M
    instructions); return ``conn``."""
    try:
        conn.execute(f"SELECT {UNPACK_FUNCTION}(NULL, 0)").fetchone()  # fails only when it is missing
    except sqlite3.OperationalError:
        register_functions(conn)
    return conn


class PackedText:
    """One packed value (see :func:`pack`) read from its start, inflated only as far as
    asked: a snippet needs a part of a page's text, not all of it."""

    #: Bytes inflated at least per step.
    STEP = 16384

    def __init__(self, packed: bytes, size: int) -> None:
        self.data = bytearray()
        self.inflater = None
        self.pending = b""
        if size <= 0 or size == len(packed):
            self.data += packed
        else:
            self.inflater = zlib.decompressobj()
            self.pending = packed
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.chars: list[str] = []
        self.char_count = 0
        self.decoded_bytes = 0

    def _inflate(self, nbytes: int) -> None:
        """Inflate until the first ``nbytes`` bytes are there (or the whole value is)."""
        while self.inflater is not None and len(self.data) < nbytes:
            self.data += self.inflater.decompress(self.pending, max(nbytes - len(self.data), self.STEP))
            self.pending = self.inflater.unconsumed_tail
            if self.inflater.eof or not self.pending:
                self.inflater = None

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (from 0, ``end`` exclusive) of the value: fewer when
        it is shorter."""
        self._inflate(end)
        return bytes(self.data[start:end])

    def text(self, start: int, length: int) -> str:
        """Code points ``start`` to ``start + length`` (from 0) of the value read as UTF-8:
        ``text[start:start + length]`` of the whole text."""
        end = start + length
        while self.char_count < end:
            data = self.read(self.decoded_bytes, self.decoded_bytes + max(end - self.char_count, self.STEP))
            if not data:  # the end of the value
                break
            part = self.decoder.decode(data)
            self.decoded_bytes += len(data)
            self.chars.append(part)
            self.char_count += len(part)
        return "".join(self.chars)[start:end]


def gen2_text_parts(conn: sqlite3.Connection, wanted: Sequence[tuple[object, int, int, int]]) -> Iterator[tuple[object, str]]:
    """For each ``(key, gen2_id, start, length)`` of ``wanted``: ``(key, part)``, the code
    points ``start`` (from 0) to ``start + length`` of that Gen2 pile's text (SQL
    ``substr(text, start + 1, length)``), inflating each text only as far as the parts
    asked of it reach. Piles that do not exist give nothing. Needs ``text_pile_gen2``
    (a database textpile moved or made; check with :func:`has_packed_texts`)."""
    by_pile: dict[int, list[tuple[object, int, int]]] = {}
    for key, pile, start, length in wanted:
        by_pile.setdefault(pile, []).append((key, start, length))
    if not by_pile:
        return
    marks = ", ".join("?" * len(by_pile))
    for pile, packed, size in conn.execute(
            f"SELECT text_pile_id, text_packed, text_size FROM text_pile_gen2 WHERE text_pile_id IN ({marks})",
            list(by_pile)):
        text = PackedText(packed, size)
        for key, start, length in by_pile[pile]:
            yield key, text.text(start, length)


def has_packed_texts(conn: sqlite3.Connection) -> bool:
    """True when the database keeps its Gen2 texts packed in ``text_pile_gen2`` (else
    ``text_pile_v0_2`` is a table of an older textpile, opened read-only)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'text_pile_gen2'").fetchone() is not None


def finish_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made text_pile_gen2 and the view: every old row inserted
    into the view (ids kept; its trigger packs them), checked to read back exactly through
    it, then the old table dropped; return the rows moved.

    Raises:
        sqlite3.IntegrityError: a row would not read back exactly (nothing is changed).
    """
    conn.execute("INSERT INTO text_pile_v0_2(text_pile_id, blake2b512_digest, text, metadata, segmentation_cache)"
                 " SELECT text_pile_id, blake2b512_digest, text, metadata, segmentation_cache"
                 " FROM text_pile_v0_2_legacy ORDER BY text_pile_id")
    moved = conn.execute("SELECT count(*) FROM text_pile_v0_2_legacy").fetchone()[0]
    different = conn.execute(
        "SELECT count(*) FROM text_pile_v0_2_legacy o LEFT JOIN text_pile_v0_2 n USING (text_pile_id)"
        " WHERE n.text_pile_id IS NULL OR o.blake2b512_digest IS NOT n.blake2b512_digest OR o.text IS NOT n.text"
        " OR o.metadata IS NOT n.metadata OR o.segmentation_cache IS NOT n.segmentation_cache").fetchone()[0]
    if different:
        raise sqlite3.IntegrityError(f"text_pile_v0_2: {different} text piles would not read back through the view;"
                                     " not moving them")
    conn.execute("DROP TABLE text_pile_v0_2_legacy")
    return moved
