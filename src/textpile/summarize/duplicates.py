"""Duplicates: exact and near-duplicate generations of one origin, one kept, the others marked.

Sources: unobtanium-documentation.txt, pages "Duplicate Types" (exact duplicates are
detected with the text pile digest) and "Summarizing" (Finding duplicates: generations
without a confirmed end, of the same origin, with the same text_pile_ng digest; the one
with the shortest URL stays the original, all others are marked duplicates). Text piles
are stored once per digest, so "same digest" is "same text_pile_v0_2_id".

Near-duplicates are textpile's: two open generations of the same origin with the same
title (document_description.title) whose main-text fingerprints
(:mod:`textpile.summarize.scrape.fingerprint`) differ in at most
:data:`NEAR_DUPLICATE_BITS` bits, pages that differ only in boilerplate the main content
kept (a footer's timestamp, a tracking number). The title guards pages that say they are
different documents: two API pages of sibling classes, or release notes of two patch
releases, share most of their text (0 bits apart on rustdoc's iterator pages and SQLite's
release log) under different titles, and stay apart. The threshold was tuned on real
documentation pages (bench/neardup).
They are flagged as exact duplicates are (a duplicate_summary row, marked_duplicate), so
the search index leaves them out; ``textpile_near_duplicate`` says which rows are near,
with their distance.

The rule: generations are linked when they are exact or near duplicates of each other;
within each connected group, in the order of URL length, then str_url, then id, each
generation is marked a duplicate of the first earlier one it is linked to that is not
marked itself, and stays an original when there is none. A group of exact duplicates
alone thus keeps its shortest URL and marks the others its duplicates (the seed's rule).
The outcome depends only on the open generations, not on the order they came in, so
integrating in batches gives the state a single batch gives.

The wanted state of each group touched by a batch is computed and the stored state is
made equal to it: duplicate_summary rows that no longer hold are ended, missing ones are
inserted, and entity_generation.marked_duplicate (a cache of the open rows) follows.
Groups are decided on the state at the end of each batch: two URLs that shared content
only between two crawls inside one batch get no duplicate_summary row.

Times are taken from the data, so that integrating is deterministic:
duplicate_status_start = the later first_seen of the two generations (when both were
known to exist); duplicate_status_end = the subject's confirmed end, else the
original's, else the newest crawl time of the batch that changed the group.
"""

from __future__ import annotations

import json
import sqlite3
from collections import deque
from dataclasses import dataclass

from textpile.summarize.scrape.fingerprint import bands, hamming

#: The most bits in which two near-duplicates' fingerprints differ (bench/neardup).
NEAR_DUPLICATE_BITS = 8
#: Blocks of a fingerprint looked up: one more than the bits, so a neighbour shares one.
FINGERPRINT_BANDS = NEAR_DUPLICATE_BITS + 1


@dataclass(frozen=True)
class Member:
    """What deciding duplicates needs of one generation."""

    generation_id: int
    origin_id: int
    tp2: int | None
    str_url: str
    first_seen: int
    confirmed_end: int | None
    marked: bool
    simhash: int | None
    title_key: int | None

    @property
    def rank(self) -> tuple[int, str, int]:
        """The order in which originals are chosen: shorter URL, lower str_url, lower id."""
        return len(self.str_url), self.str_url, self.generation_id


@dataclass
class DuplicateCounts:
    """What :func:`reconcile` changed: duplicate_summary rows inserted (exact and near)
    and ended."""

    exact: int = 0
    near: int = 0
    ended: int = 0


_MEMBER_SQL = """
SELECT eg.entity_generation_id, u.origin_id, eg.text_pile_v0_2_id, u.str_url, eg.first_seen_unix_utc,
       eg.confirmed_end_unix_utc, eg.marked_duplicate, f.simhash, f.title_key
FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id
LEFT JOIN textpile_page_fingerprint f ON f.entity_generation_id = eg.entity_generation_id
WHERE eg.entity_generation_id IN (SELECT value FROM json_each(?))
"""


