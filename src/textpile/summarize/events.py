"""The set work of integration, in DuckDB: crawl events, self-duplicates, generation spans.

One staged batch (Parquet) plus, exported from the summary database through Arrow, the
already integrated crawl uuids and the latest generation of each URL of the batch, are
turned into two result sets:

* **events**: one row per crawl log entry to integrate, in time order per URL, with its
  *kind* and *key*, whether it opens a new generation, is a self-duplicate, extends the
  open generation's last_seen or closes it, and ``gen_seq``: the ordinal of the
  generation of the URL it belongs to (0 = the URL's latest generation before the batch).
* **generations**: one row per (URL, gen_seq) with first_seen, last_seen to extend to,
  and the confirmed end time.

Event kinds (source: unobtanium-documentation.txt, pages "Summarizing", "Entity
Generation", "Duplicate Types", "Crawl exit code"; textpile's shared decisions):

* ``content``: a file crawl (crawl_type 0) with 20 file_ingested or 29
  file_of_unknown_type and a file row, or 31/32 with a redirect row. Its key is
  ``p:<Gen2 digest hex>`` for a text pile, ``r:<target URL>`` for a redirect, and
  ``f:<mimetype>:<size>`` for a file without text pile (unknown type, scrape error).
  A content event whose key equals the URL's current open generation's key is a
  *self-duplicate* (extends last_seen); otherwise it opens a new generation and closes
  the open one (confirmed_end = the new first_seen).
* ``close``: 41 file_gone, 44 file_not_found, 171 blocked_at_request_of_remote, 180
  not_canonical, 182 pruned (textpile's: no link reached the URL in a complete crawl of
  its origin), and a 20 whose scrape found noindex: closes the open generation
  (confirmed_end = the crawl's time).
* ``confirm``: 34 file_did_not_change: extends last_seen of the open generation.
* ``neutral``: everything else (errors, robots.txt fetches (crawl_type 1), blocked by
  robots or local policy): attaches its crawl_summary to the URL's latest generation.

A crawl's time is its last request's time sent, else the crawl log's time started.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from textpile.enums import CrawlType, ExitCode
from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.staging import table_path

PRIOR_SCHEMA = pa.schema([
    ("str_url", pa.string()), ("entity_generation_id", pa.int64()), ("first_seen_unix_utc", pa.int64()),
    ("last_seen_unix_utc", pa.int64()), ("confirmed_end_unix_utc", pa.int64()),
    ("gen2_digest", pa.binary()), ("redirect_to", pa.string()), ("str_mimetype", pa.string()),
    ("file_size", pa.int64()),
])
INTEGRATED_SCHEMA = pa.schema([("crawl_uuid", pa.binary(16))])

CLOSE_CODES = [int(c) for c in (ExitCode.file_gone, ExitCode.file_not_found,
                                ExitCode.blocked_at_request_of_remote, ExitCode.not_canonical, ExitCode.pruned)]
FILE_CODES = [int(ExitCode.file_ingested), int(ExitCode.file_of_unknown_type)]
REDIRECT_CODES = [int(ExitCode.permanent_redirect), int(ExitCode.redirect)]

# The key of a generation or content event, from columns named alike in both.
_KEY_SQL = """CASE
    WHEN gen2_digest IS NOT NULL THEN 'p:' || hex(gen2_digest)
    WHEN redirect_to IS NOT NULL THEN 'r:' || redirect_to
    WHEN str_mimetype IS NOT NULL THEN 'f:' || str_mimetype || ':' || coalesce(CAST(file_size AS VARCHAR), '?')
