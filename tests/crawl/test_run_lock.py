"""One crawl run at a time per crawler database: ``<database>.lock``."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import textpile.crawl.loop.run as run_module
from sites import Response, SiteServer
from textpile.cli import main
from textpile.crawl.crawldb.recovery import crawl_lock_path
from textpile.crawl.loop.run import run_crawl
from textpile.errors import TextpileError
from textpile.store.locks import exclusive_lock, lock_holder

from .crawlsite import config, write_config


def test_lock_helper_writes_the_holder_pid_and_refuses_a_second_holder(tmp_path):
    lock = tmp_path / "sub" / "x.lock"
    with exclusive_lock(lock, wait=False) as held:
        assert held
        assert lock_holder(lock) == os.getpid()
        with exclusive_lock(lock, wait=False) as second:
            assert not second
    with exclusive_lock(lock, wait=False) as again:
        assert again
    assert lock_holder(tmp_path / "missing.lock") is None
    assert not lock.exists()  # removed by its holder when released


def test_a_lock_file_left_by_a_killed_holder_is_taken_over_and_removed(tmp_path):
    lock = tmp_path / "x.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from textpile.store.locks import exclusive_lock\n"
                               "with exclusive_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(600)",
                               str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    assert lock_holder(lock) == holder.pid
    holder.kill()
    holder.wait(timeout=60)
    assert lock.exists()  # SIGKILL leaves the file, but no lock on it
    with exclusive_lock(lock, wait=False) as held:
        assert held and lock_holder(lock) == os.getpid()
    assert not lock.exists()


def test_a_waiter_locks_the_file_under_the_name_after_the_holder_removed_it(tmp_path):
    lock = tmp_path / "x.lock"
    order = []
    with exclusive_lock(lock) as held:
        assert held
        waiter = threading.Thread(target=lambda: _hold(lock, order))
        waiter.start()
        time.sleep(0.2)  # the waiter blocks on the file that is about to be removed
        order.append("released")
    waiter.join(timeout=60)
    assert order == ["released", "waiter held the file under the name"]
    assert not lock.exists()


def _hold(lock, order):
    with exclusive_lock(lock) as held:
        assert held
        order.append("waiter held the file under the name" if lock.exists() and lock_holder(lock) == os.getpid()
                     else "waiter held a removed file")


def test_second_run_on_a_locked_database_fails_at_once(tmp_path, capsys):
    db = tmp_path / "crawl.db"
    assert crawl_lock_path(db) == tmp_path / "crawl.db.lock"
    cfg = config(tmp_path, ["http://127.0.0.1:9/"])
    expected = (f"{db}: another crawl is running on this crawler database "
                f"(lock {db}.lock held by pid {os.getpid()})")
    with exclusive_lock(crawl_lock_path(db), wait=False) as held:
        assert held
        with pytest.raises(TextpileError) as err:
            run_crawl(cfg, db, progress=False)
        assert str(err.value) == expected
        status = main(["crawl", "--config", str(write_config(tmp_path, ["http://127.0.0.1:9/"])),
                       "-c", str(db), "--no-progress"])
        assert status == 1
        assert capsys.readouterr().err == f"textpile: error: {expected}\n"
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM agent").fetchone() == (0,)  # no run started
    conn.close()


def test_lock_is_released_after_a_run_and_after_an_error(tmp_path, monkeypatch):
    with SiteServer({"/": Response(200, "<p>one</p>"), "/robots.txt": Response(404)}) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        report = run_crawl(cfg, db, progress=False)
        assert report.exit_code_counts == {"file_not_found": 1, "file_ingested": 1}
        with exclusive_lock(crawl_lock_path(db), wait=False) as held:
            assert held

        def broken(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(run_module, "_run_locked", broken)
        with pytest.raises(RuntimeError):
            run_crawl(cfg, db, progress=False)
        monkeypatch.undo()
        with exclusive_lock(crawl_lock_path(db), wait=False) as held:
            assert held
        assert run_crawl(cfg, db, progress=False, force_recrawl=True).exit_code_counts["file_ingested"] == 1


def test_two_processes_on_one_database(tmp_path):
    """A second ``textpile crawl`` process exits 1 at once while the first crawls; each
    URL is fetched once. The first crawl's page is held until the second process has
    ended, however slowly either starts (no timing window)."""
    release = threading.Event()

    def held_page(request):
        release.wait(300)
        return Response(200, "<p>slow</p>")

    with SiteServer({"/": held_page, "/robots.txt": Response(404)}) as site:
        cfg = write_config(tmp_path, [site.base_url + "/"])
        db = tmp_path / "crawl.db"
        command = [sys.executable, "-c", "import sys; from textpile.cli import main; sys.exit(main())",
                   "crawl", "--config", str(cfg), "-c", str(db), "--no-progress"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 300
            while not site.requests_for("/") and time.monotonic() < deadline and first.poll() is None:
                time.sleep(0.05)
            assert site.requests_for("/"), "the first crawl never asked for /"
            second = subprocess.run(command, capture_output=True, text=True, timeout=300)
            assert second.returncode == 1
            assert second.stderr == (f"textpile: error: {db}: another crawl is running on this crawler database "
                                     f"(lock {db}.lock held by pid {first.pid})\n")
            assert second.stdout == ""
        finally:
            release.set()
            out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
        assert [r.path for r in site.log] == ["/robots.txt", "/"]
