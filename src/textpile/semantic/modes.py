"""Search modes: ``keyword`` (the lexical ranker alone), ``semantic`` and ``hybrid``.

* ``keyword``: :func:`textpile.search.engine.search` as it is;
* ``semantic``: the pages whose vectors are most similar to the query's
  (:mod:`textpile.semantic.vectors`), whatever words they share with it;
* ``hybrid``: the keyword ranking when it found a known item (:func:`keyword_found_it`)
  or nothing at all (then "did you mean" helps more), else reciprocal rank fusion (:mod:`textpile.semantic.fusion`) of the keyword ranking
  and the semantic one. Both rules were chosen on the relevance benchmark
  (``bench/relevance/tune_fusion.py``): plain fusion helps questions in a user's own
  words but loses known-item queries (titles, API names, commands), which the keyword
  ranker nearly always gets right.

Both vector modes go through the search engine's one hook (``reorder``), so paging,
snippets, section links, filters and the time budget are the engine's. Filters
(``site:``, ``host:``, ``lang:``) and exclusions (``-word``) hold for the pages the
vectors find too. The query's vector is made from its words (filters and exclusions
left out). A summary database without vectors (summarized with ``--no-embeddings``, or
by a textpile without them) answers a vector mode with keyword results and says so.

:func:`more_like_this` ranks the pages nearest to one page's own vector.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import uuid as uuid_module
from dataclasses import dataclass

import numpy as np

from textpile.errors import TextpileError
from textpile.search.candidates import page_infos
from textpile.search.engine import SearchResults, search
from textpile.search.features import Scored
from textpile.search.filters import filter_sql
from textpile.store.searchable import SEARCHABLE
from textpile.search.query import ParsedQuery
from textpile.semantic.fusion import reciprocal_rank_fusion
from textpile.semantic.model import Embedder, load_embedder
from textpile.semantic.vectors import PageVectors, has_vectors, load_page_vectors

MODES = ("keyword", "semantic", "hybrid")
#: The mode of a search that names none, chosen by the relevance benchmark's figures
#: (README, "Search modes"): hybrid equals keyword on every known-item class and lifts
#: the natural-language queries. On an index without vectors it is keyword, silently.
DEFAULT_MODE = "hybrid"
#: Pages the vectors contribute per search (fused in hybrid mode, the ranking in semantic).
SEMANTIC_DEPTH = 100
#: Hybrid mode's fusion: the keyword ranking's weight (the semantic ranking's is 1) and
#: the rank constant (a small one favours each ranking's first pages). Chosen on the
#: relevance benchmark (weights 0.5/1/2, constants 5/20/60 tried).
KEYWORD_WEIGHT = 0.5
FUSION_K = 5
#: The share of the query a page holds that counts as every word: 0.99 is the engine's
#: "every part of an identifier, apart" (textpile.search.engine, partial levels).
EVERY_WORD = 0.99
#: A query of at most this many words whose first keyword result holds every word is a
#: known-item query (titles, commands, "create index concurrently").
SHORT_QUERY_WORDS = 4
#: A word that names code: dots, underscores, parentheses or :: inside, camelCase, or an
#: all-capitals word (SQL keywords, constants).
_IDENTIFIER = re.compile(r"\w[._:]+\w|[_()]|[a-z][A-Z]|^[A-Z][A-Z0-9]+$")

NO_VECTORS = ("This index has no page vectors (it was summarized without embeddings), "
              "so these are keyword results.")


class ModeError(TextpileError):
    """An unknown search mode, or a page for "more like this" that is not in the index."""


def check_mode(mode: str | None) -> str:
    """``mode`` if it is one of :data:`MODES`, :data:`DEFAULT_MODE` for None or "".

    Raises:
        ModeError: any other value (the message lists the modes).
    """
    if mode is None or mode == "":
        return DEFAULT_MODE
    if mode not in MODES:
        raise ModeError(f"unknown search mode {mode!r} (expected one of: {', '.join(MODES)})")
    return mode


@dataclass
class Semantic:
    """What the vector modes need: the model (for the query's vector) and the page vectors.

    A frontend keeps one between requests (loading the model takes about 0.2 s, the
    vectors of 100K pages about 0.5 s); :meth:`load` makes one for a single search and
    :meth:`lazy` one that loads each part from ``conn`` only when a search needs it (a
    hybrid search whose keyword ranking stands needs neither).
    """

    embedder: Embedder | None
    vectors: PageVectors | None
    conn: sqlite3.Connection | None = None

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> "Semantic":
        """The vectors of ``conn`` and, when there are any, the model.

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        vectors = load_page_vectors(conn)
        return cls(load_embedder() if vectors is not None else None, vectors)

    @classmethod
    def lazy(cls, conn: sqlite3.Connection) -> "Semantic":
        """One that loads the vectors and the model from ``conn`` on first use (:meth:`ready`)."""
        return cls(None, None, conn)

    def ready(self, model: bool = True) -> "Semantic":
        """Self, with the vectors and (when there are vectors and ``model``) the model loaded.

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        if self.vectors is None and self.conn is not None:
            self.vectors, self.conn = load_page_vectors(self.conn), None
        if model and self.embedder is None and self.vectors is not None:
            self.embedder = load_embedder()
        return self


class SemanticCache:
    """The model and page vectors a frontend keeps between searches of one database file.

    The web frontend keeps one per served file identity (a newly published copy gets a
    new one, :class:`textpile.web.state.SummaryDatabase`). The first search in a vector
    mode loads the vectors and the model; "more like this" needs only the vectors.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._semantic: Semantic | None = None

    def get(self, conn: sqlite3.Connection, with_model: bool = True) -> Semantic:
        """The cached :class:`Semantic` of the file ``conn`` reads (loaded on first use).

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        with self._lock:
            if self._semantic is None:
                self._semantic = Semantic(None, load_page_vectors(conn))
            if with_model and self._semantic.embedder is None and self._semantic.vectors is not None:
                self._semantic = Semantic(load_embedder(), self._semantic.vectors)
            return self._semantic


def keyword_found_it(parsed: ParsedQuery, keyword: list[Scored]) -> bool:
    """True when the keyword ranking's first page is a known-item answer, so hybrid mode
    keeps the keyword ranking: that page holds every query word (:data:`EVERY_WORD`) and either its title
    holds them all or matches title, a section title or its URL exactly, or the query
    names code (:data:`_IDENTIFIER`), or it has at most :data:`SHORT_QUERY_WORDS` words."""
    if not keyword or keyword[0].held < EVERY_WORD:
        return False
    f = keyword[0].features
    if f.get("title_cover", 0.0) >= 1.0 or max(f.get("title_exact", 0.0), f.get("section_exact", 0.0),
                                                  f.get("url_exact", 0.0)) > 0:
        return True
    words = [w for t in parsed.positive_terms for w in t.text.split()]
    return len(words) <= SHORT_QUERY_WORDS or any(_IDENTIFIER.search(w) for w in words)


def _query_text(parsed: ParsedQuery) -> str:
    return " ".join(t.text for t in parsed.positive_terms)


def _allowed(conn: sqlite3.Connection, parsed: ParsedQuery):
    """A mask function for :meth:`PageVectors.nearest` from the query's filters, or None."""
    if not parsed.filters:
        return None
    fsql, fparams = filter_sql(parsed.filters)
    sql = ("SELECT eg.entity_generation_id FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
           "JOIN origin o ON o.origin_id = u.origin_id "
           "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
           f"WHERE {SEARCHABLE.format(eg='eg')}{fsql}")
    ok = np.asarray([r[0] for r in conn.execute(sql, fparams)], dtype=np.int64)
    return lambda ids: np.isin(ids, ok)


def _excluded(conn: sqlite3.Connection, parsed: ParsedQuery, ids: list[int]) -> set[int]:
    """Those of ``ids`` whose page holds an excluded word or phrase (the unobtanium FTS
    index's match, as keyword mode excludes them)."""
    if not parsed.excluded or not ids:
        return set()
    match = " OR ".join('"' + t.text.replace('"', '""') + '"' for t in parsed.excluded)
    marks = ", ".join("?" * len(ids))
    try:
        return {r[0] for r in conn.execute(
            f"SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ? AND rowid IN ({marks})",
            [match, *ids])}
    except sqlite3.OperationalError:  # an exclusion FTS5 cannot parse excludes nothing (keyword mode drops it too)
        return set()


class _Reorder:
    """The engine's ``reorder`` hook for one search (see :data:`textpile.search.engine.Reorder`)."""

    def __init__(self, mode: str, semantic: Semantic, query_vector: np.ndarray | None = None,
                 exclude: int | None = None) -> None:
        self.mode = mode
        self.semantic = semantic
        self.query_vector = query_vector
        self.exclude = exclude

    def __call__(self, conn: sqlite3.Connection, parsed: ParsedQuery,
                 keyword: list[Scored], timed_out: bool = False) -> tuple[list[Scored], bool]:
        if self.mode == "hybrid" and ((not keyword and not timed_out) or keyword_found_it(parsed, keyword)):
            # no page holds any of the words: keep the empty ranking, so the engine offers
            # "did you mean" (a typo) instead of pages that are only near in meaning (when
            # the time budget ended the keyword search before it found any, the pages
            # near in meaning are all there is)
            return keyword, True
        vectors = self.semantic.ready(model=self.query_vector is None).vectors
        q = self.query_vector if self.query_vector is not None else self.semantic.embedder.embed_one(_query_text(parsed))
        nearest = vectors.nearest(q, SEMANTIC_DEPTH + len(parsed.excluded) * 10, _allowed(conn, parsed), self.exclude)
        dropped = _excluded(conn, parsed, [i for i, _ in nearest])
        nearest = [(i, sim) for i, sim in nearest if i not in dropped][:SEMANTIC_DEPTH]
        similarity = dict(nearest)
        by_id = {s.info.entity_generation_id: s for s in keyword}
        for s in keyword:
            v = vectors.vector_of(s.info.entity_generation_id)
            s.features["semantic"] = float(v @ q) if v is not None else 0.0
        if self.mode == "semantic":
            order = [i for i, _ in nearest]
            scores = {i: sim for i, sim in nearest}
        else:
            scores = reciprocal_rank_fusion(
                [([s.info.entity_generation_id for s in keyword], KEYWORD_WEIGHT), ([i for i, _ in nearest], 1.0)],
                k=FUSION_K)
            order = sorted(scores, key=lambda i: (-scores[i], i))
        missing = [i for i in order if i not in by_id]
        infos = page_infos(conn, missing) if missing else {}
        out = []
        for i in order:
            s = by_id.get(i)
            if s is None:
                info = infos.get(i)
                if info is None:
                    continue
                s = Scored(info, {"semantic": similarity[i], "title_cover": 0.0, "section_cover": 0.0})
            s.score = float(scores[i])
            out.append(s)
        return out, self.mode == "hybrid"


def search_mode(conn: sqlite3.Connection, query: str, *, mode: str | None = None,
                semantic: Semantic | None = None, **options) -> SearchResults:
    """Run ``query`` in ``mode`` (:data:`MODES`; None or "": :data:`DEFAULT_MODE`) on the
    summary database ``conn``. ``semantic`` is the model and vectors (loaded from ``conn``
    when None, only as far as the search needs them); ``options`` are
    :func:`textpile.search.engine.search`'s. A database without vectors answers with
    keyword results: its ``mode`` is then ``keyword`` and its ``mode_note``
    :data:`NO_VECTORS`, which is also its first note when a vector mode was asked for by
    name (the default mode stays quiet about it). Otherwise ``mode`` is the mode asked for.

    Raises:
        ModeError: ``mode`` is not a search mode.
        textpile.semantic.model.ModelError: the model's package is missing.
        sqlite3.Error: database problems (as :func:`~textpile.search.engine.search`).
    """
    named = mode not in (None, "")
    mode = check_mode(mode)
    if mode == "keyword":
        return search(conn, query, **options)
    if semantic is None:
        semantic = Semantic.lazy(conn) if has_vectors(conn) else Semantic(None, None)
    if semantic.conn is None and (semantic.vectors is None or not len(semantic.vectors)):
        out = search(conn, query, **options)
        out.mode, out.mode_note = "keyword", NO_VECTORS
        if named:
            out.notes.insert(0, NO_VECTORS)
            out.message = " ".join([NO_VECTORS, out.message] if out.message else [NO_VECTORS])
        return out
    out = search(conn, query, reorder=_Reorder(mode, semantic), **options)
    out.mode = mode
    return out


def find_page(conn: sqlite3.Connection, page: str) -> int:
    """The searchable generation that ``page`` names: an entity generation UUID (as the
    JSON API gives it) or a URL (as a result shows it, ``#fragment`` included).

    Raises:
        ModeError: no searchable page is named so.
    """
    searchable = SEARCHABLE.format(eg="eg")
    try:
        key = uuid_module.UUID(page.strip()).bytes
    except ValueError:
        key = None
    if key is not None:
        row = conn.execute(f"SELECT eg.entity_generation_id FROM entity_generation eg "
                           f"WHERE eg.entity_generation_uuid = ? AND {searchable}", (key,)).fetchone()
    else:
        url, _, fragment = page.strip().partition("#")
        row = conn.execute(
            "SELECT eg.entity_generation_id FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
            f"WHERE u.str_url = ? AND eg.url_fragment IS ? AND {searchable} ORDER BY eg.entity_generation_id DESC",
            (url, fragment or None)).fetchone()
    if row is None:
        raise ModeError(f"{page!r}: no searchable page of this index has that URL or entity generation UUID")
    return row[0]


def more_like_this(conn: sqlite3.Connection, target: str, *, semantic: Semantic | None = None,
                   **options) -> SearchResults:
    """The pages nearest to ``target`` (:func:`find_page`) by vector similarity, itself left
    out. The results' ``query`` is the page's title (its words mark the snippets);
    ``options`` are :func:`textpile.search.engine.search`'s (paging, time budget).

    Raises:
        ModeError: ``target`` names no searchable page, or the index has no vector for it.
        textpile.semantic.model.ModelError: the model's package is missing.
    """
    eg_id = find_page(conn, target)
    if semantic is None:
        semantic = Semantic(None, load_page_vectors(conn))
    vector = semantic.vectors.vector_of(eg_id) if semantic.vectors is not None else None
    if vector is None:
        raise ModeError(f"{target!r}: this index has no vector for that page (summarized without embeddings?)")
    info = page_infos(conn, [eg_id])[eg_id]
    title = " ".join((info.title or info.headline or info.url).split())
    # Its words only, in lower case: a title's quotes, dashes, colons or OR are no query syntax.
    words = " ".join(_TITLE_WORD.findall(title)).lower() or title
    out = search(conn, words, reorder=_Reorder("semantic", semantic, query_vector=vector, exclude=eg_id), **options)
    out.query, out.mode = title, "semantic"
    return out


#: A word of a page title, as :func:`more_like_this` searches it.
_TITLE_WORD = re.compile(r"\w+")
