"""Clean stops of `textpile pipeline` (issue 31): Ctrl+C (once, twice) and SIGTERM at each
stage end every process of the pipeline, the forkserver and its workers included, with
one message, no traceback, and exit status 130 (Ctrl+C) or 143 (SIGTERM); the run's work is
kept for the next pipeline. A pipeline that does not stop is ended with SIGKILL by its
supervisor (textpile.cli.pipeline_supervisor) rather than left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_config
from dagster_sites import page
from kills import killable_env, processes_of
from sites import Response, SiteServer
from textpile.cli.pipeline import STEPS

TEXTPILE = str(Path(sys.executable).with_name("textpile"))
#: Generous: the supervisor ends everything within 10 s of the signal by construction.
ENDS_WITHIN_S = 120


def _site() -> SiteServer:
    """40 pages of 400 words each: every stage lasts long enough to be interrupted in."""
    pages = [f"/p{i}.html" for i in range(40)]
    routes = {"/robots.txt": Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
              "/": Response(200, page("Index", "The index of the pages.", pages))}
    for i, path in enumerate(pages):
        routes[path] = Response(200, page(f"Page {i}", " ".join(f"wombat{i} quoll{j}" for j in range(400)), ["/"]))
    return SiteServer(routes)


def _as_a_terminal_starts_it() -> None:
    """In the child before it runs textpile: SIGINT's default action, as a shell gives a
    foreground command (one started with & by a shell without job control, such as a CI
    step's `scripts/test &`, inherits SIGINT ignored, and textpile leaves an ignored
    signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_at(tmp_path: Path, stage: str, stop) -> tuple[int, str, list, float]:
    """Run `textpile pipeline` as a terminal would (its own process group), call
    ``stop(pid)`` when ``stage`` starts; return (exit status, stderr, processes left,
    seconds from the stop to the end of `textpile pipeline`)."""
    env = killable_env(tmp_path)
    with _site() as site:
        config = write_config(tmp_path / "crawl.toml", [site.base_url + "/"], max_commands=100)
        proc = subprocess.Popen([TEXTPILE, "pipeline", "--config", str(config), "--data-dir", str(tmp_path / "data"),
                                 "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=tmp_path, start_new_session=True, preexec_fn=_as_a_terminal_starts_it)
        lines = []
        stopped_at = None
        try:
            for line in proc.stderr:
                lines.append(line)
                if line.startswith(f"[{STEPS.index(stage) + 1}/{len(STEPS)}] {stage} ..."):
                    stopped_at = time.monotonic()
                    stop(proc.pid)
                    break
            assert stopped_at is not None, "".join(lines)  # (the stage began)
            _out, rest = proc.communicate(timeout=ENDS_WITHIN_S)
            seconds = time.monotonic() - stopped_at
            left = processes_of(tmp_path)  # the supervisor waited for every process it started
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            for pid, _cmd in processes_of(tmp_path):
                os.kill(pid, signal.SIGKILL)
    return proc.returncode, "".join(lines) + rest, left, seconds


def _ctrl_c_twice(pid: int) -> None:
    os.killpg(pid, signal.SIGINT)  # as a terminal sends it: to the foreground process group
    time.sleep(0.3)
    os.killpg(pid, signal.SIGINT)


@pytest.mark.parametrize("stage", STEPS)
@pytest.mark.parametrize(("how", "status", "message"), [
    ("sigterm", 143, "textpile: stopped by SIGTERM\n"),
    ("ctrl_c_twice", 130, "textpile: interrupted\n"),
])
def test_a_stop_at_each_stage_ends_everything_with_one_message(tmp_path, stage, how, status, message):
    stop = (lambda pid: os.kill(pid, signal.SIGTERM)) if how == "sigterm" else _ctrl_c_twice
    returncode, err, left, seconds = _stop_at(tmp_path, stage, stop)
    print(f"{how} at {stage}: ended {seconds:.1f} s after the signal, exit {returncode}")  # (figures with -s)
    assert returncode == status, err
    assert left == []
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.endswith(message) and [line for line in err.splitlines() if line.startswith("textpile: ")] == [
        message.strip()], err
    interrupted = [line for line in err.splitlines() if "interrupted during" in line]
    assert len(interrupted) <= 1, err
    if interrupted:  # (a stage that ended just before the signal came lets the next one be interrupted)
        during = interrupted[0].split("interrupted during ")[1].split(" ")[0]
        assert STEPS.index(during) >= STEPS.index(stage), err
        assert interrupted[0].endswith("what was done is kept, and the next textpile pipeline resumes from there")


def test_a_pipeline_that_does_not_stop_is_ended(tmp_path):
    """The supervisor's last resort, with a child that ignores the signal."""
    script = tmp_path / "stubborn.py"
    script.write_text("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      "print('ready', flush=True)\ntime.sleep(600)\n", "utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import sys\nfrom textpile.cli import pipeline_supervisor as s\n"
        "s.STOP_GRACE_S = 2.0\n"
        f"import subprocess\nreal = subprocess.Popen\n"
        f"def popen(argv, **kw):\n    return real([sys.executable, {str(script)!r}], **kw)\n"
        "s.subprocess.Popen = popen\nsys.exit(s.supervise(['pipeline']))\n", "utf-8")
    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=killable_env(tmp_path), start_new_session=True)
    assert proc.stdout.readline() == "ready\n"
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=ENDS_WITHIN_S)
    assert proc.returncode == 143
    assert err == ("textpile pipeline: did not stop within 2 s of the signal; its processes were ended (SIGKILL); "
                   "the next textpile pipeline resumes from there\ntextpile: stopped by SIGTERM\n")
    assert processes_of(tmp_path) == []
