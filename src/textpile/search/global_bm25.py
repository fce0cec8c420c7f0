"""FTS5's bm25 of a shard's pages as one index of all the shards would give it.

FTS5's ``bm25()`` (SQLite's ``fts5_aux.c``, ``fts5Bm25Function``) scores a row for an
expression of phrases ``p`` as::

    sum over p of IDF(p) * F(p) * (k1 + 1) / (F(p) + k1 * (1 - b + b * D / avgdl))

with ``k1 = 1.2``, ``b = 0.75``, ``F(p)`` the phrase's hits in the row weighted by their
columns' weights, ``D`` the row's tokens (all columns), ``avgdl`` the table's tokens per
row and ``IDF(p) = log((N - n + 0.5) / (n + 0.5))`` (``1e-6`` when not positive), ``N``
the table's rows and ``n`` the rows holding ``p``. FTS5 takes ``N``, ``n`` and ``avgdl``
from its own table; over shards they must be the sums over every shard
(:class:`textpile.search.weights.CorpusStats`: ``pages``, ``phrases``, ``tokens``).

:class:`GlobalBm25` gets each phrase's own score of each candidate from the shard's table
(a one-phrase query over the candidates' rowids), recovers ``F(p)`` from it with the
shard's ``N``, ``n`` and ``avgdl`` (its ``search_index_data`` averages record, its
``search_index_docsize`` row sizes), and scores again with the summed statistics.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from textpile.index.docids import last_section_docid
from textpile.search.candidates import SCORE_POSTINGS, among_rows, expression_postings

if TYPE_CHECKING:
    from textpile.search.shard_memo import ShardMemo
    from textpile.search.weights import CorpusStats

#: FTS5's bm25 parameters (fts5_aux.c).
K1 = 1.2
B = 0.75
#: FTS5's IDF of a phrase at least half of the rows hold.
MIN_IDF = 1e-6
#: Significant digits a score over shards is rounded to.
DIGITS = 12
_PHRASE = re.compile(r'"(?:[^"]|"")*"')
#: The search index table a shard's pages are scored in.
TABLE = "search_index"
#: The search index table a shard's sections are scored in.
SECTION_TABLE = "section_search_index"


def fts5_idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase ``hits`` of ``rows`` rows hold (module docstring)."""
    ratio = (rows - hits + 0.5) / (hits + 0.5) if rows > 0 and hits >= 0 else 0.0
    value = math.log(ratio) if ratio > 0.0 else 0.0  # (more rows holding it than rows: stale counts)
    return value if value > 0.0 else MIN_IDF


def phrases_of(expression: str | None) -> list[str]:
    """The quoted phrases of an FTS5 ``expression`` as written (``"a b"``), in order,
    repeats kept (FTS5 scores each occurrence)."""
    return _PHRASE.findall(expression or "")


def counted_phrases(expression: str, holds) -> list[int]:
    """The occurrences of :func:`phrases_of` (``expression``) that FTS5 counts in bm25 for
    a row holding the phrases for which ``holds(phrase)`` is true: FTS5 zeroes the hits of
    the phrases of a sub-expression the row does not match (an ``AND`` group that fails,
    an ``OR`` branch that fails, the right side of ``NOT``), so ``"a" AND "b" OR "a" AND
    "c"`` counts ``a`` once for a row holding ``a`` and ``b`` only. Precedence as FTS5's:
    NOT, then AND, then OR; parentheses group. Raises ValueError on another syntax."""
    tokens = re.findall(r'"(?:[^"]|"")*"|\(|\)|\bAND\b|\bOR\b|\bNOT\b', expression)
    position = [0]
    phrase_index = [0]

    def peek():
        return tokens[position[0]] if position[0] < len(tokens) else None

    def take():
        position[0] += 1
        return tokens[position[0] - 1]

    def primary():
        token = take()
        if token == "(":
            out = either()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses in {expression!r}")
            return out
        if not token.startswith('"'):
            raise ValueError(f"unexpected {token!r} in {expression!r}")
        i = phrase_index[0]
        phrase_index[0] += 1
        found = bool(holds(token))
        return found, [i] if found else []

    def negated():
        matched, counted = primary()
        while peek() == "NOT":
            take()
            other, _ = primary()
            matched = matched and not other
            counted = counted if matched else []
        return matched, counted

    def both():
        matched, counted = negated()
        while peek() == "AND":
            take()
            m, c = negated()
            matched, counted = matched and m, counted + c
        return matched, counted if matched else []

    def either():
        matched, counted = both()
        while peek() == "OR":
            take()
            m, c = both()
            matched, counted = matched or m, counted + c
        return matched, counted

    return either()[1]


