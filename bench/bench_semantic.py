"""Benchmark: what semantic search costs: embedding speed, bytes per page, query latency.

    python bench/bench_semantic.py [--data-dir bench/data] [--pages 100000] [--queries 300]

Uses the relevance benchmark's six documentation sites (``python bench/relevance`` builds
them under ``--data-dir``; nothing there is changed: work happens on copies in a
temporary folder). Everything runs in this one process on one core (the tokenizer's
thread pool and BLAS are held to one thread before they load).

1. **Embedding**, per site: the site's summary database is copied without its vectors,
   then ``rebuild_fts`` (the peer: the search index rebuild every summarize does) and
   ``embed_summary`` run on it, alternately, ``--repeat`` times; printed: pages and
   sections embedded, CPU seconds, pages per CPU second, and the ratio to the index
   rebuild's time.
2. **Bytes per page**: the file size with and without the embedding tables (both
   ``VACUUM INTO`` copies), divided by the searchable pages.
3. **Query latency at ``--pages`` pages**: the six sites' page vectors replicated with a
   little noise (each copy a unit vector near its original, as copies of a page on other
   origins would be) to ``--pages`` rows; per judged query (sampled, every class): the
   query's vector plus :meth:`PageVectors.nearest` of ``SEMANTIC_DEPTH`` (what the
   semantic and hybrid modes add to a search), interleaved with a keyword search of the
   same query on its own site's database (the peer). Printed: p50/p99 of each and the
   ratio, and the load average before and after.
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
from textpile.semantic.modes import SEMANTIC_DEPTH  # noqa: E402
from textpile.semantic.vectors import PageVectors, load_page_vectors  # noqa: E402
from textpile.summarize.fts import rebuild_fts_in  # noqa: E402

EMBEDDING_TABLES = ("section_embedding", "page_embedding", "embedding_model")


def _copy_without_vectors(src: Path, dst: Path) -> None:
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
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
    """CPU seconds of embed_summary and rebuild_fts on a copy of ``site_db`` (best of ``repeat``)."""
    embed_s, fts_s, report = [], [], None
    for _ in range(repeat):
        copy = work / "embed.db"
        _copy_without_vectors(site_db, copy)
        conn = sqlite3.connect(copy)
        t0 = time.process_time()
        rebuild_fts_in(conn)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300, help="judged queries sampled per site (all classes)")
    parser.add_argument("--repeat", type=int, default=2)
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

    print("\n1-2. embedding cost per site (one core, CPU seconds, best of", args.repeat, "runs)")
    print(f"{'site':<11} {'pages':>6} {'sections':>8} {'embed s':>8} {'pages/s':>8} {'FTS s':>7} "
          f"{'embed/FTS':>9} {'bytes/page':>10}")
    totals = {"pages": 0, "embed_s": 0.0, "fts_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        for name, db in dbs.items():
            c = embedding_cost(db, Path(tmp), embedder, args.repeat)
            for key in totals:
                totals[key] += c[key]
            print(f"{name:<11} {c['pages']:>6} {c['sections']:>8} {c['embed_s']:>8.2f} "
                  f"{c['pages'] / c['embed_s']:>8.1f} {c['fts_s']:>7.2f} {c['embed_s'] / c['fts_s']:>8.2f}x "
                  f"{c['bytes_per_page']:>10.0f}", flush=True)
    print(f"{'all':<11} {totals['pages']:>6} {'':>8} {totals['embed_s']:>8.2f} "
          f"{totals['pages'] / totals['embed_s']:>8.1f} {totals['fts_s']:>7.2f} "
          f"{totals['embed_s'] / totals['fts_s']:>8.2f}x")

    conns = {name: sqlite3.connect(f"file:{db}?mode=ro", uri=True) for name, db in dbs.items()}
    loaded = [load_page_vectors(c) for c in conns.values()]
    big = replicated([v for v in loaded if v is not None], args.pages)
    print(f"\n3. query latency at {len(big):,} page vectors ({big.matrix.nbytes / 2**20:.0f} MiB in memory), ms")
    queries = []
    for site in sites:
        indexed = {_path(r[0]) for r in searchable_documents(conns[site.name])}
        kept, _ = sample(site_queries(site, site.root(data_dir)), indexed, args.queries)
        queries += [(site.name, q.text) for q in kept[: args.queries]]
    semantic_ms, keyword_ms = [], []
    for n, (name, text) in enumerate(queries):
        order = ("semantic", "keyword") if n % 2 == 0 else ("keyword", "semantic")
        for which in order:
            t0 = time.perf_counter()
            if which == "semantic":
                big.nearest(embedder.embed_one(text), SEMANTIC_DEPTH)
                semantic_ms.append((time.perf_counter() - t0) * 1000)
            else:
                search(conns[name], text, per_page=20)
                keyword_ms.append((time.perf_counter() - t0) * 1000)
    load_after = os.getloadavg()
    s50, s99 = percentile(semantic_ms, 50), percentile(semantic_ms, 99)
    k50, k99 = percentile(keyword_ms, 50), percentile(keyword_ms, 99)
    print(f"  {len(queries)} queries, interleaved")
    print(f"  query vector + nearest {SEMANTIC_DEPTH} of {len(big):,}   p50 {s50:7.2f}   p99 {s99:7.2f}")
    print(f"  keyword search (its site, 20 results)   p50 {k50:7.2f}   p99 {k99:7.2f}")
    print(f"  ratio semantic part / keyword search     p50 {s50 / k50:7.2f}x  p99 {s99 / k99:7.2f}x")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    return 0


def _path(url: str) -> str:
    """A page URL as a path relative to its site root (the judgments' form)."""
    path = urlsplit(url).path.lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path


if __name__ == "__main__":
    sys.exit(main())
