"""Grouping by site: at most N results of one site on a result page when more than one
site matches, the rest moved to later pages, with a "more from this site" query
(issue 32, "Grouping by site"; Marginalia and Stract show a few results per site).

Nothing is dropped: a result page holds at most ``per_site`` results of each site while
other sites' results remain to fill it; when only results of sites at their cap remain,
they fill the page in rank order (no page is left short).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

from textpile.search.features import Scored

#: Results of one site on a result page, at most, unless configured otherwise.
DEFAULT_PER_SITE = 2


def site_of(s: Scored) -> str:
    """The host of a ranked page (lower case; '' for a URL without one)."""
    try:
        return (urlsplit(s.info.url).hostname or "").lower()
    except ValueError:
        return ""


def group_by_site(ranking: list, per_page: int, per_site: int, pages: int | None = None,
                  site: Callable[[object], str] = site_of) -> tuple[list, set[tuple[int, str]]]:
    """``ranking`` reordered so that each run of ``per_page`` results holds at most
    ``per_site`` of one site (see the module docstring), and the ``(result page, site)``
    pairs whose page left results of that site to later pages (the pages that show a
    "more from this site" link). Only the first ``pages`` result pages are arranged
    (all when None), the rest follow in rank order. ``per_site`` 0, or a ranking of one
    site, changes nothing. ``site`` gives a ranked item's site (of a :class:`Scored`:
    :func:`site_of`).

    Raises:
        ValueError: ``per_site`` is negative or ``per_page`` is not positive.
    """
    if per_site < 0 or per_page < 1:
        raise ValueError(f"per_site must be 0 or more and per_page 1 or more, got {per_site}, {per_page}")
    sites = [site(s) for s in ranking]
    if per_site == 0 or len(set(sites)) < 2:
        return ranking, set()
    remaining = list(zip(sites, ranking))
    out: list[Scored] = []
    capped: set[tuple[int, str]] = set()
    page = 0
    while remaining and (pages is None or page < pages):
        counts: Counter = Counter()
        taken, deferred = [], []
        for site, s in remaining:
            if len(taken) < per_page and counts[site] < per_site:
                taken.append((site, s))
                counts[site] += 1
            else:
                deferred.append((site, s))
        fill = per_page - len(taken)
        taken, remaining = taken + deferred[:fill], deferred[fill:]
        capped.update((page, site) for site, _ in remaining if counts[site] >= per_site)
        out.extend(s for _, s in taken)
        page += 1
    out.extend(s for _, s in remaining)
    return out, capped