def varints(blob: bytes) -> list[int]:
    """The SQLite varints (1 to 9 bytes, big-endian groups of 7 bits) of ``blob``, as FTS5
    writes its averages record and row sizes (``sqlite3Fts5GetVarint``)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def table_totals(conn: sqlite3.Connection, table: str = TABLE) -> tuple[int, int]:
    """``(rows, tokens)`` of the FTS5 ``table``: its row count and its tokens in all
    columns, from its averages record (``<table>_data`` id 1); (0, 0) when empty."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    values = varints(bytes(row[0]))
    return values[0], sum(values[1:])


def phrase_documents(conn: sqlite3.Connection, phrases: list[str], table: str = TABLE,
                     last: int | None = None) -> dict[str, int]:
    """``{phrase: rows holding it}`` for the quoted ``phrases`` in the FTS5 ``table``: in
    search_index a one-term phrase from ``search_term``, any other counted by FTS5; with
    ``last``, the rows up to that rowid only (all counted by FTS5).

    Raises:
        sqlite3.Error: database problems.
    """
    out: dict[str, int] = {}
    if last is not None:
        for p in set(phrases):
            out[p] = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid <= ?",
                                  [p, last]).fetchone()[0]
        return out
    single = {p: p[1:-1].replace('""', '"') for p in set(phrases) if " " not in p[1:-1].strip()} \
        if table == TABLE else {}
    if single:
        terms = sorted(set(single.values()))
        marks = ", ".join("?" * len(terms))
        docs = dict(conn.execute(f"SELECT term, docs FROM search_term WHERE term IN ({marks})", terms).fetchall())
        out.update((p, int(docs.get(t, 0))) for p, t in single.items())
    for p in set(phrases) - set(single):
        out[p] = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", [p]).fetchone()[0]
    return out


def rows_up_to(conn: sqlite3.Connection, last: int, table: str = TABLE) -> tuple[int, int]:
    """``(rows, tokens)`` of the FTS5 ``table``'s rows up to rowid ``last``: their count
    and their tokens in all columns, from the row sizes (``<table>_docsize``) of those
    rows or, when fewer, of the others taken from the table's totals (:func:`table_totals`).
    The sizes are read as one string of hex digits and summed by :func:`varint_sum` (a
    shard's part of one index's first tier has the sections of thousands of pages:
    77,458 rows in 38 ms, against 174 ms decoded row by row in Python, on the speed
    benchmark's 100K pages over 3 shards; a shard's first search counts them).

    Raises:
        sqlite3.Error: database problems.
        IndexError: a row size whose last varint is cut short (a damaged table).
    """
    rows, tokens = table_totals(conn, table)
    after = conn.execute(f"SELECT count(*) FROM {table}_docsize WHERE id > ?", (last,)).fetchone()[0]
    if 2 * after <= rows:
        (sizes,) = conn.execute(f"SELECT group_concat(hex(sz), '') FROM {table}_docsize WHERE id > ?",
                                (last,)).fetchone()
        return rows - after, tokens - varint_sum(bytes.fromhex(sizes or ""))
    (sizes,) = conn.execute(f"SELECT group_concat(hex(sz), '') FROM {table}_docsize WHERE id <= ?",
                            (last,)).fetchone()
    return rows - after, varint_sum(bytes.fromhex(sizes or ""))


def varint_sum(data: bytes) -> int:
    """``sum(varints(data))``, vectorized: each byte's 7 bits shifted by the bytes that
    follow it in its varint (one that ends below 0x80). A varint of 9 bytes (whose last
    byte has 8 bits) or a cut one at the end is summed by :func:`varints`.

    Raises:
        IndexError: the last varint of ``data`` is cut short.
    """
    array = np.frombuffer(data, dtype=np.uint8)
    if not array.size:
        return 0
    ends = np.flatnonzero(array < 0x80)
    if not ends.size or ends[-1] != array.size - 1:
        return sum(varints(data))
    at = np.arange(array.size)
    following = ends[np.searchsorted(ends, at)] - at
    if int(following.max()) >= 8:
        return sum(varints(data))
    bits = (array & 0x7F).astype(np.uint64)
    # each shift's bytes summed apart (in 64 bits: exact below 10**17 bytes), shifted as Python integers
    return sum(int(bits[following == k].sum()) << (7 * k) for k in range(int(following.max()) + 1))


def row_tokens(conn: sqlite3.Connection, docids: list[int], table: str = TABLE) -> dict[int, int]:
    """``{docid: tokens in all columns}`` from ``<table>_docsize``."""
    out: dict[int, int] = {}
    for start in range(0, len(docids), 500):
        chunk = docids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for docid, size in conn.execute(f"SELECT id, sz FROM {table}_docsize WHERE id IN ({marks})", chunk):
            out[docid] = sum(varints(bytes(size or b"")))
    return out