class _Graph:
    """The generations looked at by one :func:`reconcile`, loaded on demand. The open
    generations of one Gen2 pile (exact duplicates of each other) are read once per pile,
    so a pile of n copies costs n, not n * n."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.members: dict[int, Member] = {}
        self._piles: dict[tuple[int, int], list[int]] = {}
        self._near: dict[int, list[int]] = {}

    def load(self, ids) -> None:
        missing = sorted(set(ids) - self.members.keys())
        for start in range(0, len(missing), 5000):
            for row in self.conn.execute(_MEMBER_SQL, (json.dumps(missing[start:start + 5000]),)):
                self.members[row[0]] = Member(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]),
                                              row[7], row[8])

    def pile(self, member: Member) -> list[int]:
        """The open generations of ``member``'s origin and Gen2 pile (itself among them when
        open); empty without a pile."""
        if member.tp2 is None:
            return []
        key = (member.origin_id, member.tp2)
        known = self._piles.get(key)
        if known is None:
            known = self._piles[key] = [r[0] for r in self.conn.execute(
                "SELECT eg.entity_generation_id FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id"
                " WHERE eg.text_pile_v0_2_id = ? AND u.origin_id = ? AND eg.confirmed_end_unix_utc IS NULL",
                (member.tp2, member.origin_id))]
            self.load(known)
        return known

    def near(self, member: Member) -> list[int]:
        """The open generations that are near duplicates of ``member`` (:func:`linked`, by
        fingerprint), itself left out: looked up by the fingerprint's blocks."""
        known = self._near.get(member.generation_id)
        if known is None:
            known = []
            if member.simhash is not None:
                found = [r[0] for r in self.conn.execute(
                    "SELECT DISTINCT entity_generation_id FROM textpile_fingerprint_band"
                    " WHERE origin_id = ? AND title_key = ? AND band_key IN (SELECT value FROM json_each(?))",
                    (member.origin_id, member.title_key, json.dumps(bands(member.simhash, FINGERPRINT_BANDS))))]
                self.load(found)
                known = [i for i in found if i != member.generation_id and self.members[i].confirmed_end is None
                         and linked(member, self.members[i])]
            self._near[member.generation_id] = known
        return known


def linked(a: Member, b: Member) -> bool:
    """True when ``a`` and ``b`` are exact or near duplicates of each other (same origin
    and Gen2 text pile; or same origin and title, fingerprints at most
    :data:`NEAR_DUPLICATE_BITS` bits apart)."""
    if a.origin_id != b.origin_id:
        return False
    if a.tp2 is not None and a.tp2 == b.tp2:
        return True
    return (a.simhash is not None and b.simhash is not None and a.title_key == b.title_key
            and hamming(a.simhash, b.simhash) <= NEAR_DUPLICATE_BITS)


def wanted_originals(group: list[Member]) -> dict[int, int]:
    """subject generation id -> original generation id for one connected ``group`` of open
    generations (the rule of the module doc)."""
    originals: list[Member] = []
    wanted: dict[int, int] = {}
    for member in sorted(group, key=lambda m: m.rank):
        original = next((o for o in originals if linked(member, o)), None)
        if original is None:
            originals.append(member)
        else:
            wanted[member.generation_id] = original.generation_id
    return wanted


def _groups(graph: _Graph, open_ids: list[int]) -> list[list[Member]]:
    """The connected groups of the open generations ``open_ids`` (closed under
    :func:`linked`): a union-find over their piles and near duplicates."""
    parent = {i: i for i in open_ids}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of_pile: dict[tuple[int, int], int] = {}
    for i in open_ids:
        member = graph.members[i]
        linked_ids = graph.near(member)
        if member.tp2 is not None:
            linked_ids = [first_of_pile.setdefault((member.origin_id, member.tp2), i)] + linked_ids
        for other in linked_ids:
            if other in parent:
                parent[root(other)] = root(i)
    groups: dict[int, list[Member]] = {}
    for i in open_ids:
        groups.setdefault(root(i), []).append(graph.members[i])
    return list(groups.values())


