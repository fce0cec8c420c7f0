"""textpile's sqlite-utils plugin: ``sqlar_uncompress`` on every connection sqlite-utils opens.

Registered by the ``[project.entry-points.sqlite_utils] textpile`` entry point, so that
``sqlite-utils query summary.db "select text from text_pile"`` (and any tool that opens
databases through ``sqlite_utils.Database``) reads the summary database's views: they
unpack the stored texts with ``sqlar_uncompress`` (:mod:`textpile.store.gen2_piles`). A
connection that has the function already (a Datasette connection, which sqlite-utils
wraps to read a schema) keeps its own.
"""

from __future__ import annotations

from sqlite_utils import hookimpl

from textpile.store.gen2_piles import ensure_functions


@hookimpl
def prepare_connection(conn):
    ensure_functions(conn)
