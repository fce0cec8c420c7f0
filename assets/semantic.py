"""Asset ``embeddings``: the page and section vectors of the semantic search modes.

Downstream of ``fts_index`` (so one summary step writes the database at a time, in the
``textpile_summary_db`` pool, holding its write lock) and upstream of
``published_index``, which then publishes the vectors with the index. Incremental: only
new or changed searchable generations are embedded (:mod:`textpile.semantic.embed`).
Its ``code_version`` is the model's name: another model marks it stale, and its next
materialization makes every vector anew.
"""

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from textpile.semantic.embed import embed_summary
from textpile.semantic.model import MODEL_NAME
from textpile_dagster.assets.automation import AFTER_CHECKS
from textpile_dagster.assets.summary import GROUP, SUMMARY_POOL, fts_index
from textpile_dagster.assets.tables import row_count
from textpile_dagster.resources import SummaryDatabaseResource


@asset(
    deps=[fts_index],
    group_name=GROUP,
    kinds={"sqlite", "numpy"},
    pool=SUMMARY_POOL,
    code_version=MODEL_NAME,
    automation_condition=AFTER_CHECKS,
    description="Page and section vectors (page_embedding, section_embedding) of every searchable generation, "
    "for the semantic and hybrid search modes; only new and changed pages are embedded. From 20,000 pages on, "
    "the page vectors' coarse partition (page_embedding_centroid, page_embedding_list) is kept beside them.",
)
def embeddings(context: AssetExecutionContext, summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """:func:`embed_pages`."""
    return embed_pages(context, summary_database)


def embed_pages(context: AssetExecutionContext, summary_database: SummaryDatabaseResource) -> MaterializeResult:
    """The body of ``embeddings`` (and of each shard's, :mod:`textpile_dagster.assets.shards`):
    ``embed_summary`` on the summary database (holding its write lock)."""
    with summary_database.write_lock():
        report = embed_summary(summary_database.path, progress=summary_database.show_progress)
    vectors = report.pages_kept + report.pages_embedded
    context.log.info("embeddings: %d pages and %d sections embedded, %d page vectors removed, %d page vectors",
                     report.pages_embedded, report.sections_embedded, report.pages_removed, vectors)
    return MaterializeResult(
        metadata={
            "pages_embedded": report.pages_embedded,
            "sections_embedded": report.sections_embedded,
            "page_vectors_removed": report.pages_removed,
            "page_vectors": vectors,
            "model": report.model,
            "model_changed": report.model_changed,
            "page_vector_lists": report.vector_lists,
            "lists_trained": report.lists_trained,
            "pages_per_s": round(report.pages_embedded / report.seconds, 1) if report.seconds > 0 else 0.0,
            "seconds": round(report.seconds, 3),
            "path": MetadataValue.path(summary_database.path),
            **row_count(vectors),
        }
    )
