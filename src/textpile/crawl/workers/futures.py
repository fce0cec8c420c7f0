"""Passing the outcome of work done in an executor to the future a caller awaits."""

from __future__ import annotations

import asyncio


def pass_outcome(work: asyncio.Future, future: asyncio.Future) -> None:
    """Give ``future`` the outcome of the finished ``work``: cancelled, its exception, or its
    result. ``future`` must not be done (asyncio.InvalidStateError otherwise)."""
    if work.cancelled():
        future.cancel()
    elif work.exception() is not None:
        future.set_exception(work.exception())
    else:
        future.set_result(work.result())
