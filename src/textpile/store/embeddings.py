"""How page and section vectors are stored (``schemas/summary/textpile_embeddings.sql``).

What is embedded, and by which model, is :mod:`textpile.semantic.embed`'s; this module
holds only the bytes, so that the store's migrations need nothing of the semantic layer.

A page vector is stored as int8: the unit vector scaled so that its largest component
is ±127, rounded (one byte per dimension). The scale is not kept: cosine similarity only
needs the direction, so readers normalize again (:func:`decode_vectors`).

A section vector is stored as a binary code (one bit per dimension: set where the int8
component is above 0, :func:`encode_bits`), and the codes of one page's sections are
packed into one blob, the section with ``section_index`` i at byte ``i * dimensions / 8``
(:func:`pack_section_codes`). Nothing ranks by section vectors at query time; on the
relevance sites' section titles as queries, ranking sections by their codes keeps 90-99%
of the int8 vectors' MRR@10 (0.303-0.505 against 0.337-0.519 per site) for an eighth of
the bytes (issue 10's storage note).

An older textpile kept a row and an int8 vector per section in a ``section_embedding``
table: :func:`prepare_section_migration` and :func:`finish_section_migration` move it
(:mod:`textpile.store.migrations`).
"""

from __future__ import annotations

import sqlite3

import numpy as np


def encode_vectors(vectors: np.ndarray) -> list[bytes]:
    """int8 blobs of the rows of ``vectors`` (n, d): each row scaled to ±127 at its
    largest component and rounded. A zero row gives d zero bytes."""
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1, keepdims=True)
    scaled = np.divide(v * 127.0, peak, out=np.zeros_like(v), where=peak > 0)
    q = np.clip(np.rint(scaled), -127, 127).astype(np.int8)
    return [row.tobytes() for row in q]


def decode_int8(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The (n, dimensions) int8 matrix of ``blobs``.

    Raises:
        ValueError: a blob is not ``dimensions`` bytes long.
    """
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.int8)
    joined = b"".join(blobs)
    if len(joined) != len(blobs) * dimensions or any(len(b) != dimensions for b in blobs):
        raise ValueError(f"a stored vector is not {dimensions} bytes long")
    return np.frombuffer(joined, dtype=np.int8).reshape(len(blobs), dimensions)


def decode_vectors(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The (n, dimensions) float32 matrix of ``blobs`` with unit rows (zero rows stay 0)."""
    m = decode_int8(blobs, dimensions).astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    np.divide(m, norms, out=m, where=norms > 0)
    return m


def encode_bits(vectors: np.ndarray) -> np.ndarray:
    """The binary codes of the rows of ``vectors`` (n, d), d a multiple of 8: a (n, d / 8)
    uint8 array, bit k (most significant first, ``numpy.packbits``) set where component k of
    the row's int8 form (:func:`encode_vectors`) is above 0. The same codes come from the
    stored int8 vectors (:func:`int8_to_bits`).

    Raises:
        ValueError: d is not a multiple of 8.
    """
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1, keepdims=True) if v.size else np.zeros((v.shape[0], 1), dtype=np.float32)
    scaled = np.divide(v * 127.0, peak, out=np.zeros_like(v), where=peak > 0)
    return int8_to_bits(np.clip(np.rint(scaled), -127, 127).astype(np.int8))


def int8_to_bits(matrix: np.ndarray) -> np.ndarray:
    """The binary codes (:func:`encode_bits`) of an (n, d) int8 matrix.

    Raises:
        ValueError: d is not a multiple of 8.
    """
    if matrix.ndim != 2 or matrix.shape[1] % 8:
        raise ValueError(f"binary codes need a multiple of 8 dimensions, not {matrix.shape[-1]}")
    return np.packbits(matrix > 0, axis=1)


