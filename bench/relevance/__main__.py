"""Relevance benchmark: judged queries over real documentation sites of several generators.

    python bench/relevance [--sites postgresql,sqlite,...] [--per-class 100] [--ablation]
                           [--data-dir bench/data] [--resummarize] [--recrawl]
                           [--modes keyword,semantic,hybrid] [--classes natural,...]
                           [--no-pagefind] [--page-settings]

Installs real documentation sites from Debian packages (apt-get download + dpkg -x),
serves each on its own loopback address, crawls and summarizes it with textpile (cached
under ``--data-dir``), rebuilds the search index, then runs the judged queries (see
judgments.py) through textpile, unobtanium 3.0.0's ranking, tantivy and Pagefind
(systems.py), interleaved, and prints MRR@10, success@1 and NDCG@10 per site and query
class, overall, the everyday and natural classes apart (per site, over all sites, and
over the sites whose HTML Sphinx did not make), the query latency of each system
(p50/p99, ms) and the load average. ``--ablation`` adds
one textpile run per rerank feature with that feature turned off. ``--modes`` adds one
textpile run per search mode (``textpile-<mode>``, beside ``textpile``, the default mode);
the page vectors are brought up to date first (``textpile.semantic.embed``, incremental).
``--page-settings`` adds ``textpile-page`` (what the search page runs: facets counted,
:data:`~textpile.search.grouping.DEFAULT_PER_SITE` results per site, no ranking rules)
and ``textpile-no-typos`` (typo tolerance at match time off: the search before issue 32),
and prints, per variant, how many top-10 lists differ from ``textpile``'s.

python3.11-doc and python-django-doc are left out on purpose: textpile is also judged on
sites it was never tuned on.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import ensure_index, summarizer_digest  # noqa: E402
from judgments import sample, site_queries  # noqa: E402
from metrics import dedupe_pages, ndcg, page_path, percentile, reciprocal_rank, success_at, summarize_scores  # noqa: E402
from sites import SITE_NAMES, SITES, ensure_site  # noqa: E402
from systems import Pagefind, Tantivy, Textpile, Unobtanium, searchable_documents  # noqa: E402

from textpile.semantic.embed import embed_summary  # noqa: E402
from textpile.search.service import MODES  # noqa: E402
from textpile.semantic.loaded import Semantic  # noqa: E402
from textpile.store.gen2_piles import register_functions  # noqa: E402
from textpile.index.update import update_search_index  # noqa: E402


def ablation_variants() -> list[tuple[str, dict]]:
    """(label, search options) per rerank feature, when textpile's ranker has features."""
    try:
        from textpile.search.rank import FEATURES
    except ImportError:
        return []
    return [(f"-{name}", {"disable": frozenset([name])}) for name in FEATURES]


def page_variants() -> list[tuple[str, dict]]:
    """(label, search options) of ``--page-settings``: the search page's settings at their
    defaults, and the search without typo tolerance (issue 32's features turned off)."""
    from textpile.search.grouping import DEFAULT_PER_SITE

    return [("-page", {"facets": True, "per_site": DEFAULT_PER_SITE, "rules": ()}),
            ("-no-typos", {"typos": False})]


