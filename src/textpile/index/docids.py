"""Docids: the rowids of pages and sections in the search index, in prior order.

FTS5 yields the matches of a query in rowid order, and a search stops after a bounded
number of them (:mod:`textpile.search.candidates`), so a page's rowid (its *docid*) puts
the likeliest pages first: pages are ordered by a query-independent prior
(:func:`page_prior`, larger first), ties by entity_generation_id. The docid is a pure
function of the two, so a page keeps it while neither changes and a page added later
slots in where a whole rebuild would put it: the order, and the first tier that is a
prefix of it (:mod:`textpile.index.tier`), stay exact as pages come and go.

Layout of a page docid (48 bits): the prior as a 20-bit key (larger priors smaller keys,
:data:`PRIOR_LOW` to :data:`PRIOR_HIGH` in steps of :data:`PRIOR_STEP`), then the
entity_generation_id in 28 bits. The steps are coarse on purpose: one link more or less
to a page moves its prior by less than a step mostly, so its docid, and with it its rows
in the index, stay as they are (:func:`textpile.index.pages.same_rows`), while pages
whose priors differ by a step or more keep their order. A section's docid is its page's docid times 2**15
(:data:`SECTIONS_PER_PAGE`) plus its position among the page's indexed sections, so the
sections follow their pages' order and every docid fits SQLite's 63-bit rowids.
"""

from __future__ import annotations

import math

from textpile.errors import DatabaseError

#: The range of priors told apart; priors outside it count as its ends.
PRIOR_LOW, PRIOR_HIGH = -8.0, 56.0
#: The priors in one step share a key (then the older generation comes first).
PRIOR_STEP = 1 / 16
_ID_BITS = 28
#: The largest entity_generation_id a docid can hold.
MAX_GENERATION_ID = (1 << _ID_BITS) - 1
#: Sections of one page that get a docid (the page's first ones; later ones are not indexed).
SECTIONS_PER_PAGE = 1 << 15


def page_prior(in_links: int, content_in_links: int, link_density: float) -> float:
    """The query-independent prior a page's docid follows (larger first): linked from the
    content of many pages, mostly its own text rather than links. Nothing else depends on
    its scale; it only orders the pages."""
    return math.log1p(content_in_links) + 0.5 * math.log1p(in_links) - 3.0 * link_density


def prior_key(prior: float) -> int:
    """The key of ``prior``: 0 for :data:`PRIOR_HIGH` and above, one more per
    :data:`PRIOR_STEP` below it, to 1024 for :data:`PRIOR_LOW` and below (larger
    priors, smaller keys; it fits the 20 bits of a docid)."""
    clamped = min(PRIOR_HIGH, max(PRIOR_LOW, prior))
    return math.floor((PRIOR_HIGH - clamped) / PRIOR_STEP)


def page_docid(prior: float, entity_generation_id: int) -> int:
    """The docid of a page with ``prior`` and ``entity_generation_id`` (module docstring).

    Raises:
        DatabaseError: ``entity_generation_id`` is above :data:`MAX_GENERATION_ID` (or
            below 1).
    """
    if not 0 < entity_generation_id <= MAX_GENERATION_ID:
        raise DatabaseError(f"entity_generation_id {entity_generation_id} is outside 1..{MAX_GENERATION_ID}, "
                            "which the search index's docids hold")
    return (prior_key(prior) << _ID_BITS) | entity_generation_id


def section_docid(page: int, position: int) -> int:
    """The docid of the section at ``position`` (from 0, below :data:`SECTIONS_PER_PAGE`)
    among the indexed sections of the page with docid ``page``."""
    return page * SECTIONS_PER_PAGE + position


def last_section_docid(page: int) -> int:
    """The largest docid a section of the page with docid ``page`` can have."""
    return page * SECTIONS_PER_PAGE + SECTIONS_PER_PAGE - 1
