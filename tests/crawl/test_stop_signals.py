"""run_event_loop: SIGTERM (and Ctrl+C in a Dagster step, whose handler is not Python's
default) cancels the crawl's task, as asyncio does for Ctrl+C, instead of raising
KeyboardInterrupt inside whichever callback of the loop was running: a callback cut in
two left the crawler database's job queue busy, and a crawl stopped by SIGTERM waited
forever (seen once, in a full test run, with SIGTERM sent to the crawl's process group)."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from textpile.crawl.loop.run import run_event_loop
from textpile.signals import TerminateAsInterrupt, keyboard_interrupt_on


async def _stopped_by(signum: int, steps: list[str]) -> str:
    def callback():  # a step of the loop's that must not be cut in two
        steps.append("callback starts")
        os.kill(os.getpid(), signum)
        steps.append("callback ends")

    asyncio.get_running_loop().call_later(0.05, callback)
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError:
        steps.append("cancelled")
        await asyncio.sleep(0.01)  # the clean stop still runs on the loop
        steps.append("stopped cleanly")
    return "returned"


def test_sigterm_cancels_the_task_and_then_reaches_its_handler():
    steps: list[str] = []
    with TerminateAsInterrupt() as signals:
        with pytest.raises(KeyboardInterrupt):
            run_event_loop(_stopped_by(signal.SIGTERM, steps))
        assert signals.terminated
    assert steps == ["callback starts", "callback ends", "cancelled", "stopped cleanly"]


def test_ctrl_c_with_a_frameworks_handler_cancels_the_task_too():
    steps: list[str] = []
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored
    try:
        with keyboard_interrupt_on():
            with pytest.raises(KeyboardInterrupt):
                run_event_loop(_stopped_by(signal.SIGINT, steps))
    finally:
        signal.signal(signal.SIGINT, before)
    assert steps == ["callback starts", "callback ends", "cancelled", "stopped cleanly"]
