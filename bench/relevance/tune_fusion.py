"""Choose how the hybrid search mode fuses the keyword and semantic rankings.

    python bench/relevance/tune_fusion.py --data-dir bench/data [--sites sqlite,...]

Runs every judged query once through the keyword ranker (all reranked candidates, with
how many query words each holds) and once through the page vectors (the nearest
:data:`textpile.search.nearest.SEMANTIC_DEPTH` pages), then scores fusion variants on
those two lists offline: reciprocal rank fusion with several keyword weights and
constants, with and without a gate that keeps the keyword order: when the keyword ranker
found pages holding every word (no partial match: ``complete``), when its first page
matches exactly (``exact``, ``exact-top`` keeps only that page first), or textpile's own
rule (``found-it``: :func:`textpile.search.hybrid.keyword_found_it`, marked). Prints MRR@10 per query class for
each variant, keyword and semantic alone first; with ``--floors``, also semantic and
textpile's hybrid with the semantic ranking cut at each similarity floor (cosine), and
the share of queries whose semantic ranking the floor leaves empty. The sites must have been prepared by
``python bench/relevance --modes hybrid`` (summary databases with vectors); their search
index is rebuilt first, as the benchmark does.
"""

from __future__ import annotations

import argparse
import pickle
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judgments import sample, site_queries  # noqa: E402
from metrics import page_path, reciprocal_rank  # noqa: E402
from sites import SITE_NAMES, SITES  # noqa: E402
from systems import searchable_documents  # noqa: E402

from textpile.search.engine import search  # noqa: E402

from textpile.semantic.fusion import reciprocal_rank_fusion  # noqa: E402
from textpile.search.query import parse_query  # noqa: E402
from textpile.search.hybrid import FUSION_K, KEYWORD_WEIGHT, keyword_found_it  # noqa: E402
from textpile.search.nearest import SEMANTIC_DEPTH  # noqa: E402
from textpile.semantic.loaded import Semantic  # noqa: E402
from textpile.index.update import update_search_index  # noqa: E402


def collect(summary_db: Path, queries) -> list[dict]:
    """Per query: its class, relevant pages, the keyword ranking [(id, held)], whether
    it was a partial match, and the semantic ranking [id]."""
    conn = sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True)
    semantic = Semantic.load(conn)
    paths = {}
    for (eg_id, url) in conn.execute(
            "SELECT eg.entity_generation_id, u.str_url FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id"):
        paths[eg_id] = page_path(url)
    out = []
    for q in queries:
        captured = []

        def capture(_conn, _parsed, scored, captured=captured):
            captured.extend((s.info.entity_generation_id, s.held, dict(s.features)) for s in scored)
            return scored, True

        results = search(conn, q.text, per_page=10, reorder=capture)
        vector = semantic.embedder.embed_one(q.text)
        found = semantic.vectors.nearest(vector, SEMANTIC_DEPTH)
        out.append({"class": q.klass, "text": q.text, "parsed": parse_query(q.text), "relevant": sorted(q.relevant),
                    "keyword": captured, "partial": results.fallback_any_term,
                    "semantic": [i for i, _ in found], "semantic_sims": [sim for _, sim in found], "paths": paths})
    conn.close()
    return out


def rr(order: list[int], item: dict) -> float:
    ranked, seen = [], set()
    for i in order:
        p = item["paths"].get(i)
        if p is not None and p not in seen:
            seen.add(p)
            ranked.append(p)
    return reciprocal_rank(ranked, frozenset(item["relevant"]))


def fused(item: dict, weight: float, k: float, gate: bool, depth: int) -> list[int]:
    keyword = [i for i, _, _ in item["keyword"]]
    if gate == "complete" and not item["partial"] and item["keyword"]:
        return keyword
    if gate == "exact" and confident(item):
        return keyword
    if gate == "found-it" and item["keyword"] and keyword_found_it(item["parsed"], [_Top(*item["keyword"][0][1:])]):
        return keyword
    if gate == "exact-top" and confident(item):
        rest = fused(item, weight, k, None, depth)
        return keyword[:1] + [i for i in rest if i != keyword[0]]
    scores = reciprocal_rank_fusion([(keyword, weight), (item["semantic"][:depth], 1.0)], k=k)
    return sorted(scores, key=lambda i: (-scores[i], i))