def print_differing(records: list[dict], variants: list[str]) -> None:
    """Per variant and query class, the judged queries whose top 10 differs from textpile's."""
    base = {(r["site"], r["query"]): r["ranked"][:10] for r in records if r["system"] == "textpile"}
    print("\ntop-10 lists that differ from textpile's (queries; per class):")
    for name in variants:
        rows = [r for r in records if r["system"] == name]
        differ = [r for r in rows if r["ranked"][:10] != base.get((r["site"], r["query"]))]
        per_class = defaultdict(lambda: [0, 0])
        for r in rows:
            per_class[r["class"]][1] += 1
        for r in differ:
            per_class[r["class"]][0] += 1
        classes = ", ".join(f"{c} {d}/{n}" for c, (d, n) in sorted(per_class.items()))
        print(f"  {name:<20} {len(differ)} of {len(rows)} ({classes})")
        for r in differ[:10]:
            print(f"    {r['site']} [{r['class']}] {r['query']!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default=",".join(SITE_NAMES), help="comma-separated: " + ", ".join(SITE_NAMES))
    parser.add_argument("--per-class", type=int, default=100, help="queries sampled per site and class (everyday: all)")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--ablation", action="store_true", help="also run textpile with each rerank feature off")
    parser.add_argument("--no-baselines", action="store_true", help="textpile only (faster while tuning)")
    parser.add_argument("--no-pagefind", action="store_true", help="leave Pagefind out of the peers (it needs Node)")
    parser.add_argument("--resummarize", action="store_true")
    parser.add_argument("--recrawl", action="store_true")
    parser.add_argument("--json", type=Path, help="also write every query's ranks here")
    parser.add_argument("--dump-candidates", type=Path,
                        help="write every query's reranked candidates with features and labels (for tune.py)")
    parser.add_argument("--show-misses", type=int, default=0, help="print up to N missed queries per site")
    parser.add_argument("--modes", default="", help="also run textpile in these search modes (comma-separated: "
                        "keyword, semantic, hybrid)")
    parser.add_argument("--page-settings", action="store_true",
                        help="also run textpile with the search page's settings and without typo tolerance, "
                             "and count the top-10 lists that differ")
    parser.add_argument("--classes", default="", help="only these query classes (comma-separated; default: all)")
    args = parser.parse_args()
    wanted = [s.strip() for s in args.sites.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in SITE_NAMES]
    if unknown:
        parser.error(f"--sites: unknown {', '.join(unknown)} (known: {', '.join(SITE_NAMES)})")
    data_dir = args.data_dir.resolve()
    digest = summarizer_digest()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for mode in modes:
        if mode not in MODES:
            parser.error(f"--modes: unknown {mode!r} (known: {', '.join(MODES)})")
    classes = {c.strip() for c in args.classes.split(",") if c.strip()}

    scores: dict[tuple[str, str, str], list[tuple[float, float, float]]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    records, misses, dumped, slowest = [], defaultdict(list), [], []
    load_before = os.getloadavg()
    for site in (s for s in SITES if s.name in wanted):
        root = ensure_site(site, data_dir)
        summary_db = ensure_index(site, root, data_dir, digest, recrawl=args.recrawl, resummarize=args.resummarize)
        started = time.monotonic()
        rows = update_search_index(summary_db, rebuild=True).pages
        print(f"== {site.name}: search index rebuilt ({rows} pages, {time.monotonic() - started:.1f} s)", flush=True)
        conn = register_functions(sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True))  # the text_pile view unpacks
        indexed = {page_path(r[0]) for r in searchable_documents(conn)}
        conn.close()
        queries, dropped = sample(site_queries(site, root), indexed, args.per_class)
        if classes:
            queries = [q for q in queries if q.klass in classes]
        systems = [("textpile", Textpile(summary_db))]
        if modes:
            started = time.monotonic()
            embedded = embed_summary(summary_db)
            print(f"   page vectors: {embedded.pages_embedded} pages and {embedded.sections_embedded} sections "
                  f"embedded, {embedded.pages_kept} kept ({time.monotonic() - started:.1f} s)", flush=True)
            conn = sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True, check_same_thread=False)
            semantic = Semantic.load(conn)
            conn.close()
            systems += [(f"textpile-{mode}", Textpile(summary_db, mode=mode, semantic=semantic)) for mode in modes]
        if not args.no_baselines:
            systems += [("unobtanium", Unobtanium(summary_db)), ("tantivy", Tantivy(summary_db))]
            if not args.no_pagefind:
                systems.append(("pagefind", Pagefind(summary_db, root, data_dir / "index" / site.name / "pagefind")))
        if args.ablation:
            systems += [(f"textpile{label}", Textpile(summary_db, **opts)) for label, opts in ablation_variants()]
        if args.page_settings:
            systems += [(f"textpile{label}", Textpile(summary_db, **opts)) for label, opts in page_variants()]
        print(f"   {len(queries)} judged queries ({dropped} dropped: no relevant page indexed)", flush=True)
        if args.dump_candidates:
            for name, system in systems:
                if name != "textpile" and name not in ("textpile-keyword", "textpile-hybrid"):
                    continue
                for q in queries:
                    cands = system.explain(q.text)
                    dumped.append({"system": name, "site": site.name, "class": q.klass, "query": q.text,
                                   "candidates": [{"held": c["held"], "features": c["features"],
                                                   "relevant": page_path(c["url"]) in q.relevant,
                                                   "page": page_path(c["url"])} for c in cands]})
        for i, q in enumerate(queries):
            order = systems[i % len(systems):] + systems[: i % len(systems)]  # interleaved, rotated
            for name, system in order:
                t0 = time.perf_counter()
                urls = system.search(q.text)
                ms = (time.perf_counter() - t0) * 1000
                latency[name].append(ms)
                if name == "textpile":
                    slowest.append((ms, site.name, q.text))
                ranked = dedupe_pages(urls)
                row = (reciprocal_rank(ranked, q.relevant), success_at(ranked, q.relevant), ndcg(ranked, q.relevant))
                scores[(name, site.name, q.klass)].append(row)
                records.append({"system": name, "site": site.name, "class": q.klass, "query": q.text,
                                "relevant": sorted(q.relevant), "ranked": ranked, "rr": row[0]})
                if name == "textpile" and row[1] == 0.0:
                    misses[site.name].append((q, ranked[:3]))
        for _, system in systems:
            if hasattr(system, "close"):
                system.close()
    load_after = os.getloadavg()
    names = list(dict.fromkeys(n for (n, _, _) in scores))
    print_table(scores, names)
    print_described(scores, names)
    if args.page_settings:
        print_differing(records, [f"textpile{label}" for label, _ in page_variants()])
    print("\nlatency per query, ms (p50 / p99), measured interleaved in this run:")
    base = percentile(latency.get("tantivy", []), 50)
    for name in names:
        p50, p99 = percentile(latency[name], 50), percentile(latency[name], 99)
        ratio = f"   {p50 / base:.1f}x tantivy's p50" if base and name != "tantivy" else ""
        print(f"  {name:<28} {p50:8.2f} / {p99:8.2f}{ratio}")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    print("slowest textpile queries: " + "; ".join(f"{site} {text!r} {ms:.0f} ms"
                                                    for ms, site, text in sorted(slowest, reverse=True)[:6]))
    if args.show_misses:
        for site_name, items in misses.items():
            print(f"\ntextpile misses at rank 1, {site_name} (first {args.show_misses}):")
            for q, top in items[: args.show_misses]:
                print(f"  [{q.klass}] {q.text!r} -> want {sorted(q.relevant)[:2]} got {top}")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    if args.dump_candidates:
        args.dump_candidates.write_text(json.dumps(dumped))
    return 0


