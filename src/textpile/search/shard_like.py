"""A shard's part of "more like this" over shards (:meth:`textpile.search.fanout.ShardedSearch.more_like_this`).

One index ranks the pages nearest to one page's vector (:func:`textpile.search.service.more_like_this`).
Over shards the page is on one shard and its neighbours on every shard, so each shard is
asked two things, answered by the functions here alike for a local and a served shard:

* ``page`` (:func:`textpile.search.service.like_page`): whether it holds the page named
  (its URL or entity generation UUID) and, if so, the page's generation, vector, title
  and title words (:func:`like_json`: the vector as the base64 of its little-endian
  float32 values, exact);
* ``like`` (:func:`shard_like`): its pages nearest to that vector, the page itself left
  out on the shard holding it, every one rendered with its similarity (``raw``
  ``semantic``), at most :data:`textpile.search.shards.ANSWER_DEPTH`; the fan-out ranks
  them together by similarity.
"""

from __future__ import annotations

import base64
import sqlite3

import numpy as np

from textpile.search.results import SearchResults
from textpile.search.service import LikePage, ModeError, like_search
from textpile.search.shards import ANSWER_DEPTH
from textpile.semantic.loaded import Semantic


def shard_like(conn: sqlite3.Connection, like: LikePage, semantic: Semantic, exclude: int | None, *,
               depth: int = ANSWER_DEPTH, budget_ms: float = 1000.0, facets: bool = False,
               sort: str | None = None) -> SearchResults:
    """The pages of the shard ``conn`` nearest to ``like``'s vector (``exclude``: the page
    itself, on the shard holding it), as :func:`textpile.search.service.like_search` ranks
    them: the first ``depth`` rendered (at most :data:`ANSWER_DEPTH`: the fan-out shows
    no deeper result of any shard), ``explained`` filled for them (their raw ``semantic``
    similarity), ``total`` every one, no "did you mean" correction.

    Raises:
        ModeError: the shard has no page vectors, or vectors of another model than ``like``'s.
        sqlite3.Error: database problems.
    """
    vectors = semantic.vectors
    if vectors is None or not len(vectors):
        raise ModeError(f"{like.title!r}: this shard has no page vectors to rank by (summarized without embeddings?)")
    if (vectors.model, vectors.dimensions) != (like.model, len(like.vector)):
        raise ModeError(f"{like.title!r}: the page's vector is of {like.model!r} ({len(like.vector)} dimensions), "
                        f"this shard's of {vectors.model!r} ({vectors.dimensions})")
    return like_search(conn, like, semantic=semantic, exclude=exclude, page=0,
                       per_page=max(1, min(ANSWER_DEPTH, depth)),
                       budget_ms=budget_ms, explain=True, correct=False, facets=facets, sort=sort)


def vector_text(vector: np.ndarray) -> str:
    """``vector`` as the base64 (URL-safe) of its little-endian float32 values."""
    return base64.urlsafe_b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def vector_from_text(text: str) -> np.ndarray:
    """The float32 vector of :func:`vector_text`'s ``text``.

    Raises:
        ValueError: ``text`` is not one (not base64, or not a whole number of float32 values).
    """
    raw = base64.urlsafe_b64decode(text.encode("ascii"))
    if not raw or len(raw) % 4:
        raise ValueError(f"expected the base64 of float32 values, got {len(raw)} bytes")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def like_json(like: LikePage | None) -> dict:
    """The JSON document of a shard's answer to ``page``: ``{"held": false}``, or the page
    (its vector null when the shard has none for it)."""
    if like is None:
        return {"held": False}
    return {"held": True, "entity_generation_id": like.entity_generation_id, "title": like.title,
            "words": like.words, "vector": None if like.vector is None else vector_text(like.vector),
            "model": like.model}


def like_from_json(doc) -> LikePage | None:
    """The :class:`LikePage` of :func:`like_json`'s document (None: not held).

    Raises:
        KeyError, TypeError, ValueError, AttributeError: ``doc`` is not one.
    """
    if not doc["held"]:
        return None
    vector = None if doc["vector"] is None else vector_from_text(str(doc["vector"]))
    model = None if doc["model"] is None else str(doc["model"])
    return LikePage(int(doc["entity_generation_id"]), vector, str(doc["title"]), str(doc["words"]), model)
