"""Benchmark: what semantic search costs: embedding speed, bytes per page, query latency.

    python bench/bench_semantic.py [--data-dir bench/data] [--pages 100000] [--queries 300]
                                   [--parts embedding,latency] [--probes 32,96,192,288]

Uses the relevance benchmark's documentation sites (``--sites``, all eleven by default;
``python bench/relevance`` builds them under ``--data-dir``; nothing there is changed:
work happens on copies in a temporary folder). Everything runs in this one process on one core (the tokenizer's
thread pool and BLAS are held to one thread before they load).

1. **Embedding**, per site: the site's summary database is copied without its vectors,
   then ``update_index(rebuild=True)`` (the peer: the search index rebuilt whole, as every summarize did) and
   ``embed_summary`` run on it, alternately, ``--repeat`` times; printed: pages and
   sections embedded, CPU seconds, pages per CPU second, and the ratio to the index
   rebuild's time.
2. **Bytes per page**: the file size with and without the embedding tables (both
   ``VACUUM INTO`` copies), divided by the searchable pages.
3. **Query latency at ``--pages`` pages**: the sites' page vectors replicated with a
   little noise (each copy a unit vector near its original, as copies of a page on other
   origins would be) to ``--pages`` rows, and partitioned as a summary database of that
   size is (:mod:`textpile.semantic.partition`: lists, training CPU seconds printed).
   Per judged query (sampled, every class), interleaved in a rotating order: the query's
   vector, :meth:`PageVectors.nearest` of ``SEMANTIC_DEPTH`` by the exact scan and by
   the partition at each ``--probes`` count (what the semantic and hybrid modes add to a
   search), and a keyword search of the same query on its own site's database (the
   peer). Printed: p50/p99 of each (wall and the thread's CPU time, which leaves out
   time-slicing with other processes), the ratio to the keyword search, recall@10 and
   recall@100 against the exact scan, and the semantic ranking's MRR@10 at this size
   (a copy of a judged page counts as that page); the load average before and after.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # the tokenizers crate's thread pool: one core
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import shutil  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "relevance"))

from judgments import sample, site_queries  # noqa: E402
from metrics import percentile  # noqa: E402
from sites import SITE_NAMES, SITES  # noqa: E402
from systems import searchable_documents  # noqa: E402

from textpile.search.engine import search  # noqa: E402
from textpile.semantic.embed import embed_summary_in  # noqa: E402
from textpile.semantic.model import load_embedder  # noqa: E402
from textpile.search.nearest import SEMANTIC_DEPTH  # noqa: E402
from textpile.semantic.partition import PROBE_LISTS, partition  # noqa: E402
from textpile.semantic.vectors import PageVectors, load_page_vectors  # noqa: E402
from textpile.store.database import open_summary_db  # noqa: E402
from textpile.index.update import update_index  # noqa: E402

EMBEDDING_TABLES = ("page_embedding_list", "page_embedding_centroid", "page_section_embedding", "page_embedding",
                    "embedding_model")


def _copy_without_vectors(src: Path, dst: Path) -> None:
    shutil.copy(src, dst)
    conn = open_summary_db(dst, create=False)  # a copy of an older layout is moved (textpile.store.migrations)
    with conn:
        for table in EMBEDDING_TABLES:
            conn.execute(f"DELETE FROM {table}")
    conn.close()


def _vacuumed_size(conn: sqlite3.Connection, path: Path) -> int:
    if path.exists():
        path.unlink()
    conn.execute("VACUUM INTO ?", (str(path),))
    size = path.stat().st_size
    path.unlink()
    return size


def embedding_cost(site_db: Path, work: Path, embedder, repeat: int) -> dict:
    """CPU seconds of embed_summary and a whole index rebuild on a copy of ``site_db`` (best of ``repeat``)."""
    embed_s, fts_s, report = [], [], None
    for _ in range(repeat):
        copy = work / "embed.db"
        _copy_without_vectors(site_db, copy)
        conn = sqlite3.connect(copy)
        t0 = time.process_time()
        update_index(conn, rebuild=True)
        fts_s.append(time.process_time() - t0)
        t0 = time.process_time()
        report = embed_summary_in(conn, embedder)
        embed_s.append(time.process_time() - t0)
        pages = conn.execute("SELECT count(*) FROM page_embedding").fetchone()[0]
        with_vectors = _vacuumed_size(conn, work / "with.db")
        with conn:
            for table in EMBEDDING_TABLES:
                conn.execute(f"DELETE FROM {table}")
        without = _vacuumed_size(conn, work / "without.db")
        conn.close()
        copy.unlink()
    return {"pages": report.pages_embedded, "sections": report.sections_embedded, "embed_s": min(embed_s),
            "fts_s": min(fts_s), "bytes_per_page": (with_vectors - without) / max(pages, 1)}


def replicated(vectors: list[PageVectors], total: int, seed: int = 14) -> PageVectors:
    """``total`` unit rows: the given vectors, then noisy copies of them (each about 0.95
    cosine similar to its original)."""
    base = np.concatenate([v.matrix for v in vectors])
    rng = np.random.default_rng(seed)
    rows = [base]
    have = base.shape[0]
    while have < total:
        take = base[: min(base.shape[0], total - have)]
        noisy = take + rng.normal(0, 0.3 / np.sqrt(take.shape[1]), take.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        rows.append(noisy.astype(np.float32))
        have += take.shape[0]
    matrix = np.ascontiguousarray(np.concatenate(rows)[:total])
    return PageVectors(np.arange(1, total + 1, dtype=np.int64), matrix, vectors[0].model, vectors[0].dimensions)


def _site_pages(conn: sqlite3.Connection, vectors: PageVectors) -> list[str]:
    """The judged-path form of each row's page of ``vectors`` (rows in order)."""
    urls = dict(conn.execute("SELECT entity_generation_id, u.str_url FROM entity_generation eg "
                             "JOIN url u ON u.url_id = eg.url_id"))
    return [_path(urls[int(i)]) for i in vectors.ids]


