"""Moving a summary database made by an older textpile to how this one stores it.

Three documented tables became views over compact textpile tables (same columns, same
values): ``text_pile_v0_2`` over ``text_pile_gen2`` (:mod:`textpile.store.gen2_piles`:
the values compressed), ``text_pile`` over ``text_pile_gen1``
(:mod:`textpile.store.text_piles`: the Gen1 text as spans of the Gen2 text, packed since)
and ``link_summary`` over ``link_target``, ``link_style`` and ``link_list``
(:mod:`textpile.store.links`; the markup in its own table and link_list packed since).
textpile's own ``section_embedding`` became a view too, over ``page_section_embedding``
(:mod:`textpile.store.embeddings`: each page's section vectors as one blob of binary codes).
(The derived search tables are not moved: the next index update makes them anew when
their layout differs, :mod:`textpile.index.schema`.)
A database where one of them is still a table, or a compact table is in an older layout,
is moved when it is opened for writing, in one transaction: a kill or an error leaves it
as it was (the next write-open moves it again from the start), and a database opened
read-only is read as it is (every layout has the documented tables and columns).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from textpile.errors import DatabaseError
from textpile.store import embeddings, gen2_piles, links, text_piles


@dataclass(frozen=True)
class Move:
    """One documented table that became a view: whether a database needs the move, the
    step before the schema is applied (the old table out of the way) and the one after
    (rows moved and checked, old table dropped; returns the rows moved)."""

    table: str
    needed: Callable[[sqlite3.Connection], bool]
    prepare: Callable[[sqlite3.Connection], None]
    finish: Callable[[sqlite3.Connection], int]


def still_a_table(name: str, conn: sqlite3.Connection) -> bool:
    """True when the documented ``name`` is still a table in ``conn`` (a summary database
    made by a textpile before it became a view)."""
    row = conn.execute("SELECT type FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None and row[0] == "table"


def set_aside(table: str, successor: str, legacy: str, conn: sqlite3.Connection) -> None:
    """Step 1 of a move: the old ``table`` out of the view's way. Its references (foreign
    keys of other tables) follow it to the name ``successor``, the compact table the schema
    makes next (SQLite's ALTER TABLE RENAME rewrites them), then it moves on to ``legacy``
    without them (legacy_alter_table), so every id keeps pointing at the same row, now in
    ``successor``. A ``successor`` equal to ``table`` (the compact table itself changes
    its layout) keeps the references as they are."""
    if successor != table:
        conn.execute(f'ALTER TABLE "{table}" RENAME TO "{successor}"')
    conn.execute("PRAGMA legacy_alter_table=ON")
    try:
        conn.execute(f'ALTER TABLE "{successor}" RENAME TO "{legacy}"')
    finally:
        conn.execute("PRAGMA legacy_alter_table=OFF")


#: In this order: the Gen1 moves read the Gen2 texts through the text_pile_v0_2 view. A
#: database needs at most one of the two Gen1 moves (text_pile a table, or text_pile_gen1
#: with a column per field), and one move for its links whatever their older layout.
MOVES = (
    Move("text_pile_v0_2", partial(still_a_table, "text_pile_v0_2"),
         partial(set_aside, "text_pile_v0_2", "text_pile_gen2", "text_pile_v0_2_legacy"), gen2_piles.finish_migration),
    Move("text_pile", partial(still_a_table, "text_pile"),
         partial(set_aside, "text_pile", "text_pile_gen1", "text_pile_legacy"), text_piles.finish_migration),
    Move("text_pile_gen1", text_piles.spans_need_migration, partial(set_aside, "text_pile_gen1", "text_pile_gen1",
         "text_pile_gen1_legacy"), text_piles.finish_spans_migration),
    Move("section_embedding", partial(still_a_table, "section_embedding"), embeddings.prepare_section_migration,
         embeddings.finish_section_migration),
    Move("link_summary", links.needs_migration, links.prepare_migration, links.finish_migration),
)


def split_statements(script: str) -> list[str]:
    """The SQL statements of ``script`` in order (``sqlite3.complete_statement`` decides
    where each ends, so trigger bodies stay whole)."""
    statements, current = [], []
    for line in script.splitlines(keepends=True):
        current.append(line)
        text = "".join(current)
        if sqlite3.complete_statement(text):
            statements.append(text.strip())
            current = []
    return statements


def needs_migration(conn: sqlite3.Connection) -> bool:
    """True when ``conn`` needs a move of :data:`MOVES` (an older layout of a documented table)."""
    return any(move.needed(conn) for move in MOVES)


def migrate(conn: sqlite3.Connection, schema: str) -> dict[str, int]:
    """Apply every :data:`MOVES` step ``conn`` needs and the summary ``schema`` (its DDL,
    idempotent) in one ``BEGIN IMMEDIATE`` transaction; return the rows moved per table.

    Views are dropped first (renaming a table rewrites or refuses the views reading it)
    and made again: the schema's by the schema, any other from its own SQL, after the
    moves. Foreign keys are off for the transaction (an old table is dropped while rows
    still reference its ids); ``PRAGMA foreign_key_check`` must find nothing before the
    commit.

    Raises:
        DatabaseError: rows would not read back through a view, or references would break
            (nothing is changed then).
    """
    saved_isolation = conn.isolation_level
    conn.isolation_level = None
    conn.execute("PRAGMA foreign_keys=OFF")
    moved: dict[str, int] = {}
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            todo = [move for move in MOVES if move.needed(conn)]  # another process may have moved it meanwhile
            if not todo:
                conn.execute("ROLLBACK")
                return moved
            views = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid").fetchall()
            for name, _sql in views:
                conn.execute(f'DROP VIEW "{name}"')
            for move in todo:
                move.prepare(conn)
            for statement in split_statements(schema):
                conn.execute(statement)
            schema_views = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
            for move in todo:
                try:
                    moved[move.table] = move.finish(conn)
                except sqlite3.IntegrityError as exc:
                    raise DatabaseError(str(exc)) from exc
            for name, sql in views:
                if name not in schema_views:
                    conn.execute(sql)
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise DatabaseError(f"moving {', '.join(moved)} would break references: {broken[:5]}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.isolation_level = saved_isolation
    return moved


_TRIGGER_NAME = re.compile(r"^\s*CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE | re.MULTILINE)


def _same_sql(a: str, b: str) -> bool:
    """Whether two CREATE statements are the same (SQLite keeps them without IF NOT EXISTS)."""
    def norm(sql: str) -> str:
        return " ".join(re.sub(r"\bIF\s+NOT\s+EXISTS\b", "", sql, flags=re.IGNORECASE).rstrip().rstrip(";").split())
    return norm(a) == norm(b)


def refresh_triggers(conn: sqlite3.Connection, schema: str) -> list[str]:
    """Make every trigger of ``schema`` (DDL) as the schema writes it, in one transaction:
    the schema's ``CREATE TRIGGER IF NOT EXISTS`` leaves the trigger an older textpile made
    (such as the view inserts before they refused NULL fields), so one whose SQL differs is
    dropped and made again. Returns the names of the triggers made again."""
    wanted = {}
    for statement in split_statements(schema):
        match = _TRIGGER_NAME.search(statement)  # after the comment lines above it
        if match:
            wanted[match.group(1)] = statement[match.start():].strip()
    stored = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall())
    stale = [name for name, sql in wanted.items() if name in stored and not _same_sql(stored[name], sql)]
    if stale:
        conn.execute("SAVEPOINT refresh_triggers")
        try:
            for name in stale:
                conn.execute(f'DROP TRIGGER "{name}"')
                conn.execute(wanted[name])
        except BaseException:
            conn.execute("ROLLBACK TO refresh_triggers")
            conn.execute("RELEASE refresh_triggers")
            raise
        conn.execute("RELEASE refresh_triggers")
    return stale
