"""Fixtures of the Dagster tests: a small site, a crawl configuration.

The Dagster layer is imported as the installed package ``textpile_dagster`` (the
checkout's definitions.py, assets/, resources/, sensors/ through the editable install).
"""

from pathlib import Path

import pytest

from dagster_sites import ChangingSite, page, write_config  # noqa: F401 (tests import them from here)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def changing_site():
    """A running :class:`ChangingSite`."""
    site = ChangingSite()
    with site.server:
        yield site
