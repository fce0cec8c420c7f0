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


HEAP = """
import resource, sys
from textpile.processes import keep_freed_memory
if sys.argv[1] == "keep":
    print(keep_freed_memory(32 * 1024 * 1024, 64 * 1024 * 1024))
def tree():  # like a parsed page: 40 blocks of 1 MiB, every page touched, then freed
    blocks = [bytearray(1024 * 1024) for _ in range(40)]
    del blocks
tree()  # the first tree's pages are faulted in either way
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    tree()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def test_freed_memory_is_kept_for_the_next_big_structure():
    pages = 40 * 1024 * 1024 // os.sysconf("SC_PAGE_SIZE")
    default = subprocess.run([sys.executable, "-c", HEAP, "default"], capture_output=True, text=True, timeout=120)
    kept = subprocess.run([sys.executable, "-c", HEAP, "keep"], capture_output=True, text=True, timeout=120)
    assert default.returncode == 0 and kept.returncode == 0, default.stderr + kept.stderr
    # By default glibc gives the freed 40 MiB back to the system (beyond its trim
    # threshold) and every later tree faults its pages in again; kept, they are reused.
    assert int(default.stdout) >= 5 * pages * 0.9
    flag, faults = kept.stdout.split()
    assert flag == "True"
    assert int(faults) < pages / 10


SLOW_PRELOAD = """
import os, time
open(os.path.join(os.path.dirname(__file__), "importing"), "w").close()
deadline = time.monotonic() + 300
while not os.path.exists(os.path.join(os.path.dirname(__file__), "go")) and time.monotonic() < deadline:
    time.sleep(0.02)
"""

FORKSERVER_OWNER = """
import signal, time
signal.signal(signal.SIGINT, lambda signum, frame: None)  # this process lives on; the forkserver has the default
from textpile.processes import forkserver_context
context = forkserver_context(["slow_preload"])
worker = context.Process(target=time.sleep, args=(0,))
worker.start()
worker.join()
print(worker.exitcode, flush=True)
"""


def test_a_ctrl_c_while_the_forkserver_imports_its_modules_is_not_its_to_handle(tmp_path):
    """Ctrl+C (SIGINT to the whole process group) while the forkserver imports its preload
    modules: no KeyboardInterrupt traceback of the forkserver's (it was printed, and the
    forkserver died), and workers start from it afterwards."""
    (tmp_path / "slow_preload.py").write_text(SLOW_PRELOAD)
    # PYTHONPATH: Python 3.11's forkserver imports its modules with its own sys.path
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    owner = subprocess.Popen([sys.executable, "-c", FORKSERVER_OWNER], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / "importing").exists() and time.monotonic() < deadline and owner.poll() is None:
            time.sleep(0.02)
        assert (tmp_path / "importing").exists(), owner.communicate(timeout=60)
        os.killpg(owner.pid, signal.SIGINT)
        time.sleep(0.2)  # the signal is delivered at once; a little time for a handler to run
        (tmp_path / "go").touch()
        out, err = owner.communicate(timeout=300)
    finally:
        if owner.poll() is None:
            os.killpg(owner.pid, signal.SIGKILL)
    assert (owner.returncode, out) == (0, "0\n"), err
    assert err == ""


PENDING = """
import os, signal
import multiprocessing.forkserver
signal.signal(signal.SIGINT, signal.default_int_handler)
multiprocessing.forkserver.ensure_running = lambda: os.kill(os.getpid(), signal.SIGINT)
from textpile.processes import forkserver_context
try:
    forkserver_context([])
except KeyboardInterrupt:
    print("interrupted", signal.getsignal(signal.SIGINT) is signal.default_int_handler,
          signal.pthread_sigmask(signal.SIG_BLOCK, []) == set())
"""


def test_a_ctrl_c_while_the_forkserver_starts_is_handled_after(tmp_path):
    """A Ctrl+C that comes while the forkserver is started (SIGINT is ignored then, for
    it to inherit) is not lost: it reaches this process's handler once that is back."""
    done = subprocess.run([sys.executable, "-c", PENDING], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "interrupted True True\n", "")
