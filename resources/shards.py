"""The shards of a sharded deployment as one Dagster resource: per shard, the resources of
its data folder (as :func:`build_resources` makes them for one data folder) and its crawl
configuration (the deployment's, keeping the seeds whose site is the shard's)."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from textpile.shards.config import Shards, load_shards
from textpile_dagster.resources.config import CrawlConfigResource
from textpile_dagster.resources.databases import CrawlerDatabaseResource, PublishTargetResource, SummaryDatabaseResource
from textpile_dagster.resources.settings import PipelineSettings, build_resources
from textpile_dagster.resources.staging import StagingAreaResource


class ShardsResource(ConfigurableResource):
    """The shard table and the crawl configuration every shard crawls its part of."""

    table_path: str = Field(description="The shard table (shards.toml).")
    crawl_config: CrawlConfigResource = Field(description="The crawl configuration of the deployment (every seed).")
    scrape_processes: int | None = Field(default=None, ge=0, description="Worker processes scraping a partition "
                                         "of a shard (None: one per CPU; 0: in the step's own process).")

    def table(self) -> Shards:
        """The shard table, read now (ConfigError when invalid)."""
        return load_shards(self.table_path)

    def _resources(self, shard: str) -> dict[str, object]:
        settings = PipelineSettings(data_dir=self.table().folder(shard), show_progress=self.crawl_config.show_progress)
        return build_resources(settings)

    def crawl_config_of(self, shard: str) -> CrawlConfigResource:
        """The crawl configuration of ``shard``: the deployment's, with the shard's seeds only."""
        c = self.crawl_config
        return CrawlConfigResource(
            config_path=c.config_path, policy_files=list(c.policy_files), max_commands=c.max_commands,
            default_delay_ms=c.default_delay_ms, allow_private_addresses=c.allow_private_addresses,
            force_recrawl=c.force_recrawl, worker_name=c.worker_name, show_progress=c.show_progress,
            shard_table=str(Path(self.table_path).absolute()), shard=self.table().check(shard))

    def crawler_database(self, shard: str) -> CrawlerDatabaseResource:
        """``<shard folder>/crawler.db``."""
        return self._resources(shard)["crawler_database"]

    def summary_database(self, shard: str) -> SummaryDatabaseResource:
        """``<shard folder>/summary.db``."""
        return self._resources(shard)["summary_database"]

    def staging_area(self, shard: str) -> StagingAreaResource:
        """``<shard folder>/staging``."""
        area = self._resources(shard)["staging_area"]
        return StagingAreaResource(root=area.root, show_progress=area.show_progress,
                                   scrape_processes=self.scrape_processes)

    def publish_target(self, shard: str) -> PublishTargetResource:
        """``<shard folder>/published/summary.db``."""
        return self._resources(shard)["publish_target"]
