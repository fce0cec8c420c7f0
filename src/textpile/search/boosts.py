"""Ranking rules (issue 32, "Ranking rules in the configuration"): boosts and demotions
of pages by their URL, set by the operator, as Stract's optics or Meilisearch's ranking
rules let one do.

A rule is a URL criterium of the seed's criteria language (unobtanium-documentation.txt,
"Criterium Chain" and "Url": ``if.url.path.has_prefix = "/blog/"``), compiled by the
configuration's reader (``textpile.web.settings``: this layer takes any object with
``matches(ParsedUrl) -> bool``), and a ``boost``: a number added to the score of every
ranked page whose URL it matches (negative: a demotion). The sum of the matching rules'
boosts is the rerank feature ``ranking_rules`` (weight 1: it is in the score's units; a
search's scores span about 0 to 5), after every other feature, in every search mode;
the ranking is then sorted again by score (stable). No rules: the ranking is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textpile.search.features import Scored
from textpile.store.urls import UrlError, parse_url

#: The feature name the rules' boosts are kept under in a result's features (``explain``).
FEATURE = "ranking_rules"


@dataclass(frozen=True)
class RankingRule:
    """One rule: ``criterium`` (``matches(ParsedUrl) -> bool``, the seed's ``url``
    criterium chain) and ``boost`` (added to a matching page's score; negative demotes)."""

    criterium: Any
    boost: float


def apply_rules(ranking: list[Scored], rules: tuple[RankingRule, ...]) -> list[Scored]:
    """``ranking`` with each page's matching rules' boosts added to its score (feature
    :data:`FEATURE`), sorted again by score, best first (ties keep their order); the same
    list when ``rules`` is empty. A URL that does not parse matches no rule."""
    if not rules:
        return ranking
    for s in ranking:
        boost = rules_boost(s.info.url, rules)
        if boost:
            s.features[FEATURE] = boost
            s.score += boost
    return sorted(ranking, key=lambda s: -s.score)


def rules_boost(url: str, rules: tuple[RankingRule, ...]) -> float:
    """The sum of the boosts of the ``rules`` that ``url`` matches (0 for a URL that does
    not parse)."""
    try:
        parsed = parse_url(url)
    except UrlError:
        return 0.0
    return sum(rule.boost for rule in rules if rule.criterium.matches(parsed))
