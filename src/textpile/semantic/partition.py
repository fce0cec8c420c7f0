"""The coarse partition of the page vectors: an inverted file index (IVF) for the vector modes.

Source: Jégou, Douze and Schmid, "Product quantization for nearest neighbor search"
(IEEE TPAMI 2011), section III.A, the inverted file with a coarse quantizer, without the
product quantization: faiss's ``IndexIVFFlat``. The page vectors are split into
:func:`list_count` lists by spherical k-means (centroids are unit vectors, a vector
belongs to the list of its most similar centroid). A query computes its similarity to
every centroid and scans only the vectors of its :data:`PROBE_LISTS` most similar lists
(:meth:`textpile.semantic.vectors.PageVectors.nearest`), so at 100,000 pages it reads
192 of about 1,900 lists instead of every vector (the brute-force scan is memory-bound:
100 MB per query). Below :data:`MIN_PARTITION_PAGES` pages there is no
partition: every query scans all vectors, exactly.

Stored beside the vectors in the summary database (``schemas/summary/textpile_embeddings.sql``:
``page_embedding_centroid``, ``page_embedding_list``), so publishing carries it with the
vectors and the index in one atomic swap. Built by :func:`update_partition_in` after every
embedding run, incrementally: new vectors join the list of their nearest centroid; the
centroids are computed again (and every vector reassigned, in one transaction) only when
the number of vectors has doubled or halved since they were computed, or the model
changed. Training is seeded, so the same vectors give the same partition.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass

import numpy as np

from textpile.store.embeddings import decode_vectors

#: Below this many page vectors no partition is built: the exact scan of all of them
#: costs about 3 ms (20,000 x 256 float32, 20 MB) and loses nothing.
MIN_PARTITION_PAGES = 20_000
#: Lists probed per query: at 100,000 pages (1,913 lists on the benchmark's vectors)
#: this keeps recall@10 at 0.9997 and recall@100 at 0.9989 against the exact scan, and
#: the semantic ranking's MRR@10 as it is (0.418), for a quarter of the exact scan's time
#: (``bench/bench_semantic.py``: 128 lists lose 0.003 MRR@10, 32 lists 0.005).
PROBE_LISTS = 192
#: Lists per square root of the vectors (:func:`list_count`).
LISTS_PER_SQRT = 4
#: A list that k-means leaves with more than this many times the mean list size is split
#: by k-means of its own vectors into lists of about the mean size: pages of one kind
#: (API pages of one library) crowd into a few large lists otherwise, and a query near
#: them would scan many more vectors than others (the p99).
SPLIT_FACTOR = 3
#: Training: k-means iterations and the sample (vectors per list) it runs on.
KMEANS_ITERATIONS = 10
TRAIN_VECTORS_PER_LIST = 32
#: k-means++ seeding draws the first centroids from this many sample vectors per list.
SEED_POOL_PER_LIST = 8
#: The centroids are computed again when the vectors have grown or shrunk by this factor
#: since the last training (new vectors in between only join their nearest list).
RETRAIN_FACTOR = 2.0
#: Rows per block when assigning vectors to centroids (bounds the similarity block's memory).
_BLOCK = 8192
_SEED = 14


def list_count(pages: int) -> int:
    """The number of lists k-means makes for ``pages`` vectors: round(4 * sqrt(pages)),
    at least 1 and at most ``pages`` (faiss's rule of thumb, 4 to 16 * sqrt(n)); 1,265 at
    100,000 pages. Oversized lists are split afterwards (:data:`SPLIT_FACTOR`)."""
    return max(1, min(pages, round(LISTS_PER_SQRT * math.sqrt(max(pages, 0)))))


def nearest_lists(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """For each unit row of ``matrix`` (n, d), the index of its most similar row of
    ``centroids`` (m, d); an int64 array of n. Ties go to the lower index."""
    out = np.empty(matrix.shape[0], dtype=np.int64)
    for start in range(0, matrix.shape[0], _BLOCK):
        block = matrix[start:start + _BLOCK]
        out[start:start + block.shape[0]] = np.argmax(block @ centroids.T, axis=1)
    return out


def train_centroids(matrix: np.ndarray, lists: int, *, iterations: int = KMEANS_ITERATIONS,
                    per_list: int = TRAIN_VECTORS_PER_LIST, seed: int = _SEED) -> np.ndarray:
    """Spherical k-means (Dhillon and Modha 2001) of the unit rows of ``matrix`` (n, d):
    ``lists`` unit centroids, float32 (lists, d).

    Runs on a seeded sample of ``per_list`` vectors per list (all of them when fewer),
    started by k-means++ seeding (Arthur and Vassilvitskii 2007) over at most
    :data:`SEED_POOL_PER_LIST` sample vectors per list; a list left empty by an iteration
    is restarted at the sample vector least similar to its own centroid.

    Raises:
        ValueError: ``lists`` is not between 1 and n.
    """
    n = matrix.shape[0]
    if not 1 <= lists <= n:
        raise ValueError(f"cannot split {n} vectors into {lists} lists")
    rng = np.random.default_rng(seed)
    take = min(n, lists * per_list)
    sample = matrix if take == n else matrix[np.sort(rng.choice(n, size=take, replace=False))]
    sample = np.ascontiguousarray(sample, dtype=np.float32)
    centroids = _seed(sample, lists, rng)
    for _ in range(iterations):
        sims = sample @ centroids.T
        labels = np.argmax(sims, axis=1)
        best = sims[np.arange(sample.shape[0]), labels]
        counts = np.bincount(labels, minlength=lists)
        sums = np.zeros_like(centroids)
        filled = counts > 0
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        sums[filled] = np.add.reduceat(sample[np.argsort(labels, kind="stable")], starts[filled], axis=0)
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # restart each empty list at a vector far from its centroid
            far = np.argsort(best, kind="stable")[: empty.size]
            sums[empty] = sample[far]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        new = np.divide(sums, norms, out=centroids.copy(), where=norms > 0)
        if np.array_equal(new, centroids):
            break
        centroids = new
    return np.ascontiguousarray(centroids, dtype=np.float32)


def partition(matrix: np.ndarray, lists: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A partition of the unit rows of ``matrix`` (n, d): :func:`train_centroids` of
    ``lists`` (default :func:`list_count`), then each list of more than
    :data:`SPLIT_FACTOR` times the mean size split by k-means of its own vectors into
    lists of about the mean size; lists left empty are dropped. Returns the float32
    (m, d) centroids and each row's list (int64 of n, :func:`nearest_lists`).

    Raises:
        ValueError: ``matrix`` has no rows.
    """
    n = matrix.shape[0]
    if not n:
        raise ValueError("cannot partition no vectors")
    lists = list_count(n) if lists is None else lists
    centroids = train_centroids(matrix, lists)
    labels = nearest_lists(matrix, centroids)
    mean = n / lists
    by_list = np.argsort(labels, kind="stable")
    ends = np.cumsum(np.bincount(labels, minlength=lists))
    out = []
    for number in range(lists):
        members = by_list[(ends[number - 1] if number else 0):ends[number]]
        if members.size > SPLIT_FACTOR * mean:
            out.append(train_centroids(matrix[members], math.ceil(members.size / mean)))
        elif members.size:
            out.append(centroids[number:number + 1])
    centroids = np.ascontiguousarray(np.concatenate(out), dtype=np.float32)
    labels = nearest_lists(matrix, centroids)
    used = np.bincount(labels, minlength=centroids.shape[0]) > 0
    if not used.all():  # sub-lists of identical vectors: only the first one gets them
        renumber = np.cumsum(used) - 1
        centroids, labels = centroids[used], renumber[labels]
    return centroids, labels


def _seed(sample: np.ndarray, lists: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ seeding (Arthur and Vassilvitskii 2007; greedy as scikit-learn's):
    each next centroid is the best of 2 + ln(lists) vectors drawn with
    probability proportional to their squared distance (2 - 2 cos) to the nearest
    centroid chosen so far, the best being the one that leaves the least total squared
    distance."""
    pool = sample
    if sample.shape[0] > SEED_POOL_PER_LIST * lists:
        pool = sample[np.sort(rng.choice(sample.shape[0], size=SEED_POOL_PER_LIST * lists, replace=False))]
    chosen = [int(rng.integers(pool.shape[0]))]
    best = pool @ pool[chosen[0]]
    for _ in range(1, lists):
        d2 = np.maximum(2.0 - 2.0 * best.astype(np.float64), 0.0)
        total = d2.sum()
        if total <= 0:  # every vector is a centroid already (identical vectors)
            chosen.append(int(rng.integers(pool.shape[0])))
            continue
        candidates = rng.choice(pool.shape[0], size=2 + int(math.log(lists)), p=d2 / total)
        sims = np.maximum(pool @ pool[candidates].T, best[:, None])
        pick = int(np.argmax(sims.sum(axis=0)))  # most similarity = least squared distance
        chosen.append(int(candidates[pick]))
        best = np.ascontiguousarray(sims[:, pick])
    return pool[chosen].copy()


def encode_centroid(vector: np.ndarray) -> bytes:
    """A centroid's blob: float32 little-endian, 4 bytes per dimension."""
    return np.asarray(vector, dtype="<f4").tobytes()


def decode_centroids(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The (len(blobs), dimensions) float32 matrix of centroid blobs.

    Raises:
        ValueError: a blob is not ``4 * dimensions`` bytes long (a damaged table).
    """
    if any(len(b) != 4 * dimensions for b in blobs):
        raise ValueError(f"a stored centroid is not {4 * dimensions} bytes long")
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions).astype(np.float32)


def has_partition_tables(conn: sqlite3.Connection) -> bool:
    """True when ``conn`` has the partition tables (a summary database made before them has not)."""
    return conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('page_embedding_centroid', 'page_embedding_list')").fetchone()[0] == 2


def load_centroids(conn: sqlite3.Connection, dimensions: int) -> np.ndarray | None:
    """The stored centroids of ``conn`` in list order, or None when it has no partition.

    Raises:
        ValueError: a centroid blob has the wrong length.
    """
    if not has_partition_tables(conn):
        return None
    blobs = [r[0] for r in conn.execute("SELECT vector FROM page_embedding_centroid ORDER BY list_number")]
    return decode_centroids(blobs, dimensions) if blobs else None


@dataclass
class PartitionReport:
    """What :func:`update_partition_in` did: the lists there are now (0: no partition,
    every query scans all vectors), whether the centroids were computed anew, and how
    many vectors joined a list."""

    lists: int = 0
    trained: bool = False
    assigned: int = 0


def _all_vectors(conn: sqlite3.Connection, dimensions: int) -> tuple[list[int], np.ndarray]:
    rows = conn.execute("SELECT entity_generation_id, vector FROM page_embedding ORDER BY entity_generation_id").fetchall()
    return [r[0] for r in rows], decode_vectors([r[1] for r in rows], dimensions)


def update_partition_in(conn: sqlite3.Connection, *, min_pages: int = MIN_PARTITION_PAGES) -> PartitionReport:
    """Bring the partition of ``conn``'s page vectors up to date (module docstring): none
    below ``min_pages`` vectors, centroids trained anew when missing, made by another
    model, or when the vectors have grown or shrunk by :data:`RETRAIN_FACTOR` since;
    otherwise each vector without a list joins its nearest centroid's. Each change is one
    transaction (readers see the old partition or the new one).

    Raises:
        ValueError: a stored vector or centroid has the wrong length.
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    report = PartitionReport()
    model = conn.execute("SELECT embedding_model_id, dimensions FROM embedding_model").fetchone()
    pages = conn.execute("SELECT count(*) FROM page_embedding").fetchone()[0]
    with conn:  # lists of vectors deleted since (page_embedding rows are deleted, never changed)
        conn.execute("DELETE FROM page_embedding_list WHERE entity_generation_id NOT IN "
                     "(SELECT entity_generation_id FROM page_embedding)")
    stored = conn.execute("SELECT count(*), coalesce(sum(trained_vectors), 0), min(embedding_model_id), "
                          "max(embedding_model_id) FROM page_embedding_centroid").fetchone()
    lists, trained_on, model_lo, model_hi = stored
    if model is None or pages < max(min_pages, 1):
        if lists:
            with conn:
                conn.execute("DELETE FROM page_embedding_list")
                conn.execute("DELETE FROM page_embedding_centroid")
        return report
    model_id, dimensions = model
    stale = (lists == 0 or model_lo != model_id or model_hi != model_id
             or pages > trained_on * RETRAIN_FACTOR or pages * RETRAIN_FACTOR < trained_on)
    if stale:
        ids, matrix = _all_vectors(conn, dimensions)
        centroids, labels = partition(matrix)
        counts = np.bincount(labels, minlength=centroids.shape[0])
        with conn:
            conn.execute("DELETE FROM page_embedding_list")
            conn.execute("DELETE FROM page_embedding_centroid")
            conn.executemany(
                "INSERT INTO page_embedding_centroid(list_number, embedding_model_id, trained_vectors, vector)"
                " VALUES (?, ?, ?, ?)",
                [(n, model_id, int(counts[n]), encode_centroid(c)) for n, c in enumerate(centroids)])
            conn.executemany("INSERT INTO page_embedding_list(entity_generation_id, list_number) VALUES (?, ?)",
                             zip(ids, labels.tolist()))
        report.lists, report.trained, report.assigned = centroids.shape[0], True, len(ids)
        return report
    rows = conn.execute("SELECT pe.entity_generation_id, pe.vector FROM page_embedding pe "
                        "WHERE NOT EXISTS (SELECT 1 FROM page_embedding_list l "
                        "WHERE l.entity_generation_id = pe.entity_generation_id) "
                        "ORDER BY pe.entity_generation_id").fetchall()
    report.lists = lists
    if rows:
        centroids = load_centroids(conn, dimensions)
        labels = nearest_lists(decode_vectors([r[1] for r in rows], dimensions), centroids)
        with conn:
            conn.executemany("INSERT INTO page_embedding_list(entity_generation_id, list_number) VALUES (?, ?)",
                             zip([r[0] for r in rows], labels.tolist()))
        report.assigned = len(rows)
    return report
