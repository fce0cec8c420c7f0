"""The relevance benchmark's queries on an index updated by what changed, against the same
index rebuilt whole: the top 10 of every judged query, compared.

    python bench/relevance/incremental.py [--data-dir DIR] [--sites ...] [--share 0.5]

Per site (summarized by ``python bench/relevance`` before, under ``--data-dir``), on a copy
of its summary database: the index rebuilt whole; then ``--share`` of its pages (every
n-th generation) taken out of it and put back, each followed by an update of the index
(textpile.index.update: the pages leave and come back, with every page linked from them
indexed again by its in-link counts), as crawls that change pages would; then every
judged query run (default mode) on the updated copy and on the rebuilt original. Printed
per site: the queries, how many have the same top 10 (URLs in order), MRR@10 of both, and
whether every derived table and FTS5 row is the same (fts5vocab, as
tests/index/test_update.py compares them). Nothing of the benchmark's cache is changed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judgments import sample, site_queries  # noqa: E402
from metrics import dedupe_pages, page_path, reciprocal_rank  # noqa: E402
from sites import SITE_NAMES, SITES, ensure_site  # noqa: E402
from systems import Textpile, searchable_documents  # noqa: E402

from textpile.index.update import update_index, update_search_index  # noqa: E402
from textpile.store.database import open_summary_db  # noqa: E402
from textpile.store.gen2_piles import register_functions  # noqa: E402
from textpile.store.searchable import searchable  # noqa: E402

_TABLES = ("search_page", "search_section", "search_language", "search_term", "search_word", "search_top_tier",
           "search_link", "search_inlink", "search_origin", "search_heading")
_FTS = ("full_text_entity_index", "search_index", "section_search_index", "search_index_top",
        "section_search_index_top")


def dump(path: Path) -> dict[str, list]:
    """Every derived table's rows and every FTS5 table's (term, rowid, column, offset)."""
    with closing(register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))) as conn:
        out = {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in _TABLES}
        for table in _FTS:
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, 'instance')")
            out[table] = conn.execute(f"SELECT term, doc, col, offset FROM temp.v_{table} "
                                      "ORDER BY term, doc, col, offset").fetchall()
    return out


def churn(path: Path, share: float) -> tuple[int, int]:
    """Take every n-th searchable generation (n = 1 / ``share``) out of the index of the
    summary database ``path`` and put it back, updating the index after each step (the
    generations are closed, then opened again: what crawls that change pages do to the
    index); returns (pages taken out, pages indexed again along with them)."""
    step = max(1, round(1 / share))
    with closing(open_summary_db(path)) as conn:
        ids = [r[0] for r in conn.execute(f"SELECT entity_generation_id FROM entity_generation eg "
                                          f"WHERE {searchable('eg')} ORDER BY 1")][::step]
        marks = ",".join("?" * len(ids))
        with conn:
            conn.execute(f"UPDATE entity_generation SET confirmed_end_unix_utc = last_seen_unix_utc "
                         f"WHERE entity_generation_id IN ({marks})", ids)
        out = update_index(conn)
        with conn:
            conn.execute(f"UPDATE entity_generation SET confirmed_end_unix_utc = NULL "
                         f"WHERE entity_generation_id IN ({marks})", ids)
        back = update_index(conn)
    assert not out.rebuilt and not back.rebuilt, (out.rebuild_reason, back.rebuild_reason)
    return out.pages_removed, out.pages_reindexed + back.pages_reindexed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--per-class", type=int, default=100)
    args = parser.parse_args()
    wanted = set(args.sites.split(","))
    total = same = 0
    print(f"{'site':<11} {'queries':>7} {'same top 10':>12} {'MRR@10 updated':>15} {'rebuilt':>8} "
          f"{'out':>5} {'again':>6} tables")
    with tempfile.TemporaryDirectory(dir=args.data_dir) as tmp:
        for site in (s for s in SITES if s.name in wanted):
            root = ensure_site(site, args.data_dir)
            original = args.data_dir / "index" / site.name / "summary.db"
            rebuilt, updated = Path(tmp) / "rebuilt.db", Path(tmp) / "updated.db"
            with closing(sqlite3.connect(f"file:{original}?mode=ro", uri=True)) as src, \
                    closing(sqlite3.connect(rebuilt)) as dst:
                src.backup(dst)
            update_search_index(rebuilt, rebuild=True)
            shutil.copy(rebuilt, updated)
            out, again = churn(updated, args.share)
            tables_same = dump(updated) == dump(rebuilt)
            with closing(register_functions(sqlite3.connect(f"file:{rebuilt}?mode=ro", uri=True))) as conn:
                indexed = {page_path(r[0]) for r in searchable_documents(conn)}
            queries, _ = sample(site_queries(site, root), indexed, args.per_class)
            a, b = Textpile(rebuilt), Textpile(updated)
            rr_a = rr_b = 0.0
            site_same = 0
            for q in queries:
                ra, rb = dedupe_pages(a.search(q.text))[:10], dedupe_pages(b.search(q.text))[:10]
                site_same += ra == rb
                rr_a += reciprocal_rank(ra, q.relevant)
                rr_b += reciprocal_rank(rb, q.relevant)
            total += len(queries)
            same += site_same
            n = max(1, len(queries))
            print(f"{site.name:<11} {len(queries):>7} {site_same:>12} {rr_b / n:>15.3f} {rr_a / n:>8.3f} "
                  f"{out:>5} {again:>6} {'same' if tables_same else 'DIFFER'}", flush=True)
            for p in (rebuilt, updated):
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{p}{suffix}").unlink(missing_ok=True)
    print(f"all         {total:>7} {same:>12} ({same / max(1, total):.4f} of the queries: the same top 10)  "
          f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
