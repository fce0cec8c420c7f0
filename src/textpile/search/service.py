"""The search service: the one front door of every interface that searches (the web
page and JSON API, ``textpile search``; shards later).

A search runs in one of three modes (:data:`MODES`), built from three stages:

* ``keyword``: the keyword search (:func:`textpile.search.engine.search`) alone;
* ``semantic``: semantic retrieval (:mod:`textpile.search.nearest`): the pages whose
  vectors are most similar to the query's, whatever words they share with it;
* ``hybrid``: the keyword candidates and the pages nearest in meaning, every one scored
  by its keyword and semantic features together (:mod:`textpile.search.hybrid`); the
  keyword ranking alone when it found nothing at all (then "did you mean" helps more).

Both vector modes go through the keyword search's one hook (``reorder``), so paging,
snippets, section links, filters and the time budget are the keyword search's. Filters
(``site:``, ``host:``, ``lang:``) and exclusions (``-"phrase"``) hold for the pages the
vectors find too, and such a page holds every phrase the query quoted
(:func:`textpile.search.nearest.unmatched`). A summary database without vectors (summarized with
``--no-embeddings``, or by a textpile without them) answers a vector mode with keyword
results and says so.

:func:`more_like_this` ranks the pages nearest to one page's own vector.
"""

from __future__ import annotations

import re
import sqlite3
import uuid as uuid_module
from dataclasses import dataclass

import numpy as np

from textpile.errors import TextpileError
from textpile.search.candidates import page_infos
from textpile.search.engine import search
from textpile.search.features import Scored
from textpile.search.hybrid import hybrid_ranking
from textpile.search.nearest import nearest_pages, query_text
from textpile.search.query import ParsedQuery
from textpile.search.rerank import Rescorer
from textpile.search.weights import core_indexes
from textpile.search.results import SearchResults
from textpile.semantic.loaded import Semantic
from textpile.semantic.vectors import has_vectors, load_page_vectors
from textpile.store.searchable import SEARCHABLE

MODES = ("keyword", "semantic", "hybrid")
#: The mode of a search that names none, chosen by the relevance benchmark's figures
#: (README, "Search modes"): hybrid equals keyword on every known-item class and lifts
#: the natural-language queries. On an index without vectors it is keyword, silently.
DEFAULT_MODE = "hybrid"

NO_VECTORS = ("This index has no page vectors (it was summarized without embeddings), "
              "so these are keyword results.")
#: A word of a page title, as :func:`more_like_this` searches it.
_TITLE_WORD = re.compile(r"\w+")


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


class _VectorRanking:
    """The keyword search's ``reorder`` hook for one search in a vector mode (see
    :data:`textpile.search.engine.Reorder`): the semantic ranking, or the hybrid one."""

    def __init__(self, mode: str, semantic: Semantic, query_vector: np.ndarray | None = None,
                 exclude: int | None = None) -> None:
        self.mode = mode
        self.semantic = semantic
        self.query_vector = query_vector
        self.exclude = exclude

    def __call__(self, conn: sqlite3.Connection, parsed: ParsedQuery, keyword: list[Scored],
                 timed_out: bool, rescorer: Rescorer) -> tuple[list[Scored], bool]:
        if self.mode == "hybrid" and not keyword and not timed_out and len(core_indexes(rescorer.plan)) < 2:
            # no page holds the one word searched for: keep the empty ranking, so the
            # engine offers "did you mean" (a typo) instead of pages that are only near in
            # meaning (a description in words no page uses gets the pages near in meaning;
            # so does a search whose time budget ended before it found any)
            return keyword, True
        vectors = self.semantic.ready(model=self.query_vector is None).vectors
        q = self.query_vector if self.query_vector is not None else self.semantic.embedder.embed_one(query_text(parsed))
        nearest = nearest_pages(conn, parsed, rescorer.plan, vectors, q, self.exclude)
        if self.mode == "hybrid":
            return hybrid_ranking(conn, keyword, nearest, vectors, q, rescorer), True
        similarity = dict(nearest)
        by_id = {s.info.entity_generation_id: s for s in keyword}
        missing = [i for i, _ in nearest if i not in by_id]
        infos = page_infos(conn, missing) if missing else {}
        out = []
        for i, sim in nearest:
            s = by_id.get(i)
            if s is None:
                info = infos.get(i)
                if info is None:
                    continue
                s = Scored(info, {"title_cover": 0.0, "section_cover": 0.0})
            s.features["semantic"] = similarity[i]
            s.raw["semantic"] = similarity[i]
            s.score = float(sim)
            out.append(s)
        return out, False


