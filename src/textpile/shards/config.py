"""The shard table: which shards there are, where their data folders are, which holds a site.

The table is a TOML file (``shards.toml``)::

    shards = ["a", "b", "c"]          # the shards sites are hashed over
    root = "data"                     # optional: data folders are <root>/<shard>/ (default:
                                      # the folder of this file); relative to this file
    [overrides]                       # optional: origin -> shard, winning over the hash;
    "https://big.example" = "big"     # a shard named only here holds only its sites
    [hosts]                           # optional: shard -> the host whose disk holds its
    a = "alpha"                       # folder (its Celery queue is textpile-<host>)
    [folders]                         # optional: shard -> its data folder, instead of
    a = "/srv/disk2/a"                # <root>/<shard> (relative to this file)

and, before the tables, optionally ``handoff_redis = "redis://alpha:6379/2"``: the Redis
database through which shards on different hosts hand links to each other
(:mod:`textpile.shards.mirror`; a database of its own, not the Celery broker's).

A site is an origin (``scheme://host:port``, as :attr:`textpile.store.urls.ParsedUrl.str_origin`
writes it: the port always explicit). Its shard is the override when there is one, else
the hashed shard with the highest rendezvous weight: the first 8 bytes of
``sha256(shard + "\\n" + origin)`` as a big-endian number (highest-random-weight hashing,
Thaler and Ravishankar 1998). The weight depends on nothing but the two names, so the
assignment is stable across processes, machines and Python versions, and adding a shard
moves only the sites the new shard wins (about 1/n of them).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from textpile.errors import ConfigError
from textpile.toml_file import read_toml
from textpile.store.urls import UrlError, parse_url

#: What a shard name may be: it names a folder, a Dagster asset key prefix and a pool.
SHARD_NAME = re.compile(r"[a-z0-9][a-z0-9_]{0,39}")
#: The keys of a shard table file.
_KEYS = ("shards", "root", "overrides", "hosts", "folders", "handoff_redis")
#: The Celery queue of a host's workers is this prefix and the host name.
QUEUE_PREFIX = "textpile-"


def site_of(url: str) -> str:
    """The site (origin) of ``url``, as ``scheme://host:port``.

    Raises:
        ConfigError: ``url`` is no absolute http(s) URL (the message names it).
    """
    try:
        parsed = parse_url(url)
    except UrlError as exc:
        raise ConfigError(f"{url!r}: not a URL ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(f"{url!r}: expected an http(s) URL with a host")
    return parsed.str_origin


def rendezvous_weight(shard: str, site: str) -> int:
    """The weight of ``site`` (an origin as :func:`site_of` gives it) on ``shard``: the
    first 8 bytes of ``sha256(shard + "\\n" + site)``, big-endian (0 .. 2**64-1)."""
    return int.from_bytes(hashlib.sha256(f"{shard}\n{site}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Shards:
    """A loaded shard table (see the module docstring for the file)."""

    hashed: tuple[str, ...]
    root: Path
    overrides: Mapping[str, str] = field(default_factory=dict)
    hosts: Mapping[str, str] = field(default_factory=dict)
    folders: Mapping[str, Path] = field(default_factory=dict)
    source: Path | None = None
    #: the Redis URL of the hand-offs between hosts (None: shards read each other's files)
    handoff_redis: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Every shard: the hashed ones in table order, then those only overrides name, sorted."""
        dedicated = sorted(set(self.overrides.values()) - set(self.hashed))
        return (*self.hashed, *dedicated)

    def shard_of(self, url: str) -> str:
        """The shard holding the site of ``url`` (the override, else the rendezvous hash).

        Raises:
            ConfigError: ``url`` is no http(s) URL.
        """
        site = site_of(url)
        if site in self.overrides:
            return self.overrides[site]
        return max(self.hashed, key=lambda shard: (rendezvous_weight(shard, site), shard))

    def folder(self, shard: str) -> Path:
        """The data folder of ``shard``: its ``[folders]`` entry, else ``<root>/<shard>``.

        Raises:
            ConfigError: no such shard in the table.
        """
        self.check(shard)
        return self.folders.get(shard, self.root / shard)

    def queue(self, shard: str) -> str | None:
        """The Celery queue of the host holding ``shard`` (``textpile-<host>``), or None
        when the table names no host for it."""
        self.check(shard)
        host = self.hosts.get(shard)
        return None if host is None else QUEUE_PREFIX + host

    def check(self, shard: str) -> str:
        """``shard`` when the table has it.

        Raises:
            ConfigError: it has not (the message lists the shards there are).
        """
        if shard not in self.names:
            where = f" in {self.source}" if self.source else ""
            raise ConfigError(f"no shard {shard!r}{where}; the shards are {', '.join(self.names)}")
        return shard

    def seeds_by_shard(self, seeds: Iterable[str]) -> dict[str, list[str]]:
        """``seeds`` split by the shard holding each one's site, in the given order; every
        shard is a key (with an empty list when no seed is its)."""
        split: dict[str, list[str]] = {name: [] for name in self.names}
        for seed in seeds:
            split[self.shard_of(seed)].append(seed)
        return split


