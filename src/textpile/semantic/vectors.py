"""Vector similarity at query time: the page vectors of a summary database in memory.

:class:`PageVectors` holds every searchable page's vector as one float32 matrix with
unit rows (256 dimensions: 1 KiB per page in memory, 256 bytes in the database). Without
a partition a query is one matrix-vector product over all rows and a partial sort (exact;
about 13 ms of CPU at 100K pages on one core, memory-bound). With the database's partition
(:mod:`textpile.semantic.partition`) the rows are held grouped by list, and a query scans
only the lists whose centroids are most similar to it (about 3 ms of CPU at 100K pages;
``bench/bench_semantic.py`` reports both and the recall against the exact scan).
Loading reads ``page_embedding`` once; a frontend
keeps the loaded vectors while it serves the same database file
(:class:`textpile.semantic.loaded.SemanticCache`), a command line search loads them for
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

from textpile.store.searchable import SEARCHABLE
from textpile.semantic.partition import PROBE_LISTS, load_centroids, nearest_lists
from textpile.store.embeddings import decode_vectors

_LOAD = f"""
SELECT pe.entity_generation_id, pe.vector, NULL FROM page_embedding pe
JOIN entity_generation eg ON eg.entity_generation_id = pe.entity_generation_id
WHERE {SEARCHABLE.format(eg="eg")} AND eg.text_pile_id = pe.text_pile_id
ORDER BY pe.entity_generation_id
"""
#: The same with each vector's list (a database with a partition).
_LOAD_LISTED = f"""
SELECT pe.entity_generation_id, pe.vector, l.list_number FROM page_embedding pe
JOIN entity_generation eg ON eg.entity_generation_id = pe.entity_generation_id
LEFT JOIN page_embedding_list l ON l.entity_generation_id = pe.entity_generation_id
WHERE {SEARCHABLE.format(eg="eg")} AND eg.text_pile_id = pe.text_pile_id
ORDER BY pe.entity_generation_id
"""
#: A query with filters whose allowed pages are at most this many scans them exactly
#: (gathered rows; about as costly as probing the lists).
EXACT_ALLOWED = 20_000


def has_vectors(conn: sqlite3.Connection) -> bool:
    """True when ``conn`` has the embedding tables and at least one model row."""
    try:
        return conn.execute("SELECT count(*) FROM embedding_model").fetchone()[0] > 0
    except sqlite3.OperationalError:  # a summary database made before the embedding tables
        return False


@dataclass
class PageVectors:
    """The page vectors of one summary database.

    ``ids`` are entity_generation_ids (int64), ``matrix`` the (len(ids), ``dimensions``)
    float32 unit rows in the same order, ``model`` the model's name. Without a partition
    the rows are in id order; with one (:meth:`partitioned`), ``centroids`` is the
    (lists, ``dimensions``) float32 unit centroids and the rows of list ``n`` are
    ``matrix[offsets[n]:offsets[n + 1]]`` (in id order within a list).
    """

    ids: np.ndarray
    matrix: np.ndarray
    model: str
    dimensions: int
    centroids: np.ndarray | None = None
    offsets: np.ndarray | None = None
    _positions: dict[int, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def lists(self) -> int:
        """The lists of the partition, 0 without one (every query scans all rows)."""
        return 0 if self.centroids is None else int(self.centroids.shape[0])

    def partitioned(self, centroids: np.ndarray, labels: np.ndarray | None = None) -> "PageVectors":
        """These vectors grouped by list: ``labels`` gives each row's list (an index into
        ``centroids``); rows without one (label -1, or no ``labels`` at all) join their
        nearest centroid's (:func:`~textpile.semantic.partition.nearest_lists`).

        Raises:
            ValueError: ``centroids`` has another width than the vectors, or a label is
                out of range.
        """
        centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        if centroids.ndim != 2 or centroids.shape[1] != self.dimensions or not centroids.shape[0]:
            raise ValueError(f"centroids of shape {centroids.shape} for vectors of {self.dimensions} dimensions")
        labels = (np.full(len(self), -1, dtype=np.int64) if labels is None
                  else np.asarray(labels, dtype=np.int64).copy())
        if labels.shape != (len(self),) or (labels >= centroids.shape[0]).any():
            raise ValueError("a page vector's list is not one of the centroids")
        missing = np.flatnonzero(labels < 0)
        if missing.size:
            labels[missing] = nearest_lists(self.matrix[missing], centroids)
        order = np.lexsort((self.ids, labels))
        offsets = np.searchsorted(labels[order], np.arange(centroids.shape[0] + 1)).astype(np.int64)
        return PageVectors(self.ids[order], np.ascontiguousarray(self.matrix[order]), self.model, self.dimensions,
                           centroids, offsets)

    def vector_of(self, entity_generation_id: int) -> np.ndarray | None:
        """The stored vector of one page, or None when it has none."""
        if not self._positions and len(self):
            self._positions = {int(i): n for n, i in enumerate(self.ids)}
        at = self._positions.get(int(entity_generation_id))
        return None if at is None else self.matrix[at]

    def nearest(self, query: np.ndarray, k: int, allowed: Callable[[np.ndarray], np.ndarray] | None = None,
                exclude: int | None = None, probe: int = PROBE_LISTS) -> list[tuple[int, float]]:
        """The ``k`` pages most similar to ``query`` (a unit vector of ``dimensions``), as
        ``(entity_generation_id, cosine similarity)``, most similar first; ties by id.

        ``allowed`` maps the ids array to a boolean mask of pages that may be returned
        (the query's filters); ``exclude`` leaves one page out (more like this). With a
        partition, only the ``probe`` lists whose centroids are most similar to ``query``
        are scanned, and further lists in that order until ``k`` allowed pages were seen;
        a filter that allows at most :data:`EXACT_ALLOWED` pages scans those exactly.
        Without a partition (or ``probe`` >= the lists) the result is exact.
        """
        if not len(self) or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        mask = None if allowed is None else np.asarray(allowed(self.ids), dtype=bool)
        if exclude is not None:
            mask = (self.ids != exclude) if mask is None else mask & (self.ids != exclude)
        if mask is not None and self.centroids is not None and int(mask.sum()) <= EXACT_ALLOWED:
            rows = np.flatnonzero(mask)
            return self._top(rows, self.matrix[rows] @ q, k)
        if self.centroids is None or probe >= self.lists:
            sims = self.matrix @ q
            if mask is not None:
                sims = np.where(mask, sims, -np.inf)
            return self._top(None, sims, k)
        order = np.argsort(-(self.centroids @ q), kind="stable")
        parts_rows, parts_sims, seen = [], [], 0
        for n, lst in enumerate(order.tolist()):
            if n >= probe and seen >= k:
                break
            lo, hi = int(self.offsets[lst]), int(self.offsets[lst + 1])
            if lo == hi:
                continue
            rows = np.arange(lo, hi)
            sims = self.matrix[lo:hi] @ q
            if mask is not None:
                keep = mask[lo:hi]
                rows, sims = rows[keep], sims[keep]
            parts_rows.append(rows)
            parts_sims.append(sims)
            seen += rows.shape[0]
        if not parts_rows:
            return []
        return self._top(np.concatenate(parts_rows), np.concatenate(parts_sims), k)

    def _top(self, rows: np.ndarray | None, sims: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` best of ``sims`` (the similarities of ``rows``, or of every row when
        None), finite ones only, as (id, similarity) best first, ties by id."""
        k = min(k, sims.shape[0])
        if k <= 0:
            return []
        top = np.argpartition(-sims, k - 1)[:k] if k < sims.shape[0] else np.arange(sims.shape[0])
        top = top[np.isfinite(sims[top])]
        ids = self.ids[top] if rows is None else self.ids[rows[top]]
        order = sorted(range(top.shape[0]), key=lambda n: (-float(sims[top[n]]), int(ids[n])))
        return [(int(ids[n]), float(sims[top[n]])) for n in order]


def load_page_vectors(conn: sqlite3.Connection) -> PageVectors | None:
    """Read the searchable pages' vectors of ``conn``, grouped by list when the database
    has a partition (:mod:`textpile.semantic.partition`; a vector not yet in a list joins
    its nearest centroid's); None when the database has no vectors (no embedding tables,
    or never embedded).

    Raises:
        ValueError: a stored vector or centroid has the wrong length (a damaged table).
        sqlite3.Error: database problems.
    """
    if not has_vectors(conn):
        return None
    model, dimensions = conn.execute("SELECT name, dimensions FROM embedding_model").fetchone()
    centroids = load_centroids(conn, dimensions)
    ids, blobs, labels = [], [], []
    for eg_id, blob, number in conn.execute(_LOAD if centroids is None else _LOAD_LISTED):
        ids.append(eg_id)
        blobs.append(blob)
        labels.append(-1 if number is None else number)
    vectors = PageVectors(np.asarray(ids, dtype=np.int64), decode_vectors(blobs, dimensions), model, dimensions)
    if centroids is None or not len(vectors):
        return vectors
    return vectors.partitioned(centroids, np.asarray(labels, dtype=np.int64))
