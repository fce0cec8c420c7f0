"""Indexiness: is a page an index (navigation, positive) or a leaf (content, negative)?

Source: unobtanium-documentation.txt, page "Calculating Indexiness" (metrics, the
"Counting Links" rules and the formula, exactly).
"""

from __future__ import annotations

from collections.abc import Iterable

from textpile.enums import LinkLocality
from textpile.summarize.scrape.result import Link

METRIC_NAMES = (
    "has_publishing_date", "selflinks_in_headers", "selflinks_in_lists",
    "inlinks_in_headers", "inlinks_in_lists", "number_of_outlinks",
)


def is_relevant(link: Link) -> bool:
    """A link counts for indexiness when it is an HTML ``a`` element, not in_nav, not
    in_aside, and in_main, or in_article, or neither in_footer nor in_header."""
    return link.html_tag_name == "a" and _relevant_location(link.location)


def _relevant_location(loc: frozenset[str]) -> bool:
    """:func:`is_relevant` for an ``a`` element with location signature ``loc``."""
    if "in_nav" in loc or "in_aside" in loc:
        return False
    return "in_main" in loc or "in_article" in loc or not ("in_footer" in loc or "in_header" in loc)


_OUT_LINK = int(LinkLocality.out_link)
_SELF_LINK = int(LinkLocality.self_link)


def indexiness_breakdown(links: Iterable[Link], has_publishing_date: bool) -> dict[str, int | bool]:
    """The indexiness metrics of a page and its score.

    Each relevant link (see :func:`is_relevant`) counts once: a self- or inlink that is
    in_headline or contains_headline counts "in headers", else one that is in_list counts
    "in lists" (headers beat lists); number_of_outlinks counts the relevant outlinks.

    Returns a dict with the keys of ``METRIC_NAMES``, ``relevant_links`` and ``score``::

        score = selflinks_in_headers * -20 + selflinks_in_lists * -5
              + inlinks_in_headers * 11 + inlinks_in_lists * 5
              + number_of_outlinks * -1 + (-25 if has_publishing_date else 0) - 10
    """
    counts = dict.fromkeys(METRIC_NAMES[1:], 0)
    relevant = 0
    # a page's links share a few location signatures: each is judged once
    verdicts: dict[frozenset[str], bool] = {}
    for link in links:
        if link.html_tag_name != "a":
            continue
        location = link.location
        verdict = verdicts.get(location)
        if verdict is None:
            verdict = verdicts[location] = _relevant_location(location)
        if not verdict:
            continue
        relevant += 1
        locality = link.link_locality
        if locality == _OUT_LINK:
            counts["number_of_outlinks"] += 1
            continue
        self_link = locality == _SELF_LINK
        if "in_headline" in location or link.contains_headline:
            counts["selflinks_in_headers" if self_link else "inlinks_in_headers"] += 1
        elif "in_list" in location:
            counts["selflinks_in_lists" if self_link else "inlinks_in_lists"] += 1
    score = (
        counts["selflinks_in_headers"] * -20
        + counts["selflinks_in_lists"] * -5
        + counts["inlinks_in_headers"] * 11
        + counts["inlinks_in_lists"] * 5
        + counts["number_of_outlinks"] * -1
        + (-25 if has_publishing_date else 0)
        - 10
    )
    return {"has_publishing_date": bool(has_publishing_date), **counts,
            "relevant_links": relevant, "score": score}


def indexiness(links: Iterable[Link], has_publishing_date: bool) -> int:
    """The indexiness score only (see :func:`indexiness_breakdown`)."""
    return int(indexiness_breakdown(links, has_publishing_date)["score"])
