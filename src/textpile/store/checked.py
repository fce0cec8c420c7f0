"""Database files that passed ``PRAGMA quick_check``, remembered per file version.

``PRAGMA quick_check`` reads every page of a database: about 1 s per GB (2.2 s for the
1.6 GB search benchmark index), which ``textpile search`` would pay on every search of a
large index. A file version that passed is remembered in the user's cache folder
(``$XDG_CACHE_HOME/textpile``, else ``~/.cache/textpile``; read when called, never at
import), so the next search of the same version does not check it again. A version is
the file's device, inode, size and modification time and those of its ``-wal`` file: a
summarize, a publish or a copy over it is a new version, checked again. A damaged file is
never remembered, so it is named in a warning every time. When the cache folder cannot
be written, nothing is remembered and every search checks (never fewer checks).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

#: The file in the cache folder that lists the versions that passed, one key a line.
CHECKED_FILE = "quick-checked"
#: Versions remembered at most (the oldest are forgotten first).
MAX_REMEMBERED = 200


def cache_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder textpile remembers checks in: ``$XDG_CACHE_HOME/textpile``, else
    ``~/.cache/textpile`` (``environ``: ``os.environ`` when None)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "textpile"


def file_version(path: str | os.PathLike) -> str:
    """The key of the current version of the database file ``path`` (hex SHA-256 of its
    resolved path, device, inode, size and modification time in ns, and its ``-wal``
    file's size and time when there is one and it is not empty).

    Raises:
        OSError: ``path`` cannot be looked at.
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    parts = [real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    try:
        wal = os.stat(real + "-wal")
    except FileNotFoundError:
        wal = None
    if wal is None or wal.st_size == 0:  # an empty -wal (a reader made it) holds nothing
        parts.append("-")
    else:
        parts += [wal.st_size, wal.st_mtime_ns]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def passed_before(key: str, folder: Path | None = None) -> bool:
    """Whether the file version ``key`` (:func:`file_version`) passed a check that
    :func:`remember_passed` kept."""
    folder = cache_folder() if folder is None else folder
    try:
        return key in (folder / CHECKED_FILE).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):  # no cache (yet), or an unreadable one: check
        return False


def remember_passed(key: str, folder: Path | None = None) -> bool:
    """Remember that the file version ``key`` (taken before the check ran) passed; return
    whether it could be (a cache folder that cannot be written leaves the next search to
    check again)."""
    folder = cache_folder() if folder is None else folder
    target = folder / CHECKED_FILE
    try:
        try:
            keys = target.read_text(encoding="ascii").split()
        except (FileNotFoundError, UnicodeDecodeError):
            keys = []
        keys = [k for k in keys if k != key][-(MAX_REMEMBERED - 1):] + [key]
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{CHECKED_FILE}.{os.getpid()}.tmp"
        tmp.write_text("\n".join(keys) + "\n", encoding="ascii")
        os.replace(tmp, target)  # whole, never half written: concurrent searches each write a full list
        return True
    except OSError:
        return False
