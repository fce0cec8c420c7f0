"""Who may search: Datasette's permissions, applied to the search page and its JSON.

Search shows titles, URLs and text of the summary database, so it is visible exactly
when Datasette would show that database's page: the permission cascade
``view-database`` (on the summary database), then ``view-instance``, as Datasette's
database view and datasette-search-all check them (on Datasette 0.65 and 1.0 alike:
:mod:`textpile.web.datasette_versions`). An instance whose ``permissions`` or
``allow`` blocks deny the anonymous visitor the database (or the whole instance) thus
denies the search too (403); an actor allowed there may search.
"""

from __future__ import annotations

from textpile.web.datasette_versions import may_view_database
from textpile.web.state import SummaryDatabase, find_target, refresh_if_swapped


async def may_view_summary(datasette, actor: dict | None, database: str) -> bool:
    """Whether ``actor`` (None: anonymous) may see the summary database ``database``,
    and so search it and follow the links to it."""
    return await may_view_database(datasette, actor, database)


async def viewable_target(datasette, request) -> tuple[SummaryDatabase | None, bool]:
    """The summary database ``datasette`` serves (the file now in place:
    :func:`~textpile.web.state.refresh_if_swapped`), None when it serves none, and whether
    ``request``'s actor may view it (:func:`may_view_summary`): what every textpile page
    (search, suggestions, cached text, the shard endpoint) checks first."""
    target = find_target(datasette)
    if target is None:
        return None, False
    target = refresh_if_swapped(datasette, target)
    return target, await may_view_summary(datasette, request.actor, target.name)
