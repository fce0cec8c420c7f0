"""What ``textpile pipeline`` finishes first: the work of runs that were killed.

A ``textpile pipeline`` killed at any moment leaves some of: a Dagster run STARTED for
good, a crawl run (agent) without its end in the crawler database, crawl log entries
not yet summarized, a staging folder staged but not scraped. Before it adds its own
partition, the next ``textpile pipeline`` (holding the data directory's lock):

1. marks failed, with the reason, every Dagster run whose process died
   (:func:`textpile_dagster.sensors.runs.fail_dead_runs`), so the sensors go on;
2. closes the crawl runs a killed process left unfinished
   (:func:`textpile.crawl.crawldb.recovery.close_unfinished_runs`), unless a crawl is running
   on the crawler database right now (its lock is held);
3. stages and scrapes, one recorded run each, every ended crawl run whose crawl log
   entries are not all in the summary database and whose staging folder is not
   complete (no scraped marker), adding its ``crawl_runs`` partition when it has none;

so that its own run's ``summary_db`` integrates them first, in key order (time order):
every crawl log entry is summarized, whichever crawl run wrote it. Dagster is imported
inside the functions only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import closing

from textpile.crawl.crawldb.recovery import close_unfinished_runs, crawl_lock_path
from textpile.store.database import open_crawler_db
from textpile.store.locks import exclusive_lock
from textpile.summarize.staging import pending_runs

#: The assets materialized for a crawl run that still needs summarizing.
RESUME_STEPS = ("crawl_log_staging", "scrape_results")


def _say(text: str) -> None:
    print(f"textpile pipeline: {text}", file=sys.stderr, flush=True)


def close_killed_crawl_runs(crawler_db, say: Callable[[str], None] = _say) -> list[str]:
    """Close the crawl runs of ``crawler_db`` (an existing file) that a killed process left
    unfinished, unless a crawl holds the database's lock; return the closed runs' keys."""
    with exclusive_lock(crawl_lock_path(crawler_db), wait=False) as held:
        if not held:
            say(f"a crawl is running on {crawler_db}: unfinished crawl runs are left as they are")
            return []
        with closing(open_crawler_db(crawler_db, create=False)) as conn:
            closed = close_unfinished_runs(conn)
    for run in closed:
        say(run.describe())
    return [run.agent_uuid.hex for run in closed]


def resume_interrupted(job, instance, settings, staging_area, *, say: Callable[[str], None] = _say,
                       owner=None) -> list[str]:
    """Steps 1-3 of the module docstring for the pipeline of ``settings`` (its
    ``PipelineSettings``) in ``instance``, running ``job`` (``pipeline_job``) for each
    partition to resume, in runs that name ``owner`` (a ``ProcessId``; default this
    process); return the keys staged and scraped.

    Raises:
        TextpileError: a resume run failed (see :func:`textpile.cli.pipeline_run.run_partition`).
        DatabaseError: the crawler or summary database cannot be read.
    """
    from textpile.cli.pipeline_run import run_partition
    from textpile_dagster.assets.partitions import CRAWL_RUNS
    from textpile_dagster.resources.staging import SCRAPED_MARKER
    from textpile_dagster.sensors.runs import fail_dead_runs

    for line in fail_dead_runs(instance, by="textpile pipeline at its start"):
        say(line)
    if not settings.crawler_db.exists():
        return []
    close_killed_crawl_runs(settings.crawler_db, say)
    partitions = set(instance.get_dynamic_partitions(CRAWL_RUNS))
    resumed = []
    for run in pending_runs(settings.crawler_db, settings.summary_db):
        key = run.agent_uuid.hex
        if not run.finished:
            say(f"crawl run {key} is still running: its {run.crawl_log_entries} crawl log entries not yet "
                "summarized wait for the next run")
            continue
        if staging_area.read_marker(key, SCRAPED_MARKER) is not None:
            continue  # staged and scraped: summary_db integrates it
        if key not in partitions:
            instance.add_dynamic_partitions(CRAWL_RUNS, [key])
            partitions.add(key)
        say(f"crawl run {key}: {run.crawl_log_entries} crawl log entries not yet summarized; staging and "
            "scraping them first")
        run_partition(job, instance, key, RESUME_STEPS, owner=owner)
        resumed.append(key)
    return resumed
