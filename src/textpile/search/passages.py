"""Passage-level semantic matching: a page's best section for a query, by its stored vector.

Every section of a searchable page has a binary code (one bit per dimension of its
vector: :func:`textpile.store.embeddings.encode_bits`), the codes of a page packed in
one ``page_section_embedding`` blob. A section's similarity to a query is the dot
product of its code read as ±1/sqrt(d) components (:func:`decode_bits`) with the
query's unit vector: an asymmetric distance (the query is not binarized), which ranks
sections as their Hamming distance to the query's code would, only finer. The hybrid
mode (:mod:`textpile.search.hybrid`) scores a page by its best section too and links a
result to it.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from textpile.search.candidates import SectionHit
from textpile.store.embeddings import decode_bits


def best_passages(conn: sqlite3.Connection, ids: list[int], query_vector: np.ndarray,
                  dimensions: int) -> dict[int, tuple[int, float]]:
    """``{entity_generation_id: (section_index, similarity)}``: the best section of each
    page of ``ids`` that has section codes, for the unit vector ``query_vector``. A code
    position no section fills (all zero bytes) is never chosen.

    Raises:
        ValueError: a stored blob is not a whole number of codes.
        sqlite3.Error: database problems.
    """
    out: dict[int, tuple[int, float]] = {}
    q = np.asarray(query_vector, dtype=np.float32)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for eg_id, blob in conn.execute(
                f"SELECT entity_generation_id, codes FROM page_section_embedding WHERE entity_generation_id IN ({marks})",
                chunk):
            if not blob:
                continue
            raw = np.frombuffer(blob, dtype=np.uint8).reshape(-1, dimensions // 8)
            filled = raw.any(axis=1)
            if not filled.any():
                continue
            sims = decode_bits(blob, dimensions) @ q
            sims[~filled] = -np.inf
            best = int(np.argmax(sims))
            out[eg_id] = (best, float(sims[best]))
    return out


def passage_hits(conn: sqlite3.Connection, chosen: dict[int, tuple[int, float]]) -> dict[int, SectionHit]:
    """``{entity_generation_id: SectionHit}`` of the sections ``chosen`` names
    (``{page: (section_index, similarity)}``, as :func:`best_passages` gives), those with
    an anchor only (a result can link to them); the hit's score is the similarity.

    Raises:
        sqlite3.Error: database problems.
    """
    out: dict[int, SectionHit] = {}
    items = list(chosen.items())
    for start in range(0, len(items), 250):
        part = items[start:start + 250]
        values = ", ".join("(?, ?)" for _ in part)
        params = [v for eg_id, (index, _) in part for v in (eg_id, index)]
        for row in conn.execute(
                f"WITH want(eg, idx) AS (VALUES {values}) "
                "SELECT s.section_summary_id, s.entity_generation_id, s.anchor, s.title, s.level, s.start_offset, "
                "s.end_offset FROM want JOIN section_summary s ON s.entity_generation_id = want.eg "
                "AND s.section_index = want.idx WHERE s.anchor IS NOT NULL", params):
            out[row[1]] = SectionHit(*row, chosen[row[1]][1])
    return out
