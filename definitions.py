"""Dagster definitions of textpile: assets, resources, jobs, sensors, automation, checks.

Installed as the module ``textpile_dagster.definitions`` (this folder's definitions.py,
assets/, resources/ and sensors/ are the package ``textpile_dagster``; see pyproject.toml).
``dagster dev -m textpile_dagster.definitions`` (or ``dagster dev`` in the checkout,
through workspace.yaml) loads ``defs``, built when the code location loads from
:func:`textpile_dagster.resources.settings_from_environment` (``TEXTPILE_DATA_DIR``,
default ``./data``; ``TEXTPILE_CONFIG``, default ``<data dir>/crawl.toml``).
``textpile pipeline`` imports this module and calls :func:`build_definitions` with its
own settings, so both run the same graph.
"""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job
from dagster import definitions as lazy_definitions

from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS, ARCHIVE_ASSETS
from textpile_dagster.resources import PipelineSettings, build_resources, settings_from_environment
from textpile_dagster.sensors import ALL_JOBS, ALL_SENSORS


def build_definitions(settings: PipelineSettings) -> Definitions:
    """The textpile Definitions with resources made from ``settings``; those of a sharded
    deployment (:func:`build_sharded_definitions`) when ``settings.shard_table`` is set."""
    if settings.shard_table is not None:
        return build_sharded_definitions(settings)
    return Definitions(
        assets=[*ALL_ASSETS, *ARCHIVE_ASSETS],
        asset_checks=ALL_CHECKS,
        jobs=ALL_JOBS,
        sensors=ALL_SENSORS,
        resources=build_resources(settings),
    )


@lazy_definitions
def defs() -> Definitions:
    """The definitions ``dagster dev`` loads (settings from the environment, read now)."""
    return build_definitions(settings_from_environment())


def build_sharded_definitions(settings: PipelineSettings) -> Definitions:
    """The Definitions of a sharded deployment: the pipeline once per shard of the shard
    table ``settings.shard_table`` (:mod:`textpile_dagster.assets.shards`), one resource
    ``shards`` for every shard's folder and crawl configuration, and two jobs over every
    shard for a crawl-run partition: ``shards_job`` (the multiprocess executor: shards side
    by side on this machine) and ``shards_celery_job`` (dagster-celery: each step on the
    queue of the host holding its shard, run config ``execution: config: {broker, backend}``),
    and the sensor ``shards_crawl_now`` starting ``shards_job`` for a new crawl run.

    Raises:
        textpile.errors.ConfigError: the shard table is invalid.
    """
    from dagster_celery import celery_executor

    from textpile.shards.config import load_shards
    from textpile_dagster.assets.shards import shard_assets
    from textpile_dagster.resources.shards import ShardsResource
    from textpile_dagster.sensors.shards import shards_crawl_now

    table_path = settings.shard_table.absolute()
    base = build_resources(settings)
    everything = AssetSelection.all()
    return Definitions(
        assets=shard_assets(load_shards(table_path)),
        jobs=[
            define_asset_job("shards_job", selection=everything,
                             description="Every shard's pipeline for one crawl-run partition, shards side by side."),
            define_asset_job("shards_celery_job", selection=everything, executor_def=celery_executor,
                             description="Every shard's pipeline for one crawl-run partition, each shard's steps "
                             "on the Celery queue of its host."),
        ],
        sensors=[shards_crawl_now],
        resources={"shards": ShardsResource(table_path=str(table_path), crawl_config=base["crawl_config"]),
                   "http_fetcher": base["http_fetcher"]},
    )
