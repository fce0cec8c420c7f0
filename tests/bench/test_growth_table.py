"""The growth benchmark's table (bench/growth/__main__.py): a publish's row names the pages it
wrote and read, as its report gives them, beside the bytes the kernel counted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

GROWTH = Path(__file__).resolve().parents[2] / "bench" / "growth"


@pytest.fixture(scope="module")
def growth():
    sys.path.insert(0, str(GROWTH))
    try:
        spec = importlib.util.spec_from_file_location("growth_main", GROWTH / "__main__.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(GROWTH))


def test_a_publish_row_names_its_pages_written_and_read(growth):
    figures = {"bytes": 2278170624, "pages_copied": 25161, "pages_read": 25413, "pages": 556194, "cpu_s": 2.5}
    assert growth._pages(figures) == "25,161 / 25,413 (556,194)"


def test_other_rows_have_no_pages(growth):
    assert growth._pages({"p50_ms": 20.0, "p99_ms": 38.9, "queries": 40, "cpu_s": 2.49}) == ""
    assert growth._pages({"exit": 0, "index_cpu_s": 13.9, "cpu_s": 34.2}) == ""
