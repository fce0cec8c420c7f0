"""Dagster assets of textpile, grouped by stage: crawl, summarize, publish.

Assets are thin: each calls one library function and attaches metadata. The graph:
crawl_run[p] -> crawl_log_staging[p] -> scrape_results[p] -> summary_db -> fts_index
-> embeddings -> published_index (and, on demand, summary_db -> token_index), where [p]
is a ``crawl_runs`` dynamic partition (one crawl run). archive_import adds crawl_run
partitions of its own: one per imported web archive.
"""

from textpile_dagster.assets.archives import archive_import
from textpile_dagster.assets.checks import ALL_CHECKS
from textpile_dagster.assets.crawl import crawl_run
from textpile_dagster.assets.partitions import CRAWL_RUNS, agent_uuid_of, crawl_runs_partitions, new_crawl_run_key
from textpile_dagster.assets.publish import published_index
from textpile_dagster.assets.semantic import embeddings
from textpile_dagster.assets.summary import crawl_log_staging, fts_index, scrape_results, summary_db, token_index

ALL_ASSETS = [crawl_run, crawl_log_staging, scrape_results, summary_db, fts_index, embeddings, published_index,
              token_index]
#: Assets outside the per-partition graph: archive_import adds crawl_run partitions of its own
#: (it needs its archives as run config, so it is in no job that runs everything).
ARCHIVE_ASSETS = [archive_import]

__all__ = [
    "ALL_ASSETS",
    "ALL_CHECKS",
    "ARCHIVE_ASSETS",
    "archive_import",
    "CRAWL_RUNS",
    "agent_uuid_of",
    "crawl_log_staging",
    "crawl_run",
    "crawl_runs_partitions",
    "embeddings",
    "fts_index",
    "new_crawl_run_key",
    "published_index",
    "scrape_results",
    "summary_db",
    "token_index",
]
