"""What Dagster keeps of a site, re-staged after ``textpile shards move`` moved the site.

The shard assets keep, besides the databases, each shard's staging area: per crawl-run
partition, the crawl run's entries as Parquet (``crawl_log_staging``), their scrape
results (``scrape_results``) and the markers saying they were scraped and integrated
(:mod:`textpile_dagster.resources.staging`). ``summary_db`` rebuilds a shard's summary
database from every partition folder when versions change (or with ``rebuild: true``) and
integrates a folder whose crawl run its summary database does not hold. After a move the
folders of the crawl runs that had entries of the site are out of date on both sides: the
source's still hold the site's entries (a rebuild would bring its pages back; integration
too, when the move took every entry of a run), the target's lack them (a rebuild would
drop them). :func:`restage_moved_site` stages and scrapes those partitions again from
each shard's crawler database as it is now, as ``crawl_log_staging`` and
``scrape_results`` would, and marks each integrated when the shard's summary database
holds its crawl run (the move summarized both), so that the next materialization of
either shard's assets, integrating or rebuilding, gives the summary the crawler database
has. The shard assets have no IO-manager outputs: the staging area is all they keep.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from textpile.shards.config import Shards
from textpile.shards.move import MoveReport
from textpile.summarize.pipeline import scrape_staged, stage_crawl_log
from textpile.summarize.versions import EXTRACTION_VERSION
from textpile_dagster.assets.figures import agent_integrated
from textpile_dagster.assets.integration import integrated_marker
from textpile_dagster.assets.partitions import agent_uuid_of
from textpile_dagster.resources import PipelineSettings, build_resources
from textpile_dagster.resources.databases import SummaryDatabaseResource
from textpile_dagster.resources.keys import is_crawl_run_key
from textpile_dagster.resources.staging import INTEGRATED_MARKER, SCRAPED_MARKER, StagingAreaResource


def restage_partition(staging_area: StagingAreaResource, key: str, crawler_db: str | Path,
                      summary_database: SummaryDatabaseResource) -> None:
    """Stage partition ``key`` anew from ``crawler_db`` and scrape it, holding the summary
    database's write lock and the partition's lock (as ``summary_db`` and the staging
    assets do); mark it integrated when ``summary_database`` holds its crawl run.

    Raises:
        DatabaseError: a database is missing or of the wrong kind.
        TextpileError: a scraping worker process died.
    """
    with summary_database.write_lock(), staging_area.partition_lock(key):
        folder = staging_area.reset_partition(key)
        stage_crawl_log(crawler_db, folder, agent_uuid=agent_uuid_of(key), batch_size=staging_area.batch_size,
                        progress=staging_area.show_progress)
        report = scrape_staged(folder, progress=staging_area.show_progress,
                               scrape_processes=staging_area.scrape_processes)
        scraped = {"files_scraped": report.files_scraped, "extraction_version": EXTRACTION_VERSION}
        staging_area.write_marker(key, SCRAPED_MARKER, scraped)
        if Path(summary_database.path).is_file():
            with closing(summary_database.open(read_only=True)) as conn:
                integrated = agent_integrated(conn, agent_uuid_of(key).bytes)
            if integrated:
                staging_area.write_marker(key, INTEGRATED_MARKER, integrated_marker(scraped))


def restage_moved_site(shards: Shards, report: MoveReport, *,
                       scrape_processes: int | None = None) -> dict[str, list[str]]:
    """Re-stage, on the target and every source of the move ``report``, each partition of
    ``report.crawl_runs`` that one of them has staged (:func:`restage_partition`); call it
    after the move summarized both sides. Shards without a staging folder are not run by
    Dagster: when none of them has one, nothing is done. Returns {shard: keys re-staged}.

    Raises:
        as :func:`restage_partition`.
    """
    names = [report.target, *report.sources] if report.sources else []
    resources = {name: build_resources(PipelineSettings(data_dir=shards.folder(name))) for name in names}
    areas = {name: StagingAreaResource(root=r["staging_area"].root, scrape_processes=scrape_processes)
             for name, r in resources.items()}
    keys = [key for key in report.crawl_runs
            if is_crawl_run_key(key) and any(area.partition_dir(key).is_dir() for area in areas.values())]
    restaged: dict[str, list[str]] = {}
    for name, area in areas.items():
        for key in keys:
            restage_partition(area, key, resources[name]["crawler_database"].path, resources[name]["summary_database"])
            restaged.setdefault(name, []).append(key)
    return restaged
