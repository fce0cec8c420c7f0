"""The SQLite databases as Dagster resources: crawler DB, summary DB, published copy."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from textpile.store.locks import exclusive_lock
from textpile.store.database import open_crawler_db, open_summary_db
from textpile.summarize.pipeline import summary_lock_path


def _open(opener, path: str, read_only: bool) -> sqlite3.Connection:
    """``opener(path)`` creating the database (and its folder) unless ``read_only``."""
    if not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    return opener(path, create=not read_only, read_only=read_only)


class CrawlerDatabaseResource(ConfigurableResource):
    """The crawler database (unobtanium crawler schema 1.0.0), one file on disk."""

    path: str = Field(description="Path of the crawler database file (created on first use).")

    def open(self, *, read_only: bool = False) -> sqlite3.Connection:
        """Open it with the schema check of ``open_crawler_db`` (DatabaseError when wrong);
        unless ``read_only``, its folder is created when missing."""
        return _open(open_crawler_db, self.path, read_only)


class SummaryDatabaseResource(ConfigurableResource):
    """The working summary database (unobtanium summary schema 0.0.0), written by the pipeline."""

    path: str = Field(description="Path of the summary database file (created on first use).")
    show_progress: bool = Field(default=False, description="Show the library's progress bars on stderr "
                                "(indexing, embedding).")

    def open(self, *, read_only: bool = False) -> sqlite3.Connection:
        """Open it with the schema check of ``open_summary_db`` (DatabaseError when wrong);
        unless ``read_only``, its folder is created when missing."""
        return _open(open_summary_db, self.path, read_only)

    @property
    def lock_path(self) -> Path:
        """The lock file of the writers: ``<summary db path>.lock``, the one ``textpile
        summarize`` holds too (:func:`textpile.summarize.pipeline.summary_lock_path`)."""
        return summary_lock_path(self.path)

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the writers' lock for the block, waiting for another run holding it.

        Every asset writing the summary database (summary_db, fts_index, token_index) holds
        it, so two runs never write it at once, whatever the Dagster instance's pool or run
        coordinator settings are.
        """
        with exclusive_lock(self.lock_path):
            yield


class PublishTargetResource(ConfigurableResource):
    """Where the finished copy of the summary database is published (what Datasette serves)."""

    path: str = Field(description="Path of the published summary database copy.")
