"""Fixtures of the web frontend's tests: the sample summary database and a Datasette serving it."""

import pytest

from search.builder import sample_site
from textpile.web.app import build_datasette


@pytest.fixture(scope="module")
def summary_path(tmp_path_factory):
    """The sample site's summary database (:func:`search.builder.sample_site`), one per test module."""
    path = tmp_path_factory.mktemp("web") / "summary.db"
    sample_site(path)
    return path


@pytest.fixture(scope="module")
def ds(summary_path):
    """Datasette with the textpile plugin serving :func:`summary_path`, as ``textpile serve`` builds it."""
    return build_datasette(summary_path)
