"""Dagster resources of textpile: where the data lives and how pages are fetched.

Every resource is a ``ConfigurableResource`` whose paths come from resource config;
:func:`build_resources` fills them from :class:`PipelineSettings` (a data directory and a
crawl configuration file). Nothing here reads the environment at import time:
:func:`settings_from_environment` does, when definitions are built.
"""

from textpile_dagster.resources.config import CrawlConfigResource
from textpile_dagster.resources.databases import CrawlerDatabaseResource, PublishTargetResource, SummaryDatabaseResource
from textpile_dagster.resources.http import HttpFetcher, LiveHttpFetcher, RecordedHttpFetcher, RecordedResponse
from textpile_dagster.resources.settings import PipelineSettings, build_resources, settings_from_environment
from textpile_dagster.resources.staging import StagingAreaResource

__all__ = [
    "CrawlConfigResource",
    "CrawlerDatabaseResource",
    "HttpFetcher",
    "LiveHttpFetcher",
    "PipelineSettings",
    "PublishTargetResource",
    "RecordedHttpFetcher",
    "RecordedResponse",
    "StagingAreaResource",
    "SummaryDatabaseResource",
    "build_resources",
    "settings_from_environment",
]
