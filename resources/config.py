"""The crawl configuration as a Dagster resource: a TOML file, policy files, overrides."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from textpile.crawl.policy.config import CrawlConfig
from textpile.shards.handoff import HandOff


class CrawlConfigResource(ConfigurableResource):
    """Where the crawl configuration lives and what the pipeline overrides in it.

    ``config_path`` is the crawl configuration TOML (seed page "Crawler crawl
    configuration"); ``policy_files`` add ``[[do_not_crawl]]`` / ``[[url_query_paramters]]``
    policies like ``textpile crawl --policy-file``. The optional overrides replace the
    file's values for runs of this deployment (None: keep the file's value).
    """

    config_path: str = Field(description="Path of the crawl configuration TOML file.")
    policy_files: list[str] = Field(default_factory=list, description="Extra policy TOML files.")
    max_commands: int | None = Field(default=None, description="Override max_commands_per_run.")
    default_delay_ms: int | None = Field(default=None, description="Override default_delay_ms (milliseconds).")
    allow_private_addresses: bool | None = Field(
        default=None, description="Override allow_private_addresses (True lets the crawler reach 127.0.0.1)."
    )
    force_recrawl: bool = Field(default=False, description="Crawl every candidate, due or not.")
    worker_name: str = Field(default="ant", description="Worker name recorded with the crawl run.")
    show_progress: bool = Field(default=False, description="Show the library's progress bars on stderr.")
    shard_table: str | None = Field(default=None, description="The shard table (shards.toml) of a sharded "
                                    "deployment; with shard, the seeds are those of that shard.")
    shard: str | None = Field(default=None, description="The shard whose seeds are crawled (with shard_table).")

    def load(self) -> CrawlConfig:
        """Read, validate and override the configuration; for a shard, keep only the seeds
        and admitted sites (``allow_sites``) whose site the shard table assigns to it (empty
        lists when there is none).

        Raises:
            textpile.errors.ConfigError: the file or a policy file is missing or invalid,
                or the shard table is invalid or has no such shard.
        """
        config = self._whole()
        if self.shard is None:
            return config
        from textpile.shards.config import load_shards

        table = load_shards(self.shard_table)
        mine = table.check(self.shard)
        return config.model_copy(update={  # may be empty: the shard has no seed
            "seeds": table.seeds_by_shard(config.seeds)[mine],
            "allow_sites": table.seeds_by_shard(config.allow_sites)[mine]})

    def handoff(self) -> HandOff | None:
        """For a shard (``shard`` set), what its crawl hands to other shards and takes
        from them (:func:`textpile.shards.handoff.handoff_of` over every seed and admitted
        site of the configuration); None otherwise.

        Raises:
            textpile.errors.ConfigError: as :meth:`load`.
        """
        if self.shard is None:
            return None
        from textpile.shards.config import load_shards
        from textpile.shards.handoff import handoff_of

        return handoff_of(load_shards(self.shard_table), self._whole().crawl_seeds, self.shard)

    def _whole(self) -> CrawlConfig:
        """The configuration with the overrides, every shard's seeds."""
        from textpile.crawl.policy.config import apply_overrides, load_config

        return apply_overrides(
            load_config(self.config_path, policy_files=tuple(self.policy_files)),
            max_commands=self.max_commands,
            default_delay_ms=self.default_delay_ms,
            allow_private_addresses=self.allow_private_addresses,
        )
