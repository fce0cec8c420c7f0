"""Vector similarity at query time: the page vectors of a summary database in memory.

:class:`PageVectors` holds every searchable page's vector as one float32 matrix with
unit rows (256 dimensions: 1 KiB per page in memory, 256 bytes in the database), so a
query is one matrix-vector product and a partial sort: about 5 ms at 100K pages on one
core (``bench/bench_semantic.py``). Loading reads ``page_embedding`` once; a frontend
keeps the loaded vectors while it serves the same database file
(:class:`textpile.semantic.modes.SemanticCache`), a command line search loads them for
its one query.

Only vectors whose generation is searchable now (open, not marked duplicate, with the
text pile it was embedded from) are loaded: a database whose vectors lag behind its
generations never returns a page that is no longer searchable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from textpile.search.index import SEARCHABLE
from textpile.semantic.store import decode_vectors

_LOAD = f"""
SELECT pe.entity_generation_id, pe.vector FROM page_embedding pe
JOIN entity_generation eg ON eg.entity_generation_id = pe.entity_generation_id
WHERE {SEARCHABLE.format(eg="eg")} AND eg.text_pile_id = pe.text_pile_id
ORDER BY pe.entity_generation_id
"""


def has_vectors(conn: sqlite3.Connection) -> bool:
    """True when ``conn`` has the embedding tables and at least one model row."""
    try:
        return conn.execute("SELECT count(*) FROM embedding_model").fetchone()[0] > 0
    except sqlite3.OperationalError:  # a summary database made before the embedding tables
        return False


@dataclass
class PageVectors:
    """The page vectors of one summary database.

    ``ids`` are entity_generation_ids (sorted, int64), ``matrix`` the (len(ids),
    ``dimensions``) float32 unit rows in the same order, ``model`` the model's name.
    """

    ids: np.ndarray
    matrix: np.ndarray
    model: str
    dimensions: int
    _positions: dict[int, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def vector_of(self, entity_generation_id: int) -> np.ndarray | None:
        """The stored vector of one page, or None when it has none."""
        if not self._positions and len(self):
            self._positions = {int(i): n for n, i in enumerate(self.ids)}
        at = self._positions.get(int(entity_generation_id))
        return None if at is None else self.matrix[at]

    def nearest(self, query: np.ndarray, k: int, allowed: Callable[[np.ndarray], np.ndarray] | None = None,
                exclude: int | None = None) -> list[tuple[int, float]]:
        """The ``k`` pages most similar to ``query`` (a unit vector of ``dimensions``), as
        ``(entity_generation_id, cosine similarity)``, most similar first; ties by id.

        ``allowed`` maps the ids array to a boolean mask of pages that may be returned
        (the query's filters); ``exclude`` leaves one page out (more like this).
        """
        if not len(self) or k <= 0:
            return []
        sims = self.matrix @ np.asarray(query, dtype=np.float32)
        if allowed is not None:
            sims = np.where(allowed(self.ids), sims, -np.inf)
        if exclude is not None:
            sims = np.where(self.ids == exclude, -np.inf, sims)
        k = min(k, len(self))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(self) else np.arange(len(self))
        top = top[np.isfinite(sims[top])]
        order = sorted(top.tolist(), key=lambda n: (-float(sims[n]), int(self.ids[n])))
        return [(int(self.ids[n]), float(sims[n])) for n in order]


def load_page_vectors(conn: sqlite3.Connection) -> PageVectors | None:
    """Read the searchable pages' vectors of ``conn``; None when the database has none
    (no embedding tables, or never embedded).

    Raises:
        ValueError: a stored vector has the wrong length (a damaged table).
        sqlite3.Error: database problems.
    """
    if not has_vectors(conn):
        return None
    model, dimensions = conn.execute("SELECT name, dimensions FROM embedding_model").fetchone()
    ids, blobs = [], []
    for eg_id, blob in conn.execute(_LOAD):
        ids.append(eg_id)
        blobs.append(blob)
    return PageVectors(np.asarray(ids, dtype=np.int64), decode_vectors(blobs, dimensions), model, dimensions)
