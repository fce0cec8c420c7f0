"""link_summary stored compactly: each distinct link once, each page's links as a list.

Source: unobtanium-documentation.txt, pages "Summary Database" (link_summary and its
columns), "Location Signature", "Link Locality", "Link destination type". A site's pages
repeat the same links (navigation, sidebars, footers, "next"/"previous"): on the Python,
SciPy and SQLAlchemy documentation 326,533 link rows were 48,311 distinct links, and a
row of 27 columns costs about 70 bytes. How a link is marked up (its 19 booleans, type,
locality and element) takes few values (72 on the Python documentation's 175,162 links),
and the same destination and text appear in several of them. So textpile keeps
(schemas/summary/0.0.0.sql):

- ``link_target``: each distinct destination, fragment and text once;
- ``link_style``: each distinct markup once: the 19 booleans as the bits of ``flags``
  (bit *i* is the *i*-th name of :data:`FLAG_COLUMNS`, the documented column order),
  destination type, locality and element name;
- ``link_list``: per generation with links, the JSON array of its links in document
  order, each a pair ``[link_target_id, link_style_id]``, packed as the Gen2 texts are
  (:mod:`textpile.store.gen2_piles`: the view reads it with ``sqlar_uncompress``), its
  length and the link_summary_id of the first link (the others follow one by one).

``link_summary`` is a view over them with the documented columns and values (booleans
0 or 1), read by plain SQL as before. It cannot be inserted into: :func:`store_links`
writes a generation's links, all at once.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Sequence

from textpile.store.gen2_piles import pack

#: The boolean columns of link_summary in the documented order: bit i of link_style.flags.
FLAG_COLUMNS = (
    "rel_nofollow", "rel_me", "rel_tag", "in_header", "in_footer", "in_aside", "in_nav", "in_form", "in_main",
    "in_article", "in_section", "in_table", "in_figure", "in_address", "in_code", "in_headline", "in_list",
    "in_paragraph", "contains_headline",
)
#: The columns of one link as :func:`store_links` takes it: link_summary's after
#: link_summary_id and entity_generation_id, in the documented order.
LINK_COLUMNS = ("link_to_url", "link_to_fragment", *FLAG_COLUMNS, "destination_type", "link_locality",
                "html_tag_name", "text")

#: The link targets of one destination and fragment, the oldest first (of two equal ones,
#: the oldest is used); an indexed lookup (link_target_by_url_fragment).
_TARGETS_OF_URL_FRAGMENT = ("SELECT link_target_id, text FROM link_target WHERE link_to_url = ? "
                            "AND link_to_fragment IS ? ORDER BY link_target_id")
_FIND_STYLE = ("SELECT link_style_id FROM link_style WHERE flags = ? AND destination_type IS ? AND link_locality = ?"
               " AND html_tag_name IS ?")


def _split(link: Sequence) -> tuple[tuple, tuple]:
    """``(target, style)`` of one link given in :data:`LINK_COLUMNS` order: target is
    (link_to_url, link_to_fragment, text), style (flags, destination_type, link_locality,
    html_tag_name)."""
    flags = 0
    for bit, value in enumerate(link[2:2 + len(FLAG_COLUMNS)]):
        if value:
            flags |= 1 << bit
    destination_type, link_locality, html_tag_name, text = link[2 + len(FLAG_COLUMNS):]
    return (link[0], link[1], text), (flags, destination_type, link_locality, html_tag_name)


class LinkStore:
    """Writes generations' links into one open summary database, remembering the link
    targets and styles it has seen (one instance per transaction, such as an integration batch)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.targets: dict[tuple, int] = {}
        self.read: set = set()  # (destination, fragment) pairs whose stored targets are all in self.targets
        self.styles: dict[tuple, int] = {}
        row = conn.execute("SELECT first_link_summary_id + link_count FROM link_list"
                           " ORDER BY first_link_summary_id DESC LIMIT 1").fetchone()
        self.next_id = row[0] if row is not None else 1

    def _id(self, seen: dict[tuple, int], key: tuple, find: str, insert: str) -> int:
        found = seen.get(key)
        if found is None:
            row = self.conn.execute(find, key).fetchone()
            found = row[0] if row is not None else self.conn.execute(insert, key).lastrowid
            seen[key] = found
        return found

    def target_id(self, target: tuple) -> int:
        """The link_target_id of ``target`` (link_to_url, link_to_fragment, text), stored when
        new. The stored targets of a destination and fragment are read at its first link, in
        one indexed query: the next pages link to the same ones with the same texts, or with
        a few others. (Reading every target of a destination at once read thousands of rows
        for each much-linked page: a table of contents links to hundreds of its fragments.)"""
        found = self.targets.get(target)
        if found is None:
            pair = target[:2]
            if pair not in self.read:
                self.read.add(pair)
                for target_id, text in self.conn.execute(_TARGETS_OF_URL_FRAGMENT, pair):
                    self.targets.setdefault((*pair, text), target_id)
                found = self.targets.get(target)
            if found is None:
                found = self.targets[target] = self.conn.execute(
                    "INSERT INTO link_target(link_to_url, link_to_fragment, text) VALUES (?, ?, ?)", target).lastrowid
        return found

    def style_id(self, style: tuple) -> int:
        """The link_style_id of ``style`` (flags, destination_type, link_locality,
        html_tag_name), stored when new."""
        return self._id(self.styles, style, _FIND_STYLE,
                        "INSERT INTO link_style(flags, destination_type, link_locality, html_tag_name)"
                        " VALUES (?, ?, ?, ?)")

    def store(self, generation_id: int, links: Iterable[Sequence]) -> int:
        """Store the links of generation ``generation_id`` (each in :data:`LINK_COLUMNS`
        order; booleans as 0/1 or bool), in document order; return how many. A generation's
        links are written once: storing links for it again raises sqlite3.IntegrityError."""
        pairs = []
        for link in links:
            target, style = _split(link)
            pairs.append([self.target_id(target), self.style_id(style)])
        if not pairs:
            return 0
        self.conn.execute(
            "INSERT INTO link_list(entity_generation_id, first_link_summary_id, link_count, links_packed, links_size)"
            " VALUES (?, ?, ?, ?, ?)",
            (generation_id, self.next_id, len(pairs), *pack(json.dumps(pairs, separators=(",", ":")).encode())))
        self.next_id += len(pairs)
        return len(pairs)


