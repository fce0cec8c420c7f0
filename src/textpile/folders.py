"""Removing a folder and what it holds without a Ctrl+C turning into another error.

Python 3.11's :func:`shutil.rmtree` closes each folder's file descriptor and then notes
that it did; a Ctrl+C (or the SIGTERM the CLI turns into one) landing between the two
makes its cleanup close the descriptor a second time: ``OSError: [Errno 9] Bad file
descriptor`` replaces the KeyboardInterrupt (a summarize run then ended with exit 1 and
"textpile: error: Bad file descriptor" instead of 130), and when another thread had
opened a file in the meantime, that file's descriptor was the one closed. Removals run
here with interruptions deferred to the end of the removal
(:func:`textpile.signals.interruptions_deferred`), which takes milliseconds for the
folders textpile removes (a batch's staging files, a run's temporary folder).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from textpile.signals import interruptions_deferred


def remove_folder(path: str | Path, *, ignore_errors: bool = False) -> None:
    """Remove the folder ``path`` with everything in it (:func:`shutil.rmtree`); a Ctrl+C
    or SIGTERM that comes meanwhile is raised once the removal ended (main thread).

    Raises:
        OSError: ``path`` is missing, not a folder, or something in it cannot be
            removed (never with ``ignore_errors``).
    """
    with interruptions_deferred():
        shutil.rmtree(path, ignore_errors=ignore_errors)
