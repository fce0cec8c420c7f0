"""Group "crawl": the archive_import asset, web archives imported as crawl runs.

Each archive becomes one crawl run (:func:`textpile.archives.importer.import_archives`)
under a new ``crawl_runs`` partition key; that partition of ``crawl_run`` is recorded as
materialized by the import, so it is staged, scraped and summarized like a crawl run that
landed (the automation does it; a backfill of its partition too).
"""


from contextlib import closing
from pathlib import Path

from dagster import AssetExecutionContext, AssetKey, AssetMaterialization, Config, Failure, MaterializeResult, asset

from textpile.archives.importer import ImportReport, import_archives
from textpile.errors import TextpileError
from textpile_dagster.assets.partitions import CRAWL_RUNS, agent_uuid_of, new_crawl_run_key
from textpile_dagster.assets.tables import row_count, table
from textpile_dagster.resources import CrawlerDatabaseResource

GROUP = "crawl"


class ArchiveImportConfig(Config):
    """The archives to import (paths of WARC, WACZ or zshot files, their kind told from
    their bytes), in order."""

    archives: list[str]


def import_metadata(report: ImportReport) -> dict[str, object]:
    """Materialization metadata of one imported archive (a crawl_run partition)."""
    return {
        "archive": str(report.path),
        "kind": report.kind,
        "sha256": report.sha256,
        "exchanges": report.exchanges,
        "problems": len(report.problems),
        "resumed_after": report.resumed_after,
        "duration_s": round(report.duration_s, 3),
        **{f"exit_{name}": count for name, count in sorted(report.exit_code_counts.items())},
        **row_count(report.entries),
    }


@asset(
    group_name=GROUP,
    kinds={"python", "sqlite"},
    description="Web archives (WARC, WACZ, zshot) imported into the crawler database, one crawl run "
    "(a crawl_runs partition of crawl_run) per archive; the same bytes are never imported twice.",
)
def archive_import(context: AssetExecutionContext, config: ArchiveImportConfig,
                   crawler_database: CrawlerDatabaseResource) -> MaterializeResult:
    """Import ``config.archives``; record each new run as a materialized ``crawl_run``
    partition. Records that cannot be read are logged as warnings (the rest is imported).

    Raises:
        Failure: a file is not an archive, or the crawler database cannot be used.
    """
    keys = [new_crawl_run_key() for _ in config.archives]
    with closing(crawler_database.open()):  # creates folder and schema on first use
        pass
    try:
        reports = import_archives(crawler_database.path, [Path(a) for a in config.archives],
                                  agent_uuids=[agent_uuid_of(k) for k in keys])
    except (TextpileError, OSError) as exc:
        raise Failure(description=str(exc)) from None
    rows = []
    for report in reports:
        for problem in report.problems:
            context.log.warning("%s: %s: %s", report.path, problem.where, problem.message)
        if report.run is None:
            context.log.info("%s: already imported by crawl run %s", report.path, report.already_imported)
            rows.append((str(report.path), report.kind, report.already_imported or "", 0, len(report.problems)))
            continue
        key = report.run.hex
        if not context.instance.has_dynamic_partition(CRAWL_RUNS, key):
            context.instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        context.log_event(AssetMaterialization(
            asset_key=AssetKey("crawl_run"), partition=key, metadata=import_metadata(report),
            description=f"crawl run {key}: the archive {report.path.name} imported"))
        rows.append((str(report.path), report.kind, key, report.entries, len(report.problems)))
    return MaterializeResult(metadata={
        "archives": table([("archive", "string"), ("kind", "string"), ("crawl_run", "string"),
                           ("crawl_log_entries", "int"), ("problems", "int")], rows),
        **row_count(sum(r.entries for r in reports)),
    })
