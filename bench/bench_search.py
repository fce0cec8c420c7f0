"""Benchmark: query latency of textpile's search at 100K pages, beside its stage one, bare FTS5 and tantivy.

    python bench/bench_search.py [--pages 100000] [--data-dir bench/data] [--queries 600]
                                 [--systems textpile,textpile+facets,suggest] [--shards 3]

The corpus is the relevance benchmark's first six documentation sites (:data:`CORPUS_SITES`;
``python bench/relevance`` builds and caches them; the sites added later are left out, so
that a cached corpus and the figures published with it stay comparable) replicated until
it holds ``--pages`` searchable pages: copy k of
a page lives on its own origin (``copyK.site.example``), with every link, section and
description copied, and its text varied (a fixed 5% of its words get a copy suffix) so
copies differ and common words stay common. The summary database is built once and cached
under ``--data-dir``/search-speed (several GB at 100K pages; its search index is rebuilt
with textpile's own code). tantivy indexes the same documents (title x2, headings x1.5,
body, English stemming), also cached.

Besides: "textpile+facets", the same call with facets (what the search page runs: issue 32
asks for a p99 at most 1.2x that of the call without), and "suggest", search as you type
of each query while being typed (its first two thirds: :class:`Suggest`; target p99 <= 20
ms), and "textpile hybrid", the default search mode (vectors, passages and the fused
ranking: issue 29 asks for a p99 <= 50 ms) on a copy of the corpus embedded by textpile's
own code (built on first use and cached beside it; about 10 CPU-minutes at 100K pages),
and "textpile shards", the same pages split into ``--shards`` summary databases by copy
(each copy's origins in one shard, as a site is; built once, side by side, and cached)
searched as one index (:class:`textpile.search.fanout.ShardedSearch`, in this process: its
CPU time is every shard's), and "textpile each shard": every shard searched as an index of
its own (the library call on each, one after the other, 20 snippets in all: the floor of
any search over the shards that merges their answers at no cost, since each shard's part
of the work is at least that of one index of its pages). ``--systems`` runs only the ones named.

Queries: the relevance benchmark's judged queries (sampled), plus "the", common two-word
queries and a pasted 64-word paragraph. For each query the four systems run in turn
(interleaved, rotating who goes first), each in this one process on one core:
``textpile.search.engine.search`` (the library call, 20 results with snippets), its
stage one alone ("stage one": the query planned and FTS5's candidates found, no rerank
or snippets: the floor of a search that starts with FTS5), a bare
FTS5 ``bm25()`` MATCH of the same words over ``full_text_entity_index`` (top 20, no
snippets), tantivy (the top 20 hits' addresses) and "tantivy+shown" (tantivy doing what a
result page needs, as textpile's call does: the top 20 with their stored URL and title and
a highlighted 240-character snippet each), both searching as textpile searches (every word
required, no count of every match, pages holding some of the words after those holding
all when fewer than 10 hold all: ``systems.tantivy_search``), "tantivy AND" (every word
required, no count, never partial matches), and "tantivy old", the setting used before
(tantivy-py's defaults: any word, and a count of every match, which made tantivy read
every match of common words), after one unmeasured warm-up pass. Printed:
p50/p90/p99/max per system and per query kind in wall-clock time and in CPU time of the
process (on a busy machine the CPU time is what one quiet core would give), ratios to both
tantivy rows, the slowest runs
of 'the' and of the pasted query, and the load average before and after.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # the tokenizers crate's thread pool: one core
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from collections import defaultdict  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from contextlib import closing  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "relevance"))

from judgments import sample, site_queries  # noqa: E402
from metrics import percentile  # noqa: E402
from sites import SITES, ensure_site  # noqa: E402
from systems import searchable_documents, tantivy_search  # noqa: E402

# (the shards, suggestions and vectors are imported where used: search_ab.py runs this module on
# versions of textpile older than them)
from textpile.search import engine  # noqa: E402
from textpile.index.analysis import Analyzer  # noqa: E402
from textpile.search.budget import DEFAULT_BUDGET_MS, Budget  # noqa: E402
from textpile.search.engine import search  # noqa: E402
from textpile.search.plan import index_languages, plan_query  # noqa: E402
from textpile.search.query import parse_query  # noqa: E402
from textpile.search.rank import DEFAULT_RANKING  # noqa: E402
from textpile.search.service import search_pages  # noqa: E402
from textpile.store.database import connect, map_for_reading, open_summary_db  # noqa: E402
from textpile.store.gen2_piles import register_functions, store_gen2  # noqa: E402
from textpile.store.links import store_links  # noqa: E402
from textpile.store.text_piles import store_gen1  # noqa: E402
from textpile.store.urls import intern_url  # noqa: E402
from textpile.index.update import update_index  # noqa: E402

PASTED = (
    "When the planner estimates that a sequential scan of the table will be cheaper than an index scan it "
    "chooses the sequential scan even though an index exists on the column and the query has a condition "
    "on it so the statistics that the autovacuum daemon collects matter for the choice of plans and it is "
    "worth running analyze after bulk load of rows"
)
COMMON = ["the", "the function", "create table", "return value", "data type", "of the", "how to use", "error"]
#: The sites the corpus is made of (the relevance benchmark's first six).
CORPUS_SITES = ("postgresql", "sqlite", "sphinx", "scipy", "sqlalchemy", "requests")
_WORD = re.compile(r"\w+")
_TANTIVY_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/<>=\'])')


def _vary(text: str | None, copy: int) -> str | None:
    """``text`` with a fixed 5% of its words (by a hash of the word) suffixed by the copy number."""
    if not text or copy == 0:
        return text

    def swap(m: re.Match) -> str:
        w = m.group()
        return w + f"x{copy}" if len(w) > 4 and zlib.crc32(w.encode()) % 20 == 0 else w

    return _WORD.sub(swap, text)


def build_corpus(target: Path, sources: list[Path], pages: int, log=print, shard: tuple[int, int] | None = None) -> None:
    """Write ``pages`` searchable pages into a new summary database ``target``; with
    ``shard`` ``(k, n)``, only the copies ``c`` with ``c % n == k`` of those pages (each
    copy's origins in one shard, as sites are: the ``n`` shards hold the pages of the
    one corpus of ``pages``)."""
    tmp = target.with_suffix(".building")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)
    out = open_summary_db(tmp)
    per_source = []
    for src in sources:
        with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as c:
            per_source.append(c.execute("SELECT count(*) FROM search_page").fetchone()[0])
    total_source = sum(per_source)
    copies = -(-pages // total_source)
    part = f" (shard {shard[0] + 1} of {shard[1]}: copy c when c % {shard[1]} = {shard[0]})" if shard else ""
    log(f"== building {pages} pages from {total_source} real pages ({copies} copies){part} into {target}")
    written = total = 0
    started = time.monotonic()
    out.execute("PRAGMA synchronous = OFF")
    for copy in range(copies):
        for src, count in zip(sources, per_source):
            if total >= pages:
                break
            if shard is None or copy % shard[1] == shard[0]:
                n = _copy_site(out, src, copy, pages - total)
                written += n
                out.commit()
            else:
                n = min(count, pages - total)  # what the one corpus holds of it
            total += n
        log(f"   copy {copy + 1}/{copies}: {written} pages ({time.monotonic() - started:.0f} s)")
    log("== rebuilding the search index (textpile's own code)")
    t0 = time.monotonic()
    update_index(out, rebuild=True)
    log(f"   {time.monotonic() - t0:.0f} s")
    out.execute("PRAGMA optimize")
    out.close()
    tmp.rename(target)


def _copy_site(out: sqlite3.Connection, src: Path, copy: int, limit: int) -> int:
    out.execute("ATTACH DATABASE ? AS src", (f"file:{src}?mode=ro",))
    try:
        gens = out.execute(
            "SELECT eg.entity_generation_id, u.str_url, o.scheme, o.host, o.port, eg.text_pile_id, eg.text_pile_v0_2_id "
            "FROM src.search_page sp JOIN src.entity_generation eg USING (entity_generation_id) "
            "JOIN src.url u ON u.url_id = eg.url_id JOIN src.origin o ON o.origin_id = u.origin_id "
            "ORDER BY eg.entity_generation_id LIMIT ?", (limit,)).fetchall()
        id_map, url_map = {}, {}
        for eg_id, str_url, scheme, host, port, tp1, tp2 in gens:
            new_host = f"copy{copy}.{host.replace('.', '-')}.example"
            new_origin = f"{scheme}://{new_host}:{port}"
            out.execute("INSERT OR IGNORE INTO origin(port, scheme, host, str_origin) VALUES (?, ?, ?, ?)",
                        (port, scheme, new_host, new_origin))
            origin_id = out.execute("SELECT origin_id FROM origin WHERE str_origin = ?", (new_origin,)).fetchone()[0]
            new_url = str_url.replace(f"{scheme}://{host}:{port}", new_origin, 1).replace(f"{scheme}://{host}", new_origin, 1)
            url_id = intern_url(out, new_url)
            row = out.execute("SELECT text, secondary_text, big_headlines, small_headlines, code_text, quote_text "
                              "FROM src.text_pile WHERE text_pile_id = ?", (tp1,)).fetchone()
            fields = [_vary(f, copy) for f in row]
            g2 = out.execute("SELECT text, metadata, segmentation_cache FROM src.text_pile_v0_2 WHERE text_pile_id = ?",
                             (tp2,)).fetchone()
            new_tp2 = None
            if g2:  # stored as the summarizer stores it (packed, with restart points)
                new_tp2 = store_gen2(out, os.urandom(64), *g2)
            new_tp1 = store_gen1(out, os.urandom(64), fields, new_tp2, g2[0] if g2 else None)
            new_id = out.execute(
                "INSERT INTO entity_generation(entity_generation_uuid, url_id, url_fragment, first_seen_unix_utc, "
                "last_seen_unix_utc, confirmed_end_unix_utc, marked_duplicate, text_pile_id, text_pile_v0_2_id) "
                "VALUES (?, ?, NULL, 1700000000, 1700000000, NULL, 0, ?, ?)",
                (os.urandom(16), url_id, new_tp1, new_tp2)).lastrowid
            id_map[eg_id] = new_id
            url_map[str_url] = url_id
            out.execute(
                "INSERT INTO document_description(entity_generation_id, time_created_unix_utc, time_updated_unix_utc, "
                "primary_language, title, primary_headline, description, indexiness) "
                "SELECT ?, time_created_unix_utc, time_updated_unix_utc, primary_language, title, primary_headline, "
                "description, indexiness FROM src.document_description WHERE entity_generation_id = ?", (new_id, eg_id))
            out.execute(
                "INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level, start_offset, "
                "end_offset) SELECT ?, section_index, anchor, title, level, start_offset, end_offset "
                "FROM src.section_summary WHERE entity_generation_id = ?", (new_id, eg_id))
        # links between copied pages: same copy, targets remapped
        for eg_id, new_id in id_map.items():
            rows = out.execute(
                "SELECT u.str_url, ls.link_to_fragment, ls.rel_nofollow, ls.rel_me, ls.rel_tag, ls.in_header, "
                "ls.in_footer, ls.in_aside, ls.in_nav, ls.in_form, ls.in_main, ls.in_article, ls.in_section, "
                "ls.in_table, ls.in_figure, ls.in_address, ls.in_code, ls.in_headline, ls.in_list, ls.in_paragraph, "
                "ls.contains_headline, ls.destination_type, ls.link_locality, ls.html_tag_name, ls.text "
                "FROM src.link_summary ls JOIN src.url u ON u.url_id = ls.link_to_url "
                "WHERE ls.entity_generation_id = ?", (eg_id,)).fetchall()
            store_links(out, new_id, [(url_map[r[0]], *r[1:]) for r in rows if r[0] in url_map])
        return len(gens)
    finally:
        out.commit()
        out.execute("DETACH DATABASE src")


class BareFts:
    """A bare FTS5 bm25 MATCH of the query's words (AND) over full_text_entity_index."""

    def __init__(self, db: Path) -> None:
        self.conn = map_for_reading(sqlite3.connect(f"file:{db}?mode=ro", uri=True))  # as textpile reads

    def search(self, text: str) -> int:
        words = [w for w in _WORD.findall(text)]
        if not words:
            return 0
        match = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
        return len(self.conn.execute(
            "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ? "
            "ORDER BY bm25(full_text_entity_index) LIMIT 20", (match,)).fetchall())


