"""Shared fixtures. Tests never touch the internet: sites are served on 127.0.0.1."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sites import DirectoryServer, real_docs_root  # noqa: E402


@pytest.fixture(autouse=True)
def _no_dagster_home(monkeypatch):
    """Tests never record into the developer's Dagster instance: DAGSTER_HOME is unset
    (tests that need one set it themselves)."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture(scope="session")
def real_docs_site(tmp_path_factory):
    """Base URL of a real documentation site (sqlite3-doc or pydoc HTML) on 127.0.0.1."""
    root = real_docs_root(tmp_path_factory.mktemp("docs"))
    with DirectoryServer(root) as server:
        yield server.base_url, root