def pack_section_codes(section_indexes: list[int], codes: np.ndarray) -> bytes:
    """One page's section codes as one blob: the row of ``codes`` (n, w) for the section at
    ``section_indexes[k]`` at byte ``section_indexes[k] * w``; a position no section fills
    stays zero bytes. The blob is ``(max(section_indexes) + 1) * w`` bytes long."""
    if not section_indexes:
        return b""
    width = codes.shape[1]
    out = np.zeros((max(section_indexes) + 1, width), dtype=np.uint8)
    out[np.asarray(section_indexes, dtype=np.int64)] = codes
    return out.tobytes()


def decode_bits(blob: bytes, dimensions: int) -> np.ndarray:
    """The (len(blob) * 8 / dimensions, dimensions) float32 unit vectors of a blob of
    binary codes: components ±1 / sqrt(dimensions) (a set bit +), so that the dot product of
    two is 1 - 2 * (their Hamming distance) / dimensions.

    Raises:
        ValueError: the blob is not a whole number of codes.
    """
    width = dimensions // 8
    if dimensions % 8 or len(blob) % width:
        raise ValueError(f"a stored section code blob of {len(blob)} bytes is not made of {width}-byte codes")
    bits = np.unpackbits(np.frombuffer(blob, dtype=np.uint8).reshape(-1, width), axis=1)
    return (bits.astype(np.float32) * 2.0 - 1.0) / np.float32(np.sqrt(dimensions))


#: Where an older textpile's section_embedding table (a row and an int8 vector per
#: section) is set aside while it is moved (:func:`finish_section_migration`).
SECTION_LEGACY = "section_embedding_legacy"


def prepare_section_migration(conn: sqlite3.Connection) -> None:
    """Step 1 of moving an older section_embedding table: it and its index out of the
    view's way (nothing references it)."""
    conn.execute("DROP INDEX IF EXISTS section_embedding_by_generation")
    conn.execute(f'ALTER TABLE section_embedding RENAME TO "{SECTION_LEGACY}"')


def finish_section_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made ``page_section_embedding`` and the ``section_embedding``
    view: each page's int8 section vectors as one blob of binary codes (the codes
    :func:`encode_bits` gives when embedding), checked to read back through the view, then
    the old table dropped. Rows whose section is not in section_summary (the embedder
    deleted those as stale) are left out. Returns the section vectors moved.

    Raises:
        sqlite3.IntegrityError: a vector does not read back as its code, is not as long as
            the model's dimensions, or there are vectors but no model row (the move is
            rolled back).
    """
    model = conn.execute("SELECT dimensions FROM embedding_model").fetchone()
    rows = conn.execute(
        f'SELECT l.entity_generation_id, s.section_index, l.section_summary_id, l.vector FROM "{SECTION_LEGACY}" l '
        "JOIN section_summary s ON s.section_summary_id = l.section_summary_id "
        "AND s.entity_generation_id = l.entity_generation_id ORDER BY 1, 2").fetchall()
    if rows and model is None:
        raise sqlite3.IntegrityError("section vectors without an embedding_model row: cannot move them")
    expected: dict[int, bytes] = {}
    if rows:
        try:
            codes = int8_to_bits(decode_int8([r[3] for r in rows], model[0]))
        except ValueError as exc:
            raise sqlite3.IntegrityError(f"section_embedding: {exc}") from exc
        by_page: dict[int, tuple[list[int], list[int]]] = {}
        for n, (eg_id, section_index, section_id, _vector) in enumerate(rows):
            indexes, members = by_page.setdefault(eg_id, ([], []))
            indexes.append(section_index)
            members.append(n)
            expected[section_id] = codes[n].tobytes()
        conn.executemany("INSERT INTO page_section_embedding(entity_generation_id, codes) VALUES (?, ?)",
                         [(eg_id, pack_section_codes(ix, codes[members])) for eg_id, (ix, members) in by_page.items()])
    found = dict(conn.execute("SELECT section_summary_id, vector FROM section_embedding"))
    if found != expected:
        raise sqlite3.IntegrityError("moved section vectors do not read back through the section_embedding view")
    conn.execute(f'DROP TABLE "{SECTION_LEGACY}"')
    return len(rows)