def search_pages(conn: sqlite3.Connection, query: str, *, mode: str | None = None,
                 semantic: Semantic | None = None, **options) -> SearchResults:
    """Run ``query`` in ``mode`` (:data:`MODES`; None or "": :data:`DEFAULT_MODE`) on the
    summary database ``conn``. ``semantic`` is the model and vectors (loaded from ``conn``
    when None, only as far as the search needs them); ``options`` are
    :func:`textpile.search.engine.search`'s (paging, time budget, ranking, explain). A
    database without vectors answers with keyword results: its ``mode`` is then
    ``keyword`` and its ``mode_note`` :data:`NO_VECTORS`, which is also its first note
    when a vector mode was asked for by name (the default mode stays quiet about it).
    Otherwise ``mode`` is the mode asked for.

    Raises:
        ModeError: ``mode`` is not a search mode.
        textpile.search.results.PagingError: the page or page size is not a whole number.
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
    out = search(conn, query, reorder=_VectorRanking(mode, semantic), **options)
    out.mode = mode
    return out


def find_page(conn: sqlite3.Connection, page: str) -> int:
    """The searchable generation that ``page`` names: an entity generation UUID (as the
    JSON API gives it) or a URL (as a result shows it, ``#fragment`` included).

    Raises:
        ModeError: no searchable page is named so.
    """
    eg_id = _page_id(conn, page)
    if eg_id is None:
        raise ModeError(_not_found(page))
    return eg_id


def _not_found(page: str) -> str:
    return f"{page!r}: no searchable page of this index has that URL or entity generation UUID"


def _page_id(conn: sqlite3.Connection, page: str) -> int | None:
    """:func:`find_page`'s generation, None when no searchable page is named so."""
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
    return None if row is None else row[0]


@dataclass(frozen=True)
class LikePage:
    """The page of a "more like this" search in its index: its generation, its vector
    (None when the index has none for it), its title as the results' ``query`` shows it,
    the words of the title the search runs (the snippets mark them), and the model that
    made the vector."""

    entity_generation_id: int
    vector: np.ndarray | None
    title: str
    words: str
    model: str | None = None


def like_page(conn: sqlite3.Connection, target: str, semantic: Semantic | None = None) -> LikePage | None:
    """The :class:`LikePage` of ``target`` (:func:`find_page`) in the index ``conn`` (its
    vector from ``semantic``, loaded when None), None when no searchable page of it is
    named so."""
    eg_id = _page_id(conn, target)
    if eg_id is None:
        return None
    if semantic is None:
        semantic = Semantic(None, load_page_vectors(conn))
    vector = semantic.vectors.vector_of(eg_id) if semantic.vectors is not None else None
    info = page_infos(conn, [eg_id])[eg_id]
    title = " ".join((info.title or info.headline or info.url).split())
    # Its words only, in lower case: a title's quotes, dashes, colons or OR are no query syntax.
    words = " ".join(_TITLE_WORD.findall(title)).lower() or title
    return LikePage(eg_id, vector, title, words, semantic.vectors.model if vector is not None else None)


def like_search(conn: sqlite3.Connection, like: LikePage, *, semantic: Semantic | None = None,
                exclude: int | None = None, **options) -> SearchResults:
    """The pages of the index ``conn`` nearest to ``like``'s vector (a page of this index or
    of another shard), ``exclude`` (a generation of this index: the page itself) left out,
    as :func:`more_like_this` ranks them; ``options`` are
    :func:`textpile.search.engine.search`'s.

    Raises:
        textpile.search.results.PagingError: the page or page size is not a whole number.
    """
    if semantic is None:
        semantic = Semantic(None, load_page_vectors(conn))
    out = search(conn, like.words, reorder=_VectorRanking("semantic", semantic, query_vector=like.vector,
                                                          exclude=exclude), **options)
    out.query, out.mode = like.title, "semantic"
    return out


def more_like_this(conn: sqlite3.Connection, target: str, *, semantic: Semantic | None = None,
                   **options) -> SearchResults:
    """The pages nearest to ``target`` (:func:`find_page`) by vector similarity, itself left
    out. The results' ``query`` is the page's title (its words mark the snippets);
    ``options`` are :func:`textpile.search.engine.search`'s (paging, time budget).

    Raises:
        ModeError: ``target`` names no searchable page, or the index has no vector for it.
        textpile.search.results.PagingError: the page or page size is not a whole number.
        textpile.semantic.model.ModelError: the model's package is missing.
    """
    if semantic is None:
        semantic = Semantic(None, load_page_vectors(conn))
    like = like_page(conn, target, semantic)
    if like is None:
        raise ModeError(_not_found(target))
    if like.vector is None:
        raise ModeError(no_vector_message(target))
    return like_search(conn, like, semantic=semantic, exclude=like.entity_generation_id, **options)


def no_vector_message(target: str) -> str:
    """The error of a "more like this" search whose page has no vector."""
    return f"{target!r}: this index has no vector for that page (summarized without embeddings?)"