class GlobalBm25:
    """Scores a shard's candidates (docids of the FTS5 ``table`` of ``conn``:
    search_index, or section_search_index for sections) with the summed statistics
    ``pages`` (rows), ``tokens`` and ``phrases`` ({phrase: rows holding it}) and the
    column ``weights``, as FTS5's bm25 of one index of every shard would."""

    def __init__(self, conn: sqlite3.Connection, pages: int, tokens: int, phrases: Mapping[str, int],
                 weights: tuple[float, ...], table: str = TABLE, memo: ShardMemo | None = None) -> None:
        self.conn = conn
        self.table = table
        self.rows, self.tokens = pages, tokens
        self.phrases = phrases
        self.weights = ", ".join(repr(float(w)) for w in weights)
        self.memo = memo  # the shard's own counts, kept between searches (its totals, its phrases' rows)
        self.local_rows, local_tokens = table_totals(conn, table) if memo is None else memo.table_totals(conn, table)
        self.local_avgdl = local_tokens / self.local_rows if self.local_rows else 1.0
        self.avgdl = tokens / pages if pages and tokens else self.local_avgdl

    def __call__(self, scanned: list[tuple[int, float]], expression: str | None,
                 shared: dict | None = None) -> list[tuple[int, float]]:
        """``scanned`` ((docid, local score)) with the global bm25 of ``expression``.
        ``shared``: what the shard's own table says of the phrases (their rows, each
        one's score of the rows in the scan's range) and of the rows (their sizes), kept
        there for another scoring of the same rows with other statistics (one index's
        first tier's).

        Raises:
            sqlite3.Error: database problems (an interrupted statement: the time budget).
        """
        docids = [d for d, _ in scanned]
        if not docids or not expression:
            return scanned
        shared = shared if shared is not None else {}
        phrases = phrases_of(expression)
        key = ("rows", self.table, expression)
        if key not in shared:
            shared[key] = phrase_documents(self.conn, phrases, self.table) if self.memo is None else \
                self.memo.phrase_documents(self.conn, phrases, self.table)
        local = shared[key]
        key = ("sizes", self.table, tuple(docids))
        if key not in shared:
            shared[key] = row_tokens(self.conn, docids, self.table)
        sizes = shared[key]
        ordered = sorted(set(docids))
        scores: dict[str, dict[int, float]] = {}  # phrase -> {docid: its global score}
        for phrase in sorted(set(phrases)):
            hits_here = local.get(phrase, 0)
            scores[phrase] = {}
            if hits_here == 0:
                continue  # no page of this shard holds it
            hits = self.phrases.get(phrase, hits_here)
            idf_here, idf = fts5_idf(self.local_rows, hits_here), fts5_idf(self.rows, hits)
            for docid, score in self._phrase_scores(phrase, ordered, shared):
                size = sizes.get(docid, 0)
                x = min(score / idf_here, K1 + 1 - 1e-9)
                k_here = K1 * (1 - B + B * size / self.local_avgdl)
                f = k_here * x / (K1 + 1 - x)
                k = K1 * (1 - B + B * size / self.avgdl)
                scores[phrase][docid] = idf * f * (K1 + 1) / (f + k)
        out = []
        distinct = sorted(scores)
        counted_for: dict[tuple[bool, ...], list[int]] = {}  # which phrases a row holds -> those counted
        for docid, _ in scanned:
            held = tuple(docid in scores[p] for p in distinct)
            counted = counted_for.get(held)
            if counted is None:  # the expression parsed once per pattern of held phrases, not per row
                counted = counted_for[held] = counted_phrases(expression, lambda p: docid in scores[p])
            # rounded: the same row scored on two shards differs in its last bits (another path
            # to the same value), which would break one index's ties between equal rows
            out.append((docid, float(f"{sum(scores[phrases[i]][docid] for i in counted):.{DIGITS}g}")))
        return out

    def fingerprint(self, expression: str | None) -> tuple:
        """What this scorer's scores of ``expression`` depend on besides the shard's own
        table: the table, the weights and the statistics of the expression's phrases.
        Two scorers with equal fingerprints give every row the same score."""
        phrases = sorted(set(phrases_of(expression)))
        return self.table, self.weights, self.rows, self.tokens, tuple(self.phrases.get(p) for p in phrases)

    def _phrase_scores(self, phrase: str, docids: list[int], shared: dict) -> list[tuple[int, float]]:
        """``(rowid, FTS5's bm25 of ``phrase`` alone)`` of the rows ``docids`` (sorted)
        holding it (:func:`textpile.search.candidates.among_rows`), kept in ``shared``."""
        key = ("scores", self.table, self.weights, phrase, tuple(docids))
        if key not in shared:
            table = self.table
            among, params = among_rows(docids)
            shared[key] = self.conn.execute(
                f"SELECT rowid, -bm25({table}, {self.weights}) FROM {table} WHERE {table} MATCH ? AND {among}",
                [phrase, *params]).fetchall()
        return shared[key]


