"""What the fault harness compares and counts: final states, integrity, lost rows,
unfinished runs and leftovers of killed processes.

Every connection to a summary database gets textpile's SQL functions first
(:func:`textpile.store.gen2_piles.register_functions`): the documented ``text_pile`` view
unpacks its texts with ``sqlar_uncompress``, which Python's sqlite3 lacks.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from textpile.store.gen2_piles import register_functions

#: A page copy's manifest being written (textpile.store.page_copy: ``<copy>-pages.<pid>``).
_MANIFEST_BEING_WRITTEN = re.compile(r"-pages\.(writing|[0-9]+)$|-changed\.writing$")
ACTIVE = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING")


def _ro(path: Path) -> sqlite3.Connection:
    """A read-only connection to ``path`` with textpile's SQL functions (module docstring)."""
    return register_functions(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def crawler_state(db: Path) -> dict[str, tuple[int, str | None]]:
    """URL -> (exit code, SHA-256 of the text) of each URL's latest page crawl."""
    if not db.exists():
        return {}
    with closing(_ro(db)) as conn:
        rows = conn.execute(
            "SELECT u.str_url, l.exit_code, t.text FROM crawl_log l JOIN url u USING(url_id)"
            " LEFT JOIN file f ON f.crawl_log_id = l.crawl_log_id LEFT JOIN file_text t ON t.file_id = f.file_id"
            " WHERE l.crawl_type = 0 ORDER BY l.time_started_unix_utc, l.crawl_log_id").fetchall()
    state: dict[str, tuple[int, str | None]] = {}
    for url, code, text in rows:
        state[url] = (code, hashlib.sha256(text.encode()).hexdigest() if text is not None else None)
    return state


#: The search tables the summary's full text index stage builds beside the FTS table
#: and the embedding stage's vector tables and their partition (their names, without
#: FTS5's shadow tables);
#: their row counts are part of the state.
SEARCH_TABLES = ("SELECT name FROM sqlite_master WHERE type = 'table'"
                 " AND (name LIKE 'search\\_%' ESCAPE '\\' OR name LIKE 'section\\_search\\_%' ESCAPE '\\'"
                 " OR name LIKE '%\\_embedding' ESCAPE '\\' OR name LIKE 'embedding\\_%' ESCAPE '\\'"
                 " OR name LIKE 'page\\_embedding\\_%' ESCAPE '\\')"
                 " AND name NOT GLOB '*_config' AND name NOT GLOB '*_data' AND name NOT GLOB '*_docsize'"
                 " AND name NOT GLOB '*_idx' AND name NOT GLOB '*_content' ORDER BY name")


def _identifier(name: str) -> str:
    """``name`` as an SQL identifier (table names cannot be bound parameters)."""
    return '"' + name.replace('"', '""') + '"'


def summary_state(db: Path) -> tuple[tuple, int, dict[str, int]] | None:
    """The summary's meaning without times and ids: each generation's URL, fragment,
    open?, duplicate?, text pile digest and title, the FTS row count and the row count of
    each search and vector table (:data:`SEARCH_TABLES`)."""
    if not db.exists():
        return None
    with closing(_ro(db)) as conn:
        rows = conn.execute(
            "SELECT u.str_url, eg.url_fragment, eg.confirmed_end_unix_utc IS NULL, eg.marked_duplicate,"
            " hex(tp.blake2b512_digest), dd.title FROM entity_generation eg JOIN url u USING(url_id)"
            " LEFT JOIN text_pile tp USING(text_pile_id)"
            " LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id").fetchall()
        fts = conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0]
        names = [name for (name,) in conn.execute(SEARCH_TABLES)]
        search = {name: conn.execute("SELECT count(*) FROM " + _identifier(name)).fetchone()[0] for name in names}
    return tuple(sorted(rows, key=repr)), fts, search


def databases(folder: Path) -> list[Path]:
    """Every SQLite database file under ``folder`` (textpile's and Dagster's)."""
    return sorted(p for p in folder.rglob("*.db") if p.is_file())


def corrupt(folder: Path) -> list[str]:
    """The databases under ``folder`` whose copy (with its -wal/-journal, so checking
    changes nothing here) fails ``PRAGMA integrity_check``, with the reason."""
    bad = []
    for db in databases(folder):
        with tempfile.TemporaryDirectory(prefix="faults-check-") as tmp:
            copy = Path(tmp) / db.name
            copy_db(db, copy)
            try:
                with closing(register_functions(sqlite3.connect(copy))) as conn:
                    verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
            except sqlite3.Error as exc:
                verdict = str(exc)
        if verdict != "ok":
            bad.append(f"{db}: {verdict}")
    return bad


