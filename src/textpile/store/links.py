"""link_summary stored compactly: each distinct link once, each page's links as a list.

Source: unobtanium-documentation.txt, pages "Summary Database" (link_summary and its
columns), "Location Signature", "Link Locality", "Link destination type". A site's pages
repeat the same links (navigation, sidebars, footers, "next"/"previous"): on the Python,
SciPy and SQLAlchemy documentation 326,533 link rows were 48,311 distinct links, and a
row of 27 columns costs about 70 bytes. So textpile keeps (schemas/summary/0.0.0.sql):

- ``link_target``: each distinct link once: its destination, fragment, text, tag, type,
  locality and its 19 booleans as the bits of ``flags`` (bit *i* is the *i*-th name of
  :data:`FLAG_COLUMNS`, the documented column order);
- ``link_list``: per generation with links, the JSON array of its link_target ids in
  document order, packed as the Gen2 texts are (:mod:`textpile.store.gen2_piles`: the
  view reads it with ``sqlar_uncompress``), its length and the link_summary_id of the
  first link (the others follow one by one).

``link_summary`` is a view over both with the documented columns and values (booleans
0 or 1), read by plain SQL as before. It cannot be inserted into: :func:`store_links`
writes a generation's links, all at once.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Sequence

from textpile.store.gen2_piles import pack

#: The boolean columns of link_summary in the documented order: bit i of link_target.flags.
FLAG_COLUMNS = (
    "rel_nofollow", "rel_me", "rel_tag", "in_header", "in_footer", "in_aside", "in_nav", "in_form", "in_main",
    "in_article", "in_section", "in_table", "in_figure", "in_address", "in_code", "in_headline", "in_list",
    "in_paragraph", "contains_headline",
)
#: The columns of one link as :func:`store_links` takes it: link_summary's after
#: link_summary_id and entity_generation_id, in the documented order.
LINK_COLUMNS = ("link_to_url", "link_to_fragment", *FLAG_COLUMNS, "destination_type", "link_locality",
                "html_tag_name", "text")

_TARGET_COLUMNS = "link_to_url, link_to_fragment, flags, destination_type, link_locality, html_tag_name, text"
_FIND_TARGET = ("SELECT link_target_id FROM link_target WHERE link_to_url = ? AND link_to_fragment IS ? AND flags = ?"
                " AND destination_type IS ? AND link_locality = ? AND html_tag_name IS ? AND text IS ?")


def _target(link: Sequence) -> tuple:
    """(link_to_url, link_to_fragment, flags, destination_type, link_locality, html_tag_name,
    text) of one link given in :data:`LINK_COLUMNS` order."""
    flags = 0
    for bit, value in enumerate(link[2:2 + len(FLAG_COLUMNS)]):
        if value:
            flags |= 1 << bit
    rest = link[2 + len(FLAG_COLUMNS):]
    return (link[0], link[1], flags, *rest)


class LinkStore:
    """Writes generations' links into one open summary database, remembering the link
    targets it has seen (one instance per transaction, such as an integration batch)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.targets: dict[tuple, int] = {}
        row = conn.execute("SELECT first_link_summary_id + link_count FROM link_list"
                           " ORDER BY first_link_summary_id DESC LIMIT 1").fetchone()
        self.next_id = row[0] if row is not None else 1

    def target_id(self, target: tuple) -> int:
        """The link_target_id of ``target`` (see :func:`_target`), stored when new."""
        found = self.targets.get(target)
        if found is None:
            row = self.conn.execute(_FIND_TARGET, target).fetchone()
            if row is None:
                found = self.conn.execute(f"INSERT INTO link_target({_TARGET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                          target).lastrowid
            else:
                found = row[0]
            self.targets[target] = found
        return found

    def store(self, generation_id: int, links: Iterable[Sequence]) -> int:
        """Store the links of generation ``generation_id`` (each in :data:`LINK_COLUMNS`
        order; booleans as 0/1 or bool), in document order; return how many. A generation's
        links are written once: storing links for it again raises sqlite3.IntegrityError."""
        ids = [self.target_id(_target(link)) for link in links]
        if not ids:
            return 0
        self.conn.execute(
            "INSERT INTO link_list(entity_generation_id, first_link_summary_id, link_count, link_target_ids_packed,"
            " link_target_ids_size) VALUES (?, ?, ?, ?, ?)",
            (generation_id, self.next_id, len(ids), *pack(json.dumps(ids, separators=(",", ":")).encode())))
        self.next_id += len(ids)
        return len(ids)


def store_links(conn: sqlite3.Connection, generation_id: int, links: Iterable[Sequence]) -> int:
    """Store one generation's links (see :meth:`LinkStore.store`); return how many."""
    return LinkStore(conn).store(generation_id, links)


def list_needs_migration(conn: sqlite3.Connection) -> bool:
    """True when ``link_list`` keeps its ids as plain JSON text (made by a textpile before
    they were packed)."""
    return conn.execute("SELECT 1 FROM pragma_table_info('link_list') WHERE name = 'link_target_ids'").fetchone() is not None


def prepare_list_migration(conn: sqlite3.Connection) -> None:
    """Step 1 of packing an older link_list (:func:`textpile.store.migrations.migrate`): the
    table out of the way (nothing references it)."""
    conn.execute("ALTER TABLE link_list RENAME TO link_list_legacy")


def finish_list_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made the new link_list: every row packed, checked to give
    its ids back exactly, the old table dropped; return the rows moved.

    Raises:
        sqlite3.IntegrityError: a row would not read back (nothing is changed).
    """
    conn.execute("INSERT INTO link_list(entity_generation_id, first_link_summary_id, link_count, link_target_ids_packed,"
                 " link_target_ids_size) SELECT entity_generation_id, first_link_summary_id,"
                 " json_array_length(link_target_ids), sqlar_compress(CAST(link_target_ids AS BLOB)),"
                 " length(CAST(link_target_ids AS BLOB)) FROM link_list_legacy ORDER BY entity_generation_id")
    different = conn.execute(
        "SELECT count(*) FROM link_list_legacy o LEFT JOIN link_list n USING (entity_generation_id)"
        " WHERE n.entity_generation_id IS NULL OR n.first_link_summary_id IS NOT o.first_link_summary_id"
        " OR CAST(sqlar_uncompress(n.link_target_ids_packed, n.link_target_ids_size) AS TEXT) IS NOT o.link_target_ids"
        ).fetchone()[0]
    if different:
        raise sqlite3.IntegrityError(f"link_list: {different} lists would not read back packed; not moving them")
    moved = conn.execute("SELECT count(*) FROM link_list_legacy").fetchone()[0]
    conn.execute("DROP TABLE link_list_legacy")
    return moved


def prepare_migration(conn: sqlite3.Connection) -> None:
    """Step 1 of moving an older database (inside :func:`textpile.store.migrations.migrate`):
    the link_summary table out of the view's way."""
    conn.execute("ALTER TABLE link_summary RENAME TO link_summary_legacy")


def finish_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made link_target, link_list and the view: every old row
    into them (link_summary_id kept; it must run on from the first link of each
    generation, as textpile wrote it), then the old table dropped; return the rows moved.

    Raises:
        sqlite3.IntegrityError: a generation's link ids do not run on one by one (nothing changed).
    """
    store = LinkStore(conn)
    columns = ", ".join(LINK_COLUMNS)
    rows = conn.execute(f"SELECT link_summary_id, entity_generation_id, {columns} FROM link_summary_legacy"
                        " ORDER BY entity_generation_id, link_summary_id")
    moved = 0
    current, first, links = None, None, []

    def flush() -> None:
        if current is not None:
            store.next_id = first
            store.store(current, links)

    for link_summary_id, generation_id, *link in rows:
        if generation_id != current:
            flush()
            current, first, links = generation_id, link_summary_id, []
        if link_summary_id != first + len(links):
            raise sqlite3.IntegrityError(
                f"link_summary: the link ids of generation {generation_id} do not run on one by one "
                f"({link_summary_id} after {first + len(links) - 1}); not moving them")
        links.append(link)
        moved += 1
    flush()
    columns = ", ".join(("link_summary_id", "entity_generation_id", *LINK_COLUMNS))
    old = conn.execute(f"SELECT {columns} FROM link_summary_legacy ORDER BY link_summary_id")
    new = conn.cursor().execute(f"SELECT {columns} FROM link_summary ORDER BY link_summary_id")
    for old_row, new_row in itertools.zip_longest(old, new):
        if old_row != new_row:
            raise sqlite3.IntegrityError(f"link_summary: link {(old_row or new_row)[0]} would not read back"
                                         " through the view; not moving the links")
    conn.execute("DROP TABLE link_summary_legacy")
    return moved
