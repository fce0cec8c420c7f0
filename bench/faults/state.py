"""What the fault harness compares and counts: final states, integrity, lost rows,
unfinished runs and leftovers of killed processes.

Every connection to a summary database gets textpile's SQL functions first
(:func:`textpile.store.gen2_piles.register_functions`): the documented ``text_pile`` view
unpacks its texts with ``sqlar_uncompress``, which Python's sqlite3 lacks.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from textpile.store.gen2_piles import register_functions

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
            for suffix in ("", "-wal", "-journal"):
                side = db.with_name(db.name + suffix)
                if side.exists():
                    shutil.copyfile(side, copy.with_name(copy.name + suffix))
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
    created, lock files, summarize work folders."""
    found = []
    for folder in folders:
        if folder.exists():
            found += [p for p in folder.rglob("*") if ".creating-" in p.name or p.name.endswith(".lock")
                      or p.name.startswith("textpile-summarize-") or ".publishing-" in p.name]
    return sorted(found)
