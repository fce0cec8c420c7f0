"""The staging area: one folder of Parquet per crawl-run partition, read with DuckDB.

Layout: ``<root>/<partition key>/`` holds what ``stage_crawl_log`` and ``scrape_staged``
wrote for that crawl run, plus two small JSON markers written by the Dagster layer:
``_textpile_scraped.json`` (scraping finished) and ``_textpile_integrated.json``
(integrated into the summary database). Re-staging a partition removes the folder, and
so its markers, first. ``<root>/.<partition key>.lock`` is the partition's lock file:
held by a run while it stages, scrapes or integrates that folder (see
:meth:`StagingAreaResource.partition_lock`).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from textpile_dagster.resources.keys import check_crawl_run_key, is_crawl_run_key
from textpile.store.locks import exclusive_lock

SCRAPED_MARKER = "_textpile_scraped.json"
INTEGRATED_MARKER = "_textpile_integrated.json"


class StagingAreaResource(ConfigurableResource):
    """A folder of per-partition Parquet folders; see the module docstring for the layout."""

    root: str = Field(description="Folder holding one sub-folder of Parquet per crawl-run partition.")
    batch_size: int = Field(default=1000, description="Crawl log entries per staged batch.")
    show_progress: bool = Field(default=False, description="Show the library's progress bars on stderr.")
    scrape_processes: int | None = Field(
        default=None, ge=0,
        description="Worker processes scraping a partition (None: one per CPU; 0: in the step's own process). "
        "With Dagster's multiprocess executor, partitions are scraped in parallel steps as well.")

    def partition_dir(self, key: str) -> Path:
        """The folder of partition ``key`` (not created). Raises ValueError for a bad key."""
        return Path(self.root) / check_crawl_run_key(key)

    @contextmanager
    def partition_lock(self, key: str, *, wait: bool = True) -> Iterator[bool]:
        """Hold the lock of partition ``key`` for the block (yields True).

        Held while a run stages, scrapes or integrates the partition's folder, so that a
        folder is never rewritten while another run reads it. With ``wait`` false and
        another run holding it, yields False at once (the folder is being written now).
        Raises ValueError for a bad key.
        """
        with exclusive_lock(Path(self.root) / f".{check_crawl_run_key(key)}.lock", wait=wait) as held:
            yield held

    def reset_partition(self, key: str) -> Path:
        """Remove the folder of ``key`` with everything in it and create it empty."""
        folder = self.partition_dir(key)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return folder

    def staged_keys(self) -> list[str]:
        """Keys of the partition folders present, sorted (UUID v7 hex sorts by time)."""
        root = Path(self.root)
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if p.is_dir() and is_crawl_run_key(p.name))

    def write_marker(self, key: str, name: str, content: dict) -> None:
        """Write marker ``name`` (SCRAPED_MARKER or INTEGRATED_MARKER) into the folder of ``key``."""
        path = self.partition_dir(key) / name
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**content, "written_unix_utc": int(time.time())}, default=str), "utf-8")
        tmp.replace(path)

    def remove_marker(self, key: str, name: str) -> None:
        """Remove marker ``name`` of ``key`` when present."""
        (self.partition_dir(key) / name).unlink(missing_ok=True)

    def read_marker(self, key: str, name: str) -> dict | None:
        """The content of marker ``name`` of ``key``, or None when it is missing or unreadable."""
        try:
            content = json.loads((self.partition_dir(key) / name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return content if isinstance(content, dict) else None

    def has_marker(self, key: str, name: str) -> bool:
        """Whether marker ``name`` exists in the folder of ``key``."""
        return (self.partition_dir(key) / name).is_file()

    def parquet_row_counts(self, key: str) -> dict[str, int]:
        """Rows per Parquet dataset of partition ``key``, read with DuckDB.

        A dataset is named by a Parquet file's stem with any trailing ``-<n>`` or
        ``_<n>`` batch number removed; its files are counted together.
        """
        import duckdb

        folder = self.partition_dir(key)
        counts: dict[str, int] = {}
        files = sorted(folder.rglob("*.parquet"))
        if not files:
            return counts
        with duckdb.connect() as con:
            for file in files:
                name = re.sub(r"[-_]?\d+$", "", file.stem) or file.stem
                (rows,) = con.execute("SELECT count(*) FROM read_parquet(?)", [str(file)]).fetchone()
                counts[name] = counts.get(name, 0) + int(rows)
        return counts
