"""Pipeline settings: a data directory and a crawl configuration, turned into resources."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from textpile_dagster.resources.config import CrawlConfigResource
from textpile_dagster.resources.databases import CrawlerDatabaseResource, PublishTargetResource, SummaryDatabaseResource
from textpile_dagster.resources.http import HttpFetcher, LiveHttpFetcher
from textpile_dagster.resources.staging import StagingAreaResource

#: Environment variables read by :func:`settings_from_environment` (when definitions are built).
ENV_DATA_DIR = "TEXTPILE_DATA_DIR"
ENV_CONFIG = "TEXTPILE_CONFIG"
ENV_POLICY_FILES = "TEXTPILE_POLICY_FILES"
ENV_SHARDS = "TEXTPILE_SHARDS"


@dataclass
class PipelineSettings:
    """Where a deployment keeps its data and which crawl configuration it runs.

    Files under ``data_dir``: ``crawler.db``, ``summary.db``, ``staging/<partition>/``,
    ``published/summary.db``. ``config_path`` defaults to ``<data_dir>/crawl.toml``.
    """

    data_dir: Path = Path("data")
    config_path: Path | None = None
    policy_files: list[Path] = field(default_factory=list)
    max_commands: int | None = None
    default_delay_ms: int | None = None
    allow_private_addresses: bool | None = None
    force_recrawl: bool = False
    show_progress: bool = False
    http_fetcher: HttpFetcher | None = None
    #: A sharded deployment's shard table (shards.toml): the data folders are the shards'
    #: (:mod:`textpile.shards.config`), ``data_dir`` then only locates the default config.
    shard_table: Path | None = None

    @property
    def crawler_db(self) -> Path:
        """``<data_dir>/crawler.db``."""
        return self.data_dir / "crawler.db"

    @property
    def summary_db(self) -> Path:
        """``<data_dir>/summary.db``."""
        return self.data_dir / "summary.db"

    @property
    def staging_dir(self) -> Path:
        """``<data_dir>/staging``."""
        return self.data_dir / "staging"

    @property
    def published_db(self) -> Path:
        """``<data_dir>/published/summary.db``."""
        return self.data_dir / "published" / "summary.db"


def settings_from_environment() -> PipelineSettings:
    """Settings for ``dagster dev``: ``TEXTPILE_DATA_DIR`` (default ``./data``),
    ``TEXTPILE_CONFIG`` (default ``<data dir>/crawl.toml``), ``TEXTPILE_POLICY_FILES``
    (paths separated by ``os.pathsep``) and ``TEXTPILE_SHARDS`` (a shard table: a sharded
    deployment). Called when definitions are built, never at import.
    """
    data_dir = Path(os.environ.get(ENV_DATA_DIR) or "data")
    config = os.environ.get(ENV_CONFIG)
    policies = [Path(p) for p in (os.environ.get(ENV_POLICY_FILES) or "").split(os.pathsep) if p]
    table = os.environ.get(ENV_SHARDS)
    return PipelineSettings(data_dir=data_dir, config_path=Path(config) if config else None, policy_files=policies,
                            shard_table=Path(table) if table else None)


def build_resources(settings: PipelineSettings) -> dict[str, object]:
    """The resources of the textpile definitions, keyed as the assets expect them.

    Keys: ``crawl_config``, ``crawler_database``, ``summary_database``, ``staging_area``,
    ``publish_target``, ``http_fetcher``. Paths are made absolute so that runs launched
    from another working directory use the same files. Creates nothing on disk.
    """
    data_dir = settings.data_dir.absolute()
    config_path = (settings.config_path or data_dir / "crawl.toml").absolute()
    absolute = PipelineSettings(data_dir=data_dir)
    return {
        "crawl_config": CrawlConfigResource(
            config_path=str(config_path),
            policy_files=[str(p.absolute()) for p in settings.policy_files],
            max_commands=settings.max_commands,
            default_delay_ms=settings.default_delay_ms,
            allow_private_addresses=settings.allow_private_addresses,
            force_recrawl=settings.force_recrawl,
            show_progress=settings.show_progress,
        ),
        "crawler_database": CrawlerDatabaseResource(path=str(absolute.crawler_db)),
        "summary_database": SummaryDatabaseResource(path=str(absolute.summary_db),
                                                    show_progress=settings.show_progress),
        "staging_area": StagingAreaResource(root=str(absolute.staging_dir), show_progress=settings.show_progress),
        "publish_target": PublishTargetResource(path=str(absolute.published_db)),
        "http_fetcher": settings.http_fetcher or LiveHttpFetcher(),
    }
