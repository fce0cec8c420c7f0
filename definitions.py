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

from dagster import Definitions
from dagster import definitions as lazy_definitions

from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS, ARCHIVE_ASSETS
from textpile_dagster.resources import PipelineSettings, build_resources, settings_from_environment
from textpile_dagster.sensors import ALL_JOBS, ALL_SENSORS


def build_definitions(settings: PipelineSettings) -> Definitions:
    """The textpile Definitions with resources made from ``settings``."""
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