class Tantivy:
    """tantivy over the same documents, cached on disk: the top 20 hits' addresses
    (``shown=False``), or what a result page shows (``shown=True``, its own index, which
    also stores the title and body): each hit's stored URL and title, and a 240-character
    snippet of its body with the query's terms highlighted (tantivy's SnippetGenerator),
    the work textpile's library call does for its 20 results."""

    def __init__(self, db: Path | list[Path], folder: Path, log=print, shown: bool = False, old: bool = False,
                 partial: bool = True) -> None:
        """``db``: the summary database indexed (or the shards holding its pages, indexed
        one after the other into one tantivy index)."""
        import tantivy

        self.tantivy = tantivy
        self.shown = shown
        self.old = old  # the setting used before: any word, every match counted
        self.partial = partial  # pages holding some of the words after those holding all, as textpile
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("url", stored=True, tokenizer_name="raw")
        for field in ("title", "headings", "body"):
            builder.add_text_field(field, stored=shown and field != "headings", tokenizer_name="en_stem")
        schema = self.schema = builder.build()
        done = folder / "built"
        if not done.exists():
            folder.mkdir(parents=True, exist_ok=True)
            log(f"== indexing the corpus with tantivy into {folder}")
            index = tantivy.Index(schema, path=str(folder))
            writer = index.writer(heap_size=1_000_000_000)
            for source in db if isinstance(db, list) else [db]:
                # the text_pile view unpacks the Gen2 texts with the sqlar functions
                conn = register_functions(sqlite3.connect(f"file:{source}?mode=ro", uri=True))
                for url, title, headings, body in searchable_documents(conn):
                    writer.add_document(tantivy.Document(url=url, title=title or "", headings=headings or "",
                                                         body=body or ""))
                conn.close()
            writer.commit()
            writer.wait_merging_threads()
            done.write_text("ok\n")
        self.index = tantivy.Index(schema, path=str(folder))
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, text: str) -> int:
        fields, boosts = ["title", "headings", "body"], {"title": 2.0, "headings": 1.5}
        if self.old:
            escaped = _TANTIVY_SPECIAL.sub(r"\\\1", text)
            if not _WORD.search(escaped):
                return 0
            query, _ = self.index.parse_query_lenient(escaped, fields, field_boosts=boosts)
            return len(self.searcher.search(query, 20).hits)
        hits = tantivy_search(self.index, self.searcher, text, 20, fields, boosts, partial=self.partial)
        if self.shown and hits:
            query, _ = self.index.parse_query_lenient(_TANTIVY_SPECIAL.sub(r"\\\1", text), fields, field_boosts=boosts,
                                                      conjunction_by_default=True)
            snippets = self.tantivy.SnippetGenerator.create(self.searcher, query, self.schema, "body")
            snippets.set_max_num_chars(240)
            for _, address in hits:
                doc = self.searcher.doc(address)
                doc.get_first("url"), doc.get_first("title"), snippets.snippet_from_doc(doc).to_html()
        return len(hits)