END"""

_EVENTS_SQL = f"""
CREATE TEMP TABLE events AS
WITH last_request AS (
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (PARTITION BY crawl_log_id ORDER BY time_sent_unix_utc DESC, request_id DESC) AS rn
        FROM read_parquet($request)) WHERE rn = 1
), one_file AS (
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (PARTITION BY crawl_log_id ORDER BY file_id DESC) AS rn
        FROM read_parquet($file)) WHERE rn = 1
), one_redirect AS (
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (PARTITION BY crawl_log_id ORDER BY redirect_id DESC) AS rn
        FROM read_parquet($redirect)) WHERE rn = 1
), joined AS (
    SELECT cl.crawl_log_id, cl.crawl_uuid, cl.agent_uuid, cl.crawl_type, cl.exit_code, cl.str_url,
           coalesce(r.time_sent_unix_utc, cl.time_started_unix_utc) AS t,
           coalesce(r.request_duration_ms, cl.time_taken_ms) AS duration_ms,
           coalesce(r.robotstxt_approved, cl.exit_code <> $blocked_by_robots) AS robotstxt_approved,
           r.http_status_code, r.http_etag,
           f.file_id, f.file_size, f.str_mimetype, f.canonical_str_url,
           s.scrape_error, coalesce(s.noindex, false) AS noindex,
           CASE WHEN NOT coalesce(s.noindex, false) THEN s.gen2_digest END AS gen2_digest,
           rd.to_str_url AS redirect_to, rd.information_source, rd.by_security_policy,
           CASE
               WHEN cl.crawl_type = $robotstxt_fetch THEN 'neutral'
               WHEN list_contains($close_codes, cl.exit_code) THEN 'close'
               WHEN cl.exit_code = $file_ingested AND coalesce(s.noindex, false) THEN 'close'
               WHEN cl.exit_code = $did_not_change THEN 'confirm'
               WHEN cl.crawl_type = $file_crawl AND list_contains($file_codes, cl.exit_code)
                    AND f.file_id IS NOT NULL THEN 'content'
               WHEN cl.crawl_type = $file_crawl AND list_contains($redirect_codes, cl.exit_code)
                    AND rd.redirect_id IS NOT NULL THEN 'content'
               ELSE 'neutral'
           END AS kind
    FROM read_parquet($crawl_log) cl
    LEFT JOIN last_request r ON r.crawl_log_id = cl.crawl_log_id
    LEFT JOIN one_file f ON f.crawl_log_id = cl.crawl_log_id
    LEFT JOIN read_parquet($scrape_file) s ON s.file_id = f.file_id
    LEFT JOIN one_redirect rd ON rd.crawl_log_id = cl.crawl_log_id
    WHERE cl.crawl_uuid NOT IN (SELECT crawl_uuid FROM integrated)
), keyed AS (
    SELECT *,
           CASE kind WHEN 'content' THEN {_KEY_SQL} WHEN 'close' THEN 'closed' END AS state_key
    FROM joined
), prior_keyed AS (
    SELECT str_url, entity_generation_id AS prior_generation_id,
           CASE WHEN confirmed_end_unix_utc IS NOT NULL THEN 'closed' ELSE coalesce({_KEY_SQL}, 'closed') END
               AS prior_key
    FROM prior
), with_prev AS (
    SELECT k.*, p.prior_generation_id,
           coalesce(last_value(k.state_key IGNORE NULLS) OVER (
               PARTITION BY k.str_url ORDER BY k.t, k.crawl_log_id
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), p.prior_key, 'closed') AS prev_key
    FROM keyed k LEFT JOIN prior_keyed p ON p.str_url = k.str_url
), decided AS (
    SELECT *,
           kind = 'content' AND prev_key <> state_key AS opens,
           kind = 'content' AND prev_key = state_key AS self_duplicate,
           (kind = 'content' AND prev_key = state_key) OR (kind = 'confirm' AND prev_key <> 'closed') AS extends,
           kind = 'close' AND prev_key <> 'closed' AS closes
    FROM with_prev
)
SELECT *,
       sum(CAST(opens AS INTEGER)) OVER (PARTITION BY str_url ORDER BY t, crawl_log_id
                                         ROWS UNBOUNDED PRECEDING) AS gen_seq
FROM decided
"""

_GENERATIONS_SQL = """
CREATE TEMP TABLE generations AS
WITH spans AS (
    SELECT str_url, gen_seq, any_value(prior_generation_id) AS prior_generation_id,
           min(t) AS min_t,
           min(t) FILTER (WHERE opens) AS first_seen,
           max(t) FILTER (WHERE extends) AS extend_to,
           min(t) FILTER (WHERE closes) AS closed_at,
           arg_min(crawl_log_id, t) FILTER (WHERE opens) AS opening_crawl_log_id
    FROM events GROUP BY str_url, gen_seq
), all_spans AS (
    -- the URL's prior generation must be closed by a first event opening a new one
    SELECT * FROM spans
    UNION ALL
    SELECT DISTINCT e.str_url, 0, e.prior_generation_id, NULL, NULL, NULL, NULL, NULL
    FROM events e
    WHERE e.prior_generation_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM events z WHERE z.str_url = e.str_url AND z.gen_seq = 0)
)
SELECT *, lead(first_seen) OVER (PARTITION BY str_url ORDER BY gen_seq) AS next_first_seen
FROM all_spans
"""


@duckdb_interrupts()
def decide_batch(batch_dir: Path, prior: pa.Table, integrated: pa.Table) -> duckdb.DuckDBPyConnection:
    """Load one staged batch into a fresh DuckDB connection and compute its decisions.

    Args:
        batch_dir: a staged batch folder with crawl_log, request, file, redirect and
            scrape_file Parquet files.
        prior: :data:`PRIOR_SCHEMA` rows, the latest generation of each batch URL.
        integrated: :data:`INTEGRATED_SCHEMA` rows, crawl uuids already summarized.

    Returns:
        The DuckDB connection holding the tables ``events`` and ``generations`` (see the
        module docstring); the caller closes it.
    """
    con = duckdb.connect()
    try:
        con.register("prior", prior)
        con.register("integrated", integrated)
        params = {name: str(table_path(batch_dir, name))
                  for name in ("crawl_log", "request", "file", "redirect", "scrape_file")}
        params.update(
            blocked_by_robots=int(ExitCode.blocked_by_robots_txt), robotstxt_fetch=int(CrawlType.robotstxt_fetch),
            file_crawl=int(CrawlType.file_crawl), close_codes=CLOSE_CODES, file_codes=FILE_CODES,
            redirect_codes=REDIRECT_CODES, file_ingested=int(ExitCode.file_ingested),
            did_not_change=int(ExitCode.file_did_not_change),
        )
        con.execute(_EVENTS_SQL, params)
        con.execute(_GENERATIONS_SQL)
    except BaseException:
        con.close()
        raise
    return con
