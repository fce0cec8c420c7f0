"""The page vectors' coarse partition (IVF): k-means lists, probing, recall against the
exact scan, and the partition kept beside the vectors in the summary database."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from textpile.semantic.embed import embed_summary_in
from textpile.semantic.partition import (
    decode_centroids,
    list_count,
    nearest_lists,
    partition,
    train_centroids,
    update_partition_in,
)
from textpile.semantic.vectors import PageVectors, load_page_vectors
from textpile.store.database import open_summary_db
from textpile.publish import publish

from search.builder import SummaryBuilder

TOPICS = ["sorting lists of records by a key", "sending email over SMTP", "creating an index on a table",
          "cats sleeping through the day", "baking sourdough bread", "temporary files and folders",
          "parsing command line arguments", "reading CSV files", "regular expressions and patterns",
          "threads locks and queues"]


def _mixture(clusters: int, per: int, dims: int, spread: float, seed: int) -> np.ndarray:
    """Unit vectors around ``clusters`` random directions (a fixture with lists to find)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, dims))
    m = np.repeat(centers, per, axis=0) + rng.normal(0, spread, (clusters * per, dims))
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m.astype(np.float32)


def _exact_and_partitioned(m: np.ndarray, lists: int | None = None) -> tuple[PageVectors, PageVectors]:
    exact = PageVectors(np.arange(1, len(m) + 1, dtype=np.int64), m, "fixture", m.shape[1])
    centroids, labels = partition(m, lists)
    return exact, exact.partitioned(centroids, labels)


def test_list_count_and_training_arguments():
    assert [list_count(n) for n in (0, 1, 5, 100, 20_000, 100_000)] == [1, 1, 5, 40, 566, 1265]
    m = _mixture(4, 10, 8, 0.1, seed=1)
    with pytest.raises(ValueError, match="cannot split 40 vectors into 41 lists"):
        train_centroids(m, 41)
    with pytest.raises(ValueError, match="cannot partition no vectors"):
        partition(m[:0])


