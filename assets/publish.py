"""Group "publish": the published copy of the summary database."""

from contextlib import closing

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from textpile_dagster.assets.checks import summary_outcomes
from textpile_dagster.assets.semantic import embeddings
from textpile_dagster.assets.summary import fts_index
from textpile_dagster.resources import PublishTargetResource, SummaryDatabaseResource
from textpile.publish import publish
from textpile_dagster.assets.automation import AFTER_CHECKS
from textpile_dagster.assets.tables import row_count

GROUP = "publish"

#: The check that fails when summary_db changed after the last fts_index rebuild.
FTS_CHECK = "fts_matches_searchable_generations"


def refusal_message(failed: dict[str, str]) -> str:
    """The reason ``published_index`` gives for not publishing: each failing check by name
    with its description (``failed`` maps check name to description), and, when the FTS
    check is among them, what to materialize to fix it."""
    listed = "; ".join(f"{name}: {description}" for name, description in sorted(failed.items()))
    message = f"refusing to publish a summary database that fails its checks ({listed})"
    if FTS_CHECK in failed:
        message += ("; the summary changed after the FTS index was rebuilt: materialize fts_index, "
                    "then published_index")
    return message


@asset(
    deps=[fts_index, embeddings],
    group_name=GROUP,
    kinds={"sqlite"},
    automation_condition=AFTER_CHECKS,
    description="A finished copy of the summary database with its page vectors, brought up to date by the "
    "pages that changed in one transaction (copied whole the first time); Datasette and `textpile search` read it.",
)
def published_index(
    context: AssetExecutionContext,
    summary_database: SummaryDatabaseResource,
    publish_target: PublishTargetResource,
) -> MaterializeResult:
    """:func:`publish_checked`."""
    return publish_checked(context, summary_database, publish_target)


def publish_checked(
    context: AssetExecutionContext,
    summary_database: SummaryDatabaseResource,
    publish_target: PublishTargetResource,
) -> MaterializeResult:
    """Re-run the summary checks, then ``textpile.publish.publish`` onto the target path,
    holding the summary database's write lock throughout.

    Raises:
        Failure: a check fails (its description is :func:`refusal_message`: the failing
            checks by name and description); the previously published copy stays in place.
    """
    with summary_database.write_lock():  # no run writes it between the checks and the copy
        with closing(summary_database.open(read_only=True)) as conn:
            failed = {name: o.description for name, o in summary_outcomes(conn).items() if not o.passed}
        if failed:
            raise Failure(
                description=refusal_message(failed),
                metadata={"failed_checks": MetadataValue.json(failed)},
            )
        report = publish(summary_database.path, publish_target.path)
    context.log.info("published %s (%d bytes, %d FTS rows; %d of %d pages written%s)", report.path, report.bytes,
                     report.fts_rows, report.pages_copied, report.pages, ", whole" if report.whole else "")
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(report.path)),
            "bytes": report.bytes,
            "generations": report.generations,
            "fts_rows": report.fts_rows,
            "pages": report.pages,
            "pages_written": report.pages_copied,
            "copied_whole": report.whole,
            "seconds": round(report.seconds, 3),
            **row_count(report.fts_rows),
        }
    )
