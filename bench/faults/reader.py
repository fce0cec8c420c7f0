"""A reader of a published copy, in a process of its own, while publishes write it.

    python bench/faults/reader.py PUBLISHED EXPECTED.json OUT.json STOP_FILE KIND

Until ``STOP_FILE`` exists it searches ``PUBLISHED`` in a loop, as one kind of reader
does (``KIND``):

* ``long-lived``: one connection for the process's life (a server);
* ``fresh``: a connection opened for each search as ``textpile search`` opens it
  (read-only, with the damage check it runs on a file version it has not seen pass);
* ``long-lived+fresh``: both in one process, in turns (a server that also opens the
  file anew, for instance for another index or a check).

Each round runs every query of ``EXPECTED.json`` (``{"states": {name: {"count":
search_page rows, "results": {query: [url, ...]}}}}``) with textpile's search and counts
the searchable pages, in one read transaction. An exception, a damage warning, or an
answer of no known state counts as an error. ``STOP_FILE`` (made whole, by a rename)
holds the name of the state published last: once it exists each connection kind answers once more and must give
that state (else it is an error: a reader left on an old state). ``OUT.json.ready``
appears after the first round; ``{"rounds", "errors", "states", "examples"}`` goes to
``OUT.json`` at the end.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from textpile.cli.search import damage_warning
from textpile.search.engine import search
from textpile.store.database import open_summary_db

#: The time budget of each search, ms: long enough that a loaded machine never cuts a
#: result list short (a cut list would look like an unknown state).
BUDGET_MS = 60_000
KINDS = ("long-lived", "fresh", "long-lived+fresh")


def answer(conn: sqlite3.Connection, queries: list[str]) -> tuple[int, dict[str, list[str]]]:
    """The searchable page count and each query's result URLs, as ``conn`` reads them in
    one read transaction (one snapshot: a publish committing between two statements
    would otherwise give answers of two states)."""
    conn.execute("BEGIN")
    try:
        count = conn.execute("SELECT count(*) FROM search_page").fetchone()[0]
        results = {q: [r.url for r in search(conn, q, budget_ms=BUDGET_MS).results] for q in queries}
        if not conn.in_transaction:
            raise AssertionError("the search ended the read transaction")
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
    return count, results


def state_of(count: int, results: dict[str, list[str]], states: dict) -> str | None:
    """The name of the state whose answers these are, or None."""
    for name, expected in states.items():
        if count == expected["count"] and results == expected["results"]:
            return name
    return None


class Loop:
    """The reader's rounds and what they saw."""

    def __init__(self, published: str, states: dict) -> None:
        self.published, self.states = published, states
        self.queries = sorted(next(iter(states.values()))["results"])
        self.rounds = self.errors = 0
        self.seen: Counter = Counter()
        self.examples: list[str] = []
        self.served: sqlite3.Connection | None = None

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.examples) < 5:
            self.examples.append(what)

    def round(self, connection: str) -> str | None:
        """One round on a ``long-lived`` or ``fresh`` connection; the state it saw (None: an error)."""
        self.rounds += 1
        try:
            if connection == "long-lived":
                if self.served is None:
                    self.served = open_summary_db(self.published, create=False, read_only=True)
                count, results = answer(self.served, self.queries)
            else:
                conn = open_summary_db(self.published, create=False, read_only=True)
                try:
                    warning = damage_warning(conn, self.published)
                    if warning is not None:
                        self.error(f"{connection}: {warning}")
                        return None
                    count, results = answer(conn, self.queries)
                finally:
                    conn.close()
        except Exception as exc:  # every failure a reader would see is counted, with its message
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.error(f"{connection}: {type(exc).__module__}.{type(exc).__name__}: {exc} "
                       f"(at {Path(where.filename).name}:{where.lineno} {where.name})")
            return None
        name = state_of(count, results, self.states)
        if name is None:
            self.error(f"{connection}: an answer of no known state ({count} pages)")
        else:
            self.seen[name] += 1
        return name


def main(published: str, expected_path: str, out_path: str, stop_path: str, kind: str) -> None:
    if kind not in KINDS:
        raise SystemExit(f"reader.py: KIND must be one of {', '.join(KINDS)}, got {kind!r}")
    loop = Loop(published, json.loads(Path(expected_path).read_text())["states"])
    connections = kind.split("+")
    ready, stop = Path(f"{out_path}.ready"), Path(stop_path)
    while not stop.exists():
        for connection in connections:
            loop.round(connection)
        ready.touch()
        time.sleep(0.005)
    last = stop.read_text().strip()
    for connection in connections:
        name = loop.round(connection)
        if name is not None and name != last:
            loop.error(f"{connection}: still answers state {name} after state {last} was published")
    if loop.served is not None:
        loop.served.close()
    Path(out_path).write_text(json.dumps({"rounds": loop.rounds, "errors": loop.errors, "states": dict(loop.seen),
                                          "examples": loop.examples}))


if __name__ == "__main__":
    main(*sys.argv[1:6])
