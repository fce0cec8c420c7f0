"""The assets of a sharded deployment: the pipeline once per shard of the shard table.

Each shard ``s`` gets the graph of a data folder under the key prefix ``shard_s`` (group
``shard_s``): ``crawl_run[p] -> crawl_log_staging[p] -> scrape_results[p] -> summary_db
-> fts_index -> embeddings -> published_index``, where ``[p]`` is the deployment's ``crawl_runs``
partition: one crawl run key covers every shard, and a run of that key materializes every
shard's steps, side by side under the multiprocess executor. Each asset calls the same
body as the unsharded asset of its name (``materialize_crawl_run``, ``stage_partition``
...), with the resources of the shard's folder (:class:`ShardsResource`).

Why shards are asset key prefixes, not a partition dimension (a ``MultiPartitionsDefinition``
of shard and crawl run, or one dynamic partition per shard and run): Dagster gives a step
its pool and its tags, which choose the Celery queue (``dagster-celery/queue``), from the
asset's definition (``node.definition.pool``, ``node.tags``), the same for every partition,
and a run targets one partition key. With the shard as a partition, the shards of a crawl
run would be separate runs of one step each: they could not share one run of the
multiprocess executor, have one pool (one writer) per shard, nor go to the queue of the
host holding their folder. As a prefix, each shard's steps carry ``pool =
textpile_shard_<s>`` (with ``concurrency: pools: default_limit: 1`` one step at a time
writes a shard's files, and the file locks of the library hold regardless) and, when the
table names its host, ``dagster-celery/queue = textpile-<host>``. The crawl run stays the
one partition dimension, so a backfill re-stages or re-scrapes chosen runs as before.

Not per shard (yet): ``token_index`` (experimental, on demand) and the asset checks
(``published_index`` runs the summary checks itself and refuses to publish a shard that
fails one).
"""

from dagster import AllPartitionMapping, AssetDep, AssetExecutionContext, AssetsDefinition, MaterializeResult, asset

from textpile.shards.config import Shards
from textpile.semantic.model import MODEL_NAME
from textpile.summarize.versions import EXTRACTION_VERSION, FTS_VERSION, INTEGRATION_VERSION, STAGING_VERSION
from textpile_dagster.assets.automation import AFTER_CHECKS, AFTER_CRAWL, AFTER_SCRAPE
from textpile_dagster.assets.crawl import materialize_crawl_run
from textpile_dagster.assets.partitions import crawl_runs_partitions
from textpile_dagster.assets.publish import publish_checked
from textpile_dagster.assets.semantic import embed_pages
from textpile_dagster.assets.summary import (IndexConfig, SummaryDbConfig, integrate_partitions, scrape_partition,
                                             stage_partition, update_index)
from textpile_dagster.resources import HttpFetcher
from textpile_dagster.resources.shards import ShardsResource

#: The op tag naming the shard of a step.
SHARD_TAG = "textpile/shard"
#: The op tag dagster-celery routes a step by (dagster_celery.tags.DAGSTER_CELERY_QUEUE_TAG).
CELERY_QUEUE_TAG = "dagster-celery/queue"


def shard_prefix(shard: str) -> str:
    """The asset key prefix and group of ``shard``'s assets: ``shard_<shard>``."""
    return f"shard_{shard}"


def shard_pool(shard: str) -> str:
    """The Dagster pool of ``shard``'s steps: ``textpile_shard_<shard>``."""
    return f"textpile_shard_{shard}"


def shard_assets(table: Shards) -> list[AssetsDefinition]:
    """The assets of every shard of ``table``, in table order (seven per shard)."""
    return [a for name in table.names for a in _one_shard(name, table.queue(name))]


def _one_shard(name: str, queue: str | None) -> list[AssetsDefinition]:
    tags = {SHARD_TAG: name, **({CELERY_QUEUE_TAG: queue} if queue else {})}
    common = {"key_prefix": [shard_prefix(name)], "group_name": shard_prefix(name), "pool": shard_pool(name),
              "op_tags": tags}

    @asset(name="crawl_run", partitions_def=crawl_runs_partitions, kinds={"python", "sqlite"},
           description=f"One crawl run of the seeds of shard {name} into its crawler database.", **common)
    def crawl(context: AssetExecutionContext, shards: ShardsResource, http_fetcher: HttpFetcher) -> MaterializeResult:
        return materialize_crawl_run(context, shards.crawl_config_of(name), shards.crawler_database(name),
                                     http_fetcher)

    @asset(name="crawl_log_staging", partitions_def=crawl_runs_partitions, deps=[crawl], kinds={"parquet", "duckdb"},
           code_version=STAGING_VERSION, automation_condition=AFTER_CRAWL,
           description=f"The crawl run's entries of shard {name} as Parquet in its staging folder.", **common)
    def stage(context: AssetExecutionContext, shards: ShardsResource) -> MaterializeResult:
        return stage_partition(context, shards.crawler_database(name), shards.staging_area(name))

    @asset(name="scrape_results", partitions_def=crawl_runs_partitions, deps=[stage], kinds={"parquet", "python"},
           code_version=EXTRACTION_VERSION, automation_condition=AFTER_CRAWL,
           description=f"Scrape results of the staged files of shard {name}.", **common)
    def scrape(context: AssetExecutionContext, shards: ShardsResource) -> MaterializeResult:
        return scrape_partition(context, shards.staging_area(name))

    @asset(name="summary_db", deps=[AssetDep(scrape, partition_mapping=AllPartitionMapping())],
           kinds={"sqlite", "duckdb"}, code_version=INTEGRATION_VERSION, automation_condition=AFTER_SCRAPE,
           description=f"The summary database of shard {name}.", **common)
    def summary(context: AssetExecutionContext, config: SummaryDbConfig, shards: ShardsResource) -> MaterializeResult:
        return integrate_partitions(context, config, shards.summary_database(name), shards.staging_area(name))

    @asset(name="fts_index", deps=[summary], kinds={"sqlite"}, code_version=FTS_VERSION,
           automation_condition=AFTER_CHECKS, description=f"The search index of shard {name}.", **common)
    def index(context: AssetExecutionContext, config: IndexConfig, shards: ShardsResource) -> MaterializeResult:
        return update_index(context, config, shards.summary_database(name))

    @asset(name="embeddings", deps=[index], kinds={"sqlite", "numpy"}, code_version=MODEL_NAME,
           automation_condition=AFTER_CHECKS,
           description=f"Page and section vectors of shard {name} (semantic and hybrid modes).", **common)
    def vectors(context: AssetExecutionContext, shards: ShardsResource) -> MaterializeResult:
        return embed_pages(context, shards.summary_database(name))

    @asset(name="published_index", deps=[index, vectors], kinds={"sqlite"}, automation_condition=AFTER_CHECKS,
           description=f"The published copy of shard {name}'s summary database.", **common)
    def published(context: AssetExecutionContext, shards: ShardsResource) -> MaterializeResult:
        return publish_checked(context, shards.summary_database(name), shards.publish_target(name))

    return [crawl, stage, scrape, summary, index, vectors, published]