def test_each_vector_is_in_the_list_of_its_nearest_centroid():
    m = _mixture(20, 50, 32, 0.1, seed=3)
    centroids, labels = partition(m, 20)
    assert centroids.shape == (20, 32)
    assert np.allclose(np.linalg.norm(centroids, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(labels, np.argmax(m @ centroids.T, axis=1))
    # the 20 directions are found: each list holds exactly one cluster's 50 vectors
    assert sorted(np.bincount(labels).tolist()) == [50] * 20
    assert all(len(set(labels[i * 50:(i + 1) * 50].tolist())) == 1 for i in range(20))
    # seeded: the same vectors give the same partition
    again, _ = partition(m, 20)
    assert np.array_equal(again, centroids)


def test_an_oversized_list_is_split_and_identical_vectors_leave_no_empty_list():
    rng = np.random.default_rng(5)
    crowd = _mixture(1, 600, 16, 0.05, seed=6)  # 600 pages of one kind
    rest = _mixture(10, 20, 16, 0.05, seed=7)
    same = np.repeat(rest[:1], 100, axis=0)  # 100 copies of one page
    m = np.concatenate([crowd, rest, same])[rng.permutation(900)]
    centroids, labels = partition(m, 12)
    sizes = np.bincount(labels, minlength=len(centroids))
    assert (sizes > 0).all()  # empty lists (copies of one vector) are dropped
    assert len(centroids) > 12  # the crowd's list was split ...
    assert sizes.max() < 3 * 900 / 12  # ... into lists of about the mean size (75)
    assert sizes.sum() == 900


def test_probing_every_list_is_the_exact_scan():
    m = _mixture(10, 40, 24, 0.5, seed=8)
    exact, ivf = _exact_and_partitioned(m, 10)
    q = m[17] + 0.1
    q /= np.linalg.norm(q)
    assert ivf.nearest(q, 25, probe=10) == exact.nearest(q, 25)
    assert exact.nearest(q, 25)[0][0] == 18  # row 17's id


def test_recall_against_the_exact_scan_on_a_fixture():
    """recall@20 against the exact scan grows with the lists probed (1, 4, 16 of 40 lists
    of overlapping clusters); the pages found are in the exact order with the exact
    similarities."""
    m = _mixture(40, 50, 32, 0.9, seed=11)
    exact, ivf = _exact_and_partitioned(m, 40)
    rng = np.random.default_rng(12)
    queries = m[rng.choice(len(m), 60, replace=False)] + rng.normal(0, 0.05, (60, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    recall = {}
    for probe in (1, 4, 16):
        hits = []
        for q in queries:
            truth = exact.nearest(q, 20)
            got = ivf.nearest(q, 20, probe=probe)
            kept = [pair for pair in truth if pair[0] in {i for i, _ in got}]
            # what is found is in the exact order, with the exact scores (to float rounding)
            assert [i for i, _ in got[:len(kept)]] == [i for i, _ in kept]
            assert np.allclose([s for _, s in got[:len(kept)]], [s for _, s in kept], atol=1e-6)
            hits.append(len(kept) / 20)
        recall[probe] = float(np.mean(hits))
    assert recall == pytest.approx({1: 0.921, 4: 0.982, 16: 0.998}, abs=0.005)


def test_filters_and_exclusions_with_a_partition():
    m = _mixture(10, 40, 24, 0.5, seed=13)
    exact, ivf = _exact_and_partitioned(m, 10)
    q = m[100]
    even = lambda ids: ids % 2 == 0  # noqa: E731
    # few allowed pages: scanned exactly (every list), so the same as the exact scan
    assert ivf.nearest(q, 15, allowed=even, probe=1) == exact.nearest(q, 15, allowed=even)
    assert all(i % 2 == 0 for i, _ in ivf.nearest(q, 15, allowed=even, probe=1))
    assert 101 not in [i for i, _ in ivf.nearest(q, 15, exclude=101, probe=1)]
    assert ivf.nearest(q, 1, probe=1)[0][0] == 101
    # a page's own vector is found whatever the rows' order
    assert np.array_equal(ivf.vector_of(101), m[100])


def test_probing_continues_until_enough_pages_were_seen():
    m = _mixture(20, 5, 16, 0.05, seed=14)
    exact, ivf = _exact_and_partitioned(m, 20)
    got = ivf.nearest(m[0], 12, probe=1)  # one list holds 5: more lists are probed
    assert len(got) == 12 and got == exact.nearest(m[0], 12)[:12]


def _site(path, pages: int, start: int = 0) -> list[int]:
    b = SummaryBuilder(path)
    ids = [b.add_page(f"https://docs.example.org/p{n}.html", lang="en", title=f"Page {n}: {TOPICS[n % 10]}",
                      text=f"Notes on {TOPICS[n % 10]}, part {n}.") for n in range(start, start + pages)]
    b.build_fts()
    b.close()
    return ids


def _lists(conn) -> dict[int, int]:
    return dict(conn.execute("SELECT entity_generation_id, list_number FROM page_embedding_list"))


def test_partition_is_built_kept_incrementally_and_retrained_in_the_database(tmp_path, embedder):
    path = tmp_path / "summary.db"
    ids = _site(path, 30)
    conn = open_summary_db(path)
    report = embed_summary_in(conn, embedder, min_partition_pages=40)
    assert (report.pages_embedded, report.vector_lists) == (30, 0)  # below the minimum: no partition
    assert conn.execute("SELECT count(*) FROM page_embedding_centroid").fetchone()[0] == 0
    assert load_page_vectors(conn).lists == 0
    report = embed_summary_in(conn, embedder, min_partition_pages=20)
    assert (report.pages_embedded, report.lists_trained, report.vector_lists) == (0, True, list_count(30))
    centroids = conn.execute("SELECT list_number, trained_vectors, vector FROM page_embedding_centroid "
                             "ORDER BY list_number").fetchall()
    assert [r[0] for r in centroids] == list(range(list_count(30)))
    assert sum(r[1] for r in centroids) == 30
    lists = _lists(conn)
    assert sorted(lists) == sorted(ids)
    loaded = load_page_vectors(conn)
    stored = decode_centroids([r[2] for r in centroids], loaded.dimensions)
    for eg_id, number in lists.items():  # each page is in its nearest centroid's list
        assert number == int(nearest_lists(loaded.vector_of(eg_id)[None, :], stored)[0])
    assert loaded.lists == len(centroids)

    # one new page joins its nearest list; the centroids stay
    conn.close()
    new = _site(path, 1, start=30)
    conn = open_summary_db(path)
    report = embed_summary_in(conn, embedder, min_partition_pages=20)
    assert (report.pages_embedded, report.lists_trained, report.vector_lists) == (1, False, len(centroids))
    assert conn.execute("SELECT list_number, trained_vectors, vector FROM page_embedding_centroid "
                        "ORDER BY list_number").fetchall() == centroids
    assert set(_lists(conn)) == set(ids) | set(new)

    # a page that stops being searchable leaves its list
    with conn:
        conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = 1700000100 WHERE entity_generation_id = ?",
                     (ids[0],))
    report = embed_summary_in(conn, embedder, min_partition_pages=20)
    assert (report.pages_removed, report.lists_trained) == (1, False)
    assert ids[0] not in _lists(conn)

    # twice the vectors trained on: the centroids are computed anew
    conn.close()
    more = _site(path, 40, start=31)
    conn = open_summary_db(path)
    report = embed_summary_in(conn, embedder, min_partition_pages=20)
    assert (report.pages_embedded, report.lists_trained) == (40, True)
    # 33 lists by k-means, more where a list of three times the mean size was split
    assert report.vector_lists >= list_count(70) == 33
    assert conn.execute("SELECT count(*), sum(trained_vectors) FROM page_embedding_centroid").fetchone() == (
        report.vector_lists, 70)
    assert len(_lists(conn)) == 70 and set(more) <= set(_lists(conn))

    # below the minimum again: the partition is dropped
    assert update_partition_in(conn, min_pages=100).lists == 0
    assert conn.execute("SELECT (SELECT count(*) FROM page_embedding_centroid) + "
                        "(SELECT count(*) FROM page_embedding_list)").fetchone()[0] == 0
    conn.close()


def test_published_copy_carries_its_partition(tmp_path, embedder):
    path = tmp_path / "summary.db"
    _site(path, 30)
    conn = open_summary_db(path)
    embed_summary_in(conn, embedder, min_partition_pages=20)
    conn.close()
    target = tmp_path / "published" / "summary.db"
    publish(path, target)
    original = load_page_vectors(sqlite3.connect(path))
    published = load_page_vectors(sqlite3.connect(f"file:{target}?mode=ro", uri=True))
    assert published.lists == original.lists == list_count(30)
    assert np.array_equal(published.centroids, original.centroids)
    assert np.array_equal(published.offsets, original.offsets)
    assert published.ids.tolist() == original.ids.tolist()
    q = original.vector_of(int(original.ids[0]))
    assert published.nearest(q, 5, probe=3) == original.nearest(q, 5, probe=3)


def test_a_database_made_before_the_partition_tables_loads_its_vectors_unpartitioned(tmp_path, embedder):
    path = tmp_path / "summary.db"
    _site(path, 12)
    conn = open_summary_db(path)
    embed_summary_in(conn, embedder)
    conn.execute("DROP TABLE page_embedding_list")
    conn.execute("DROP TABLE page_embedding_centroid")
    conn.commit()
    conn.close()
    old = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    vectors = load_page_vectors(old)
    assert (len(vectors), vectors.lists) == (12, 0)
