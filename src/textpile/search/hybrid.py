"""Fusion, a stage of :mod:`textpile.search.service`: how the hybrid mode joins the
keyword ranking and the semantic one.

The keyword ranking stands when its first page is a known-item answer
(:func:`keyword_found_it`), else the two rankings are fused by weighted reciprocal rank
fusion (:func:`fused_scores`, :func:`textpile.semantic.fusion.reciprocal_rank_fusion`).
Both rules were chosen on the relevance benchmark (``bench/relevance/tune_fusion.py``):
plain fusion helps questions in a user's own words but loses known-item queries (titles,
API names, commands), which the keyword ranker nearly always gets right.
"""

from __future__ import annotations

import re

from textpile.search.features import Scored
from textpile.search.query import ParsedQuery
from textpile.semantic.fusion import reciprocal_rank_fusion

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


def fused_scores(keyword: list[int], nearest: list[int]) -> dict[int, float]:
    """``{entity_generation_id: fused score}`` of the keyword ranking and the semantic one
    (each a list of ids, best first): reciprocal rank fusion with the keyword ranking
    weighted :data:`KEYWORD_WEIGHT`, the semantic one 1, rank constant :data:`FUSION_K`."""
    return reciprocal_rank_fusion([(keyword, KEYWORD_WEIGHT), (nearest, 1.0)], k=FUSION_K)
