"""Hand-offs between hosts: each shard's outbox and read positions mirrored in Redis.

On one machine a shard's crawl reads every other shard's crawler database, read only
(:mod:`textpile.shards.handoff`). A shard on another host has no file here: with
``handoff_redis`` in the shard table (:mod:`textpile.shards.config`), each shard's crawl,
once it ended (after its pruning), mirrors into that Redis database what the others read
of its file (:func:`publish`):

* its outbox, a stream per shard addressed, ``textpile:handoff:<from>:to:<to>``, each row
  an entry whose id is its handoff_id (``<handoff_id>-1``), with the fields ``url``,
  ``kind``, ``via`` and ``depth`` ('' for none); rows its pruning deleted are deleted from
  it;
* what that outbox is of, the hash ``textpile:handoff:<from>:outbox``: ``first_agent``
  (the hex agent_uuid of the database's first crawl run: a database made anew has
  another) and ``last`` (its largest handoff_id);
* how far it took in the others' outboxes, the hash ``textpile:handoff:<to>:taken``, a
  field per shard read: ``"<last_handoff_id> <first_agent hex of that shard's database>"``.

All of a shard's mirror is written in one MULTI/EXEC transaction, so a reader sees the
mirror of one crawl run whole. The crawler database stays the record: a Redis database
that was emptied is filled again by each shard's next crawl (until then the rows wait, as
for an unread shard), and a crash before the mirror is written leaves the one before.
Another shard whose crawler database is not a file here is read from its mirror
(:class:`MirroredOutbox`, :func:`taken_position`). A crawl that pruned nothing of its
outbox adds its new rows without reading the streams (:func:`publish`).

Left as one host does it not: a shard whose crawler database was made anew on its host
is seen by the others as its last mirror says until its next crawl mirrors it (on one
host they would see no file, and keep every outbox row addressed to it), so an outbox row
it had taken in and that nothing leads to any more but a row forwarded there may be pruned
in that time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from textpile.crawl.crawldb.sql import CrawlStore
from textpile.errors import TextpileError

#: Every key of the mirror starts with this.
PREFIX = "textpile:handoff:"


class MirrorError(TextpileError):
    """The Redis database of the hand-offs could not be reached or answered wrongly (the
    message names its URL)."""


def _stream(source: str, to: str) -> str:
    return f"{PREFIX}{source}:to:{to}"


def _outbox(source: str) -> str:
    return f"{PREFIX}{source}:outbox"


def _taken(reader: str) -> str:
    return f"{PREFIX}{reader}:taken"


def connect(url: str):
    """A Redis client of ``url`` (nothing is sent yet).

    Raises:
        MirrorError: ``url`` is no Redis URL.
    """
    import redis

    try:
        return redis.Redis.from_url(url, decode_responses=True, socket_timeout=30, socket_connect_timeout=10)
    except ValueError as exc:
        raise MirrorError(f"handoff_redis {url!r}: {exc}") from None


class _Calls:
    """Turns the Redis client's errors into :class:`MirrorError` naming ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        import redis

        if isinstance(exc, redis.exceptions.RedisError):
            raise MirrorError(f"the hand-offs' Redis database {self.url}: {exc}") from None
        return False


@dataclass(frozen=True)
class Published:
    """What :func:`publish` wrote: outbox rows added to and deleted from the streams."""

    added: int
    deleted: int


