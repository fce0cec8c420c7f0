"""Group "crawl": the crawl_run asset, one crawl run per partition."""

from contextlib import closing

from dagster import AssetExecutionContext, AssetMaterialization, Failure, MaterializeResult, MetadataValue, asset

from textpile_dagster.assets.partitions import CRAWL_RUNS, agent_uuid_of, crawl_runs_partitions
from textpile_dagster.resources import CrawlConfigResource, CrawlerDatabaseResource, HttpFetcher
from textpile.crawl.loop.run import CrawlReport, run_crawl
from textpile.enums import ExitCode
from textpile.signals import keyboard_interrupt_on
from textpile_dagster.assets.tables import row_count, table

GROUP = "crawl"


def exit_code_table(report: CrawlReport):
    """The crawl run's crawl log entries per exit code, as a table (code, name, entries),
    in code order."""
    rows = sorted((int(ExitCode[name]), name, count) for name, count in report.exit_code_counts.items())
    return table([("exit_code", "int"), ("name", "string"), ("crawl_log_entries", "int")], rows)


def crawl_report_metadata(report: CrawlReport) -> dict[str, object]:
    """Materialization metadata of a crawl run: counts, bytes, time, rates, the exit code
    table, and ``dagster/row_count`` = crawl log entries written."""
    seconds = report.duration_s
    metadata: dict[str, object] = {
        "agent_uuid": report.agent_uuid.hex,
        "total_requests": report.total_requests,
        "pages": report.ingested_files,
        "bytes_received": report.bytes_received,
        "duration_s": round(seconds, 3),
        "pages_per_s": round(report.ingested_files / seconds, 3) if seconds > 0 else 0.0,
        "requests_per_s": round(report.total_requests / seconds, 3) if seconds > 0 else 0.0,
        "interrupted": report.interrupted,
        "out_of_patience_origins": MetadataValue.json(list(report.out_of_patience_origins)),
        "refused_origins": MetadataValue.json(dict(report.refused_origins)),
        "exit_code_counts": MetadataValue.json(dict(sorted(report.exit_code_counts.items()))),
        "exit_codes": exit_code_table(report),
        "recrawl_intervals": MetadataValue.json(dict(report.recrawl_intervals)),
        **row_count(sum(report.exit_code_counts.values())),
    }
    if report.handoffs_taken or report.handoffs_unread or report.handed_off:
        metadata["handoffs_taken"] = MetadataValue.json(dict(report.handoffs_taken))
        metadata["handoffs_forwarded"] = report.handoffs_forwarded
        metadata["handoffs_unread"] = MetadataValue.json(dict(report.handoffs_unread))
        metadata["handed_off"] = MetadataValue.json(dict(report.handed_off))
        metadata["outbox_pruned"] = MetadataValue.json(dict(report.outbox_pruned))
        metadata["outbox_kept"] = MetadataValue.json(dict(report.outbox_kept))
    if report.handoffs_mirrored or report.handoffs_mirror_error:
        metadata["handoffs_mirrored"] = MetadataValue.json(dict(report.handoffs_mirrored))
        metadata["handoffs_mirror_error"] = report.handoffs_mirror_error or ""
    for name, count in sorted(report.exit_code_counts.items()):
        metadata[f"exit_{name}"] = count
    return metadata


def record_closed_runs(context: AssetExecutionContext, report: CrawlReport) -> None:
    """Materialize ``crawl_run`` for each partition whose crawl run a killed process had
    left unfinished and this run closed (``report.closed_runs``): its crawl log entries are
    final now, so the partition is staged and scraped like any crawl run that landed."""
    existing = set(context.instance.get_dynamic_partitions(CRAWL_RUNS))
    for closed in report.closed_runs:
        key = closed.agent_uuid.hex
        context.log.warning("%s", closed.describe())
        if key not in existing:
            continue
        context.log_event(AssetMaterialization(
            asset_key=context.asset_key, partition=key, description=closed.describe(),
            metadata={"agent_uuid": key, "closed_by_crawl_run": context.partition_key,
                      "time_finished_unix_utc": closed.time_finished_unix,
                      **row_count(closed.crawl_log_entries)}))


@asset(
    partitions_def=crawl_runs_partitions,
    group_name=GROUP,
    kinds={"python", "sqlite"},
    description="One crawl run (an agent) of the crawl configuration into the crawler database; "
    "the partition key is the agent UUID's hex.",
)
def crawl_run(
    context: AssetExecutionContext,
    crawl_config: CrawlConfigResource,
    crawler_database: CrawlerDatabaseResource,
    http_fetcher: HttpFetcher,
) -> MaterializeResult:
    """One crawl run: :func:`materialize_crawl_run`."""
    return materialize_crawl_run(context, crawl_config, crawler_database, http_fetcher)


