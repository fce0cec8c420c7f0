"""textpile.processes: telling a live process from a dead one, and workers that end with
the process that owns them (issue 12: leftovers of killed runs)."""

import os
import signal
import subprocess
import sys
import time

from textpile.processes import process_alive, process_start_unix, this_process


def test_process_alive():
    me = this_process()
    assert me.pid == os.getpid() and me.started_unix is not None
    assert abs(process_start_unix(me.pid) - me.started_unix) < 0.01
    assert process_alive(me.pid, started_unix=me.started_unix, host=me.host) is True
    assert process_alive(me.pid, started_unix=me.started_unix - 60) is False  # the pid reused by another
    assert process_alive(me.pid, host="elsewhere.invalid") is None
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 120
    while process_alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_alive(child.pid) is False  # a zombie (not reaped yet) counts as dead
    child.wait()
    assert process_alive(child.pid) is False
    assert process_alive(0) is False


OWNER = """
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", '''
import os, sys, time
from textpile.processes import exit_with_parent
exit_with_parent(int(sys.argv[1]), float(sys.argv[2]), interval_s=0.1)
print("watching", flush=True)
time.sleep(600)
''', sys.argv[1], sys.argv[2]], stdout=sys.stdout)
print(worker.pid, flush=True)
time.sleep(600)
"""


def test_a_worker_ends_when_its_owner_is_killed():
    owner = subprocess.Popen([sys.executable, "-c", "import os, sys, subprocess\n"
                              "from textpile.processes import this_process\n"
                              "me = this_process()\n"
                              f"os.execv(sys.executable, [sys.executable, '-c', {OWNER!r}, str(me.pid), "
                              "str(me.started_unix)])"], stdout=subprocess.PIPE, text=True)
    worker_pid = int(owner.stdout.readline())
    assert owner.stdout.readline() == "watching\n"
    assert process_alive(worker_pid) is True
    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=60)
    deadline = time.monotonic() + 60
    while process_alive(worker_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_alive(worker_pid) is False


NAMED = """
import sys
from textpile.processes import name_this_process
print(name_this_process(sys.argv[1]), flush=True)
print(open("/proc/self/comm").read().strip(), flush=True)
"""


def test_a_worker_is_named_by_its_role():
    done = subprocess.run([sys.executable, "-c", NAMED, "textpile-reader-with-a-long-name"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "textpile-reader"]  # cut to the 15 characters Linux keeps