class TextpileStageOne:
    """Stage one of textpile's search alone: the query parsed and planned, and FTS5's
    candidate pages and sections found (the capped, tiered scans of
    :mod:`textpile.search.candidates`), without the rerank, the snippets or the result
    rows. It is the floor of a search that starts with FTS5, as issue 9 asks: whatever
    the later stages cost, a search costs at least this. (It calls the engine's stage
    one directly, a private function: the benchmark measures a part, not an API.)"""

    def __init__(self, db: Path) -> None:
        self.conn = connect(db, read_only=True)
        self.analyzer = Analyzer()
        self.codes = index_languages(self.conn)

    def search(self, text: str) -> int:
        parsed = parse_query(text)
        plan = plan_query(parsed, self.analyzer, self.codes)
        if not plan.requirements:
            return 0
        found = engine.Found()
        engine._candidates(self.conn, plan, parsed, DEFAULT_RANKING, engine.RERANK_DEPTH, Budget(DEFAULT_BUDGET_MS),
                           found, self.analyzer)
        return len(found.pages)


class Textpile:
    """textpile's library call on a connection opened as its readers open one (with
    ``options`` of :func:`textpile.search.engine.search`: ``facets=True`` for the
    faceted search the search page runs)."""

    def __init__(self, db: Path, **options) -> None:
        self.conn = connect(db, read_only=True)
        self.options = options

    def search(self, text: str) -> int:
        return len(search(self.conn, text, **self.options).results)


