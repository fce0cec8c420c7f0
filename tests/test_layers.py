"""The library's layers import one way: the store knows nothing of the index, semantic
search or search, the index (how pages and queries become terms, and the tables that hold
them) nothing of search, semantic search nothing of search, search nothing of the
interfaces and stages above it. Read from the modules' import statements (ast), so that no
arrow creeps back up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "textpile"
#: What each package may not import (nor any module of it).
ABOVE = {
    "store": ("index", "semantic", "search", "web", "cli", "crawl", "summarize", "archives", "publish"),
    "index": ("semantic", "search", "web", "cli", "crawl", "summarize", "archives", "publish"),
    "semantic": ("search", "web", "cli", "crawl", "summarize", "archives", "publish"),
    "search": ("web", "cli", "crawl", "summarize", "archives", "publish"),
}


def _imported(path: Path) -> set[str]:
    """The textpile modules (and names) ``path`` imports, wherever the import stands."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)  # from textpile import search
    return {name for name in out if name.startswith("textpile.")}


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_a_layer_imports_nothing_above_it(package):
    found = []
    for path in sorted((SRC / package).rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        for name in sorted(_imported(path)):
            if name.split(".")[1] in ABOVE[package]:
                found.append(f"{where} imports {name}")
    assert found == []


