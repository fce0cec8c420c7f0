"""Building the Datasette application that ``textpile serve`` runs.

Datasette serves the summary database immutable (read-only, opened with
``immutable=1``; a published copy is replaced as a whole, never written in place),
with a SQL time limit, the textpile plugin (search page, JSON API, OpenSearch,
descriptions, canned queries, security headers) and templates that a
``--template-location`` folder can override file by file.
"""

from __future__ import annotations

from pathlib import Path

from textpile.errors import DatabaseError
from textpile.store.database import open_summary_db
from textpile.web.state import set_target

DEFAULT_SQL_TIME_LIMIT_MS = 3000


def check_summary_db(path: str | Path) -> Path:
    """Return ``path`` if it is a readable summary database.

    Raises:
        DatabaseError: the file is missing, not SQLite, or not a summary database (the
        message names the file).
    """
    path = Path(path)
    if not path.exists():
        raise DatabaseError(f"{path}: no such summary database")
    conn = open_summary_db(path, create=False, read_only=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    if "full_text_entity_index" not in tables:
        raise DatabaseError(f"{path}: summary database without full_text_entity_index")
    return path


def build_datasette(
    summary_db: str | Path,
    *,
    template_dir: str | Path | None = None,
    sql_time_limit_ms: int = DEFAULT_SQL_TIME_LIMIT_MS,
    title: str = "textpile",
):
    """Return a configured ``Datasette`` serving ``summary_db`` read-only.

    Raises:
        DatabaseError: ``summary_db`` is not a summary database (see :func:`check_summary_db`).
        ConfigError: ``template_dir`` is given but is not a folder.
    """
    from datasette.app import Datasette

    from textpile.errors import ConfigError

    path = check_summary_db(summary_db).resolve()
    if template_dir is not None and not Path(template_dir).is_dir():
        raise ConfigError(f"{template_dir}: template location is not a folder")
    metadata = {"title": title}
    datasette = Datasette(
        files=[],
        immutables=[str(path)],
        metadata=metadata,
        template_dir=str(template_dir) if template_dir is not None else None,
        settings={"sql_time_limit_ms": int(sql_time_limit_ms), "allow_download": False},
    )
    name = next(n for n, db in datasette.databases.items() if db.path == str(path))
    set_target(datasette, name, path)
    return datasette
