"""Dagster assets of textpile, grouped by stage: crawl, summarize, publish.

Assets are thin: each calls one library function and attaches metadata. The graph:
crawl_run[p] -> crawl_log_staging[p] -> scrape_results[p] -> summary_db -> fts_index
-> embeddings -> published_index (and, on demand, summary_db -> token_index), where [p]
is a ``crawl_runs`` dynamic partition (one crawl run).
"""

from textpile_dagster.assets.checks import ALL_CHECKS
from textpile_dagster.assets.crawl import crawl_run
from textpile_dagster.assets.partitions import CRAWL_RUNS, agent_uuid_of, crawl_runs_partitions, new_crawl_run_key
from textpile_dagster.assets.publish import published_index
from textpile_dagster.assets.semantic import embeddings
from textpile_dagster.assets.summary import crawl_log_staging, fts_index, scrape_results, summary_db, token_index

ALL_ASSETS = [crawl_run, crawl_log_staging, scrape_results, summary_db, fts_index, embeddings, published_index,
              token_index]

__all__ = [
    "ALL_ASSETS",
    "ALL_CHECKS",
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