def _name(path: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not SHARD_NAME.fullmatch(value):
        raise ConfigError(f"{path}: {key}: found {value!r}; expected a shard name of 1 to 40 lowercase "
                          "letters, digits or _ (starting with a letter or digit)")
    return value


def _table(path: Path, key: str, value: object) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key}: expected a table")
    return value


def _check_redis_url(path: Path, url: object) -> None:
    """Raise ConfigError unless ``url`` is a Redis URL as redis-py reads it, its database
    (the path of a redis:// or rediss:// URL) a number when given."""
    expected = "expected a Redis URL (redis://host:port/db, rediss://... or unix://...)"
    if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"{path}: handoff_redis: found {url!r}; {expected}")
    from urllib.parse import urlsplit

    from redis.connection import parse_url

    try:
        parse_url(url)
        db = urlsplit(url).path.strip("/") if not url.startswith("unix://") else ""
    except ValueError as exc:
        raise ConfigError(f"{path}: handoff_redis: {url!r}: {exc}; {expected}") from None
    if db and not db.isdigit():
        raise ConfigError(f"{path}: handoff_redis: {url!r}: the database {db!r} is no number; {expected}")


def load_shards(path: str | Path) -> Shards:
    """Read and check a shard table file.

    Raises:
        ConfigError: the file is unreadable or no TOML; an unknown key; ``shards`` missing,
            empty, with a duplicate or a bad name; an override key that is no http(s)
            origin (or names a path), or two spellings of one origin; a ``hosts`` or
            ``folders`` entry for an unknown shard, an empty host or folder, two shards
            with one folder; a ``handoff_redis`` that is no Redis URL. Each message names
            the file and key.
    """
    path = Path(path)
    data = read_toml(path, "shard table")
    for key in data:
        if key not in _KEYS:
            raise ConfigError(f"{path}: unknown key {key!r}; expected one of {', '.join(_KEYS)}")
    hashed = data.get("shards")
    if not isinstance(hashed, list) or not hashed:
        raise ConfigError(f"{path}: shards: expected a non-empty array of shard names")
    names = [_name(path, f"shards[{i}]", value) for i, value in enumerate(hashed)]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: shards: a shard is named twice")
    root = data.get("root", ".")
    if not isinstance(root, str) or not root:
        raise ConfigError(f"{path}: root: expected a folder path")
    overrides: dict[str, str] = {}
    for key, value in _table(path, "overrides", data.get("overrides", {})).items():
        try:
            site = site_of(key)
        except ConfigError as exc:
            raise ConfigError(f"{path}: overrides: {exc}") from None
        parsed = parse_url(key)
        if parsed.path not in ("", "/") or parsed.query is not None:
            raise ConfigError(f"{path}: overrides.{key!r}: expected an origin (scheme://host[:port]), not a URL")
        if site in overrides:
            raise ConfigError(f"{path}: overrides: {site} is given twice")
        overrides[site] = _name(path, f"overrides.{key!r}", value)
    known = set(names) | set(overrides.values())
    hosts: dict[str, str] = {}
    for key, value in _table(path, "hosts", data.get("hosts", {})).items():
        if key not in known:
            raise ConfigError(f"{path}: hosts.{key}: no such shard; the shards are {', '.join(sorted(known))}")
        if not isinstance(value, str) or not value or any(c.isspace() for c in value):
            raise ConfigError(f"{path}: hosts.{key}: expected a host name without spaces")
        hosts[key] = value
    folders: dict[str, Path] = {}
    for key, value in _table(path, "folders", data.get("folders", {})).items():
        if key not in known:
            raise ConfigError(f"{path}: folders.{key}: no such shard; the shards are {', '.join(sorted(known))}")
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: folders.{key}: expected a folder path")
        folders[key] = (path.parent / value).resolve()
    if len(set(folders.values())) != len(folders):
        raise ConfigError(f"{path}: folders: two shards share a folder")
    redis_url = data.get("handoff_redis")
    if redis_url is not None:
        _check_redis_url(path, redis_url)
    return Shards(hashed=tuple(names), root=(path.parent / root).resolve(), overrides=overrides, hosts=hosts,
                  folders=folders, source=path, handoff_redis=redis_url)