def _mrr10(found: list[tuple[int, float]], relevant_rows: set[int], base: int) -> float:
    """Reciprocal rank of the first result (id = row + 1) whose original row is relevant."""
    for rank, (eg_id, _sim) in enumerate(found[:10], start=1):
        if (eg_id - 1) % base in relevant_rows:
            return 1.0 / rank
    return 0.0


def embedding_part(dbs: dict, embedder, repeat: int) -> None:
    print("\n1-2. embedding cost per site (one core, CPU seconds, best of", repeat, "runs)")
    print(f"{'site':<11} {'pages':>6} {'sections':>8} {'embed s':>8} {'pages/s':>8} {'FTS s':>7} "
          f"{'embed/FTS':>9} {'bytes/page':>10}")
    totals = {"pages": 0, "embed_s": 0.0, "fts_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        for name, db in dbs.items():
            c = embedding_cost(db, Path(tmp), embedder, repeat)
            for key in totals:
                totals[key] += c[key]
            print(f"{name:<11} {c['pages']:>6} {c['sections']:>8} {c['embed_s']:>8.2f} "
                  f"{c['pages'] / c['embed_s']:>8.1f} {c['fts_s']:>7.2f} {c['embed_s'] / c['fts_s']:>8.2f}x "
                  f"{c['bytes_per_page']:>10.0f}", flush=True)
    print(f"{'all':<11} {totals['pages']:>6} {'':>8} {totals['embed_s']:>8.2f} "
          f"{totals['pages'] / totals['embed_s']:>8.1f} {totals['fts_s']:>7.2f} "
          f"{totals['embed_s'] / totals['fts_s']:>8.2f}x")


def latency_part(sites, dbs: dict, data_dir: Path, embedder, pages: int, per_site: int, probes: list[int]) -> None:
    conns = {name: sqlite3.connect(f"file:{db}?mode=ro", uri=True) for name, db in dbs.items()}
    loaded = {name: load_page_vectors(c) for name, c in conns.items()}
    loaded = {name: v for name, v in loaded.items() if v is not None and len(v)}
    base_pages = [(name, path) for name, v in loaded.items() for path in _site_pages(conns[name], v)]
    big = replicated(list(loaded.values()), pages)
    t0 = time.process_time()
    centroids, labels = partition(big.matrix)
    train_s = time.process_time() - t0
    ivf = big.partitioned(centroids, labels)
    sizes = np.diff(ivf.offsets)
    print(f"\n3. query latency at {len(big):,} page vectors ({big.matrix.nbytes / 2**20:.0f} MiB in memory), ms")
    print(f"  partition: {ivf.lists} lists (vectors per list min {sizes.min()} / median {int(np.median(sizes))} / "
          f"max {sizes.max()}), computed in {train_s:.2f} CPU s (k-means, splits, every vector's list)")
    queries = []
    for site in sites:
        indexed = {_path(r[0]) for r in searchable_documents(conns[site.name])}
        kept, _ = sample(site_queries(site, site.root(data_dir)), indexed, per_site)
        queries += kept[:per_site]
    rows_of = {}
    for row, key in enumerate(base_pages):
        rows_of.setdefault(key, set()).add(row)
    variants = ["vector", "exact"] + [f"probe {p}" for p in probes] + ["keyword"]
    ms = {v: [] for v in variants}
    cpu = {v: [] for v in variants}  # CPU time of this thread: what time-slicing with other processes leaves out
    recall10 = {p: [] for p in probes}
    recall100 = {p: [] for p in probes}
    mrr = {"exact": [], **{p: [] for p in probes}}
    for n, q in enumerate(queries):
        relevant = set().union(*(rows_of.get((q.site, path), set()) for path in q.relevant))
        shift = n % len(variants)
        vector = None
        exact = None
        found = {}
        for which in variants[shift:] + variants[:shift]:
            if which != "vector" and which != "keyword" and vector is None:
                vector = embedder.embed_one(q.text)
            t0, c0 = time.perf_counter(), time.thread_time()
            if which == "vector":
                vector = embedder.embed_one(q.text)
            elif which == "exact":
                exact = big.nearest(vector, SEMANTIC_DEPTH)
            elif which == "keyword":
                search(conns[q.site], q.text, per_page=20)
            else:
                probe = int(which.split()[1])
                found[probe] = ivf.nearest(vector, SEMANTIC_DEPTH, probe=probe)
            ms[which].append((time.perf_counter() - t0) * 1000)
            cpu[which].append((time.thread_time() - c0) * 1000)
        truth = [i for i, _ in exact]
        mrr["exact"].append(_mrr10(exact, relevant, len(base_pages)))
        for probe, got in found.items():
            ids = [i for i, _ in got]
            recall10[probe].append(len(set(ids[:10]) & set(truth[:10])) / min(10, len(truth)))
            recall100[probe].append(len(set(ids) & set(truth)) / len(truth))
            mrr[probe].append(_mrr10(got, relevant, len(base_pages)))
    k50, k99 = percentile(ms["keyword"], 50), percentile(ms["keyword"], 99)
    print(f"  {len(queries)} judged queries, interleaved (rotating order); nearest {SEMANTIC_DEPTH}; "
          f"default probe {PROBE_LISTS}; wall ms, and CPU ms of the thread (thread_time)")
    print(f"  {'what':<40} {'p50':>7} {'p99':>7} {'cpu p50':>7} {'cpu p99':>7} {'p50/kw':>7} {'p99/kw':>7} "
          f"{'recall@10':>9} {'recall@100':>10} {'MRR@10':>7}")

    def line(label: str, wall: list[float], used: list[float], tail: str = "") -> None:
        w50, w99 = percentile(wall, 50), percentile(wall, 99)
        print(f"  {label:<40} {w50:>7.2f} {w99:>7.2f} {percentile(used, 50):>7.2f} {percentile(used, 99):>7.2f} "
              f"{w50 / k50:>6.2f}x {w99 / k99:>6.2f}x{tail}")

    line("query vector", ms["vector"], cpu["vector"])
    rows = [("exact", f"+ exact scan of {len(big):,}", None)] + [
        (f"probe {p}", f"+ partition, {p} of {ivf.lists} lists", p) for p in probes]
    for key, label, probe in rows:
        r10 = np.mean(recall10[probe]) if probe else 1.0
        r100 = np.mean(recall100[probe]) if probe else 1.0
        m = np.mean(mrr[probe if probe else "exact"])
        line(label, ms[key], cpu[key], f" {r10:>9.4f} {r100:>10.4f} {m:>7.3f}")
        # what a vector mode adds: the query vector plus the nearest pages, per query
        line("  = query vector + nearest (added)", [x + y for x, y in zip(ms["vector"], ms[key])],
             [x + y for x, y in zip(cpu["vector"], cpu[key])])
    print(f"  {'keyword search (its site, 20 results)':<40} {k50:>7.2f} {k99:>7.2f} "
          f"{percentile(cpu['keyword'], 50):>7.2f} {percentile(cpu['keyword'], 99):>7.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300, help="judged queries sampled per site (all classes)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--parts", default="embedding,latency", help="embedding (1-2), latency (3)")
    parser.add_argument("--probes", default=f"32,96,{PROBE_LISTS},288", help="lists probed per query, each measured")
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    sites = [s for s in SITES if s.name in args.sites.split(",")]
    dbs = {s.name: data_dir / "index" / s.name / "summary.db" for s in sites}
    missing = [str(p) for p in dbs.values() if not p.exists()]
    if missing:
        parser.error(f"no summary database at {', '.join(missing)}: run python bench/relevance --modes hybrid first")
    load_before = os.getloadavg()
    t0 = time.process_time()
    embedder = load_embedder()
    print(f"model loaded in {time.process_time() - t0:.2f} CPU s")

    if "embedding" in args.parts:
        embedding_part(dbs, embedder, args.repeat)
    if "latency" in args.parts:
        latency_part(sites, dbs, data_dir, embedder, args.pages, args.queries,
                     [int(p) for p in args.probes.split(",") if p])
    load_after = os.getloadavg()
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    return 0


def _path(url: str) -> str:
    """A page URL as a path relative to its site root (the judgments' form)."""
    path = urlsplit(url).path.lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path


if __name__ == "__main__":
    sys.exit(main())
