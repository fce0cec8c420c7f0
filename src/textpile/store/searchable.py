"""Which entity generations of a summary database a search finds.

A generation is *searchable* while it is open (``confirmed_end_unix_utc`` is NULL), not
marked duplicate (``marked_duplicate``: the entity_generation fields of
unobtanium-documentation.txt, "Summary Database") and has a Gen1 text pile. The search
index, the page vectors and every query are built from, and limited to, these.
"""

from __future__ import annotations

#: The searchable condition as SQL over the alias ``{eg}`` of ``entity_generation``
#: (``SEARCHABLE.format(eg="eg")``).
SEARCHABLE = ("{eg}.confirmed_end_unix_utc IS NULL AND NOT {eg}.marked_duplicate"
              " AND {eg}.text_pile_id IS NOT NULL")
