"""Reading a TOML file that a user wrote: the crawl configuration, the shard table and the
settings files of ``textpile serve`` and ``textpile search``, with one error per way the
file can be wrong, naming it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from textpile.errors import ConfigError


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """The TOML table of the file at ``path``, whose content ``what`` names in errors
    ("configuration file", "shard table"). A UTF-8 byte order mark (written by some
    Windows editors) is skipped.

    Raises:
        ConfigError: the file cannot be read (``PATH: cannot read the WHAT: reason``), is
            not UTF-8 text or not TOML (``PATH: invalid TOML: ...``).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc}); expected a TOML file") from None
    try:
        return tomllib.loads(text[1:] if text.startswith("\ufeff") else text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
