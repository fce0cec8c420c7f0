"""Exact duplicates: grouping open generations by origin and Gen2 text pile, in DuckDB.

Source: unobtanium-documentation.txt, pages "Duplicate Types" (exact duplicates are
detected with the text pile digest) and "Summarizing" (Finding duplicates: generations
without a confirmed end, of the same origin, with the same text_pile_ng digest; the one
with the shortest URL stays the original, all others are marked duplicates).
Text piles are stored once per digest, so "same digest" is "same text_pile_v0_2_id".

The wanted state of each group touched by a batch is computed and the stored state is
made equal to it: duplicate_summary rows that no longer hold are ended, missing ones
are inserted, and entity_generation.marked_duplicate (a cache of the open rows) follows.
Ties in URL length go to the lower str_url (then the lower generation id).

Groups are decided on the state at the end of each batch: two URLs that shared content
only between two crawls inside one batch get no duplicate_summary row.

Times are taken from the data, so that integrating is deterministic:
duplicate_status_start = the later first_seen of the two generations (when both were
known to exist); duplicate_status_end = the subject's confirmed end, else the
original's, else the newest crawl time of the batch that changed the group.
"""

from __future__ import annotations

import json
import sqlite3

import duckdb
import pyarrow as pa

from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.staging import rows_to_table

_MEMBERS_SQL = """
SELECT eg.entity_generation_id, u.origin_id, eg.text_pile_v0_2_id AS tp2, u.str_url,
       eg.first_seen_unix_utc AS first_seen, eg.confirmed_end_unix_utc AS confirmed_end,
       eg.marked_duplicate
FROM temp.dup_group g
JOIN url u ON u.origin_id = g.origin_id
JOIN entity_generation eg ON eg.url_id = u.url_id AND eg.text_pile_v0_2_id = g.tp2
WHERE eg.confirmed_end_unix_utc IS NULL OR eg.marked_duplicate
   OR EXISTS (SELECT 1 FROM duplicate_summary d WHERE d.duplicate_status_end_unix_utc IS NULL
              AND (d.subject_entity_generation_id = eg.entity_generation_id
                   OR d.duplicate_of_entity_generation_id = eg.entity_generation_id))
"""

_PLAN_SQL = """
CREATE TEMP TABLE plan AS
WITH ranked AS (
    SELECT *, first_value(entity_generation_id) OVER (
        PARTITION BY origin_id, tp2 ORDER BY length(str_url), str_url, entity_generation_id) AS original_id
    FROM members WHERE confirmed_end IS NULL
), wanted AS (
    SELECT r.entity_generation_id AS subject, r.original_id,
           greatest(r.first_seen, o.first_seen) AS start_time
    FROM ranked r JOIN members o ON o.entity_generation_id = r.original_id
    WHERE r.entity_generation_id <> r.original_id
)
SELECT 'end' AS action, c.row_id, c.subject, c.duplicate_of AS original_id,
       coalesce(s.confirmed_end, o.confirmed_end, $batch_time) AS at_time
FROM current_rows c
LEFT JOIN members s ON s.entity_generation_id = c.subject
LEFT JOIN members o ON o.entity_generation_id = c.duplicate_of
WHERE NOT EXISTS (SELECT 1 FROM wanted w WHERE w.subject = c.subject AND w.original_id = c.duplicate_of)
UNION ALL
SELECT 'insert', NULL, w.subject, w.original_id, w.start_time
FROM wanted w
WHERE NOT EXISTS (SELECT 1 FROM current_rows c WHERE c.subject = w.subject AND c.duplicate_of = w.original_id)
UNION ALL
SELECT 'mark', NULL, m.entity_generation_id, NULL,
       CAST(EXISTS (SELECT 1 FROM wanted w WHERE w.subject = m.entity_generation_id) AS BIGINT)
FROM members m
WHERE CAST(m.marked_duplicate AS BOOLEAN) <> EXISTS (SELECT 1 FROM wanted w WHERE w.subject = m.entity_generation_id)
"""


MEMBERS_SCHEMA = pa.schema([
    ("entity_generation_id", pa.int64()), ("origin_id", pa.int64()), ("tp2", pa.int64()), ("str_url", pa.string()),
    ("first_seen", pa.int64()), ("confirmed_end", pa.int64()), ("marked_duplicate", pa.int64()),
])
CURRENT_SCHEMA = pa.schema([("row_id", pa.int64()), ("subject", pa.int64()), ("duplicate_of", pa.int64())])


@duckdb_interrupts()
def reconcile(conn: sqlite3.Connection, touched_generation_ids: list[int], batch_time: int) -> tuple[int, int]:
    """Bring the duplicate groups of ``touched_generation_ids`` to their wanted state.

    Args:
        conn: the summary database, inside the batch's transaction.
        touched_generation_ids: generations opened or closed by the batch; the groups
            (origin, text_pile_v0_2) they belong to are rechecked.
        batch_time: the newest crawl time of the batch (unix seconds), the end time of a
            duplicate status that ended for another reason than a close.

    Returns:
        ``(inserted, ended)``: duplicate_summary rows inserted and ended.
    """
    conn.execute("DROP TABLE IF EXISTS temp.dup_group")
    conn.execute("CREATE TEMP TABLE dup_group (origin_id INTEGER, tp2 INTEGER, PRIMARY KEY (origin_id, tp2))")
    conn.execute(
        "INSERT OR IGNORE INTO temp.dup_group SELECT u.origin_id, eg.text_pile_v0_2_id FROM entity_generation eg"
        " JOIN url u ON u.url_id = eg.url_id WHERE eg.text_pile_v0_2_id IS NOT NULL"
        " AND eg.entity_generation_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(touched_generation_ids))),))
    member_rows = conn.execute(_MEMBERS_SQL).fetchall()
    if not member_rows:
        return 0, 0
    members = rows_to_table(member_rows, MEMBERS_SCHEMA)
    current = rows_to_table(conn.execute(
        "SELECT d.rowid, d.subject_entity_generation_id, d.duplicate_of_entity_generation_id"
        " FROM duplicate_summary d WHERE d.duplicate_status_end_unix_utc IS NULL"
        " AND d.subject_entity_generation_id IN (SELECT value FROM json_each(?))",
        (json.dumps([r[0] for r in member_rows]),)).fetchall(), CURRENT_SCHEMA)
    con = duckdb.connect()
    try:
        con.register("members", members)
        con.register("current_rows", current)
        con.execute(_PLAN_SQL, {"batch_time": batch_time})
        plan = con.execute("SELECT action, row_id, subject, original_id, at_time FROM plan"
                           " ORDER BY action, subject, original_id").fetchall()
    finally:
        con.close()
    inserted = ended = 0
    for action, row_id, subject, original_id, at_time in plan:
        if action == "end":
            conn.execute("UPDATE duplicate_summary SET duplicate_status_end_unix_utc = ? WHERE rowid = ?",
                         (at_time, row_id))
            ended += 1
        elif action == "insert":
            conn.execute(
                "INSERT INTO duplicate_summary(subject_entity_generation_id, duplicate_of_entity_generation_id,"
                " duplicate_status_start_unix_utc, duplicate_status_end_unix_utc) VALUES (?, ?, ?, NULL)",
                (subject, original_id, at_time))
            inserted += 1
        else:
            conn.execute("UPDATE entity_generation SET marked_duplicate = ? WHERE entity_generation_id = ?",
                         (at_time, subject))
    return inserted, ended
