"""Fusion, a stage of :mod:`textpile.search.service`: how the hybrid mode joins keyword
and semantic evidence.

No rule decides which of the two to trust. The keyword candidates (every reranked page,
with its features) and the :data:`SEMANTIC_CANDIDATES` pages nearest to the query's
vector make one list; every page of it gets the keyword features
(:class:`textpile.search.rerank.Rescorer` for the pages only the vectors found) and two
semantic ones:

* ``semantic``: the cosine similarity of the page's vector to the query's, less the
  best similarity among the nearest pages (0 for the nearest page, below 0 for others,
  never below -:data:`SEMANTIC_FLOOR`);
* ``passage``: the same for the page's best section (its stored binary code,
  :mod:`textpile.search.passages`), less the best section's similarity among the pages
  (-:data:`SEMANTIC_FLOOR` for a page without section codes).

A page that holds none of the query's words and whose page similarity is at the floor
(:data:`SEMANTIC_FLOOR` or more below the best page's) is no result: far in meaning and
sharing no word, it would only pad the list after the pages that answer (a rare word
that one page holds gives that page alone, as in the keyword mode). On the relevance
benchmark's candidate lists no relevant page is such a page (MRR@10 unchanged).

Each page is scored with :data:`textpile.search.rank.HYBRID_RANKING`, one weighted sum
of all the features, fitted on the relevance benchmark (``bench/relevance/tune.py``, its
leave-one-site-out check in the README): a known item wins by its title and section
features, a question in a user's words by the vectors. A page whose best section
answers the query better than the page's text links to that section when no keyword
section match does (:func:`textpile.search.passages.passage_hits`).
"""

from __future__ import annotations

import sqlite3

import numpy as np

from textpile.search.features import Scored
from textpile.search.passages import best_passages, passage_hits
from textpile.search.rank import HYBRID_RANKING, Ranking
from textpile.search.rerank import Rescorer
from textpile.semantic.vectors import PageVectors

#: Nearest pages (by page vector) that join the keyword candidates.
SEMANTIC_CANDIDATES = 30
#: The semantic features' floor: a page far from the query's vector loses at most this
#: much similarity against the nearest (a page named exactly by the query whose text is
#: a long table, "Root Zone Database", keeps its title's win). On the relevance
#: benchmark's candidate lists (previous weights) MRR@10 0.8537 -> 0.8547 with a floor
#: of 0.2 (0.3: 0.8544, 0.15: 0.8496).
SEMANTIC_FLOOR = 0.2
#: A page links to its best passage when that passage's similarity is at least this
#: much above the page vector's own (and no keyword section matched).
PASSAGE_LINK_MARGIN = 0.0


def hybrid_ranking(conn: sqlite3.Connection, keyword: list[Scored], nearest: list[tuple[int, float]],
                   vectors: PageVectors, query_vector: np.ndarray, rescorer: Rescorer,
                   ranking: Ranking = HYBRID_RANKING) -> list[Scored]:
    """The hybrid ranking (module docstring): ``keyword`` (the keyword search's scored
    candidates) and the first :data:`SEMANTIC_CANDIDATES` of ``nearest`` ((id,
    similarity) best first), each with the ``semantic`` and ``passage`` features, scored
    with ``ranking``, best first (ties: better bm25, then lower id); without the pages
    that hold no query word and are at the floor of similarity (module docstring).

    Raises:
        sqlite3.Error: database problems.
    """
    by_id = {s.info.entity_generation_id: s for s in keyword}
    extra = [i for i, _ in nearest[:SEMANTIC_CANDIDATES] if i not in by_id]
    pages = list(keyword) + (rescorer.features(extra) if extra else [])
    similarity = dict(nearest)
    for s in pages:
        eg_id = s.info.entity_generation_id
        if eg_id not in similarity:
            v = vectors.vector_of(eg_id)
            similarity[eg_id] = float(v @ query_vector) if v is not None else 0.0
    ids = [s.info.entity_generation_id for s in pages]
    passages = best_passages(conn, ids, query_vector, vectors.dimensions)
    best_page = max((similarity[i] for i in ids), default=0.0)
    best_passage = max((sim for _, sim in passages.values()), default=0.0)
    linked = {i: p for i, p in passages.items() if p[1] >= similarity[i] + PASSAGE_LINK_MARGIN}
    hits = passage_hits(conn, {i: p for i, p in linked.items() if by_id.get(i) is None or by_id[i].section is None})
    for s in pages:
        eg_id = s.info.entity_generation_id
        s.features["semantic"] = max(-SEMANTIC_FLOOR, similarity[eg_id] - best_page)
        s.features["passage"] = max(-SEMANTIC_FLOOR, passages[eg_id][1] - best_passage) if eg_id in passages \
            else -SEMANTIC_FLOOR
        if s.section is None and eg_id in hits:
            s.section = hits[eg_id]
        s.score = ranking.score(s.features)
    pages = [s for s in pages if s.held > 0 or s.features["semantic"] > -SEMANTIC_FLOOR]
    pages.sort(key=lambda s: (-s.score, -s.features.get("bm25", 0.0), s.info.entity_generation_id))
    return pages
