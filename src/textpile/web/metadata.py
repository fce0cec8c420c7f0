"""Datasette metadata for a summary database, taken from the commented schema DDL.

Every table in ``schemas/base/0.1.0.sql`` and ``schemas/summary/0.0.0.sql`` is preceded
by ``--`` comment lines (the table's description) and every column line ends with a
``-- comment`` (the column's description); :func:`schema_descriptions` reads them.
The canned queries are the read-only ones of unobtanium-documentation.txt, page
"Useful database queries".
"""

from __future__ import annotations

import re

from textpile.store.database import BASE_SCHEMA_VERSION, SUMMARY_SCHEMA_VERSION, schema_sql

_CREATE = re.compile(r"^\s*CREATE\s+(?:VIRTUAL\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_VIEW_COLUMN = re.compile(r"\bAS\s+(\w+),?\s*--\s*(.+?)\s*$", re.IGNORECASE)
_COLUMN = re.compile(r"^\s*(\w+)\b[^-]*?--\s*(.+?)\s*$")
_NOT_COLUMNS = {"CHECK", "UNIQUE", "PRIMARY", "FOREIGN", "CONSTRAINT", "TOKENIZE"}

CANNED_QUERIES = {
    "count_active_entity_generations": {
        "title": "Count active entity generations",
        "description": (
            "Entity generations that are not marked duplicate, not ended, have a non-empty title and "
            "some text or secondary text in their Gen1 text pile (unobtanium: Useful database queries)."
        ),
        "sql": (
            "select count(*)\n"
            "from entity_generation\n"
            "inner join document_description\n"
            "  on entity_generation.entity_generation_id = document_description.entity_generation_id\n"
            "inner join text_pile\n"
            "  on entity_generation.text_pile_id = text_pile.text_pile_id\n"
            "where (\n"
            "  (NOT entity_generation.marked_duplicate) AND\n"
            "  entity_generation.confirmed_end_unix_utc is NULL AND\n"
            "  (document_description.title != '') AND\n"
            "  (text_pile.text != '' OR text_pile.secondary_text != '')\n"
            ")"
        ),
    },
    "count_unused_tokens": {
        "title": "Count unused tokens in the token index",
        "description": "Tokens of the experimental token index that no text pile uses (unobtanium: Useful database queries).",
        "sql": (
            "select count(*)\n"
            "from token\n"
            "where not exists (\n"
            "  select 1 from token_statistics\n"
            "  where token_statistics.token_id = token.token_id\n"
            "  limit 1\n"
            ")"
        ),
    },
}


def parse_schema_comments(ddl: str) -> dict[str, dict]:
    """Return {table: {"description": str, "columns": {column: str}}} from commented DDL.

    The description is the block of ``--`` lines right above ``CREATE TABLE`` (or
    ``CREATE VIEW``: the documented tables textpile keeps as views, such as text_pile);
    column descriptions are the trailing ``--`` comments of the column lines inside it
    (in a view: of the lines ending ``AS column``).
    """
    tables: dict[str, dict] = {}
    pending: list[str] = []
    current: str | None = None
    is_view = False
    for line in ddl.splitlines():
        stripped = line.strip()
        if current is None:
            match = _CREATE.match(line)
            if match:
                is_view = match.group(1).upper() == "VIEW"
                current = match.group(2)
                tables[current] = {"description": " ".join(pending).strip(), "columns": {}}
                pending = []
                if stripped.endswith(";"):
                    current = None
                continue
            if stripped.startswith("--"):
                pending.append(stripped[2:].strip())
            else:
                pending = []
            continue
        if is_view:
            match = _VIEW_COLUMN.search(line)
            if match:
                tables[current]["columns"][match.group(1)] = match.group(2)
            if stripped.split("--")[0].rstrip().endswith(";"):
                current = None
            continue
        if stripped.startswith(")") and stripped.endswith(";"):
            current = None
            continue
        match = _COLUMN.match(line)
        if match and match.group(1).upper() not in _NOT_COLUMNS:
            tables[current]["columns"][match.group(1)] = match.group(2)
    return tables


def schema_descriptions() -> dict[str, dict]:
    """Return the table and column descriptions of a summary database (base + summary DDL)."""
    tables = parse_schema_comments(schema_sql("base", BASE_SCHEMA_VERSION))
    tables.update(parse_schema_comments(schema_sql("summary", SUMMARY_SCHEMA_VERSION)))
    return tables


def database_metadata() -> dict:
    """Return Datasette metadata for the summary database: table and column descriptions."""
    return {
        "description": "textpile summary database (unobtanium summary schema), read-only.",
        "tables": schema_descriptions(),
    }
