"""What an element's class and id say about its content, for the main content decision.

The patterns are readability.js's (Mozilla's Readability, the reader view of Firefox:
``REGEXPS.positive`` / ``negative``), which the main content step of most extractors
descends from, with the navigation words (nav, menu, breadcrumb ...) of its "unlikely
candidates" added to the negative ones. A class or id matching a negative pattern costs
:data:`CLASS_WEIGHT`, a positive one gains it (both may apply).
"""

from __future__ import annotations

import re

CLASS_WEIGHT = 25

POSITIVE = re.compile(r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|document",
                      re.IGNORECASE)
NEGATIVE = re.compile(
    r"-ad-|hidden|\bhid\b|banner|combx|comment|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta|"
    r"outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|"
    r"\bnav|menu|breadcrumb|cookie|newsletter|subscribe|social|popup|modal|pagination|pager",
    re.IGNORECASE)


def class_weight(class_value: str | None, id_value: str | None) -> int:
    """The weight of an element by its ``class`` and ``id`` attributes (None when absent):
    the sum over both of -:data:`CLASS_WEIGHT` for a negative match and
    +:data:`CLASS_WEIGHT` for a positive one."""
    weight = 0
    for value in (class_value, id_value):
        if value:
            if NEGATIVE.search(value):
                weight -= CLASS_WEIGHT
            if POSITIVE.search(value):
                weight += CLASS_WEIGHT
    return weight