def tier_postings(terms: Mapping[str, int], share: float) -> dict[str, float]:
    """``{term: pages}`` of every shard (``terms``) times ``share``: one index scores a
    scan of its first tier when that share of the postings is few enough
    (:func:`textpile.search.candidates.tiered_scan`: postings times tier rows over rows)."""
    return dict(terms) if share == 1.0 else {t: n * share for t, n in terms.items()}


class TieredBm25:
    """The bm25 of a shard's rows (pages, or sections with ``sections``) as one index of
    every shard scores them (``stats``, summed), with a first tier
    (:mod:`textpile.index.tier`; ``stats.tier``, the shard's part of it up to
    ``stats.tier_last``) as :func:`textpile.search.candidates.tiered_scan` does: a scan
    ending in the tier (``in_tier``) with the tier's statistics; another with every
    page's when bm25 reads few enough postings, else its rows in the tier with the
    tier's and the others 0."""

    def __init__(self, conn: sqlite3.Connection, stats: CorpusStats, weights: tuple[float, ...], in_tier: bool = False,
                 sections: bool = False) -> None:
        table = SECTION_TABLE if sections else TABLE

        def bm25(of: CorpusStats) -> GlobalBm25:
            if sections:
                return GlobalBm25(conn, of.sections, of.section_tokens, of.section_phrases, weights, table, stats.memo)
            return GlobalBm25(conn, of.pages, of.tokens, of.phrases, weights, table, stats.memo)

        self.conn, self.terms, self.in_tier = conn, stats.terms, in_tier
        self.whole = bm25(stats)
        self.tier = bm25(stats.tier) if stats.tier is not None and stats.tier_last is not None else None
        last = stats.tier_last or 0
        self.tier_last = (last_section_docid(last) if last else 0) if sections else last
        rows, top = (stats.sections, stats.tier.sections) if sections and stats.tier else \
            (stats.pages, stats.tier.pages) if stats.tier else (1, 1)
        #: {term: pages} deciding whether one index scores the scan (its first tier's share)
        self.docs = tier_postings(stats.terms, top / rows if rows else 1.0)

    def fingerprint(self, expression: str | None) -> tuple:
        """What this scorer's scores of ``expression`` depend on besides the shard's own
        tables (:meth:`GlobalBm25.fingerprint` of the scorers it uses, and which it uses):
        two scorers with equal fingerprints give every row the same score (a search's
        cut round hands its sections' scores on to its search round by it:
        :func:`textpile.search.candidates.sections_scored_by`)."""
        if self.tier is None:
            return (self.whole.fingerprint(expression),)
        if self.in_tier:
            return "tier", self.tier.fingerprint(expression)
        if expression_postings(self.conn, expression or "", self.terms) <= SCORE_POSTINGS:
            return "whole", self.whole.fingerprint(expression)
        return "tier rows", self.tier_last, self.tier.fingerprint(expression)

    def __call__(self, scanned: list[tuple[int, float]], expression: str | None,
                 shared: dict | None = None) -> list[tuple[int, float]]:
        """``scanned`` ((docid, local score)) with one index's bm25 of ``expression``
        (``shared`` as :meth:`GlobalBm25.__call__`'s).

        Raises:
            sqlite3.Error: database problems.
        """
        if self.tier is None:
            return self.whole(scanned, expression, shared)
        if self.in_tier:
            return self.tier(scanned, expression, shared)
        if expression_postings(self.conn, expression or "", self.terms) <= SCORE_POSTINGS:
            return self.whole(scanned, expression, shared)
        scores = dict(self.tier([r for r in scanned if r[0] <= self.tier_last], expression, shared))
        return [(docid, scores.get(docid, 0.0)) for docid, _ in scanned]


def page_rescorer(conn: sqlite3.Connection, stats: CorpusStats, weights: tuple[float, ...],
                  in_tier: bool = False) -> tuple[TieredBm25, dict[str, float]]:
    """The bm25 of a shard's pages as one index of every shard scores them
    (:class:`TieredBm25`) and the ``{term: pages}`` that decide whether it scores a scan."""
    bm25 = TieredBm25(conn, stats, weights, in_tier)
    return bm25, bm25.docs


def section_rescorer(conn: sqlite3.Connection, stats: CorpusStats | None, weights: tuple[float, ...],
                     in_tier: bool = False) -> tuple[TieredBm25 | None, dict[str, float] | None]:
    """:func:`page_rescorer` of the section index; (None, None) for one index (no
    ``stats``) or one without sections."""
    if stats is None or not stats.sections:
        return None, None
    bm25 = TieredBm25(conn, stats, weights, in_tier, sections=True)
    return bm25, bm25.docs