def reconcile(conn: sqlite3.Connection, touched_generation_ids: list[int], batch_time: int) -> DuplicateCounts:
    """Bring the duplicate groups of ``touched_generation_ids`` to their wanted state.

    Args:
        conn: the summary database, inside the batch's transaction.
        touched_generation_ids: generations opened or closed by the batch; the groups
            they belong to, or belonged to, are rechecked.
        batch_time: the newest crawl time of the batch (unix seconds), the end time of a
            duplicate status that ended for another reason than a close.

    Returns:
        the duplicate_summary rows inserted (exact, near) and ended.
    """
    graph = _Graph(conn)
    touched = sorted(set(touched_generation_ids))
    current = conn.execute(
        "SELECT rowid, subject_entity_generation_id, duplicate_of_entity_generation_id FROM duplicate_summary"
        " WHERE duplicate_status_end_unix_utc IS NULL AND (subject_entity_generation_id IN (SELECT value FROM"
        " json_each(?1)) OR duplicate_of_entity_generation_id IN (SELECT value FROM json_each(?1)))",
        (json.dumps(touched),)).fetchall()
    seeds = set(touched) | {r[1] for r in current} | {r[2] for r in current}
    graph.load(seeds)
    # every open generation linked, step by step, to a seed (a closed seed's former
    # neighbours too: its group may fall apart)
    queue = deque(sorted(seeds))
    reached = set(seeds)
    piles_read: set[tuple[int, int]] = set()
    while queue:
        member = graph.members[queue.popleft()]
        found = graph.near(member)
        if member.tp2 is not None and (member.origin_id, member.tp2) not in piles_read:
            piles_read.add((member.origin_id, member.tp2))
            found = found + graph.pile(member)
        for neighbour in found:
            if neighbour not in reached:
                reached.add(neighbour)
                queue.append(neighbour)
    wanted: dict[int, int] = {}
    for group in _groups(graph, sorted(i for i in reached if graph.members[i].confirmed_end is None)):
        wanted.update(wanted_originals(group))
    # the open rows of every generation looked at (rows of others cannot change)
    current = conn.execute(
        "SELECT rowid, subject_entity_generation_id, duplicate_of_entity_generation_id FROM duplicate_summary"
        " WHERE duplicate_status_end_unix_utc IS NULL AND subject_entity_generation_id IN"
        " (SELECT value FROM json_each(?))", (json.dumps(sorted(reached)),)).fetchall()
    counts = DuplicateCounts()
    held = set()
    for row_id, subject, original in sorted(current, key=lambda r: (r[1], r[2])):
        if wanted.get(subject) == original:
            held.add(subject)
            continue
        graph.load([subject, original])
        s, o = graph.members[subject], graph.members[original]
        end = s.confirmed_end if s.confirmed_end is not None else (
            o.confirmed_end if o.confirmed_end is not None else batch_time)
        conn.execute("UPDATE duplicate_summary SET duplicate_status_end_unix_utc = ? WHERE rowid = ?", (end, row_id))
        counts.ended += 1
    for subject, original in sorted(wanted.items()):
        if subject in held:
            continue
        s, o = graph.members[subject], graph.members[original]
        conn.execute(
            "INSERT INTO duplicate_summary(subject_entity_generation_id, duplicate_of_entity_generation_id,"
            " duplicate_status_start_unix_utc, duplicate_status_end_unix_utc) VALUES (?, ?, ?, NULL)",
            (subject, original, max(s.first_seen, o.first_seen)))
        if s.tp2 is not None and s.tp2 == o.tp2:
            counts.exact += 1
        else:
            counts.near += 1
            conn.execute("INSERT OR IGNORE INTO textpile_near_duplicate(subject_entity_generation_id,"
                         " duplicate_of_entity_generation_id, hamming_distance) VALUES (?, ?, ?)",
                         (subject, original, hamming(s.simhash, o.simhash)))
    for generation_id in sorted(reached):
        member = graph.members[generation_id]
        marked = generation_id in wanted
        if member.marked != marked:
            conn.execute("UPDATE entity_generation SET marked_duplicate = ? WHERE entity_generation_id = ?",
                         (int(marked), generation_id))
    return counts