def materialize_crawl_run(
    context: AssetExecutionContext,
    crawl_config: CrawlConfigResource,
    crawler_database: CrawlerDatabaseResource,
    http_fetcher: HttpFetcher,
) -> MaterializeResult:
    """The body of ``crawl_run`` (and of each shard's, :mod:`textpile_dagster.assets.shards`):
    run ``textpile.crawl.loop.run.run_crawl`` with ``agent_uuid`` = the partition's UUID.

    A shard none of whose seeds are its own (``crawl_config.shard``) crawls nothing: the
    partition is materialized with 0 crawl log entries (and its crawler database is
    created, so that its staging and summary steps find one).

    Ctrl+C or SIGTERM stop the crawl as they stop ``textpile crawl`` (the crawl run is
    closed, its entries kept); the partition is then materialized with what was crawled
    and the step ends interrupted (KeyboardInterrupt), so the run stops there.

    Raises:
        Failure: the crawler database already holds this agent (a crawl run is not repeatable),
            or the SSRF filter refused every seed origin (nothing crawled; the description
            says how to allow private addresses), or no seed origin answered at all (the
            description names each origin and its cause).
    """
    key = context.partition_key
    agent_uuid = agent_uuid_of(key)
    config = crawl_config.load()
    with closing(crawler_database.open()) as conn:  # creates folder and schema on first use
        done = conn.execute("SELECT time_started_unix_utc FROM agent WHERE agent_uuid = ?",
                            (agent_uuid.bytes,)).fetchone()
    if not config.crawl_seeds:  # its crawler database exists (empty): the shard's next steps stage nothing
        context.log.info("shard %s: no seed of the crawl configuration is this shard's; nothing to crawl",
                         crawl_config.shard)
        return MaterializeResult(metadata={"seeds": 0, "total_requests": 0, **row_count(0)})
    if done is not None:
        raise Failure(
            description=f"crawl run {key} already took place (agent started at unix {done[0]}); a crawl "
            "run happens once: add a new crawl_runs partition to crawl again, or backfill "
            "crawl_log_staging and scrape_results of this one to summarize it again",
        )
    with keyboard_interrupt_on():  # Ctrl+C/SIGTERM stop the crawl cleanly, not Dagster's way
        report = run_crawl(
            config,
            crawler_database.path,
            worker_name=crawl_config.worker_name,
            agent_uuid=agent_uuid,
            force_recrawl=crawl_config.force_recrawl,
            transport=http_fetcher.transport(),
            progress=crawl_config.show_progress,
            handoff=crawl_config.handoff(),
        )
    context.log.info(
        "crawl run %s: %d requests, %d files ingested in %.1f s",
        key, report.total_requests, report.ingested_files, report.duration_s,
    )
    for shard, reason in report.handoffs_unread.items():
        context.log.warning("hand-offs of shard %s not taken in: %s", shard, reason)
    if report.handoffs_taken or report.handed_off:
        context.log.info("hand-offs: taken in %s (%d forwarded), handed off %s", report.handoffs_taken,
                         report.handoffs_forwarded, report.handed_off)
    if report.outbox_pruned:
        context.log.info("outbox rows no longer needed, deleted: %s", report.outbox_pruned)
    if report.handoffs_mirror_error:
        context.log.warning("the outbox was not mirrored for the other hosts: %s", report.handoffs_mirror_error)
    for origin, reason in report.refused_origins.items():
        context.log.warning("%s: %s", origin, reason)
    if config.max_commands_per_run == 0:
        context.log.warning("0 requests allowed (max_commands_per_run = 0): nothing crawled")
    for origin, cause in report.unreachable_origins.items():
        context.log.warning("no answer from %s: %s", origin, cause)
    record_closed_runs(context, report)
    if report.failure is not None:
        raise Failure(description=report.failure, metadata=crawl_report_metadata(report))
    if report.interrupted:
        # What was crawled is final and kept: materialized, so that it is summarized (the
        # automation does; textpile pipeline resumes it), then the run stops as interrupted.
        context.log_event(AssetMaterialization(
            asset_key=context.asset_key, partition=key, metadata=crawl_report_metadata(report),
            description=f"crawl run {key} was interrupted (Ctrl+C or SIGTERM); what it crawled is kept"))
        raise KeyboardInterrupt
    if report.every_origin_refused:
        # Nothing to summarize or publish: stop the pipeline here with the reason.
        raise Failure(description=report.refusal_message(), metadata=crawl_report_metadata(report))
    if report.nothing_answered:
        # No seed origin answered (no address, refused, down): the same, with each cause.
        raise Failure(description=report.unreachable_message(), metadata=crawl_report_metadata(report))
    return MaterializeResult(metadata=crawl_report_metadata(report))