class TextpileHybrid:
    """textpile's default mode, hybrid (:func:`textpile.search.service.search_pages`), on
    the corpus with its page vectors and section codes (:func:`embedded_corpus`), the
    model and vectors loaded once as a server keeps them: the keyword search, the nearest
    pages by vector, the passages (each candidate's best section by its codes) and the
    fused ranking, 20 results with snippets."""

    def __init__(self, db: Path) -> None:
        self.conn = connect(db, read_only=True)
        from textpile.semantic.loaded import Semantic

        self.semantic = Semantic.load(self.conn)

    def search(self, text: str) -> int:
        return len(search_pages(self.conn, text, mode="hybrid", semantic=self.semantic).results)


def shard_corpora(db: Path, sources: list[Path], pages: int, shards: int, log=print) -> list[Path]:
    """The corpus of ``db`` split into ``shards`` summary databases, by copy (each copy's
    origins in one shard: :func:`build_corpus`), built once (side by side, a process per
    core) and cached beside it."""
    paths = [db.with_name(f"{db.stem}-shard{k + 1}of{shards}.db") for k in range(shards)]
    todo = [(k, p) for k, p in enumerate(paths) if not p.exists()]
    if todo:
        t0 = time.monotonic()
        with ProcessPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1)) as pool:
            for job in [pool.submit(build_corpus, p, sources, pages, print, (k, shards)) for k, p in todo]:
                job.result()
        log(f"   {len(todo)} shards built in {time.monotonic() - t0:.0f} s")
    return paths


