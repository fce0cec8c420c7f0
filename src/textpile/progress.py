"""Progress display for long jobs: a rich progress bar on stderr, or nothing.

Every long job (crawl, summarize, publish) takes ``progress: bool`` and uses
:func:`progress_bar`; the Dagster layer passes ``False`` and reports through metadata.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


class _NoProgress:
    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """Do nothing."""

    def update_total(self, total: float | None) -> None:
        """Do nothing."""


class _RichProgress:
    def __init__(self, progress, task_id) -> None:
        self._progress = progress
        self._task = task_id

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        """Move the bar by ``amount`` and optionally change its description."""
        kwargs = {"description": description} if description else {}
        self._progress.update(self._task, advance=amount, **kwargs)

    def update_total(self, total: float | None) -> None:
        """Change the bar's total (None: unknown, shows a pulsing bar)."""
        self._progress.update(self._task, total=total)


@contextlib.contextmanager
def progress_bar(description: str, total: float | None = None, *, enabled: bool = True) -> Iterator[_RichProgress | _NoProgress]:
    """Yield an object with ``advance(n, description=None)`` and ``update_total(total)``.

    When ``enabled`` is false or stderr is not a terminal-capable stream, the display is
    still shown by rich in its plain form only if enabled; disabled yields a no-op.
    """
    if not enabled:
        yield _NoProgress()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task_id = progress.add_task(description, total=total)
        yield _RichProgress(progress, task_id)