def print_table(scores, names: list[str]) -> None:
    """MRR@10 / S@1 / NDCG@10 per (site, class), per site, and overall, per system."""
    keys = sorted({(s, c) for (_, s, c) in scores})
    header = f"{'site':<11} {'class':<9} {'n':>4} " + " ".join(f"{n[:22]:>22}" for n in names)
    print("\nMRR@10 / success@1 / NDCG@10")
    print(header)
    print("-" * len(header))

    def cell(rows):
        m, s, n = summarize_scores(rows)
        return f"{m:.3f} {s:.3f} {n:.3f}".rjust(22)

    for site, klass in keys:
        n = len(scores[(names[0], site, klass)])
        print(f"{site:<11} {klass:<9} {n:>4} " + " ".join(cell(scores[(name, site, klass)]) for name in names))
    print("-" * len(header))
    for site in sorted({s for s, _ in keys}):
        rows = {name: [r for (nm, s, _), v in scores.items() if nm == name and s == site for r in v] for name in names}
        print(f"{site:<11} {'all':<9} {len(rows[names[0]]):>4} " + " ".join(cell(rows[name]) for name in names))
    for klass in sorted({c for _, c in keys}):
        rows = {name: [r for (nm, _, c), v in scores.items() if nm == name and c == klass for r in v] for name in names}
        print(f"{'all':<11} {klass:<9} {len(rows[names[0]]):>4} " + " ".join(cell(rows[name]) for name in names))
    rows = {name: [r for (nm, _, _), v in scores.items() if nm == name for r in v] for name in names}
    print(f"{'ALL':<11} {'all':<9} {len(rows[names[0]]):>4} " + " ".join(cell(rows[name]) for name in names))


#: The classes of queries that describe what the user wants rather than name a page.
DESCRIBED = ("everyday", "natural")


def print_described(scores, names: list[str]) -> None:
    """MRR@10 / success@1 of the everyday and natural classes, apart and together: per
    site (with its generator), over all sites, and over the sites Sphinx did not make."""
    generator = {site.name: site.generator for site in SITES}
    sites = sorted({s for (_, s, c) in scores if c in DESCRIBED})
    if not sites:
        return
    header = f"{'site':<11} {'generator':<18} {'class':<9} {'n':>4} " + " ".join(f"{n[:16]:>16}" for n in names)
    print("\neveryday and natural queries: MRR@10 / success@1")
    print(header)
    print("-" * len(header))

    def row(label: str, gen: str, klass: str, chosen: list[str]) -> None:
        classes = DESCRIBED if klass == "both" else (klass,)
        rows = {name: [r for s in chosen for c in classes for r in scores.get((name, s, c), [])] for name in names}
        if not rows[names[0]]:
            return
        cells = " ".join(f"{m:.3f} {s1:.3f}".rjust(16) for m, s1, _ in (summarize_scores(rows[n]) for n in names))
        print(f"{label:<11} {gen[:18]:<18} {klass:<9} {len(rows[names[0]]):>4} {cells}")

    for site in sites:
        for klass in (*DESCRIBED, "both"):
            row(site, generator.get(site, "?"), klass, [site])
    print("-" * len(header))
    others = [s for s in sites if generator.get(s) != "Sphinx"]
    for label, gen, chosen in (("all", f"{len(sites)} sites", sites), ("not Sphinx", f"{len(others)} sites", others)):
        for klass in (*DESCRIBED, "both"):
            row(label, gen, klass, chosen)


if __name__ == "__main__":
    sys.exit(main())
