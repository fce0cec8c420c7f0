"""The database layer shared by every stage: opening, schema versions, URLs, media types."""

from textpile.store.database import (
    BASE_SCHEMA_VERSION,
    CRAWLER_SCHEMA_VERSION,
    SUMMARY_SCHEMA_VERSION,
    connect,
    open_crawler_db,
    open_summary_db,
    optimize_and_vacuum,
)

__all__ = [
    "BASE_SCHEMA_VERSION",
    "CRAWLER_SCHEMA_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "connect",
    "open_crawler_db",
    "open_summary_db",
    "optimize_and_vacuum",
]