def publish(client, url: str, store: CrawlStore, shard: str, others: list[str]) -> Published:
    """Mirror the outbox and read positions of ``shard``'s crawler database ``store``
    (module docstring) for the shards ``others`` (and any shard a row or a stream of it is
    addressed to, in the table or not), in one transaction.

    Each stream's rows are kept with a digest in the outbox hash (``digest:<to>``). When
    the outbox rows up to the stream's newest id still have that digest, only the rows
    after it are added (a crawl that pruned nothing reads no stream). Otherwise the
    stream is read and compared, entry by entry: the rows pruned since are deleted from
    it; a stream that does not hold the outbox's rows as they are (an entry of another
    database under a row's id, a row missing below its newest id) is made again, as is
    every stream of a database made anew.

    Raises:
        MirrorError: Redis could not be reached or refused it (the mirror before stays).
        sqlite3.Error: ``store``'s database could not be read.
    """
    identity = (store.first_agent_uuid() or b"").hex()
    rows = [(i, to, _fields(str_url, kind, via, depth)) for i, to, str_url, kind, via, depth in store.conn.execute(
        "SELECT handoff_id, shard, str_url, kind, found_via, depth FROM textpile_handoff WHERE shard != ''"
        " ORDER BY handoff_id")]
    positions = store.conn.execute(
        "SELECT t.from_shard, t.last_handoff_id, s.first_agent_uuid FROM textpile_handoff_taken t"
        " LEFT JOIN textpile_handoff_source s USING (from_shard)").fetchall()
    added = deleted = 0
    with _Calls(url):
        meta = client.hgetall(_outbox(shard))
        made_anew = meta.get("first_agent") not in (None, identity)
        pipe = client.pipeline(transaction=True)
        existing = _streams(client, shard)
        if made_anew:  # every stream of the database before, to shards in the table or not
            for key in existing:
                pipe.delete(key)
        digests = {}
        held_to = {key[len(_stream(shard, "")):] for key in existing}
        # the table's shards, and any other shard a row or a stream is addressed to (one that
        # left the table: its rows are mirrored as its file holds them, its stream kept in step)
        for to in sorted(set(others) | {row_to for _, row_to, _ in rows} | held_to):
            key = _stream(shard, to)
            want = [(i, fields) for i, row_to, fields in rows if row_to == to]
            top = 0 if made_anew else _top_id(client, key)
            before = [(i, fields) for i, fields in want if i <= top]
            if made_anew or (top and _digest(before) != meta.get(f"digest:{to}")):
                held = {} if made_anew else {_entry_id(key, entry_id): fields
                                             for entry_id, fields in client.xrange(key)}
                if made_anew or any(held.get(i) != fields for i, fields in before):
                    pipe.delete(key)  # made again, from the outbox
                    top = 0
                else:
                    gone = sorted(set(held) - {i for i, _ in before})
                    if gone:
                        pipe.xdel(key, *(f"{i}-1" for i in gone))
                        deleted += len(gone)
            for i, fields in want:
                if i > top:
                    pipe.xadd(key, fields, id=f"{i}-1")
                    added += 1
            digests[f"digest:{to}"] = _digest(want)
        pipe.delete(_outbox(shard))
        pipe.hset(_outbox(shard), mapping={"first_agent": identity, "last": str(store.last_handoff_id()), **digests})
        pipe.delete(_taken(shard))  # (positions of outboxes this database no longer reads go)
        if positions:
            pipe.hset(_taken(shard), mapping={source: f"{position} {(of or b'').hex()}"
                                              for source, position, of in positions})
        pipe.execute()
    return Published(added, deleted)


def _fields(str_url: str, kind: str | None, via: str | None, depth: int | None) -> dict[str, str]:
    """A row's stream entry fields, as Redis gives them back."""
    return {"url": str_url, "kind": kind or "", "via": via or "", "depth": "" if depth is None else str(depth)}


def _digest(rows: list[tuple[int, dict[str, str]]]) -> str:
    """A digest of stream rows ``(handoff_id, fields)``, in order."""
    h = hashlib.blake2b(digest_size=16)
    for i, fields in rows:
        h.update(f"{i}\x00{fields['url']}\x00{fields['kind']}\x00{fields['via']}\x00{fields['depth']}\x01".encode(
            "utf-8", "surrogatepass"))
    return h.hexdigest()


def _streams(client, source: str) -> list[str]:
    """The keys of every stream of shard ``source``'s mirror (shard names hold no glob
    characters)."""
    return sorted(client.scan_iter(match=_stream(source, "*"), count=1000))


