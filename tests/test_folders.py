"""A folder's removal is never cut by a Ctrl+C into another error (textpile.folders).

Python 3.11's shutil.rmtree, interrupted between closing a folder's descriptor and noting
it, closed it again: ``OSError: Bad file descriptor`` replaced the KeyboardInterrupt
(seen once in test_sigint_at_several_moments: a summarize run ended with exit 1). Here a
Ctrl+C is raised at every line the removal runs in turn."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from textpile.folders import remove_folder


def _tree(root: Path) -> Path:
    folder = root / "batch"
    (folder / "inner" / "deeper").mkdir(parents=True)
    for name in ("a.parquet", "inner/b.parquet", "inner/deeper/c"):
        (folder / name).write_bytes(b"x" * 10)
    return folder


def _lines_run(folder: Path) -> int:
    """How many line events shutil's code runs to remove ``folder`` (it is removed)."""
    count = 0

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != __import__("shutil").__file__:
            return None

        def local(frame, event, arg):
            nonlocal count
            if event == "line":
                count += 1
            return local
        return local

    sys.settrace(tracer)
    try:
        remove_folder(folder)
    finally:
        sys.settrace(None)
    return count


def test_a_ctrl_c_at_any_line_of_the_removal_comes_as_keyboardinterrupt_after_it(tmp_path, sigint_default):
    lines = _lines_run(_tree(tmp_path / "count"))
    assert lines > 20
    import shutil
    outcomes, removed = [], []
    for at in range(1, lines + 1):
        folder = _tree(tmp_path / str(at))
        seen = 0

        def tracer(frame, event, arg):
            if frame.f_code.co_filename != shutil.__file__:
                return None

            def local(frame, event, arg):
                nonlocal seen
                if event == "line":
                    seen += 1
                    if seen == at:
                        signal.raise_signal(signal.SIGINT)
                return local
            return local

        sys.settrace(tracer)
        try:
            remove_folder(folder)
        except KeyboardInterrupt:
            outcomes.append("interrupted")
        except OSError as exc:
            outcomes.append(f"line {at}: {exc!r}")
        else:
            outcomes.append("not interrupted")
        finally:
            sys.settrace(None)
        removed.append(not folder.exists())
    # the removal ends, then the Ctrl+C comes: never an OSError in its place, never lost
    assert outcomes == ["interrupted"] * lines
    assert removed == [True] * lines


def test_a_missing_folder_is_an_oserror_naming_it_unless_errors_are_ignored(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        remove_folder(tmp_path / "nothing here")
    assert caught.value.filename == str(tmp_path / "nothing here")
    remove_folder(tmp_path / "nothing here", ignore_errors=True)
    assert list(tmp_path.iterdir()) == []