class TextpileShards:
    """textpile's search over shards (:class:`textpile.search.fanout.ShardedSearch`), the
    corpus split by copy (:func:`shard_corpora`), in this process: every shard's
    statistics, cut, search and snippets; 20 results, as :class:`Textpile`. The CPU time
    is that of every shard's work (their threads are this process')."""

    def __init__(self, paths: list[Path]) -> None:
        from textpile.search.fanout import ShardedSearch
        from textpile.search.shards import LocalShard

        self.router = ShardedSearch([LocalShard.open(p) for p in paths])

    def search(self, text: str) -> int:
        return len(self.router.search(text, mode="keyword", per_page=20).results)


class TextpileEachShard:
    """Every shard searched as an index of its own, one after the other (:class:`Textpile`
    on each, the last one making the 20 results' snippets, the others none, as a search
    over shards makes 20): what a search over the shards costs at least, whatever its
    fan-out and merge (each shard still searches its own pages). The results are those of
    the last shard."""

    def __init__(self, paths: list[Path]) -> None:
        self.shards = [Textpile(p, snippets=False) for p in paths[:-1]] + [Textpile(paths[-1])]

    def search(self, text: str) -> int:
        return [shard.search(text) for shard in self.shards][-1]


def embedded_corpus(db: Path, log=print) -> Path:
    """The corpus ``db`` with its vectors (built once and cached beside it): a copy of it
    embedded by textpile's own code (:func:`textpile.semantic.embed.embed_summary`: page
    vectors, section codes and the partition of the page vectors)."""
    target = db.with_name(db.stem + "-embedded.db")
    if target.exists():
        return target
    tmp = target.with_suffix(".building")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)
    log(f"== embedding a copy of {db} into {target}")
    t0 = time.monotonic()
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as src, closing(sqlite3.connect(tmp)) as out:
        src.backup(out)
    from textpile.semantic.embed import embed_summary

    report = embed_summary(tmp, progress=True)
    log(f"   {report.pages_embedded} pages and {report.sections_embedded} sections embedded, "
        f"{report.vector_lists} lists ({time.monotonic() - t0:.0f} s)")
    tmp.rename(target)
    return target


