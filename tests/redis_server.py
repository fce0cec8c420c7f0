"""Debian's redis-server, started by the tests that need one (scripts/test installs it):
the Celery broker of tests/dagster/test_celery.py and the hand-off mirror of
tests/shards/test_handoff_hosts.py."""

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
#: The ceiling for the server coming up (a loaded machine takes a minute or more).
STARTUP_S = 300.0

#: Marks a test module as needing redis-server.
needs_redis = pytest.mark.skipif(not Path(REDIS).exists(), reason="redis-server is not installed "
                                 "(scripts/test installs Debian's redis-server)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path):
    """A redis-server on a free 127.0.0.1 port, nothing saved to disk; stopped after."""
    port = free_port()
    server = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.2)
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
