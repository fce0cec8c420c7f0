"""Which entity generations are searchable: the one definition every stage uses.

A generation is *searchable* when it is open (no ``confirmed_end_unix_utc``), not marked
duplicate and has a Gen1 text pile (a page with noindex never gets one). Only searchable
generations have rows in the full text and search indexes (:mod:`textpile.index`), page
and section vectors (:mod:`textpile.semantic.embed`), and search results.

Source: unobtanium-documentation.txt, pages "Entity Generation" and "Duplicate Types"
(an open generation is the current state of a page; a duplicate's canonical one is
searched instead); the text pile condition is textpile's shared decision.
"""

from __future__ import annotations

#: The condition as SQL over ``entity_generation`` named ``{eg}``: ``SEARCHABLE.format(eg="eg")``.
SEARCHABLE = ("{eg}.confirmed_end_unix_utc IS NULL AND NOT {eg}.marked_duplicate"
              " AND {eg}.text_pile_id IS NOT NULL")


def searchable(alias: str = "eg") -> str:
    """:data:`SEARCHABLE` over the ``entity_generation`` alias ``alias`` (an SQL identifier
    written by the caller, never input): ``searchable("src")`` ->
    ``"src.confirmed_end_unix_utc IS NULL AND NOT src.marked_duplicate AND ..."``.

    Raises:
        ValueError: ``alias`` is not a plain identifier.
    """
    if not alias.isidentifier():
        raise ValueError(f"{alias!r} is not an SQL alias")
    return SEARCHABLE.format(eg=alias)
