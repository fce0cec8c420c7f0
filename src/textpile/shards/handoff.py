"""Links between site shards: each shard crawls its own sites only, and hands the URLs it
finds on sites of other shards to their owners.

A shard's crawl keeps the links of every seed origin of the deployment (its own and
those the shard table assigns to other shards, :attr:`HandOff.routes`). Links to its own
sites become crawl candidates, as in an unsharded crawl; links to a site of another
shard are written to the outbox of its own crawler database (``textpile_handoff``, schema
``schemas/crawler/textpile_handoff.sql``), in the same transaction as the crawl log entry
of the page that linked them. The owning shard's next crawl takes them in before it
starts (:func:`take_handoffs`): it reads the rows addressed to it from every other
shard's crawler database, read only, and makes them crawl candidates (sitemaps and feeds
as such) in its own, recording in the same transaction how far it read
(``textpile_handoff_taken``).

Why an outbox read by the owner, not candidates written into the owner's database:

* one writer per database file: a shard's crawler database is written only by its own
  crawl (and a move, which holds its crawl lock), so the crawl lock, the single database
  process of a crawl and Dagster's pool per shard keep meaning what they say; a shard
  crawling while another writes into its file would contend for SQLite's write lock and
  hold locks of two shards at once;
* resumable: the hand-off rows commit with the entry that found them (a crash loses
  neither or both: the entry's URL stays due and is crawled again), and the take-in
  commits its candidates with its read position (a crash takes all or none; taking a row
  twice adds nothing, candidates being unique);
* nothing is lost when the shard table changes: a row addressed to a shard that no
  longer holds the URL's site is forwarded by it (written to its own outbox, addressed to
  the site's shard now), never crawled there; a move carries the candidates already
  taken in (:mod:`textpile.shards.move`).

The outbox of a shard is read where its folder is reachable (the shard table's
``root``/``[folders]``): on one machine always. A shard whose crawler database is not
there (not crawled yet, or on another host) is read from its mirror in Redis when the
table names one (``handoff_redis``: :mod:`textpile.shards.mirror`, which each shard's
crawl writes when it ends); else, or while nothing is mirrored of it, it is listed in
:attr:`TakeReport.unread` and its rows wait in its outbox for the first crawl that can
read them.

An outbox row stays while it is needed (:func:`prune_outbox`, after a shard's crawl in
which every origin was crawled completely and healthily, as pruning asks): until the
shard it is addressed to took it in, and while a page of this shard still leads to its
URL (the owner's pruning counts the URLs of other shards' outboxes as reached, so a row
kept for a page that no longer links it would keep that page in the owner's index) or
another shard's outbox addressed it here (a forwarded row: the page that links it is in
that shard). So the outbox follows the links between shards as they are now, not every
URL ever found. The row with the largest handoff_id is not deleted but emptied (its
``shard`` and ``str_url`` set to ''; one such row at most): handoff_ids are never reused,
and the read positions of the other shards keep meaning what they say. An emptied row is
addressed to no shard and leads nowhere.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from textpile.crawl.crawldb.prune import unpack_outlinks
from textpile.crawl.crawldb.records import MetaCandidate
from textpile.crawl.crawldb.sql import CrawlStore
from textpile.errors import ConfigError, DatabaseError
from textpile.shards.config import Shards, site_of
from textpile.shards.mirror import MirroredOutbox, MirrorError, connect, taken_position
from textpile.store.database import open_crawler_db, sqlite_errors
from textpile.store.urls import UrlError, parse_url

#: Outbox rows read and taken in per transaction.
TAKE_CHUNK = 5000


@dataclass(frozen=True)
class HandOff:
    """The crawl of shard ``shard`` in the deployment of ``table``: ``routes`` maps each
    seed origin (``scheme://host:port``) the table assigns to another shard to that shard."""

    shard: str
    table: Shards
    routes: dict[str, str] = field(default_factory=dict)

    def sources(self) -> dict[str, Path]:
        """The crawler database of every other shard of the table, in table order."""
        return {name: self.table.folder(name) / "crawler.db" for name in self.table.names if name != self.shard}


def handoff_of(table: Shards, seeds: Iterable[str], shard: str) -> HandOff:
    """The :class:`HandOff` of ``shard``'s crawl, ``seeds`` being every seed of the
    deployment (all shards').

    Raises:
        ConfigError: no such shard in ``table``, or a seed is no http(s) URL.
    """
    table.check(shard)
    routes: dict[str, str] = {}
    for seed in seeds:
        owner = table.shard_of(seed)
        if owner != shard:
            routes[site_of(seed)] = owner
    return HandOff(shard=shard, table=table, routes=routes)


@dataclass
class TakeReport:
    """What :func:`take_handoffs` did."""

    #: rows addressed to this shard read from each other shard's outbox
    taken: dict[str, int] = field(default_factory=dict)
    #: of those, rows whose site the table assigns to another shard now: forwarded to it
    forwarded: int = 0
    #: shards whose outbox was not read, with why (no crawler database at its path)
    unread: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Rows taken in (forwarded ones included)."""
        return sum(self.taken.values())


def take_handoffs(store: CrawlStore, handoff: HandOff) -> TakeReport:
    """Take into ``store`` (the crawler database of ``handoff.shard``, its crawl lock held
    by the caller) the outbox rows addressed to it that every other shard wrote since the
    last take-in, in chunks of :data:`TAKE_CHUNK` rows, each chunk one transaction with
    its read position (see the module docstring). An outbox whose largest row is below
    the recorded position belongs to a crawler database made anew: it is read from its
    start again.

    Another shard's crawler database that is not a file here is read from its mirror
    (:mod:`textpile.shards.mirror`, when the table names one). One that cannot be read
    (missing and not mirrored, no crawler database, corrupt, Redis down) is listed in the
    report's ``unread`` with why; its rows wait for a later take-in.

    Raises:
        sqlite3.Error: ``store``'s database refused the write (nothing of that chunk is kept).
    """
    report = TakeReport()
    mirror, down = None, None  # a Redis database that failed once is not asked again (each try may time out)
    url = handoff.table.handoff_redis
    for name, path in handoff.sources().items():
        try:
            if path.is_file():
                with closing(open_crawler_db(path, create=False, read_only=True)) as source:
                    report.taken[name], forwarded = _take_from(store, handoff, name, _FileOutbox(source, path))
            elif down is not None:
                report.unread[name] = down
                continue
            elif url is not None and (outbox := MirroredOutbox(*(mirror := mirror or _mirror(handoff)),
                                                               name)).published:
                report.taken[name], forwarded = _take_from(store, handoff, name, outbox)
            else:
                report.unread[name] = f"no crawler database at {path} (not crawled yet, or on another host)" + (
                    f", and none of its crawls mirrored its outbox into {url} yet" if url else "")
                continue
        except MirrorError as exc:
            report.unread[name] = down = str(exc)
            continue
        except DatabaseError as exc:
            report.unread[name] = str(exc)
            continue
        report.forwarded += forwarded
    return report


def _mirror(handoff: HandOff) -> tuple[object, str]:
    """(client, URL) of the table's hand-off mirror (:mod:`textpile.shards.mirror`; the
    table names one).

    Raises:
        MirrorError: its URL is no Redis URL.
    """
    return connect(handoff.table.handoff_redis), handoff.table.handoff_redis


def handed_in_urls(handoff: HandOff, store: CrawlStore) -> tuple[set[str], dict[str, str]]:
    """Every URL (str_url) in another shard's outbox on a site the table assigns to
    ``handoff.shard`` now (addressed to it, or to the shard that held the site before a
    move), read only (a row stays while a page of that shard leads to its URL,
    :func:`prune_outbox`: pruning counts them reached), and the shards whose crawler
    database exists but could not be read, with why. A shard with no crawler database at
    its path is read from its mirror (:mod:`textpile.shards.mirror`); with none (not
    crawled yet, or on another host without a mirror) it handed nothing that this shard
    took in, and is passed over, unless the table names a mirror and ``store`` (this
    shard's crawler database) took rows of it in: then its mirror is missing (Redis
    emptied, or the shard's folder moved to another host and not crawled there yet) and
    the shard is listed as unread (its rows may still lead to pages here).
    """
    urls: set[str] = set()
    unread: dict[str, str] = {}
    owners: dict[str, str | None] = {}
    mirror, down = None, None
    for name, path in handoff.sources().items():
        try:
            if path.is_file():
                with closing(open_crawler_db(path, create=False, read_only=True)) as source:
                    found = [u for (u,) in _read(source, path, "SELECT str_url FROM textpile_handoff", ())] \
                        if _FileOutbox(source, path).exists else []
            elif handoff.table.handoff_redis is None:
                continue  # not crawled yet, or on another host: none of its rows was ever taken in here
            elif down is not None:
                unread[name] = down
                continue
            elif (outbox := MirroredOutbox(*(mirror := mirror or _mirror(handoff)), name)).published:
                found = outbox.urls()  # to every shard, also one that left the table (as its file holds them)
            elif store.handoff_position(name) > 0:
                unread[name] = (f"no crawler database of shard {name} at {path}, and no mirror of its outbox in "
                                f"{handoff.table.handoff_redis}, although rows of it were taken in here")
                continue
            else:
                continue
        except MirrorError as exc:
            unread[name] = down = str(exc)
            continue
        except DatabaseError as exc:
            unread[name] = str(exc)
            continue
        urls.update(u for u in found if _owner(handoff.table, u, owners) == handoff.shard)
    return urls, unread


def _owner(table: Shards, str_url: str, owners: dict[str, str | None]) -> str | None:
    """The shard ``table`` assigns the site of ``str_url`` to (None: no http(s) URL),
    kept in ``owners`` per scheme and authority as written (the text before the path:
    the same text is the same site), so a URL is parsed once per site, not per row."""
    start = str_url.find("//")
    end = str_url.find("/", start + 2) if start != -1 else -1
    key = str_url if end == -1 else str_url[:end]
    if key not in owners:
        try:
            owners[key] = table.shard_of(parse_url(str_url).str_origin)
        except (UrlError, ConfigError):
            owners[key] = None
    return owners[key]


@dataclass
class OutboxPruned:
    """What :func:`prune_outbox` did: ``pruned``, the outbox rows deleted per shard they
    were addressed to; ``kept``, the shards whose rows were all kept, with why (their
    read position of this outbox is not known here)."""

    pruned: dict[str, int] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)


def prune_outbox(store: CrawlStore, handoff: HandOff, reached: set[str]) -> OutboxPruned:
    """Delete from ``store``'s outbox (the crawler database of ``handoff.shard``, its crawl
    lock held by the caller) the rows no longer needed (module docstring): those the
    shard they are addressed to took in (read only: its ``textpile_handoff_taken`` row of
    this shard) whose URL is not in ``reached``, the URLs this shard's crawler database
    reaches with the URLs other shards' outboxes address to it among its roots
    (:func:`textpile.crawl.crawldb.prune.reached_urls` from the seeds and
    :func:`handed_in_urls`). Call it only after a crawl that could prune every origin it
    crawled: a page whose links are not known, or an unread shard's outbox, would make a
    needed row look unneeded. The row with the largest handoff_id is emptied, not deleted
    (module docstring; counted as pruned), and an older emptied row deleted. Rows addressed
    to a shard whose crawler database cannot be read, or read this outbox before it was
    made anew (its position is past the largest row, or its ``textpile_handoff_source``
    names another first crawl run, or none: a position recorded before it), or to a
    shard no longer in the table, are kept.
    Nothing is deleted (``kept["*"]`` says why) while this database holds crawl
    candidates of a seed site the table assigns to another shard (``handoff.routes``:
    its pages' links count only once a move took them to their shard,
    :mod:`textpile.shards.move`, which hands them off there), or while another shard's
    crawler database is missing here and not mirrored (the rows it addresses here are not
    known: a row forwarded from it could go). The read position of a shard on another
    host is that of its last mirror (:func:`textpile.shards.mirror.taken_position`).

    Raises:
        sqlite3.Error: ``store``'s database refused the deletion (nothing of it is kept).
    """
    result = OutboxPruned()
    last = store.last_handoff_id()
    if last == 0:
        return result
    away = [o for o in store.candidate_origins() if o in handoff.routes]
    if away:
        result.kept["*"] = (f"this database holds crawl candidates of {away[0]}, a site the table assigns to "
                            f"shard {handoff.routes[away[0]]}: move it first (textpile shards move)")
        return result
    mirror = None
    remote: set[str] = set()
    for name, path in handoff.sources().items():
        try:
            if not path.is_file() and handoff.table.handoff_redis is not None \
                    and MirroredOutbox(*(mirror := mirror or _mirror(handoff)), name).published:
                remote.add(name)
        except MirrorError as exc:
            result.kept["*"] = f"the mirror of shard {name}'s outbox could not be read ({exc})"
            return result
    missing = {name: path for name, path in handoff.sources().items() if not path.is_file() and name not in remote}
    if missing:  # its rows addressed here (forwarded ones among them) are not known
        name = min(missing)
        result.kept["*"] = (f"no crawler database of shard {name} at {missing[name]} (not crawled yet, or on "
                            "another host)" + (", and no mirror of its outbox yet" if handoff.table.handoff_redis
                                               else ""))
        return result
    positions: dict[str, int] = {}
    mine = store.first_agent_uuid()
    for name, path in handoff.sources().items():
        try:
            if name in remote:  # its position as its last mirror says
                told = taken_position(*mirror, name, handoff.shard)
                found = [] if told is None else [(told[0],)]
                read_of = [] if told is None or told[1] is None else [(told[1],)]
            else:
                with closing(open_crawler_db(path, create=False, read_only=True)) as source:
                    found, read_of = [], []
                    if _read(source, path, "SELECT 1 FROM sqlite_master WHERE name = 'textpile_handoff_taken'", ()):
                        found = _read(source, path, "SELECT last_handoff_id FROM textpile_handoff_taken"
                                                    " WHERE from_shard = ?", (handoff.shard,))
                    if _read(source, path,
                             "SELECT 1 FROM sqlite_master WHERE name = 'textpile_handoff_source'", ()):
                        read_of = _read(source, path, "SELECT first_agent_uuid FROM textpile_handoff_source"
                                                      " WHERE from_shard = ?", (handoff.shard,))
        except (DatabaseError, MirrorError) as exc:
            result.kept[name] = str(exc)
            continue
        if found and (found[0][0] > last or (read_of and read_of[0][0] != mine)):
            result.kept[name] = "it read this outbox before its crawler database was made anew"
        elif found and not read_of:  # a position recorded before textpile_handoff_source: of which database?
            result.kept[name] = "its read position does not say of which crawler database (until its next take-in)"
        elif found:
            positions[name] = found[0][0]
    gone: dict[str, list[int]] = {}
    for handoff_id, shard, str_url in store.outbox_rows(below=last + 1):
        if shard and handoff_id <= positions.get(shard, 0) and str_url not in reached:
            gone.setdefault(shard, []).append(handoff_id)
    if gone:
        store.drop_handoffs(sorted(i for ids in gone.values() for i in ids), last)
    result.pruned = {shard: len(ids) for shard, ids in sorted(gone.items())}
    return result


def site_links_away(conn: sqlite3.Connection, schema: str, origin: int, table: Shards,
                    shard: str) -> list[tuple[str, str]]:
    """(shard, str_url) of every URL that the pages and listings of the site ``origin``
    (its origin_id in ``schema``) lead to on a site ``table`` assigns to a shard other
    than ``shard`` (:func:`_led_to`), sorted. A move hands them off from the site's new
    shard (:mod:`textpile.shards.move`), as its crawls would have."""
    owners: dict[str, str | None] = {}
    away = ((_owner(table, str_url, owners), str_url) for str_url in _led_to(conn, schema, origin, of_site=True))
    return sorted((owner, str_url) for owner, str_url in away if owner is not None and owner != shard)


def links_into_site(conn: sqlite3.Connection, schema: str, origin: int) -> list[str]:
    """The URLs of the site of origin_id ``origin`` (in ``schema``) that the pages and
    listings of other sites in that crawler database lead to (:func:`_led_to`), sorted:
    those with a url row of the site (a link there made it a candidate). A move of the
    site hands them off from the shard it leaves (:mod:`textpile.shards.move`): they were
    candidates there, which needed no outbox row, and the site's new shard counts them
    reached only through one."""
    ours = {u for (u,) in conn.execute(f"SELECT str_url FROM {schema}.url WHERE origin_id = ?", (origin,))}
    return sorted(_led_to(conn, schema, origin, of_site=False, among=ours))


def _led_to(conn: sqlite3.Connection, schema: str, origin: int, *, of_site: bool,
            among: set[str] | None = None) -> set[str]:
    """Every URL (of ``among`` only, when given) that the pages and listings of the site
    ``origin`` (``of_site``), or of the other sites of the crawler database ``schema``,
    lead to: their kept links (``textpile_page_links``) and what their sitemaps and feeds
    list (``textpile_listed_url``)."""
    which = "=" if of_site else "!="
    urls: set[str] = set()
    for (blob,) in conn.execute(f"SELECT p.links FROM {schema}.textpile_page_links p JOIN {schema}.url u"
                                f" ON u.url_id = p.url_id WHERE u.origin_id {which} ?", (origin,)):
        urls.update(unpack_outlinks(blob) if among is None else (u for u in unpack_outlinks(blob) if u in among))
    urls.update(u for (u,) in conn.execute(
        f"SELECT lu.str_url FROM {schema}.textpile_listed_url l JOIN {schema}.url lu ON lu.url_id = l.url_id"
        f" JOIN {schema}.url u ON u.url_id = l.listed_by_url_id WHERE u.origin_id {which} ?", (origin,))
        if among is None or u in among)
    return urls


class _FileOutbox:
    """The outbox of another shard's crawler database ``source`` (at ``path``), read as
    :class:`textpile.shards.mirror.MirroredOutbox` reads a mirrored one."""

    def __init__(self, source, path: Path) -> None:
        self.source, self.path = source, path
        self.exists = bool(_read(source, path, "SELECT 1 FROM sqlite_master WHERE name = 'textpile_handoff'", ()))
        self.last = _read(source, path, "SELECT coalesce(max(handoff_id), 0) FROM textpile_handoff",
                          ())[0][0] if self.exists else 0
        self.identity = _first_agent(source, path)

    def rows(self, to: str, after: int, upto: int, limit: int) -> list[tuple]:
        """(handoff_id, str_url, kind, found_via, depth) of the rows addressed to ``to``
        with a handoff_id above ``after`` and up to ``upto``, at most ``limit``, in order."""
        return _read(self.source, self.path,
                     "SELECT handoff_id, str_url, kind, found_via, depth FROM textpile_handoff"
                     " WHERE shard = ? AND handoff_id > ? AND handoff_id <= ? ORDER BY handoff_id LIMIT ?",
                     (to, after, upto, limit))


def _take_from(store: CrawlStore, handoff: HandOff, name: str, outbox) -> tuple[int, int]:
    """Take in the rows for ``handoff.shard`` of shard ``name``'s ``outbox`` (a
    :class:`_FileOutbox` or a :class:`~textpile.shards.mirror.MirroredOutbox`); returns
    (rows taken, of them forwarded)."""
    if isinstance(outbox, _FileOutbox) and not outbox.exists:
        return 0, 0  # written by a textpile without hand-offs: nothing to take
    recorded = position = store.handoff_position(name)
    taken = forwarded = 0
    last, identity = outbox.last, outbox.identity
    known = store.handoff_source(name)
    if last < position or (known is not None and identity is not None and known != identity):
        position = 0  # a crawler database made anew: its outbox from the start
    while position < last:
        rows = outbox.rows(handoff.shard, position, last, TAKE_CHUNK)
        upto = rows[-1][0] if len(rows) == TAKE_CHUNK else last
        pages, metas, forwards = _sorted_rows(rows, handoff)
        store.take_handoffs(name, upto, pages, metas, forwards, identity)  # sqlite3.Error: the caller's file
        taken += len(rows)
        forwarded += len(forwards)
        recorded = position = upto
    if recorded != position or (identity is not None and known != identity):  # an outbox made anew
        store.take_handoffs(name, position, [], [], [], identity)
    return taken, forwarded


def _first_agent(source, path: Path) -> bytes | None:
    """The agent_uuid of the first crawl run of the other shard's crawler database ``source``."""
    rows = _read(source, path, "SELECT agent_uuid FROM agent ORDER BY agent_id LIMIT 1", ())
    return rows[0][0] if rows else None


def _read(source, path: Path, sql: str, params: tuple) -> list[tuple]:
    """The rows of ``sql`` on the other shard's crawler database ``source`` (errors name ``path``)."""
    with sqlite_errors(path):
        return source.execute(sql, params).fetchall()


def _sorted_rows(rows: list[tuple], handoff: HandOff) -> tuple[list, list[MetaCandidate], list[tuple]]:
    """(pages, sitemaps and feeds, forwards) of outbox ``rows`` addressed to ``handoff.shard``."""
    pages, metas, forwards = [], [], []
    for _, str_url, kind, found_via, depth in rows:
        try:
            url = parse_url(str_url)
        except UrlError:
            continue  # not written by textpile (its rows are parsed URLs): never crawled
        owner = handoff.table.shard_of(str_url)
        if owner != handoff.shard:
            forwards.append((owner, str_url, kind, found_via, depth))
        elif kind is None:
            pages.append(url)
        else:
            metas.append(MetaCandidate(url, kind, found_via, depth or 0))
    return pages, metas, forwards