def confident(item: dict) -> bool:
    """The keyword ranker's first page holds every word and matches its title, a section
    title or its URL exactly."""
    if not item["keyword"]:
        return False
    _, held, f = item["keyword"][0]
    return held >= 1.0 and max(f.get("title_exact", 0), f.get("section_exact", 0), f.get("url_exact", 0)) > 0


def _floored(item: dict, floor: float) -> dict:
    """``item`` with its semantic ranking cut where the similarity falls below ``floor``."""
    kept = [i for i, sim in zip(item["semantic"], item["semantic_sims"]) if sim >= floor]
    return dict(item, semantic=kept)


class _Top:
    """The first keyword candidate of a collected item, shaped like a Scored for
    :func:`textpile.search.hybrid.keyword_found_it`."""

    def __init__(self, held: float, features: dict) -> None:
        self.held, self.features = held, features


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--cache", type=Path, help="keep the collected rankings in this file (pickle) and reuse them")
    parser.add_argument("--floors", default="", help="similarity floors to try, e.g. 0.2,0.3,0.4")
    args = parser.parse_args()
    cached = args.cache is not None and args.cache.exists()
    items = pickle.loads(args.cache.read_bytes()) if cached else []
    for site in (s for s in SITES if s.name in args.sites.split(",") and not cached):
        summary_db = args.data_dir.resolve() / "index" / site.name / "summary.db"
        update_search_index(summary_db, rebuild=True)  # the search index as this code builds it
        conn = sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True)
        indexed = {page_path(r[0]) for r in searchable_documents(conn)}
        conn.close()
        queries, _ = sample(site_queries(site, site.root(args.data_dir.resolve())), indexed, args.per_class)
        items += collect(summary_db, queries)
        print(f"== {site.name}: {len(queries)} queries", flush=True)
    if args.cache is not None and not cached:
        args.cache.write_bytes(pickle.dumps(items))
    variants = [("keyword", lambda it: [i for i, _, _ in it["keyword"]]), ("semantic", lambda it: it["semantic"])]
    for gate in (None, "complete", "exact", "exact-top", "found-it"):
        for weight in (0.5, 1.0, 2.0):
            for k in (5, 20, 60):
                for depth in (20, 100):
                    label = f"rrf w={weight} k={k} d={depth}{' ' + gate if gate else ''}"
                    variants.append((label, lambda it, w=weight, kk=k, g=gate, d=depth: fused(it, w, kk, g, d)))
    for floor in (float(f) for f in args.floors.split(",") if f):
        variants.append((f"semantic floor={floor}", lambda it, f=floor: _floored(it, f)["semantic"]))
        variants.append((f"textpile hybrid floor={floor}",
                         lambda it, f=floor: fused(_floored(it, f), KEYWORD_WEIGHT, FUSION_K, "found-it", SEMANTIC_DEPTH)))
        empty = defaultdict(list)
        for it in items:
            empty[it["class"]].append(not _floored(it, floor)["semantic"])
        print(f"floor {floor}: queries left without semantic results: "
              + ", ".join(f"{c} {mean(v):.1%}" for c, v in sorted(empty.items())))
    classes = sorted({it["class"] for it in items})
    print(f"{'variant':<34} " + " ".join(f"{c[:9]:>9}" for c in classes) + f" {'known':>9}")
    for label, order in variants:
        by_class = defaultdict(list)
        for it in items:
            by_class[it["class"]].append(rr(order(it), it))
        known = [v for c, vs in by_class.items() if c != "natural" for v in vs]
        chosen = " <- textpile" if label == f"rrf w={KEYWORD_WEIGHT} k={FUSION_K} d={SEMANTIC_DEPTH} found-it" else ""
        print(f"{label:<34} " + " ".join(f"{mean(by_class[c]):9.3f}" for c in classes) + f" {mean(known):9.3f}{chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
