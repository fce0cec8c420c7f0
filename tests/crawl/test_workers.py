"""A crawl worker process over one socket: calls answered in order, big arguments and
results whole, the worker's exceptions passed back, a dead worker failing its calls."""

from __future__ import annotations

import asyncio
import os
import signal
from concurrent.futures.process import BrokenProcessPool

import pytest

from textpile.crawl.workers.process import WorkerProcess, forkserver_context, init_crawl_worker
from textpile.processes import this_process


def _echo(value):
    return value


def _checksum(data: bytes) -> tuple[int, int]:
    return len(data), sum(data[::4096])


def _fail(message: str):
    raise ValueError(message)


def _pid() -> int:
    return os.getpid()


def _sleep_then_pid(seconds: float) -> int:
    import time
    time.sleep(seconds)
    return os.getpid()


def _worker() -> WorkerProcess:
    return WorkerProcess(forkserver_context(), name="test worker")


def test_calls_are_answered_in_order_with_big_arguments_and_results():
    big = bytes(range(256)) * (3 * 1024 * 1024 // 256)  # 3 MiB: many sends of a socket buffer each

    async def run():
        worker = _worker()
        try:
            futures = [worker.call(_echo, i) for i in range(50)]
            futures.append(worker.call(_checksum, big))
            futures.append(worker.call(_echo, big))
            futures.append(worker.call(_echo, "after"))
            assert worker.calls == 53
            results = await asyncio.gather(*futures)
            assert worker.calls == 0
            return results, worker.process.pid, await worker.call(_pid)
        finally:
            worker.close()

    results, pid, worker_pid = asyncio.run(run())
    assert results[:50] == list(range(50))
    assert results[50] == (len(big), sum(big[::4096]))
    assert results[51] == big
    assert results[52] == "after"
    assert worker_pid == pid != os.getpid()


def test_an_exception_in_the_worker_comes_back_to_its_caller():
    async def run():
        worker = _worker()
        try:
            failed = worker.call(_fail, "bad page")
            after = worker.call(_echo, 7)
            with pytest.raises(ValueError, match="^bad page") as caught:
                await failed
            return caught.value, await after
        finally:
            worker.close()

    exc, after = asyncio.run(run())
    assert after == 7  # the worker goes on
    assert any("in the test worker process" in note and "_fail" in note for note in exc.__notes__)


def test_a_killed_worker_fails_its_calls_and_every_later_one():
    async def run():
        worker = _worker()
        try:
            pid = await worker.call(_pid)
            under_way = worker.call(_sleep_then_pid, 600)
            await asyncio.sleep(0.2)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(BrokenProcessPool, match="a test worker process died"):
                await asyncio.wait_for(under_way, 300)  # at once on a quiet machine; no timing tested
            with pytest.raises(BrokenProcessPool, match="a test worker process died"):
                worker.call(_pid)
        finally:
            worker.close()

    asyncio.run(run())


def test_close_cancels_the_calls_not_answered_and_ends_the_process():
    async def run():
        worker = _worker()
        pid = await worker.call(_pid)
        waiting = worker.call(_sleep_then_pid, 0.5)
        worker.close()
        assert waiting.cancelled()
        assert worker.process.exitcode is not None
        with pytest.raises(BrokenProcessPool, match="the test worker process was closed"):
            worker.call(_pid)
        return pid

    pid = asyncio.run(run())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_crawl_worker_leaves_sigterm_and_ctrl_c_to_its_owner():
    """A service manager's stop sends SIGTERM to every process of the service, a terminal's
    Ctrl+C SIGINT to the whole process group: the crawl's workers go on (the crawl writes
    its last entries through its crawler database process), and end when closed."""
    async def run():
        owner = this_process()
        worker = WorkerProcess(forkserver_context(), name="test worker", initializer=init_crawl_worker,
                               initargs=(owner.pid, owner.started_unix, "textpile-test"))
        try:
            pid = await worker.call(_pid)
            under_way = worker.call(_sleep_then_pid, 0.5)
            for signum in (signal.SIGTERM, signal.SIGINT):
                os.kill(pid, signum)
            assert await asyncio.wait_for(under_way, 60) == pid
            assert await worker.call(_echo, "still there") == "still there"
        finally:
            worker.close()
        return pid, worker.process.exitcode

    pid, exitcode = asyncio.run(run())
    assert exitcode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_forkserver_preloads_the_modules_the_workers_run():
    """The forkserver skips a preload module that does not import without a word (each
    worker would import it at its start then): every one named must import, and the
    page readers' work must be among them."""
    import subprocess
    import sys

    from textpile.crawl.discovery.meta import read_meta
    from textpile.crawl.parser.body import read_body
    from textpile.crawl.workers.process import WORKER_MODULES

    assert {read_body.__module__, read_meta.__module__} <= set(WORKER_MODULES)
    imported = subprocess.run(
        [sys.executable, "-c", "import sys; from textpile.crawl.workers.process import WORKER_MODULES\n"
         "for m in WORKER_MODULES: __import__(m)\nprint(all(m in sys.modules for m in WORKER_MODULES))"],
        capture_output=True, text=True, check=True).stdout
    assert imported == "True\n"


def test_a_crawl_worker_imports_its_work_at_start_whatever_the_forkserver_preloaded(tmp_path):
    """A forkserver another pool started first (summarize's) preloaded none of the
    crawl's modules: a page reader still imports them when it starts, not with its first
    page (which would make the crawl's order depend on which pool came first)."""
    import subprocess
    import sys

    (tmp_path / "probe.py").write_text("import sys\n\ndef loaded(names):\n"
                                       "    return [n for n in names if n in sys.modules]\n")
    script = f"""
import asyncio, sys
sys.path.insert(0, {str(tmp_path)!r})
from textpile import processes
processes.forkserver_context(["json"])  # another pool's forkserver, started first
from textpile.crawl.workers.process import WORKER_MODULES, WorkerProcess, forkserver_context, init_crawl_worker
from probe import loaded

async def main():
    owner = processes.this_process()
    worker = WorkerProcess(forkserver_context(), name="test worker", initializer=init_crawl_worker,
                           initargs=(owner.pid, owner.started_unix, "textpile-test"))
    try:
        return await worker.call(loaded, WORKER_MODULES), WORKER_MODULES
    finally:
        worker.close()

found, wanted = asyncio.run(main())
print(found == wanted, len(wanted))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out == "True 4\n"