class Suggest:
    """Search as you type (:func:`textpile.search.suggest.suggest`) of the query as it is
    while being typed: its first two thirds (at least 2 characters), the last word cut."""

    def __init__(self, db: Path) -> None:
        self.conn = connect(db, read_only=True)

    def search(self, text: str) -> int:
        from textpile.search.suggest import suggest

        found = suggest(self.conn, text[:max(2, len(text) * 2 // 3)])
        return len(found.pages) + len(found.sections)


def speed_queries(data_dir: Path, count: int) -> list[tuple[str, str]]:
    """``(class, text)`` of the benchmark's queries: ``count`` judged queries of the corpus'
    sites (the relevance benchmark's, sampled with a fixed seed), the common words and the
    pasted 64-word paragraph."""
    rng = random.Random(7)
    judged = []
    for site in (s for s in SITES if s.name in CORPUS_SITES):
        root = ensure_site(site, data_dir)
        qs, _ = sample(site_queries(site, root), {p for q in site_queries(site, root) for p in q.relevant}, 10**6)
        judged.extend((q.klass, q.text) for q in qs)
    queries = rng.sample(judged, min(count, len(judged)))
    return queries + [("common", q) for q in COMMON] + [("pasted-64", PASTED)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--queries", type=int, default=600, help="judged queries sampled (besides the fixed ones)")
    parser.add_argument("--repeat", type=int, default=2, help="times every query runs per system")
    parser.add_argument("--reindex", action="store_true",
                        help="rebuild the cached corpus' search index with the current code first")
    parser.add_argument("--build-only", action="store_true",
                        help="build (or reindex) the corpus and the caches of the --systems named, then stop")
    parser.add_argument("--without-one-index", action="store_true",
                        help="no summary database of the whole corpus (a size where building it costs too much): "
                             "only 'textpile shards' and tantivy (indexing the shards' pages)")
    parser.add_argument("--systems", default="", help="only these systems (comma-separated names as printed)")
    parser.add_argument("--shards", type=int, default=3, help="shards of 'textpile shards' (the corpus split by copy)")
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    sources = [data_dir / "index" / name / "summary.db" for name in CORPUS_SITES]
    missing = [str(p) for p in sources if not p.exists()]
    if missing:
        parser.error("run python bench/relevance first (it builds the sites); missing: " + ", ".join(missing))
    folder = data_dir / "search-speed"
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"summary-{args.pages}.db"

    def shard_dbs() -> list[Path]:
        return shard_corpora(db, sources, args.pages, args.shards)

    if args.without_one_index:
        pass
    elif not db.exists():
        build_corpus(db, sources, args.pages)
    elif args.reindex:
        print(f"== rebuilding the search index of {db}")
        t0 = time.monotonic()
        conn = open_summary_db(db)
        update_index(conn, rebuild=True)
        conn.close()
        print(f"   {time.monotonic() - t0:.0f} s")
    makers = {"textpile": lambda: Textpile(db), "textpile+facets": lambda: Textpile(db, facets=True),
              "suggest": lambda: Suggest(db), "stage one": lambda: TextpileStageOne(db), "bare FTS5": lambda: BareFts(db),
              "tantivy": lambda: Tantivy(db, folder / f"tantivy-{args.pages}"),
              "tantivy+shown": lambda: Tantivy(db, folder / f"tantivy-shown-{args.pages}", shown=True),
              "tantivy AND": lambda: Tantivy(db, folder / f"tantivy-{args.pages}", partial=False),
              "tantivy old": lambda: Tantivy(db, folder / f"tantivy-{args.pages}", old=True),
              "textpile hybrid": lambda: TextpileHybrid(embedded_corpus(db)),
              "textpile shards": lambda: TextpileShards(shard_dbs()),
              "textpile each shard": lambda: TextpileEachShard(shard_dbs())}
    if args.without_one_index:
        makers = {"textpile shards": makers["textpile shards"],
                  "textpile each shard": makers["textpile each shard"],
                  "tantivy": lambda: Tantivy(shard_dbs(), folder / f"tantivy-{args.pages}"),
                  "tantivy AND": lambda: Tantivy(shard_dbs(), folder / f"tantivy-{args.pages}", partial=False)}
    chosen = [n.strip() for n in args.systems.split(",") if n.strip()] or ([] if args.build_only else list(makers))
    unknown = [n for n in chosen if n not in makers]
    if unknown:
        parser.error(f"--systems: unknown {unknown[0]!r} (known{' without one index' if args.without_one_index else ''}:"
                     f" {', '.join(makers)})")
    systems = [(name, makers[name]()) for name in chosen]
    if args.build_only:
        return 0

    queries = speed_queries(data_dir, args.queries)

    for kind, text in queries:  # one unmeasured pass, so that every system reads a warm page cache
        for _, system in systems:
            system.search(text)
    wall: dict[tuple[str, str], list[float]] = defaultdict(list)
    cpu: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_text: dict[tuple[str, str], list[float]] = defaultdict(list)
    load_before = os.getloadavg()
    for _ in range(args.repeat):
        for i, (kind, text) in enumerate(queries):
            order = systems[i % len(systems):] + systems[:i % len(systems)]
            for name, system in order:
                c0, t0 = time.process_time(), time.perf_counter()
                system.search(text)
                ms = (time.perf_counter() - t0) * 1000
                cpu_ms = (time.process_time() - c0) * 1000
                for key in ((name, kind), (name, "ALL")):
                    wall[key].append(ms)
                    cpu[key].append(cpu_ms)
                by_text[(name, text)].append(ms)
    load_after = os.getloadavg()
    count = sum(sqlite3.connect(f"file:{p}?mode=ro", uri=True).execute("SELECT count(*) FROM search_page").fetchone()[0]
                for p in (shard_dbs() if args.without_one_index else [db]))
    print(f"\n{count} searchable pages; {len(queries)} queries x {args.repeat} after a warm-up pass; "
          "one process, one core")
    kinds = ["ALL"] + sorted({k for k, _ in queries})
    for title, latency in (("wall-clock time", wall), ("CPU time of the process (what a quiet core would give)", cpu)):
        print(f"\n{title}")
        print(f"{'system':<13} {'queries':<10} {'n':>5} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} "
              f"{'p50/tantivy':>12} {'p99/tantivy':>12} {'p50/shown':>10} {'p99/shown':>10}")
        for kind in kinds:
            bases = [percentile(latency[(base, kind)], q) if latency.get((base, kind)) else 0.0
                     for base in ("tantivy", "tantivy+shown") for q in (50, 99)]
            for name, _ in systems:
                v = latency[(name, kind)]
                p50, p99 = percentile(v, 50), percentile(v, 99)
                r50, r99, s50, s99 = (p / base if base else 0 for p, base in zip((p50, p99, p50, p99), bases))
                print(f"{name:<13} {kind:<10} {len(v):>5} {p50:8.2f} {percentile(v, 90):8.2f} "
                      f"{p99:8.2f} {max(v):8.2f} {r50:11.1f}x {r99:11.1f}x {s50:9.1f}x {s99:9.1f}x")
    print()
    for label, text in (("'the'", "the"), ("the pasted 64-word query", PASTED)):
        if ("textpile", text) not in by_text:
            continue
        print(f"textpile {label}: slowest of {len(by_text[('textpile', text)])} runs "
              f"{max(by_text[('textpile', text)]):.1f} ms wall")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
