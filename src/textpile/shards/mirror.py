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
(:class:`MirroredOutbox`, :func:`taken_position`). Each crawl reads the stream ids of its
outbox again to mirror it (its outbox holds the links between shards as they are now,
:func:`textpile.shards.handoff.prune_outbox`, not every URL ever found).
"""

from __future__ import annotations

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
    (module docstring) for the shards ``others``, in one transaction.

    Raises:
        MirrorError: Redis could not be reached or refused it (the mirror before stays).
        sqlite3.Error: ``store``'s database could not be read.
    """
    identity = (store.first_agent_uuid() or b"").hex()
    rows = store.conn.execute("SELECT handoff_id, shard, str_url, kind, found_via, depth FROM textpile_handoff"
                              " WHERE shard != '' ORDER BY handoff_id").fetchall()
    positions = store.conn.execute(
        "SELECT t.from_shard, t.last_handoff_id, s.first_agent_uuid FROM textpile_handoff_taken t"
        " LEFT JOIN textpile_handoff_source s USING (from_shard)").fetchall()
    added = deleted = 0
    with _Calls(url):
        made_anew = client.hget(_outbox(shard), "first_agent") not in (None, identity)
        have = {} if made_anew else {to: {int(entry_id.split("-")[0]) for entry_id, _ in
                                          client.xrange(_stream(shard, to))} for to in others}
        pipe = client.pipeline(transaction=True)
        for to in others:
            want = [row for row in rows if row[1] == to]
            held = have.get(to, set())
            gone = sorted(held - {row[0] for row in want})
            if made_anew:
                pipe.delete(_stream(shard, to))
            elif gone:
                pipe.xdel(_stream(shard, to), *(f"{i}-1" for i in gone))
                deleted += len(gone)
            newest = max(held, default=0)
            for handoff_id, _, str_url, kind, via, depth in want:
                if handoff_id > newest:
                    pipe.xadd(_stream(shard, to), {"url": str_url, "kind": kind or "", "via": via or "",
                                                   "depth": "" if depth is None else str(depth)}, id=f"{handoff_id}-1")
                    added += 1
        pipe.hset(_outbox(shard), mapping={"first_agent": identity, "last": str(store.last_handoff_id())})
        for source, position, of in positions:
            pipe.hset(_taken(shard), source, f"{position} {(of or b'').hex()}")
        pipe.execute()
    return Published(added, deleted)


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
        with _Calls(self.url):
            entries = self.client.xrange(_stream(self.source, to), min=f"{after + 1}-0", max=f"{upto}-1", count=limit)
        return [(int(entry_id.split("-")[0]), f["url"], f["kind"] or None, f["via"] or None,
                 int(f["depth"]) if f["depth"] else None) for entry_id, f in entries]

    def urls(self, to: str) -> list[str]:
        """Every URL of the rows addressed to ``to``."""
        with _Calls(self.url):
            return [f["url"] for _, f in self.client.xrange(_stream(self.source, to))]


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
    return int(position), bytes.fromhex(of) if of else None