def _top_id(client, key: str) -> int:
    """The largest handoff_id a stream ever held (its last generated entry id; 0: none)."""
    import redis

    try:
        info = client.xinfo_stream(key)
    except redis.exceptions.ResponseError:  # no such key
        if client.exists(key):
            raise
        return 0
    return _entry_id(key, info["last-generated-id"])


def _entry_id(key: str, entry_id: str) -> int:
    """The handoff_id of a stream entry id (``<handoff_id>-1``).

    Raises:
        MirrorError: it is no such id.
    """
    try:
        return int(entry_id.split("-")[0])
    except ValueError:
        raise MirrorError(f"{key}: entry {entry_id!r} is no outbox row") from None


class MirroredOutbox:
    """The outbox of shard ``source`` as its mirror holds it, read as
    :func:`textpile.shards.handoff.take_handoffs` reads a crawler database's:
    ``published`` (whether a crawl of it mirrored it yet), ``last`` (its largest
    handoff_id) and ``identity`` (its database's first agent_uuid).

    Raises (from the constructor):
        MirrorError: Redis could not be reached, or the mirror is not one.
    """

    def __init__(self, client, url: str, source: str) -> None:
        self.client, self.url, self.source = client, url, source
        with _Calls(url):
            meta = client.hgetall(_outbox(source))
        self.published = bool(meta)
        try:
            self.last = int(meta.get("last") or 0)
            self.identity = bytes.fromhex(meta["first_agent"]) if meta.get("first_agent") else None
        except ValueError:
            raise MirrorError(f"the hand-offs' Redis database {url}: {_outbox(source)} is no outbox mirror "
                              f"({meta!r})") from None

    def rows(self, to: str, after: int, upto: int, limit: int) -> list[tuple]:
        """(handoff_id, str_url, kind, found_via, depth) of the rows addressed to ``to``
        with a handoff_id above ``after`` and up to ``upto``, at most ``limit``, in order."""
        key = _stream(self.source, to)
        with _Calls(self.url):
            entries = self.client.xrange(key, min=f"{after + 1}-0", max=f"{upto}-1", count=limit)
        try:
            return [(_entry_id(key, entry_id), f["url"], f["kind"] or None, f["via"] or None,
                     int(f["depth"]) if f["depth"] else None) for entry_id, f in entries]
        except (KeyError, ValueError):
            raise MirrorError(f"the hand-offs' Redis database {self.url}: {key} holds an entry that is no outbox "
                              "row") from None

    def urls(self, shards: list[str] | None = None) -> list[str]:
        """Every URL of the rows addressed to any of ``shards`` (None: to any shard, also
        one that left the table), in the order of the shards, then of the rows.

        Raises:
            MirrorError: Redis could not be reached, or an entry is no outbox row.
        """
        out = []
        with _Calls(self.url):
            keys = _streams(self.client, self.source) if shards is None else [_stream(self.source, to)
                                                                              for to in shards]
        for key in keys:
            with _Calls(self.url):
                entries = self.client.xrange(key)
            try:
                out.extend(f["url"] for _, f in entries)
            except KeyError:
                raise MirrorError(f"the hand-offs' Redis database {self.url}: {key} holds an entry that is no "
                                  "outbox row") from None
        return out


def taken_position(client, url: str, reader: str, source: str) -> tuple[int, bytes | None] | None:
    """How far shard ``reader`` took in the outbox of shard ``source``, and the first
    agent of the database that position is of, as ``reader``'s last mirror says (None:
    it says nothing of ``source``).

    Raises:
        MirrorError: Redis could not be reached.
    """
    with _Calls(url):
        value = client.hget(_taken(reader), source)
    if value is None:
        return None
    position, _, of = value.partition(" ")
    try:
        return int(position), bytes.fromhex(of) if of else None
    except ValueError:
        raise MirrorError(f"the hand-offs' Redis database {url}: {_taken(reader)} field {source}: {value!r} is no "
                          "read position") from None
