"""The partition loop of ``summary_db``: integrate what is new, rebuild when versions changed.

Each staged partition folder carries markers (``textpile_dagster.resources.staging``):
the scraped marker names the extraction version that wrote its scrape results, the
integrated marker the extraction and integration versions it was integrated with
(:mod:`textpile.summarize.versions`). A partition whose scrape results were rewritten
by another extraction version (a backfill after an extraction change), or that was
integrated by another integration version, makes ``summary_db`` rebuild the summary
database from every partition, in key order (:func:`textpile.summarize.rebuild.rebuild_summary`):
integrating into the existing database would skip its crawls, already summarized.
"""

from __future__ import annotations

from contextlib import ExitStack, closing
from dataclasses import dataclass, field

from dagster import AssetExecutionContext

from textpile.summarize.integrate import IntegrationReport
from textpile.summarize.pipeline import integrate_staged
from textpile.summarize.rebuild import rebuild_summary
from textpile.summarize.versions import EXTRACTION_VERSION, INTEGRATION_VERSION
from textpile_dagster.assets.figures import agent_integrated
from textpile_dagster.assets.partitions import agent_uuid_of
from textpile_dagster.assets.tables import table
from textpile_dagster.resources import StagingAreaResource, SummaryDatabaseResource
from textpile_dagster.resources.staging import INTEGRATED_MARKER, SCRAPED_MARKER


@dataclass
class IntegrationPass:
    """What one ``summary_db`` materialization did."""

    #: (partition key, report) of each partition integrated, in key order.
    done: list[tuple[str, IntegrationReport]] = field(default_factory=list)
    #: Keys already integrated (nothing to do).
    skipped: list[str] = field(default_factory=list)
    #: The key integration stopped before (staged but not scraped, or busy), or None.
    waiting_for: str | None = None
    #: Keys whose versions differ from what was integrated, when the pass rebuilt the database.
    rebuilt_for: list[str] = field(default_factory=list)

    def total(self, name: str) -> int:
        """The sum of report field ``name`` over the partitions integrated."""
        return sum(getattr(report, name) for _, report in self.done)

    def table(self):
        """The partitions integrated, one row each, as ``MetadataValue.table``."""
        return table(
            [("partition", "string"), ("crawls_integrated", "int"), ("crawls_skipped", "int"),
             ("self_duplicates", "int"), ("exact_duplicates", "int"), ("near_duplicates", "int"),
             ("generations_opened", "int"), ("generations_closed", "int"), ("seconds", "float")],
            [(key, r.crawls_integrated, r.crawls_skipped, r.self_duplicates, r.exact_duplicates, r.near_duplicates,
              r.generations_opened, r.generations_closed, round(r.seconds, 3)) for key, r in self.done],
        )


def integrated_marker(scraped: dict | None) -> dict:
    """The integrated marker's content for a partition whose scraped marker is ``scraped``."""
    version = (scraped or {}).get("extraction_version", EXTRACTION_VERSION)
    return {"extraction_version": version, "integration_version": INTEGRATION_VERSION}


def changed_versions(staging_area: StagingAreaResource, keys: list[str]) -> list[str]:
    """Keys integrated with another extraction version than their scrape results have now,
    or with another integration version than this one (markers without versions, written
    before versions were recorded, count as current)."""
    changed = []
    for key in keys:
        integrated = staging_area.read_marker(key, INTEGRATED_MARKER)
        if integrated is None:
            continue
        scraped = staging_area.read_marker(key, SCRAPED_MARKER) or {}
        extraction = integrated.get("extraction_version"), scraped.get("extraction_version")
        if (None not in extraction and extraction[0] != extraction[1]) or \
                integrated.get("integration_version", INTEGRATION_VERSION) != INTEGRATION_VERSION:
            changed.append(key)
    return changed


def _rebuild(context: AssetExecutionContext, summary_database: SummaryDatabaseResource,
             staging_area: StagingAreaResource, keys: list[str], changed: list[str]) -> IntegrationPass | None:
    """Rebuild from every partition, or None (logged) when one is busy or not scraped."""
    with ExitStack() as stack:
        for key in keys:
            if not stack.enter_context(staging_area.partition_lock(key, wait=False)) or \
                    not staging_area.has_marker(key, SCRAPED_MARKER):
                context.log.warning("partition %s is busy or not scraped: the rebuild for %s waits for the next "
                                    "summary_db materialization", key, ", ".join(changed))
                return None
        context.log.info("versions changed in %s: rebuilding the summary database from %d partitions",
                         ", ".join(changed), len(keys))
        reports = rebuild_summary(summary_database.path, [staging_area.partition_dir(k) for k in keys],
                                  progress=staging_area.show_progress)
        for key in keys:
            staging_area.write_marker(key, INTEGRATED_MARKER,
                                      integrated_marker(staging_area.read_marker(key, SCRAPED_MARKER)))
    return IntegrationPass(done=list(zip(keys, reports, strict=True)), rebuilt_for=changed)


def integrate_pending(context: AssetExecutionContext, summary_database: SummaryDatabaseResource,
                      staging_area: StagingAreaResource, *, reintegrate_all: bool = False,
                      rebuild: bool = False) -> IntegrationPass:
    """The body of ``summary_db`` (the caller holds the writers' lock): rebuild when
    versions changed (:func:`changed_versions`) or ``rebuild``; else integrate, in key
    order, each scraped partition not yet integrated, stopping before the first one that
    is staged but not scraped or busy. ``reintegrate_all`` hands integrated ones to
    ``integrate_staged`` again (which skips their crawls)."""
    with closing(summary_database.open()):
        pass  # creates the database with its schema on first use
    keys = staging_area.staged_keys()
    changed = keys if rebuild else changed_versions(staging_area, keys)
    if changed:
        rebuilt = _rebuild(context, summary_database, staging_area, keys, changed)
        if rebuilt is not None:
            return rebuilt
    result = IntegrationPass()
    for key in keys:
        with staging_area.partition_lock(key, wait=False) as free:
            if not free:
                context.log.info(
                    "partition %s is being staged or scraped by another run right now; it and later "
                    "partitions are integrated by the next summary_db materialization (summarize_job "
                    "runs end with one)", key)
                result.waiting_for = key
                return result
            scraped = staging_area.read_marker(key, SCRAPED_MARKER)
            if scraped is None:
                context.log.warning(
                    "partition %s is staged but not scraped (crawl_log_staging was materialized for it, "
                    "scrape_results was not, or failed); it and later partitions are not integrated "
                    "until you materialize scrape_results for partition %s, then summary_db (or run "
                    "summarize_job for that partition)", key, key)
                result.waiting_for = key
                return result
            if staging_area.has_marker(key, INTEGRATED_MARKER) and not reintegrate_all:
                with closing(summary_database.open(read_only=True)) as conn:
                    if agent_integrated(conn, agent_uuid_of(key).bytes):
                        result.skipped.append(key)
                        continue
            report = integrate_staged(summary_database.path, staging_area.partition_dir(key),
                                      progress=staging_area.show_progress)
            staging_area.write_marker(key, INTEGRATED_MARKER, integrated_marker(scraped))
        result.done.append((key, report))
        context.log.info("integrated partition %s: %s", key, report)
    return result
