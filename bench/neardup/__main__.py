"""Near-duplicate benchmark: precision and recall of textpile's near-duplicate rule on page
pairs from real documentation sites.

    python bench/neardup [--data-dir bench/data] [--pages 30] [--sites rust,sqlite,...]

Reads the relevance benchmark's crawled sites (``<data-dir>/index/<site>/crawler.db`` and
``summary.db``, made by ``python bench/relevance``; opened read-only) and builds two kinds
of pairs:

- **boilerplate-only** (should collapse): ``--pages`` pages per site (every page's HTML as
  crawled, the sample chosen by a hash of the URL), each in two copies that differ only in
  boilerplate, three ways: a footer line with a generation time and a tracking number, a
  banner before the page with a date and a count of readers online, and a "last updated /
  viewed N times" line at the end of the main text. Both copies are scraped by textpile
  (``scrape_document``) and compared.
- **different pages** (should stay apart): every pair of pages of one site with the same
  title, and every pair whose main texts' fingerprints are at most 16 bits apart (the
  hardest: API pages of sibling classes, release notes of patch releases, git commands
  sharing their options), from the site's summary database (its Text Pile Gen1 text and
  title). The pairs whose main texts are identical are counted apart: they are different
  URLs and titles whose main content holds the same words (rustdoc's iterator pages, SQLite's
  patch releases), a duplicate by text alone.

For each distance threshold (0 to 16 bits) it prints precision, recall and F1 of the rule
"same origin, fingerprints within the threshold", with the title condition textpile
adds (same title) and without it, and marks the threshold textpile uses
(:data:`textpile.summarize.duplicates.NEAR_DUPLICATE_BITS`). Plus the fingerprint's cost
per page (CPU ms) and the load average.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SITES = ("postgresql", "sqlite", "sphinx", "scipy", "sqlalchemy", "requests", "java", "rust", "git", "eigen", "octave")
#: Hardest negatives: real pairs at most this many bits apart.
HARD_BITS = 16
BODY_TAG = re.compile(r"<body[^>]*>", re.IGNORECASE)

from textpile.store.gen2_piles import register_functions  # noqa: E402
from textpile.summarize.duplicates import NEAR_DUPLICATE_BITS  # noqa: E402
from textpile.summarize.scrape.document import scrape_document  # noqa: E402
from textpile.summarize.scrape.fingerprint import hamming, simhash  # noqa: E402


def read_only(path: Path) -> sqlite3.Connection:
    return register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def variants(html: str, n: int) -> list[tuple[str, str, str]]:
    """(kind, copy 1, copy 2) of ``html`` differing only in boilerplate (``n`` varies the values)."""
    def footer(stamp: str, track: int) -> str:
        line = f"<p>Page generated {stamp} UTC, tracking number {track}.</p>"
        return html.replace("</body>", line + "</body>", 1) if "</body>" in html else html + line

    def banner(day: str, online: int) -> str:
        notice = f"<div class='notice'>{day}: {online} readers online now</div>"
        return BODY_TAG.sub(lambda m: m.group(0) + notice, html, count=1) if BODY_TAG.search(html) else notice + html

    def updated(stamp: str, views: int) -> str:
        line = f"<p>Last updated {stamp}. This page was viewed {views} times.</p>"
        for end in ("</main>", "</article>", "</body>"):
            if end in html:
                return html.replace(end, line + end, 1)
        return html + line

    return [("footer", footer(f"2024-05-0{1 + n % 9} 12:31:07", 88123 + n), footer("2024-06-11 08:02:55", 90877 + 7 * n)),
            ("banner", banner("Monday 3 June", 17 + n), banner("Friday 14 June", 203 + n)),
            ("updated", updated("2024-05-01", 1200 + n), updated("2024-06-11", 98431 + n))]


def positives(site: str, folder: Path, pages: int) -> list[tuple[str, bool, int, str]]:
    """(kind, same title, distance, url) of the boilerplate-only pairs of ``site``."""
    conn = read_only(folder / "crawler.db")
    rows = conn.execute(
        "SELECT u.str_url, ft.text FROM crawl_log l JOIN url u ON u.url_id = l.url_id JOIN file f ON"
        " f.crawl_log_id = l.crawl_log_id JOIN file_text ft ON ft.file_id = f.file_id JOIN mimetype m ON"
        " m.mimetype_id = f.mimetype_id WHERE l.exit_code = 20 AND m.mime_subtype = 'html'").fetchall()
    conn.close()
    rows.sort(key=lambda r: hashlib.blake2b(r[0].encode(), digest_size=8).digest())
    out = []
    for n, (url, html) in enumerate(rows[:pages]):
        for kind, one, two in variants(html, n):
            a, b = scrape_document(one, url), scrape_document(two, url)
            fa, fb = simhash(a.text_pile.text), simhash(b.text_pile.text)
            if fa is None or fb is None:
                continue  # too short for a fingerprint: not a near-duplicate candidate at all
            out.append((kind, a.description.title == b.description.title, hamming(fa, fb), url))
    return out


def negatives(site: str, folder: Path) -> tuple[list[tuple[bool, int, bool]], int, float]:
    """(same title, distance, identical main text) of the different-page pairs of ``site``,
    the pages fingerprinted, and the CPU ms per fingerprint."""
    conn = read_only(folder / "summary.db")
    rows = conn.execute(
        "SELECT u.str_url, tp.text, dd.title FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id"
        " JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id JOIN document_description dd"
        " ON dd.entity_generation_id = eg.entity_generation_id"
        " WHERE eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate").fetchall()
    conn.close()
    started = time.process_time()
    pages = [(url, simhash(text), title, text) for url, text, title in rows]
    cost = (time.process_time() - started) * 1000 / max(1, len(rows))
    pages = [p for p in pages if p[1] is not None]
    out = []
    for (_, fa, ta, xa), (_, fb, tb, xb) in itertools.combinations(pages, 2):
        distance = hamming(fa, fb)
        if distance <= HARD_BITS or ta == tb:
            out.append((ta == tb, distance, xa == xb))
    return out, len(pages), cost


def scores(pos: list[tuple[bool, int]], neg: list[tuple[bool, int]], bits: int, titles: bool) -> tuple[float, ...]:
    def flagged(same_title: bool, distance: int) -> bool:
        return distance <= bits and (same_title or not titles)

    tp = sum(flagged(*p) for p in pos)
    fp = sum(flagged(*n) for n in neg)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / len(pos) if pos else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, fp


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--pages", type=int, default=30, help="pages per site made into boilerplate-only pairs")
    parser.add_argument("--sites", default=",".join(SITES))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    pos_all, neg_all = [], []
    print(f"{'site':<11} {'pages':>6} {'fp ms':>6} {'boilerplate pairs':>18} {'different pairs':>16} "
          f"{'same title':>10} {'identical text':>14}  boilerplate distances (max per kind)")
    for site in [s for s in args.sites.split(",") if s]:
        folder = args.data_dir / "index" / site
        if not (folder / "crawler.db").exists():
            print(f"{site}: no crawl under {folder} (run python bench/relevance first)", file=sys.stderr)
            continue
        pos = positives(site, folder, args.pages)
        neg, pages, cost = negatives(site, folder)
        worst = {kind: max((d for k, _, d, _ in pos if k == kind), default=0) for kind in ("footer", "banner", "updated")}
        print(f"{site:<11} {pages:>6} {cost:>6.2f} {len(pos):>18} {len(neg):>16} {sum(n[0] for n in neg):>10} "
              f"{sum(n[2] for n in neg):>14}  {worst}")
        pos_all += [(same, d) for _, same, d, _ in pos]
        neg_all += [(same, d) for same, d, _ in neg]
    print()
    print(f"{len(pos_all)} boilerplate-only pairs (should collapse), {len(neg_all)} pairs of different pages "
          f"(should stay apart)")
    print(f"{'bits':>4}  {'same title and fingerprint':>36}  {'fingerprint alone':>36}")
    print(f"{'':>4}  {'precision':>9} {'recall':>7} {'F1':>6} {'false+':>7}   {'precision':>9} {'recall':>7} {'F1':>6} "
          f"{'false+':>7}")
    for bits in range(HARD_BITS + 1):
        with_title = scores(pos_all, neg_all, bits, True)
        alone = scores(pos_all, neg_all, bits, False)
        mark = "  <- textpile" if bits == NEAR_DUPLICATE_BITS else ""
        print(f"{bits:>4}  {with_title[0]:>9.3f} {with_title[1]:>7.3f} {with_title[2]:>6.3f} {with_title[3]:>7}   "
              f"{alone[0]:>9.3f} {alone[1]:>7.3f} {alone[2]:>6.3f} {alone[3]:>7}{mark}")
    print(f"\nload average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (2 cores, shared)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
