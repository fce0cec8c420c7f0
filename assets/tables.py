"""Table-shaped materialization metadata (``MetadataValue.table``), shown as tables in the UI."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

#: Metadata key of an asset's row count (what Dagster shows as "Row count").
ROW_COUNT = "dagster/row_count"


def table(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[object]]) -> MetadataValue:
    """A ``MetadataValue.table`` with ``columns`` as (name, type) pairs (types: ``string``,
    ``int``, ``float``, ``bool``) and one record per row, values in column order."""
    names = [name for name, _ in columns]
    return MetadataValue.table(
        records=[TableRecord(dict(zip(names, row, strict=True))) for row in rows],
        schema=TableSchema(columns=[TableColumn(name, kind) for name, kind in columns]),
    )


def row_count(rows: int) -> dict[str, int]:
    """``{"dagster/row_count": rows}``, to merge into an asset's metadata."""
    return {ROW_COUNT: int(rows)}
