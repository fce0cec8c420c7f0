"""The everyday query class: what users type into a documentation site's search box.

Two to five words, as typed: a name ("pg_dump", "CREATE INDEX") or, mostly, a short
description of a task ("undo last commit", "read file line by line"). Each query was
written from what the site's users want to do, by reading the site's table of contents,
FAQ and "How do I" pages, before any search was run, and is judged by the pages that
answer it (explain how, or document the command, function or setting that does it);
several pages can be right. Paths are relative to the site root, as in judgments.py. The
class is ``everyday`` and, like ``natural`` (natural.py: a sentence or a question), is
never sampled: every query runs.
"""

from __future__ import annotations

#: Hand-judged everyday queries: the query and the pages that answer it.
POSTGRES_EVERYDAY = {
    "create index concurrently": ("sql-createindex.html",),
    "CREATE INDEX": ("sql-createindex.html",),
    "vacuum full": ("sql-vacuum.html",),
    "explain analyze": ("sql-explain.html", "using-explain.html"),
    "window functions": ("tutorial-window.html", "functions-window.html"),
    "row level security": ("ddl-rowsecurity.html",),
    "foreign key": ("ddl-constraints.html", "tutorial-fk.html"),
    "json operators": ("functions-json.html",),
    "pg_dump": ("app-pgdump.html",),
    "streaming replication": ("warm-standby.html",),
    "connection string": ("libpq-connect.html",),
    "upsert on conflict": ("sql-insert.html",),
    "table partitioning": ("ddl-partitioning.html",),
    "full text search": ("textsearch.html", "textsearch-intro.html"),
    "autovacuum": ("routine-vacuuming.html", "runtime-config-autovacuum.html"),
    "common table expressions": ("queries-with.html",),
    "date formatting": ("functions-formatting.html",),
    "uuid type": ("datatype-uuid.html",),
    "listen notify": ("sql-listen.html", "sql-notify.html"),
    "alter table add column": ("sql-altertable.html",),
}
SQLITE_EVERYDAY = {
    "create index": ("lang_createindex.html",),
    "foreign keys": ("foreignkeys.html",),
    "full text search": ("fts5.html", "fts3.html"),
    "json functions": ("json1.html",),
    "write ahead log": ("wal.html",),
    "vacuum": ("lang_vacuum.html",),
    "upsert": ("lang_upsert.html",),
    "window functions": ("windowfunctions.html",),
    "datatypes": ("datatype3.html",),
    "date and time functions": ("lang_datefunc.html",),
    "autoincrement": ("autoinc.html",),
    "pragma journal_mode": ("pragma.html",),
    "query planner": ("queryplanner.html", "optoverview.html"),
    "sqlite3_prepare_v2": ("c3ref/prepare.html",),
    "busy timeout": ("c3ref/busy_timeout.html",),
    "attach database": ("lang_attach.html",),
    "strict tables": ("stricttables.html",),
    "generated columns": ("gencol.html",),
    "savepoint": ("lang_savepoint.html",),
    "explain query plan": ("eqp.html",),
}

EVERYDAY = {
    "postgresql": POSTGRES_EVERYDAY,
    "sqlite": SQLITE_EVERYDAY,
}
