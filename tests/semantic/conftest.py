"""Fixtures of the semantic tests: the model (loaded once) and the embedded paraphrase corpus."""

from __future__ import annotations

import pytest

from textpile.semantic.embed import embed_summary
from textpile.semantic.model import Embedder, load_embedder

from semantic.corpus import build


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder()


@pytest.fixture
def corpus(tmp_path, embedder):
    path = tmp_path / "summary.db"
    ids = build(path)
    embed_summary(path, embedder)
    return path, ids
