"""Text Piles Gen2 stored compressed: the documented ``text_pile_v0_2`` as a view.

Source: unobtanium-documentation.txt, page "Summary Database" (text_pile_v0_2: text,
metadata and segmentation_cache of each Gen2 text pile, once per digest). The Gen2 text
is the only copy of a page's text (the Gen1 ``text_pile`` is spans of it, the FTS index
reads it through external content), and documentation text compresses about 3x.

Storage (schemas/summary/0.0.0.sql): the table ``text_pile_gen2`` keeps each value
*packed* as the SQLite archive format (sqlar, sqlite.org/sqlar.html) keeps a file: the
zlib stream (RFC 1950; written by libdeflate, :func:`pack`) of its bytes beside their length in bytes,
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

import bisect
import codecs
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from contextlib import ExitStack

import deflate

#: The names under which the sqlite3 shell (sqlar) and textpile provide unpacking and packing.
UNPACK_FUNCTION = "sqlar_uncompress"
PACK_FUNCTION = "sqlar_compress"
#: The compression level of a value packed whole (:func:`pack`): libdeflate's level 6. Its
#: level 10 (the first with near-optimal parsing) packs the metadata, segmentation caches
#: and link lists of 1,000 pages of the growth corpus 2.8% smaller (1.15 against 1.18 MB of
#: 3.9 MB) at 5x the CPU time (0.50 against 0.10 CPU-s): a summarize packs every new page's
#: values, and a run's CPU should follow what changed. libdeflate writes a standard zlib
#: stream (RFC 1950), so any inflater (zlib, the sqlite3 shell's ``sqlar_uncompress``)
#: reads it.
PACK_LEVEL = 6
#: zlib's compression level for a long text packed with restart points (:func:`pack_text`:
#: libdeflate cannot flush a stream midway): its default.
STREAM_LEVEL = 6
#: Unpacked values a connection keeps, the most recently used first: the text_pile view
#: unpacks the same Gen2 text once per span of each field, between the fields' own spans
#: (packed too); the shell does the work again each time.
_CACHED = 4


def pack(value: bytes, level: int = PACK_LEVEL) -> tuple[bytes, int]:
    """``(packed, size)`` of ``value``: its zlib stream (libdeflate, compression ``level``)
    when shorter, else ``value`` itself; ``size`` is ``len(value)`` (``sqlar_uncompress(packed,
    size)`` gives ``value`` back)."""
    packed = bytes(deflate.zlib_compress(value, level))
    return (packed, len(value)) if len(packed) < len(value) else (bytes(value), len(value))


#: A text longer than this many UTF-8 bytes is packed with a restart point about every
#: this many bytes (zlib's full flush, at a code point's first byte; text_pile_gen2_block
#: keeps each point's offsets): a reader of a part deep in a long text inflates it from the
#: nearest point before that part. The stream stays one zlib stream (``sqlar_uncompress``
#: reads it whole); each point costs the compression history before it (the long texts
#: of the 100K-page bench corpus pack 5.7% larger, 0.12% of its database).
BLOCK_BYTES = 65536
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))

RestartPoint = tuple[int, int, int]  # (code points before it, bytes before it, packed bytes before it)


def pack_text(value: bytes) -> tuple[bytes, int, list[RestartPoint]]:
    """``(packed, size, points)`` of the UTF-8 text ``value``: as :func:`pack` gives them
    (``sqlar_uncompress(packed, size)`` is ``value``), but for a text longer than
    :data:`BLOCK_BYTES` the zlib stream restarts (a full flush: the deflate stream goes on
    at a byte boundary without history) after about every :data:`BLOCK_BYTES` bytes of
    text, at a code point's first byte; ``points`` are the restart points, in order
    (none when the value is short or kept as it is). From ``packed[p:]`` for a point's
    packed offset ``p`` a raw deflate inflater (``wbits=-15``) gives the rest of the text."""
    if len(value) <= BLOCK_BYTES:
        packed, size = pack(value)
        return packed, size, []
    compressor = zlib.compressobj(STREAM_LEVEL)
    pieces: list[bytes] = []
    points: list[RestartPoint] = []
    start = chars = packed_bytes = 0
    while start < len(value):
        end = min(start + BLOCK_BYTES, len(value))
        while end < len(value) and 0x80 <= value[end] < 0xC0:  # not inside a code point
            end -= 1
        chunk = value[start:end]
        chars += len(chunk.translate(None, _CONTINUATION_BYTES))
        piece = compressor.compress(chunk)
        if end < len(value):
            piece += compressor.flush(zlib.Z_FULL_FLUSH)
            packed_bytes += len(piece)
            points.append((chars, end, packed_bytes))
        else:
            piece += compressor.flush()
        pieces.append(piece)
        start = end
    packed = b"".join(pieces)
    if len(packed) >= len(value):
        return bytes(value), len(value), []
    return packed, len(value), points


def store_gen2(conn: sqlite3.Connection, digest: bytes, text: str | bytes, metadata: bytes,
               segmentation_cache: bytes) -> int:
    """Store a Gen2 text pile once per ``digest`` (as ``INSERT OR IGNORE INTO
    text_pile_v0_2`` would: an existing digest keeps its row) and return its
    text_pile_id; the text is packed with :func:`pack_text` and its restart points go to
    ``text_pile_gen2_block``. Runs inside the caller's transaction."""
    row = conn.execute("SELECT text_pile_id FROM text_pile_gen2 WHERE blake2b512_digest = ?", (digest,)).fetchone()
    if row is not None:
        return row[0]
    text, metadata, segmentation_cache = (v.encode("utf-8") if isinstance(v, str) else bytes(v)
                                          for v in (text, metadata, segmentation_cache))  # CAST(v AS BLOB)
    packed, size, points = pack_text(text)
    pile_id = conn.execute(
        "INSERT INTO text_pile_gen2(blake2b512_digest, text_packed, text_size, metadata_packed, metadata_size,"
        " segmentation_cache_packed, segmentation_cache_size) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (digest, packed, size, *pack(metadata), *pack(segmentation_cache))).lastrowid
    if points:
        conn.executemany("INSERT INTO text_pile_gen2_block(text_pile_id, char_offset, byte_offset, packed_offset)"
                         " VALUES (?, ?, ?, ?)", [(pile_id, *point) for point in points])
    return pile_id


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
            for position, entry in enumerate(self.cache):
                if entry[1] == size and entry[0] == packed:
                    if position:  # the most recently used first: a view row reads a Gen2 text between fields
                        self.cache.insert(0, self.cache.pop(position))
                    return entry[2]
            value = unpack(packed, size, max_size=self.max_size)
            self.cache.insert(0, (packed, size, value))
            del self.cache[_CACHED:]
            return value
        return unpack(packed, size, max_size=self.max_size)


class _ReportingUnpacker(_Unpacker):
    """:class:`_Unpacker` that gives a value :func:`unpack` refuses to ``on_error`` and
    returns NULL for it, instead of failing the statement."""

    def __init__(self, max_size: int, on_error: Callable[[ValueError], None]) -> None:
        super().__init__(max_size)
        self.on_error = on_error

    def __call__(self, packed, size):
        try:
            return super().__call__(packed, size)
        except ValueError as exc:
            self.on_error(exc)
            return None


def pack_value(value):
    """``sqlar_compress(value)``, as the sqlite3 shell computes it: the packed form of a
    BLOB (:func:`pack`), any other value unchanged."""
    return pack(value)[0] if isinstance(value, bytes) else value


def register_functions(conn: sqlite3.Connection, *,
                       on_error: Callable[[ValueError], None] | None = None) -> sqlite3.Connection:
    """Give ``conn`` the SQL functions of the sqlite3 shell's sqlar extension that the
    ``text_pile_v0_2`` and ``text_pile`` views and the view's insert trigger use:
    ``sqlar_uncompress(packed, size)`` (:func:`unpack`; values up to the connection's
    ``SQLITE_LIMIT_LENGTH`` at the time of the call) and ``sqlar_compress(value)``
    (:func:`pack_value`); return ``conn``. Calling it again replaces them (for instance
    after lowering the length limit).

    A value ``sqlar_uncompress`` refuses fails the statement ("user-defined function
    raised exception"); with ``on_error`` it is given to ``on_error`` (its ValueError
    names the problem) and the call's result is NULL instead, for a caller that fails the
    statement itself with that message (the web frontend: no traceback, see
    :mod:`textpile.web.state`)."""
    limit = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    unpacker = _Unpacker(limit) if on_error is None else _ReportingUnpacker(limit, on_error)
    conn.create_function(UNPACK_FUNCTION, 2, unpacker, deterministic=True)
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


#: A packed value longer than this many bytes is read from its row in parts, as far as a
#: reader needs (SQLite's incremental blob I/O, :func:`open_blob`), instead of whole: a
#: snippet of a page of 900 KB of text reads 16 KB of its 320 KB packed value (reading a
#: value whole copies every overflow page of its row: 0.87 ms for 320 KB against 0.02 ms
#: to open it and read 16 KB, on the 100K-page bench corpus).
STREAM_BYTES = 65536
#: Bytes a streamed value is read by (and a value in memory given to the inflater by).
READ_BYTES = 16384

#: A stored value: its bytes, or an open handle on them in their row (:func:`open_blob`).
Stored = bytes | sqlite3.Blob


def open_blob(conn: sqlite3.Connection, table: str, column: str, rowid: int, opened: ExitStack) -> sqlite3.Blob:
    """A read-only handle on the value of ``column`` in ``table``'s row ``rowid`` (a BLOB,
    or a TEXT as its UTF-8 bytes in a UTF-8 database), closed when ``opened`` closes
    (while it is open, the connection's reads see the snapshot it was opened in).

    Raises:
        sqlite3.OperationalError: no such row, or its value is no BLOB or TEXT.
    """
    return opened.enter_context(conn.blobopen(table, column, rowid, readonly=True))


class PackedText:
    """One packed value (see :func:`pack_text`) read in parts, each inflated only as far as
    asked, from the nearest restart point before it (the stream's start when it has none):
    a snippet needs a part of a page's text, not all of it. Offsets are the whole value's.
    ``packed`` is the packed bytes, or a handle on them in their row (:func:`open_blob`),
    read from as far as the inflater needs."""

    #: Bytes inflated at least per step.
    STEP = 4096

    def __init__(self, packed: Stored, size: int, points: Sequence[RestartPoint] = ()) -> None:
        self.packed = packed
        self.stored = size <= 0 or size == len(packed)  # kept as it is: no restart points
        self.points: list[RestartPoint] = [(0, 0, 0)] + ([] if self.stored else sorted(points))
        self._run: _Run | None = None

    @property
    def data(self) -> bytearray:
        """The bytes inflated so far by the current reader (from its restart point)."""
        return self._run.data if self._run is not None else bytearray()

    def _reader(self, point: int, byte: int) -> "_Run":
        """The reader for restart point ``point`` (index), kept while later parts are read from
        it: one that started at an earlier point and has reached ``byte`` goes on."""
        run = self._run
        if run is None or run.point > point or (run.point < point and run.byte0 + len(run.data) < byte):
            run = self._run = _Run(self.packed, self.stored, self.points[point], point)
        return run

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (from 0, ``end`` exclusive) of the value: fewer when
        it is shorter."""
        run = self._run
        if run is not None and run.byte0 <= start and end - run.byte0 <= len(run.data):  # inflated already
            return bytes(run.data[start - run.byte0:end - run.byte0])
        point = bisect.bisect_right(self.points, start, key=lambda p: p[1]) - 1
        run = self._reader(point, start)
        run.inflate(end - run.byte0)
        return bytes(run.data[start - run.byte0:end - run.byte0])

    def text(self, start: int, length: int) -> str:
        """Code points ``start`` to ``start + length`` (from 0) of the value read as UTF-8:
        ``text[start:start + length]`` of the whole text."""
        point = bisect.bisect_right(self.points, start, key=lambda p: p[0]) - 1
        run = self._reader(point, self.points[point][1])
        return run.text(start, length)


class _Run:
    """Inflating and decoding a packed value from one restart point on, its packed bytes
    read :data:`READ_BYTES` at a time (zlib copies the input it has not used yet on every
    call that fills its output: given the rest of a long value, each step copied all of it)."""

    def __init__(self, packed: Stored, stored: bool, at: RestartPoint, point: int) -> None:
        self.point = point
        self.char0, self.byte0, offset = at
        self.data = bytearray()
        self.source = memoryview(packed) if isinstance(packed, bytes) else packed
        self.at = offset  # the next packed byte to read (a stored value's bytes are its text's)
        self.done = False
        # the stream's start has the zlib header; a restart point is raw deflate
        self.inflater = None if stored else zlib.decompressobj() if offset == 0 else zlib.decompressobj(-zlib.MAX_WBITS)
        self.pending: bytes | memoryview = b""
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.chars: list[str] = []
        self.char_count = self.char0
        self.decoded_bytes = self.byte0

    def _next_input(self, at_least: int) -> bytes | memoryview:
        part = self.source[self.at:self.at + max(at_least, READ_BYTES)]
        self.at += len(part)
        return part

    def inflate(self, nbytes: int) -> None:
        """Inflate until the first ``nbytes`` bytes from the point are there (or all are)."""
        while not self.done and len(self.data) < nbytes:
            if self.inflater is None:  # kept as it is
                part = self._next_input(nbytes - len(self.data))
                self.data += part
                self.done = not part
                continue
            if not self.pending:
                self.pending = self._next_input(0)
                if not self.pending:  # the whole value given: what the inflater holds back
                    self.data += self.inflater.flush()
                    self.done = True
                    break
            self.data += self.inflater.decompress(self.pending, max(nbytes - len(self.data), PackedText.STEP))
            self.pending = self.inflater.unconsumed_tail
            self.done = self.inflater.eof

    def text(self, start: int, length: int) -> str:
        end = start + length
        while self.char_count < end:
            begin = self.decoded_bytes - self.byte0
            stop = begin + max(end - self.char_count, PackedText.STEP)  # at least one byte per code point
            self.inflate(stop)
            data = bytes(self.data[begin:stop])
            if not data:  # the end of the value
                break
            part = self.decoder.decode(data)
            self.decoded_bytes += len(data)
            self.chars.append(part)
            self.char_count += len(part)
        return "".join(self.chars)[start - self.char0:end - self.char0]


def packed_texts(conn: sqlite3.Connection, piles: Sequence[int], opened: ExitStack) -> dict[int, PackedText]:
    """``{text_pile_id: PackedText}`` of those Gen2 ``piles`` that exist, each to be read in
    parts (:class:`PackedText`); a value longer than :data:`STREAM_BYTES` is read from its
    row as far as its reader needs, through a handle that ``opened`` closes. Needs
    ``text_pile_gen2`` (a database textpile moved or made; check with
    :func:`has_packed_texts`)."""
    piles = list(dict.fromkeys(piles))
    if not piles:
        return {}
    marks = ", ".join("?" * len(piles))
    points = restart_points(conn, piles)
    out = {}
    for pile, packed, size in conn.execute(
            "SELECT text_pile_id, CASE WHEN length(text_packed) > ? THEN NULL ELSE text_packed END, text_size"
            f" FROM text_pile_gen2 WHERE text_pile_id IN ({marks})", [STREAM_BYTES, *piles]):
        if packed is None:  # opened while the statement runs: the handle reads the row it read
            packed = open_blob(conn, "text_pile_gen2", "text_packed", pile, opened)
        out[pile] = PackedText(packed, size, points.get(pile, ()))
    return out


def restart_points(conn: sqlite3.Connection, piles: Sequence[int]) -> dict[int, list[RestartPoint]]:
    """The restart points (:func:`pack_text`) of the packed texts of the Gen2 ``piles`` that
    have some, in order; none in a database made before textpile kept them (its texts are
    read from their start)."""
    if not piles or not has_table(conn, "text_pile_gen2_block"):
        return {}
    out: dict[int, list[RestartPoint]] = {}
    marks = ", ".join("?" * len(piles))
    for pile, *point in conn.execute(
            "SELECT text_pile_id, char_offset, byte_offset, packed_offset FROM text_pile_gen2_block"
            f" WHERE text_pile_id IN ({marks}) ORDER BY text_pile_id, char_offset", list(piles)):
        out.setdefault(pile, []).append(tuple(point))
    return out


def has_packed_texts(conn: sqlite3.Connection) -> bool:
    """True when the database keeps its Gen2 texts packed in ``text_pile_gen2`` (else
    ``text_pile_v0_2`` is a table of an older textpile, opened read-only)."""
    return has_table(conn, "text_pile_gen2")


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """True when ``conn``'s main schema has a table called ``name`` (the storage layout of
    the database: an older textpile's has some tables of this one's as older ones)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


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
