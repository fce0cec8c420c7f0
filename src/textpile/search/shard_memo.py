"""What a shard's statistics round counts again for every query though it depends only on
the shard's content, kept between searches.

A search over shards (:mod:`textpile.search.fanout`) asks each shard for its statistics
of the query (:func:`textpile.search.shards.query_stats`). Part of that answer is the
same for every query until the shard's file changes: where the shard's part of one
index's first tier ends and the rows and tokens up to there (the row sizes of thousands
of pages and sections, read and decoded each time), and, for a phrase, the rows holding
it (up to that docid, or in the whole table: FTS5 reads the phrase's whole document list
to count them). On the relevance benchmark's 3 shards these were 11% of a search's CPU
(py-spy, 1,110 keyword queries).

A :class:`ShardMemo` keeps them for one content of one file: its owner makes a new one
when the content may have changed (``PRAGMA data_version`` of a connection kept for
watching changed, as :class:`textpile.web.state.SummaryDatabase` and
:meth:`textpile.search.shards.LocalShard.open` watch it). At most :data:`MAX_PHRASES` phrase
counts and :data:`MAX_KEPT` other values (a tier's end and sizes per tier share: a served
shard is asked for any share) are kept, the least recently used dropped first.
Thread-safe; a value of :meth:`kept` is computed by one thread while others asking for it
wait; a phrase count two threads count at once is counted twice, never wrong.

It also passes what one search's cut round scanned and scored on to the same search's
search round (:meth:`hand`, :meth:`take`): the search round scans a prefix of the same
rows and scores them with the same statistics (22% of its work at 100K pages over 3
shards).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable

from textpile.search.global_bm25 import TABLE, phrase_documents, rows_up_to, table_totals

#: Phrase counts kept per shard (about 100 bytes each).
MAX_PHRASES = 20_000
#: Other values kept per shard.
MAX_KEPT = 256
#: Scans a search's cut round hands to its search round, held at most per shard (one
#: search hands a few: its pages, its sections per scorer, and each partial-match level's).
MAX_HANDED = 64


class ShardMemo:
    """The query-independent statistics of one shard's content (module docstring)."""

    def __init__(self, max_phrases: int = MAX_PHRASES) -> None:
        if max_phrases < 0:
            raise ValueError(f"max_phrases: expected 0 or more, got {max_phrases}")
        self._lock = threading.Lock()
        self._max = max_phrases
        self._phrases: OrderedDict[tuple[str, str, int | None], int] = OrderedDict()
        self._kept: OrderedDict[tuple, object] = OrderedDict()
        #: the values being computed: set when done, and the thread computing each
        self._computing: dict[tuple, tuple[threading.Event, int]] = {}
        self._handed: OrderedDict[tuple, object] = OrderedDict()

    def kept(self, key: tuple, compute: Callable[[], object]) -> object:
        """The value kept under ``key``, ``compute()`` the first time (its exceptions
        raised, nothing kept). A caller asking for a value another thread is computing
        waits for it instead of computing it too (the first searches after a shard opens
        or changes arrive together: each computing the row sizes of a tier again, on
        the same cores, made all of them late), and computes it itself when that one
        failed.

        Raises:
            RuntimeError: ``compute`` asked for ``key`` itself (it would wait for itself).
            whatever ``compute`` raises.
        """
        while True:
            with self._lock:
                if key in self._kept:
                    self._kept.move_to_end(key)
                    return self._kept[key]
                computing, owner = self._computing.get(key, (None, None))
                if computing is None:
                    computing = threading.Event()
                    self._computing[key] = (computing, threading.get_ident())
                    break
                if owner == threading.get_ident():
                    raise RuntimeError(f"{key!r}: asked for while computing it")
            computing.wait()  # then kept (or failed: then computed here)
        try:
            value = compute()
            with self._lock:
                self._kept[key] = value
                while len(self._kept) > MAX_KEPT:
                    self._kept.popitem(last=False)
            return value
        finally:
            with self._lock:
                if self._computing.get(key, (None,))[0] is computing:
                    del self._computing[key]
            computing.set()

    def hand(self, key: tuple, value: object) -> None:
        """Hold ``value`` for one :meth:`take` of ``key``: what a search's cut round
        (:func:`textpile.search.cuts.scan_keys`) found of its scans, for the search
        round of the same search, which scans the same rows again (a prefix of them)
        and scores them with the same statistics. At most :data:`MAX_HANDED` values are
        held, the oldest dropped first (a search round that never came). A write to the
        file between the two rounds (a publish in place while searches run) starts a new
        memo for the searches after it; a search round already running when it lands
        takes the scans of the content its cut round read (as its cut is of that
        content), and reads the rows of its candidates as they are now (rows gone are
        left out, as ever)."""
        with self._lock:
            self._handed[key] = value
            self._handed.move_to_end(key)
            while len(self._handed) > MAX_HANDED:
                self._handed.popitem(last=False)

    def take(self, key: tuple) -> object | None:
        """The value :meth:`hand` holds under ``key``, no longer held (None: none). Taken
        once: a search never finds what an earlier search of the same words handed on
        to its own search round (no answer is kept between searches)."""
        with self._lock:
            return self._handed.pop(key, None)

    def table_totals(self, conn: sqlite3.Connection, table: str = TABLE) -> tuple[int, int]:
        """:func:`textpile.search.global_bm25.table_totals`, kept.

        Raises:
            sqlite3.Error: database problems.
        """
        return self.kept(("table_totals", table), lambda: table_totals(conn, table))

    def rows_up_to(self, conn: sqlite3.Connection, last: int, table: str = TABLE) -> tuple[int, int]:
        """:func:`textpile.search.global_bm25.rows_up_to`, kept.

        Raises:
            sqlite3.Error: database problems.
        """
        return self.kept(("rows_up_to", table, last), lambda: rows_up_to(conn, last, table))

    def phrase_documents(self, conn: sqlite3.Connection, phrases: list[str], table: str = TABLE,
                         last: int | None = None) -> dict[str, int]:
        """:func:`textpile.search.global_bm25.phrase_documents`, each phrase's count kept.

        Raises:
            sqlite3.Error: database problems.
        """
        out: dict[str, int] = {}
        with self._lock:
            for p in set(phrases):
                key = (table, p, last)
                if key in self._phrases:
                    self._phrases.move_to_end(key)
                    out[p] = self._phrases[key]
        missing = sorted(set(phrases) - set(out))
        if missing:
            counted = phrase_documents(conn, missing, table, last)
            out.update(counted)
            with self._lock:
                for p, n in counted.items():
                    self._phrases[(table, p, last)] = n
                while len(self._phrases) > self._max:
                    self._phrases.popitem(last=False)
        return out
