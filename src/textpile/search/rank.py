"""Ranking: the FTS5 column weights of stage one and the feature weights of stage two.

Stage one orders candidates by FTS5 ``bm25()`` over ``search_index`` with
:data:`PAGE_COLUMN_WEIGHTS` (and sections by :data:`SECTION_COLUMN_WEIGHTS`). Stage two
scores each candidate as the weighted sum of its features
(:mod:`textpile.search.features`) with :data:`FEATURE_WEIGHTS`; ties go to the better
bm25, then the lower entity_generation_id.

The weights were fitted on the relevance benchmark (``bench/relevance``: eleven
documentation sites of seven generators, known-item, everyday and natural queries;
``bench/relevance/tune.py``, coordinate ascent on MRR@10 of the dumped candidates, checked
leaving one site out: README, "After issue 29") and are changed only with its table in
hand. The keyword mode and the hybrid mode (:mod:`textpile.search.hybrid`, with the two
semantic features) have weights of their own: with the vectors' evidence beside them,
the keyword features weigh differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from textpile.search.features import FEATURES
from textpile.index.schema import SEARCH_COLUMNS, SECTION_COLUMNS

#: bm25 weight of each search_index column, in column order.
PAGE_COLUMN_WEIGHTS: dict[str, float] = {
    "title": 8.0, "headings": 3.0, "names": 3.0, "parts": 0.5, "url": 4.0, "anchor_text": 2.0,
    "description": 2.0, "text": 1.0, "secondary_text": 0.3,
}
#: bm25 weight of each section_search_index column, in column order.
SECTION_COLUMN_WEIGHTS: dict[str, float] = {"title": 3.0, "name": 3.0, "anchor_text": 1.0}
#: Stage-two weight of each feature.
FEATURE_WEIGHTS: dict[str, float] = {
    "bm25": 0.9, "title_cover": 0.5, "title_exact": 2.0, "section_cover": 0.15, "section_exact": 1.4,
    "url_cover": -0.05, "url_exact": -0.1, "anchor": 2.2, "inlinks": 0.6, "length": -0.3, "indexiness": 0.05,
    "navigation": -1.1, "section_diffuse": -0.6, "exact_form": 0.35, "all_terms": 0.0, "held": 0.5,
    "proximity": 0.85,
}
#: The hybrid mode's weights (:mod:`textpile.search.hybrid`): the keyword features and
#: the semantic ones of a page (``semantic``) and of its best section (``passage``).
HYBRID_FEATURE_WEIGHTS: dict[str, float] = {
    "bm25": 1.5, "title_cover": 0.5, "title_exact": 2.0, "section_cover": 1.3, "section_exact": 1.8,
    "url_cover": 0.3, "url_exact": 0.15, "anchor": 3.3, "inlinks": 1.1, "length": 1.2, "indexiness": -0.05,
    "navigation": -1.0, "section_diffuse": -0.25, "exact_form": 0.75, "all_terms": -0.2, "held": 0.6,
    "proximity": 1.85, "semantic": 10.0, "passage": 4.65,
}
assert tuple(PAGE_COLUMN_WEIGHTS) == SEARCH_COLUMNS and tuple(SECTION_COLUMN_WEIGHTS) == SECTION_COLUMNS
assert set(FEATURE_WEIGHTS) == set(FEATURES) and set(HYBRID_FEATURE_WEIGHTS) == {*FEATURES, "semantic", "passage"}


@dataclass(frozen=True)
class Ranking:
    """The weights one search uses; ``disable`` names features set to 0 (ablation)."""

    features: Mapping[str, float] = field(default_factory=lambda: dict(FEATURE_WEIGHTS))
    page_columns: tuple[float, ...] = tuple(PAGE_COLUMN_WEIGHTS.values())
    section_columns: tuple[float, ...] = tuple(SECTION_COLUMN_WEIGHTS.values())
    disable: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # the weights in use, computed once (a ranking scores every candidate of a search)
        active = tuple((name, w) for name, w in self.features.items() if name not in self.disable and w)
        object.__setattr__(self, "_active", active)

    def score(self, features: Mapping[str, float]) -> float:
        """The weighted sum of ``features`` (missing ones count 0)."""
        get = features.get
        return sum(w * get(name, 0.0) for name, w in self._active)


DEFAULT_RANKING = Ranking()
HYBRID_RANKING = Ranking(HYBRID_FEATURE_WEIGHTS)
