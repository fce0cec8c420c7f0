"""Shared fixtures. Tests never touch the internet: sites are served on 127.0.0.1.

Signals: the suite must pass when started as a background job, where SIGINT arrives
ignored (SIG_IGN) and is inherited so by every child process. Tests that send Ctrl+C
use :func:`sigint_default`. Every test leaves SIGINT and SIGTERM as it found them
(:func:`_restore_signal_dispositions`): Dagster's in-process execution sets SIGTERM to
whatever SIGINT is when it ends, so without that a background run would ignore SIGTERM
in every later test and in every child they start (Dagster's own ``tail`` processes
then outlive ``terminate()``).
"""

import signal
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# Property-based tests (hypothesis, tests/**/test_*_properties.py): a bounded number of
# examples each and no deadline per example, so the suite stays fast and never fails for
# a slow moment of a loaded machine (CI runs it on 2 cores); a test needing fewer examples
# says so with its own @settings.
settings.register_profile("textpile", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("textpile")

from sites import DirectoryServer, real_docs_root  # noqa: E402


@pytest.fixture(autouse=True)
def _no_dagster_home(monkeypatch):
    """Tests never record into the developer's Dagster instance: DAGSTER_HOME is unset
    (tests that need one set it themselves)."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture(autouse=True)
def _own_cache_folder(monkeypatch, tmp_path_factory):
    """Tests (and the commands they start) remember in a cache folder of their own, never
    the developer's (textpile.store.checked)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def real_docs_site(tmp_path_factory):
    """Base URL of a real documentation site (sqlite3-doc or pydoc HTML) on 127.0.0.1."""
    root = real_docs_root(tmp_path_factory.mktemp("docs"))
    with DirectoryServer(root) as server:
        yield server.base_url, root


@pytest.fixture(autouse=True)
def _restore_signal_dispositions():
    """Put SIGINT and SIGTERM back as they were before the test."""
    main = threading.current_thread() is threading.main_thread()
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    yield
    for signum, handler in before.items():
        if signal.getsignal(signum) is not handler and handler is not None:
            signal.signal(signum, handler)


@pytest.fixture
def sigint_default():
    """Ctrl+C as in a foreground terminal for this test: SIGINT raises KeyboardInterrupt
    in the test process, and child processes start with SIGINT at its default (a Python
    child then raises KeyboardInterrupt too), even when the suite runs in the background."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
