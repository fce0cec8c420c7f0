"""The ranking systems the benchmark compares, each over the same summary database.

* ``textpile``: the library's own search in its default mode (what users get of a
  server: the vectors and the model, when a query needs them, loaded once and kept);
  ``textpile-keyword``, ``textpile-semantic``, ``textpile-hybrid``: each search mode
  (``textpile.search.service``), the vectors and model loaded once per site;
* ``unobtanium``: unobtanium 3.0.0's ranking, ``bm25(full_text_entity_index, 0, 0, 5.0,
  1.5, 1.0, 0.75, 4.0, 2.1, 0.2, 0.0)`` in the documented column order, over the
  documented FTS table; every word required, any word when none has them all;
* ``tantivy``: a tantivy BM25 index of the same documents: title x2, headings x1.5, body,
  English stemming (``en_stem``), searched as textpile searches (:func:`tantivy_search`):
  every word required, no match counting, and pages holding only some of the words after
  them when fewer than 10 pages hold every word;
* ``pagefind``: Pagefind (PyPI ``pagefind[bin]``) over the HTML files of the pages textpile
  indexed, English forced (stemming on every site, whatever its ``lang``), its default
  ranking, searched by Pagefind's own ``pagefind.js`` in Node (``pagefind_search.mjs``)
  as a browser would run it, the bundle's files read from disk instead of fetched.

``search(text)`` returns result URLs, best first, at most ``k``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from textpile.search.service import search_pages
from textpile.semantic.loaded import Semantic
from textpile.semantic.vectors import has_vectors
from textpile.store.gen2_piles import register_functions
from textpile.store.searchable import searchable

UNOBTANIUM_BM25 = "bm25(full_text_entity_index, 0, 0, 5.0, 1.5, 1.0, 0.75, 4.0, 2.1, 0.2, 0.0)"
_SEARCHABLE = searchable("eg")
_WORD = re.compile(r"\w+")


def _connect(summary_db: Path) -> sqlite3.Connection:
    # The text_pile views unpack the compressed Gen2 texts with it (textpile.store.gen2_piles).
    return register_functions(sqlite3.connect(f"file:{summary_db}?mode=ro", uri=True, check_same_thread=False))


def searchable_documents(conn: sqlite3.Connection):
    """Yield (url, title, headings, body) of every searchable generation."""
    sql = (
        "SELECT u.str_url || coalesce('#' || eg.url_fragment, ''), "
        "coalesce(nullif(dd.title, ''), dd.primary_headline, ''), "
        "tp.big_headlines || char(10) || tp.small_headlines, tp.text || char(10) || tp.secondary_text "
        "FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
        "JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id "
        "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
        f"WHERE {_SEARCHABLE}"
    )
    yield from conn.execute(sql)


class Textpile:
    name = "textpile"

    def __init__(self, summary_db: Path, mode: str | None = None, semantic: Semantic | None = None,
                 **options) -> None:
        self.conn = _connect(summary_db)
        self.mode = mode
        # without one, search_pages would load the vectors and the model again for every
        # query that needs them, as a command line search does (seconds under load)
        self.semantic = semantic if semantic is not None or not has_vectors(self.conn) else Semantic.lazy(self.conn)
        self.options = options

    def _search(self, text: str, **options):
        return search_pages(self.conn, text, mode=self.mode, semantic=self.semantic, **self.options, **options)

    def search(self, text: str, k: int = 10) -> list[str]:
        return [r.url for r in self._search(text, per_page=k).results]

    def explain(self, text: str) -> list[dict]:
        """Every reranked candidate with its features (``search(explain=True)``)."""
        return self._search(text, per_page=10, explain=True).explained or []


class Unobtanium:
    name = "unobtanium"

    def __init__(self, summary_db: Path) -> None:
        self.conn = _connect(summary_db)

    def _run(self, match: str, k: int) -> list[str]:
        sql = (
            f"SELECT u.str_url || coalesce('#' || eg.url_fragment, ''), {UNOBTANIUM_BM25} AS score "
            "FROM full_text_entity_index f JOIN entity_generation eg ON eg.entity_generation_id = f.rowid "
            "JOIN url u ON u.url_id = eg.url_id "
            f"WHERE full_text_entity_index MATCH ? AND {_SEARCHABLE} ORDER BY score LIMIT ?"
        )
        return [r[0] for r in self.conn.execute(sql, (match, k))]

    def search(self, text: str, k: int = 10) -> list[str]:
        words = [w for w in text.split() if _WORD.search(w)]
        if not words:
            return []
        terms = ['"' + w.replace('"', '""') + '"' for w in words]
        found = self._run(" AND ".join(terms), k)
        if not found and len(terms) > 1:
            found = self._run(" OR ".join(terms), k)
        return found


#: textpile adds pages holding only some of the query's words when fewer pages than this
#: hold them all (``textpile.search.engine.PARTIAL_BELOW``); tantivy_search does the same.
PARTIAL_BELOW = 10
_TANTIVY_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/<>=\'])')


def tantivy_search(index, searcher, text: str, k: int, fields: list[str], boosts: dict[str, float],
                   partial: bool = True) -> list:
    """tantivy's top ``k`` hits ``[(score, DocAddress)]`` for ``text``, searched as textpile
    searches: every word required (``conjunction_by_default``), no count of every match
    (``count=False``: textpile never counts past what it needs), and, when fewer than
    :data:`PARTIAL_BELOW` documents hold every word, the documents holding any of them
    after those (in their own BM25 order), as textpile adds partial matches after its
    complete ones (``partial=False``: never). Query syntax characters are escaped (the
    text is searched as words)."""
    escaped = _TANTIVY_SPECIAL.sub(r"\\\1", text)
    if not _WORD.search(escaped):
        return []
    query, _errors = index.parse_query_lenient(escaped, fields, field_boosts=boosts, conjunction_by_default=True)
    hits = searcher.search(query, k, count=False).hits
    if partial and len(hits) < min(k, PARTIAL_BELOW) and len(_WORD.findall(escaped)) > 1:
        seen = {(address.segment_ord, address.doc) for _, address in hits}
        query, _errors = index.parse_query_lenient(escaped, fields, field_boosts=boosts)
        hits += [(score, address) for score, address in searcher.search(query, k, count=False).hits
                 if (address.segment_ord, address.doc) not in seen][: k - len(hits)]
    return hits


class Tantivy:
    name = "tantivy"

    def __init__(self, summary_db: Path) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("url", stored=True, tokenizer_name="raw")
        for field in ("title", "headings", "body"):
            builder.add_text_field(field, stored=False, tokenizer_name="en_stem")
        self.index = tantivy.Index(builder.build())
        writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        conn = _connect(summary_db)
        for url, title, headings, body in searchable_documents(conn):
            writer.add_document(tantivy.Document(url=url, title=title or "", headings=headings or "", body=body or ""))
        writer.commit()
        writer.wait_merging_threads()
        conn.close()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, text: str, k: int = 10) -> list[str]:
        hits = tantivy_search(self.index, self.searcher, text, k, ["title", "headings", "body"],
                              {"title": 2.0, "headings": 1.5})
        return [self.searcher.doc(address)["url"][0] for _score, address in hits]


class Pagefind:
    """Pagefind over the HTML files of the pages textpile indexed (see the module doc).

    The bundle is built once per set of pages and Pagefind version, under ``folder``
    (``site/``: the pages, hard-linked from ``root``; ``bundle/``: Pagefind's index), and
    searched by one Node process for the object's life (:meth:`close` ends it).

    Raises:
        RuntimeError: Pagefind's indexer or Node failed (the message says which and why).
    """

    name = "pagefind"
    SCRIPT = Path(__file__).resolve().parent / "pagefind_search.mjs"

    def __init__(self, summary_db: Path, root: Path, folder: Path, log=print) -> None:
        conn = _connect(summary_db)
        pages = sorted({urlsplit(url).path.lstrip("/") or "index.html" for url, *_ in searchable_documents(conn)})
        conn.close()
        version = importlib.metadata.version("pagefind")
        stamp = hashlib.blake2b(json.dumps([version, pages]).encode(), digest_size=16).hexdigest()
        bundle = folder / "bundle"
        if not (folder / "stamp").exists() or (folder / "stamp").read_text().strip() != stamp:
            self._build(root, pages, folder, log)
            (folder / "stamp").write_text(stamp + "\n")
        self.process = subprocess.Popen(["node", str(self.SCRIPT), str(bundle)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    @staticmethod
    def _build(root: Path, pages: list[str], folder: Path, log) -> None:
        """Link ``pages`` (paths under ``root``) into ``folder/site`` and index them with Pagefind."""
        shutil.rmtree(folder, ignore_errors=True)
        site = folder / "site"
        for page in pages:
            target = site / page
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(root / page, target)
        log(f"   pagefind: indexing {len(pages)} pages")
        done = subprocess.run([sys.executable, "-m", "pagefind", "--site", str(site), "--output-path",
                               str(folder / "bundle"), "--force-language", "en", "--silent"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pagefind failed (exit {done.returncode}): {(done.stderr or done.stdout)[-500:]}")

    def search(self, text: str, k: int = 10) -> list[str]:
        self.process.stdin.write(json.dumps({"query": text, "k": k}) + "\n")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Pagefind search process ended (exit {self.process.wait()})")
        return json.loads(line)["urls"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