def store_links(conn: sqlite3.Connection, generation_id: int, links: Iterable[Sequence]) -> int:
    """Store one generation's links (see :meth:`LinkStore.store`); return how many."""
    return LinkStore(conn).store(generation_id, links)


# --- moving the links of an older database ---------------------------------------------
#
# Three older layouts: (1) link_summary a table; (2) link_target with the markup in it
# (flags, destination_type, link_locality, html_tag_name) and link_list with a plain JSON
# array of link_target ids (link_target_ids); (3) the same with the array packed
# (link_target_ids_packed, link_target_ids_size).

def _column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    return conn.execute("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)).fetchone() is not None


def needs_migration(conn: sqlite3.Connection) -> bool:
    """True when ``conn`` keeps its links in an older layout (link_summary a table, or
    link_list without link styles)."""
    row = conn.execute("SELECT type FROM sqlite_master WHERE name = 'link_summary'").fetchone()
    if row is not None and row[0] == "table":
        return True
    return _column(conn, "link_list", "entity_generation_id") and not _column(conn, "link_list", "links_packed")


def prepare_migration(conn: sqlite3.Connection) -> None:
    """Step 1 of moving an older database's links (inside
    :func:`textpile.store.migrations.migrate`; the views are dropped already): the old
    tables out of the way (nothing references them) as ``*_legacy``, with link_target's
    index, whose name the schema makes again."""
    if conn.execute("SELECT type FROM sqlite_master WHERE name = 'link_summary'").fetchone() == ("table",):
        conn.execute("ALTER TABLE link_summary RENAME TO link_summary_legacy")
        return
    conn.execute("DROP INDEX IF EXISTS link_target_by_url")
    conn.execute("DROP INDEX IF EXISTS link_target_by_url_fragment")
    conn.execute("ALTER TABLE link_target RENAME TO link_target_legacy")
    conn.execute("ALTER TABLE link_list RENAME TO link_list_legacy")


def _legacy_rows_sql(conn: sqlite3.Connection) -> tuple[str, tuple[str, ...]]:
    """The SELECT of the old links as link_summary rows (link_summary_id,
    entity_generation_id, :data:`LINK_COLUMNS`), ordered by generation then id, and the
    legacy tables to drop after the move."""
    columns = ", ".join(("link_summary_id", "entity_generation_id", *LINK_COLUMNS))
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'link_summary_legacy'").fetchone():
        return (f"SELECT {columns} FROM link_summary_legacy ORDER BY entity_generation_id, link_summary_id",
                ("link_summary_legacy",))
    ids = ("l.link_target_ids" if _column(conn, "link_list_legacy", "link_target_ids")
           else "CAST(sqlar_uncompress(l.link_target_ids_packed, l.link_target_ids_size) AS TEXT)")
    flags = ", ".join(f"(t.flags >> {bit}) & 1 AS {name}" for bit, name in enumerate(FLAG_COLUMNS))
    return (f"SELECT l.first_link_summary_id + j.key AS link_summary_id, l.entity_generation_id AS entity_generation_id,"
            f" t.link_to_url, t.link_to_fragment, {flags}, t.destination_type, t.link_locality, t.html_tag_name, t.text"
            f" FROM link_list_legacy l, json_each({ids}) j JOIN link_target_legacy t ON t.link_target_id = j.value"
            " ORDER BY l.entity_generation_id, j.key", ("link_list_legacy", "link_target_legacy"))


def finish_migration(conn: sqlite3.Connection) -> int:
    """Step 2, after the schema made link_target, link_style, link_list and the view:
    every old link into them (link_summary_id kept; it must run on from the first link of
    each generation, as textpile wrote it), every row checked to read back exactly
    through the view, then the old tables dropped; return the links moved.

    Raises:
        sqlite3.IntegrityError: a generation's link ids do not run on one by one, or a
            link would not read back (nothing is changed: the caller rolls back).
    """
    select, legacy = _legacy_rows_sql(conn)
    store = LinkStore(conn)
    moved = 0
    current, first, links = None, None, []

    def flush() -> None:
        if current is not None:
            store.next_id = first
            store.store(current, links)

    for link_summary_id, generation_id, *link in conn.execute(select):
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
    old = conn.execute(f"SELECT * FROM ({select}) ORDER BY link_summary_id")
    new = conn.cursor().execute(f"SELECT {columns} FROM link_summary ORDER BY link_summary_id")
    for old_row, new_row in itertools.zip_longest(old, new):
        if old_row != new_row:
            raise sqlite3.IntegrityError(f"link_summary: link {(old_row or new_row)[0]} would not read back"
                                         " through the view; not moving the links")
    for table in legacy:
        conn.execute(f"DROP TABLE {table}")
    return moved