def unsummarized(crawler_db: Path, summary_db: Path) -> int:
    """Crawl log entries of ``crawler_db`` whose crawl has no crawl_summary in ``summary_db``."""
    if not crawler_db.exists():
        return 0
    with closing(_ro(crawler_db)) as conn:
        crawled = {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_log")}
    if not summary_db.exists():
        return len(crawled)
    with closing(_ro(summary_db)) as conn:
        summarized = {r[0] for r in conn.execute("SELECT crawl_uuid FROM crawl_summary")}
    return len(crawled - summarized)


def unfinished_agents(crawler_db: Path) -> int:
    """Crawl runs without an end."""
    if not crawler_db.exists():
        return 0
    with closing(_ro(crawler_db)) as conn:
        return conn.execute("SELECT count(*) FROM agent WHERE time_finished_unix_utc IS NULL").fetchone()[0]


def active_dagster_runs(home: Path) -> int:
    """Dagster runs of the instance in ``home`` that have not ended."""
    runs = home / "history" / "runs.db"
    if not runs.exists():
        return 0
    with closing(_ro(runs)) as conn:
        marks = ",".join("?" * len(ACTIVE))
        return conn.execute(f"SELECT count(*) FROM runs WHERE status IN ({marks})", ACTIVE).fetchone()[0]


def leftovers(*folders: Path) -> list[Path]:
    """What killed processes may leave under ``folders``: temporary databases being
    created or published, lock files, summarize work folders, page-copy manifests and
    records of changed pages being written."""
    found = []
    for folder in folders:
        if folder.exists():
            found += [p for p in folder.rglob("*") if ".creating-" in p.name or p.name.endswith(".lock")
                      or p.name.startswith("textpile-summarize-") or ".publishing-" in p.name
                      or _MANIFEST_BEING_WRITTEN.search(p.name)]
    return sorted(found)


def copy_db(db: Path, to: Path) -> Path:
    """Copy the database ``db`` with its -wal and -journal files (not its -shm: SQLite
    makes it again) to ``to``; returns ``to``."""
    for suffix in ("", "-wal", "-journal"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            shutil.copyfile(side, to.with_name(to.name + suffix))
    return to


def index_dump(db: Path) -> dict[str, list[tuple]]:
    """Every derived table's rows and every FTS5 table's (term, rowid, column, offset)
    (fts5vocab 'instance'), read from a copy of ``db``: what tests/index/test_update.py
    compares between an updated index and the same index rebuilt whole; the tables are
    textpile.index.schema's, search_index_build without its times."""
    from textpile.index.schema import DERIVED_TABLES, FTS_TABLES

    with tempfile.TemporaryDirectory(prefix="faults-dump-") as tmp:
        copy = copy_db(db, Path(tmp) / db.name)
        with closing(register_functions(sqlite3.connect(copy))) as conn:
            out = {}
            for table in sorted(set(DERIVED_TABLES) - FTS_TABLES - {"search_index_build"}):
                out[table] = sorted(conn.execute("SELECT * FROM " + _identifier(table)).fetchall(), key=repr)
            for table in sorted(FTS_TABLES):
                vocab = _identifier(f"v_{table}")
                conn.execute(f"CREATE VIRTUAL TABLE temp.{vocab} USING fts5vocab(main, {_identifier(table)}, "
                             "'instance')")
                out[table] = conn.execute(f"SELECT term, doc, col, offset FROM temp.{vocab} "
                                          "ORDER BY term, doc, col, offset").fetchall()
            out["search_index_build"] = conn.execute("SELECT version FROM search_index_build").fetchall()
    return out


def index_differences(db: Path) -> list[str]:
    """The tables in which the search index of ``db`` differs from the same database's
    index rebuilt whole (a copy, ``update_search_index(copy, rebuild=True)``), each with
    the rows only one side has; empty when they are equal."""
    from textpile.index.update import update_search_index

    with tempfile.TemporaryDirectory(prefix="faults-rebuild-") as tmp:
        copy = copy_db(db, Path(tmp) / db.name)
        before = index_dump(copy)
        update_search_index(copy, rebuild=True)
        after = index_dump(copy)
    out = []
    for table in sorted(set(before) | set(after)):
        mine, whole = before.get(table, []), after.get(table, [])
        if mine != whole:
            only_mine, only_whole = set(mine) - set(whole), set(whole) - set(mine)
            out.append(f"{table}: {len(only_mine)} rows only updated, {len(only_whole)} only rebuilt"
                       f" (e.g. {sorted(only_mine, key=repr)[:1]} / {sorted(only_whole, key=repr)[:1]})")
    return out


def page_hashes(db: Path) -> tuple[int, ...]:
    """The page hashes of ``db`` as textpile's page copy computes them
    (:func:`textpile.store.page_copy.page_hash` of every page in sqlite_dbpage: the
    database as a reader sees it, its WAL's committed frames included), read from a copy
    with sqlean's SQLite (which has sqlite_dbpage)."""
    import sqlean

    from textpile.store.page_copy import page_hash

    with tempfile.TemporaryDirectory(prefix="faults-pages-") as tmp:
        copy = copy_db(db, Path(tmp) / db.name)
        conn = sqlean.connect(str(copy))
        try:
            return tuple(page_hash(pgno, data)
                         for pgno, data in conn.execute("SELECT pgno, data FROM sqlite_dbpage ORDER BY pgno"))
        finally:
            conn.close()
