"""Keeping the search index of a summary database up to date by what changed.

The index holds the searchable generations (:mod:`textpile.store.searchable`):
``full_text_entity_index`` (documented, :mod:`textpile.index.fulltext`) and textpile's
search tables (:mod:`textpile.index.schema`). After a summarize run some generations
were opened (new or changed pages), closed or marked duplicate. :func:`update_index`
compares the pages the index holds (``search_page``) with the searchable generations
and changes only what differs, in one transaction:

1. the pages that leave (no longer searchable), the pages that enter, and the pages
   whose rows change with them: those linked from a page that leaves or enters (their
   anchor texts, in-link counts and so docids change: :mod:`textpile.index.inlinks`),
   and those with a heading that becomes boilerplate or stops being it
   (:mod:`textpile.index.boilerplate`);
2. the old rows of the pages that leave or change are deleted with the values they were
   inserted with, which ``search_page_terms`` keeps (:func:`textpile.index.pages.stored_rows`;
   an index without them is rebuilt instead);
3. the counts are changed, and the new rows of the pages that enter or change are
   inserted: a page that enters, or whose boilerplate headings change, is analyzed; a
   page whose in-links change has only its docid and anchor texts made again
   (:func:`textpile.index.pages.relinked_rows`), and keeps what of its rows stays the
   same through steps 2 and 3 (its section rows with the same docid, its stored terms and
   its vocabulary counts with the same values: :func:`_kept`);
4. the first tier moves to its new end (:mod:`textpile.index.tier`), and the
   vocabularies take the counts of what was deleted and inserted
   (:mod:`textpile.index.vocabulary`).

A run with nothing new reads the two lists of step 1 and writes nothing. A rebuild
(``rebuild=True``, or an index written by another :func:`~textpile.index.schema.index_version`
or layout) empties the tables and fills them from every searchable generation with the
same row code, so both give the same index.
Source: unobtanium-documentation.txt, page "Summarizing" ((Re)generating full text index).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NamedTuple

from textpile.index import boilerplate, fulltext, inlinks, vocabulary
from textpile.index.pages import (InLinks, PageRows, load_inlinks, load_sources, pack_terms, page_rows, relinked_rows,
                                  same_rows, stored_rows)
from textpile.index.schema import (FTS_TABLES, QUERY_TABLES, SEARCH_COLUMNS, SECTION_COLUMNS, UPDATE_TABLES,
                                   empty_fts, ensure_current_tables, fts_delete_sql, fts_insert_sql, index_version,
                                   optimize_fts)
from textpile.index import tier
from textpile.index.tier import moved_pages, section_end, tier_end
from textpile.progress import progress_bar
from textpile.index.analysis import Analyzer
from textpile.store.changed_pages import forget as forget_changes
from textpile.store.changed_pages import recorded_writes
from textpile.store.database import open_summary_db, sqlite_errors
from textpile.store.gen2_piles import register_functions
from textpile.store.searchable import searchable

#: Pages read and written together.
BATCH_PAGES = 200

_SEARCHABLE = searchable("eg")
_MEMBERS_SQL = f"SELECT eg.entity_generation_id FROM entity_generation eg WHERE {_SEARCHABLE} ORDER BY 1"
_LEAVING_SQL = f"""
SELECT sp.entity_generation_id FROM search_page sp
LEFT JOIN entity_generation eg ON eg.entity_generation_id = sp.entity_generation_id
WHERE eg.entity_generation_id IS NULL OR NOT ({_SEARCHABLE}) ORDER BY 1
"""
_ENTERING_SQL = f"""
SELECT eg.entity_generation_id FROM entity_generation eg
WHERE {_SEARCHABLE}
  AND NOT EXISTS (SELECT 1 FROM search_page sp WHERE sp.entity_generation_id = eg.entity_generation_id)
ORDER BY 1
"""
_LINKED_SQL = """
SELECT sp.entity_generation_id FROM json_each(?) j
JOIN entity_generation eg ON eg.url_id = j.value AND eg.url_fragment IS NULL
JOIN search_page sp ON sp.entity_generation_id = eg.entity_generation_id
"""
_PAGE_COLUMNS = QUERY_TABLES["search_page"]
_PAGE_INSERT = f"INSERT INTO search_page({', '.join(_PAGE_COLUMNS)}) VALUES (?{', ?' * (len(_PAGE_COLUMNS) - 1)})"
_TIERS_SQL = "SELECT pages, sections, last_docid, top_pages, top_sections FROM search_top_tier"


@dataclass
class IndexReport:
    """What :func:`update_index` did: the pages and sections the index holds afterwards,
    pages per stemmer language (``""``: not stemmed), the first tier's pages (0: none),
    whether it was rebuilt whole and why, and the pages that left, entered or were
    indexed again (their links or boilerplate headings changed)."""

    pages: int = 0
    sections: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    top_tier_pages: int = 0
    rebuilt: bool = False
    rebuild_reason: str = ""
    pages_removed: int = 0
    pages_added: int = 0
    pages_reindexed: int = 0
    pages_recounted: int = 0  # pages whose in-link counts changed but not their rows
    pages_sections_kept: int = 0  # pages indexed again whose section rows stayed as they were
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of this process (the update runs in it alone)


class IndexDrift(Exception):
    """The stored search tables do not hold what their counts say (a page's row made again
    differs from the stored one): the index is rebuilt instead of updated."""


def _chunks(ids: list[int], size: int = BATCH_PAGES) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


class _Kept(NamedTuple):
    """What of a page's stored rows stays through its delete and insert: its section rows
    (section_search_index and search_section), its stored terms (search_page_terms, the
    same values whatever the docid: :func:`textpile.index.pages.pack_terms`), and whether
    its search_index values stay (its terms are then not counted as deleted and inserted)."""

    sections: bool = False
    terms: bool = False
    values: bool = False


#: A page whose rows all go and come again.
_NOTHING_KEPT = _Kept()


def _kept(old: PageRows, new: PageRows) -> _Kept:
    """What of ``old`` (a page's stored rows) ``new`` (its rows made again after its
    in-links changed: :func:`textpile.index.pages.relinked_rows`) holds as it is: its
    section rows when they are equal (same docids and values); its terms when its
    search_index and section values are equal (the docid may differ)."""
    sections = [r[1:] for r in new.section_rows] == [r[1:] for r in old.section_rows]
    values = new.search_row[1:] == old.search_row[1:]
    return _Kept(sections=sections and new.docid == old.docid,
                 terms=sections and values and new.section_anchors == old.section_anchors, values=values)


class _Writer:
    """Inserts and deletes pages' rows in the search tables and keeps the counts of what it did."""

    _PAGE_TABLES = ("search_index", "search_index_top")
    _SECTION_TABLES = ("section_search_index", "section_search_index_top")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.sections = 0  # sections inserted less sections deleted
        self.top_pages = 0
        self.top_sections = 0
        self._insert = {t: fts_insert_sql(t, SEARCH_COLUMNS) for t in self._PAGE_TABLES}
        self._insert.update({t: fts_insert_sql(t, SECTION_COLUMNS) for t in self._SECTION_TABLES})
        self._delete = {t: fts_delete_sql(t, SEARCH_COLUMNS) for t in self._PAGE_TABLES}
        self._delete.update({t: fts_delete_sql(t, SECTION_COLUMNS) for t in self._SECTION_TABLES})

    def insert(self, rows: PageRows, kept: _Kept = _NOTHING_KEPT) -> None:
        """The page's rows in search_index, section_search_index, search_page and search_section
        (but those ``kept`` by its :meth:`delete`)."""
        self.conn.execute(self._insert["search_index"], rows.search_row)
        if not kept.sections:
            self.conn.executemany(self._insert["section_search_index"], [r[:4] for r in rows.section_rows])
        self.conn.execute(_PAGE_INSERT, rows.page_row)
        if not kept.terms:
            self.conn.execute("INSERT INTO search_page_terms(entity_generation_id, terms, terms_size) "
                              "VALUES (?, ?, ?)", (rows.entity_generation_id, *pack_terms(rows)))
        if not kept.sections:
            self.conn.executemany("INSERT INTO search_section(section_summary_id, docid) VALUES (?, ?)",
                                  [(r[4], r[0]) for r in rows.section_rows])
            self.sections += len(rows.section_rows)

    def delete(self, rows: PageRows, in_tier: bool, kept: _Kept = _NOTHING_KEPT) -> None:
        """The page's rows out of every table (the first tier too when ``in_tier``), but those
        ``kept``: the rows of its sections, its stored terms, when the page's rows made
        again hold the same ones (:func:`_kept`)."""
        self.conn.execute(self._delete["search_index"], rows.search_row)
        if not kept.sections:
            self.conn.executemany(self._delete["section_search_index"], [r[:4] for r in rows.section_rows])
        if in_tier:
            self.tier(rows, -1)
        if not kept.terms:
            self.conn.execute("DELETE FROM search_page_terms WHERE entity_generation_id = ?",
                              (rows.entity_generation_id,))
        self.conn.execute("DELETE FROM search_page WHERE entity_generation_id = ?", (rows.entity_generation_id,))
        if not kept.sections:
            self.conn.executemany("DELETE FROM search_section WHERE docid = ?", [(r[0],) for r in rows.section_rows])
            self.sections -= len(rows.section_rows)

    def tier(self, rows: PageRows, sign: int) -> None:
        """The page's rows into the first tier (``sign`` 1) or out of it (-1)."""
        verb = self._insert if sign > 0 else self._delete
        self.conn.execute(verb["search_index_top"], rows.search_row)
        self.conn.executemany(verb["section_search_index_top"], [r[:4] for r in rows.section_rows])
        self.top_pages += sign
        self.top_sections += sign * len(rows.section_rows)


class _Boilerplate:
    """The boilerplate titles of each origin (before or after an update's changes), looked up once."""

    def __init__(self, lookup: Callable[[int], frozenset[str]]) -> None:
        self.lookup = lookup
        self.known: dict[int, frozenset[str]] = {}

    def __call__(self, origin: int) -> frozenset[str]:
        found = self.known.get(origin)
        if found is None:
            found = self.known[origin] = self.lookup(origin)
        return found


def _rows_of(conn: sqlite3.Connection, analyzer: Analyzer, ids: list[int], titles: _Boilerplate,
             made: dict[int, PageRows] | None = None) -> Iterator[list[PageRows]]:
    """The rows of the pages of ``ids`` as the counts are now, a batch at a time, each
    batch in docid order (FTS5 writes a segment whenever a row's docid is below the last
    one written, so rows go in ascending order): analyzed from their sources, but those
    of ``made`` (rows already made: pages whose in-links changed) as they are."""
    made = made or {}
    for batch in _chunks(ids):
        rows = [page_rows(analyzer, source, load_inlinks(conn, source.url_id, source.url_fragment),
                          titles(source.origin_id))
                for source in load_sources(conn, [eg for eg in batch if eg not in made])]
        rows += [made[eg] for eg in batch if eg in made]
        yield sorted(rows, key=lambda r: r.docid)


def _stored_of(conn: sqlite3.Connection, ids: list[int]) -> Iterator[list[PageRows]]:
    """The stored rows of the indexed pages of ``ids`` (:func:`textpile.index.pages.stored_rows`),
    a batch at a time in docid order.

    Raises:
        IndexDrift: a page of ``ids`` has no stored rows.
    """
    for batch in _chunks(ids):
        rows = stored_rows(conn, batch)
        if len(rows) != len(batch):
            raise IndexDrift(f"{len(batch) - len(rows)} pages of search_page have no stored terms "
                             "(search_page_terms)")
        yield rows


def update_index(conn: sqlite3.Connection, *, rebuild: bool = False, progress: bool = False,
                 on_page: Callable[[], None] | None = None, top_tier_pages: int | None = None) -> IndexReport:
    """Bring the search index of the summary database ``conn`` up to date with its
    searchable generations, by what changed (module docstring), or rebuild it whole with
    ``rebuild`` (also when the index was written by another version or layout); one
    transaction. ``progress`` shows an "Indexing" progress display of the pages to index
    (out of their number, once known); ``on_page`` is called per page indexed;
    ``top_tier_pages`` (at least 1) is the size of the first tier (None:
    :data:`textpile.index.tier.TOP_TIER_PAGES`).

    Raises:
        sqlite3.Error: database problems (locked, read-only, full disk); nothing is changed.
        DatabaseError: a generation id too large for a docid (textpile.index.docids).
    """
    started, cpu_started = time.monotonic(), time.process_time()
    top_tier_pages = tier.TOP_TIER_PAGES if top_tier_pages is None else top_tier_pages
    register_functions(conn)  # the text_pile view unpacks the Gen2 texts (textpile.store.gen2_piles)
    remade = fulltext.make_external(conn)
    outdated = ensure_current_tables(conn)
    if conn.in_transaction:
        conn.commit()
    reason = ("asked for" if rebuild else "the full text index was made anew" if remade else outdated or "")
    with progress_bar("Indexing", None, enabled=progress) as bar:
        def page() -> None:
            bar.advance(1)
            if on_page is not None:
                on_page()

        conn.execute("BEGIN IMMEDIATE")
        try:
            report = None
            if not reason:
                try:
                    report = _update(conn, page, bar.update_total, top_tier_pages)
                except IndexDrift as drift:
                    reason = str(drift)
            if report is None:
                report = _rebuild(conn, page, bar.update_total, top_tier_pages)
                report.rebuilt, report.rebuild_reason = True, reason
            conn.commit()
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
    report.seconds = time.monotonic() - started
    report.cpu_seconds = time.process_time() - cpu_started
    return report


def _report(conn: sqlite3.Connection) -> IndexReport:
    """The index's size as search_top_tier and search_language hold it."""
    row = conn.execute("SELECT pages, sections, top_pages FROM search_top_tier").fetchone() or (0, 0, 0)
    languages = dict(conn.execute("SELECT language, pages FROM search_language").fetchall())
    return IndexReport(pages=row[0], sections=row[1], top_tier_pages=row[2], languages=languages)


def _check_counts(entity_generation_id: int, stored: tuple | list, links: InLinks) -> None:
    """Raise IndexDrift unless the in-link counts ``stored`` in search_page for the page are
    those of ``links`` (the counts tables before the update's changes)."""
    if tuple(stored) != (links.pages, links.content_pages):
        raise IndexDrift(f"the stored row of generation {entity_generation_id} in search_page does not match "
                         "its in-link counts (search_inlink)")


def _update(conn: sqlite3.Connection, page: Callable[[], None], total: Callable[[int], None],
            top_tier_pages: int) -> IndexReport | None:
    """The index brought up to date by its changes (module docstring); None when it has
    no first-tier row to start from (an empty new index: rebuild)."""
    tiers = conn.execute(_TIERS_SQL).fetchone()
    if tiers is None:
        return None
    pages, sections, old_end, top_pages, top_sections = tiers
    leaving = [r[0] for r in conn.execute(_LEAVING_SQL)]
    entering = [r[0] for r in conn.execute(_ENTERING_SQL)]
    if not leaving and not entering:
        total(0)
        return _report(conn)
    links = inlinks.LinkChanges.of(conn, leaving, entering)
    headings = boilerplate.HeadingChanges.of(conn, boilerplate.page_headings(conn, leaving),
                                              boilerplate.page_headings(conn, entering))
    linked = set(r[0] for r in conn.execute(_LINKED_SQL, (json.dumps(sorted(links.urls)),))) - set(leaving)
    flipped = headings.flipped_pages(conn) - set(leaving)
    # the in-links every old row was made with, before the counts change
    at = {eg: (url, fragment) for eg, url, fragment in conn.execute(
        "SELECT entity_generation_id, url_id, url_fragment FROM entity_generation "
        "WHERE entity_generation_id IN (SELECT value FROM json_each(?))", (json.dumps([*leaving, *linked, *flipped]),))}
    old_links = {eg: load_inlinks(conn, *where) for eg, where in at.items()}
    try:
        links.apply(conn)
        headings.apply(conn)
    except sqlite3.IntegrityError as exc:
        raise IndexDrift(str(exc)) from exc
    counts_only = []  # linked pages whose rows stay: only their in-link counts change
    again = set(flipped)
    for eg, density, *counts in conn.execute(
            "SELECT entity_generation_id, link_density, in_links, content_in_links FROM search_page "
            "WHERE entity_generation_id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(linked - flipped)),)):
        _check_counts(eg, counts, old_links[eg])
        now = load_inlinks(conn, *at[eg])
        if same_rows(old_links[eg], now, eg, density):
            counts_only.append((now.pages, now.content_pages, eg))
        else:
            again.add(eg)
    conn.executemany("UPDATE search_page SET in_links = ?, content_in_links = ? WHERE entity_generation_id = ?",
                     counts_only)
    old = leaving + sorted(again)
    new = entering + sorted(again)
    total(len(old) + len(new))
    analyzer = Analyzer()
    writer = _Writer(conn)
    writer.top_pages, writer.top_sections = top_pages, top_sections
    changes = vocabulary.VocabularyChanges(conn)
    old_docids = dict(conn.execute("SELECT entity_generation_id, docid FROM search_page "
                                   "WHERE entity_generation_id IN (SELECT value FROM json_each(?))",
                                   (json.dumps(old),)).fetchall())
    relink = again - flipped  # their rows change with their in-links only: made from their stored rows
    relinked: dict[int, PageRows] = {}
    kept: dict[int, _Kept] = {}  # relinked pages whose delete and insert keep some of their rows
    for batch in _stored_of(conn, sorted(old, key=old_docids.__getitem__)):
        for rows in batch:
            eg = rows.entity_generation_id
            _check_counts(eg, rows.page_row[6:8], old_links[eg])
            if eg in relink:  # the counts tables changed above: the in-links are those of its new rows
                relinked[eg] = relinked_rows(analyzer, rows, load_inlinks(conn, *at[eg]))
                kept[eg] = _kept(rows, relinked[eg])
            writer.delete(rows, in_tier=bool(old_end) and rows.docid <= old_end, kept=kept.get(eg, _NOTHING_KEPT))
            page()
        # a page whose search_index values stay counts no term as deleted or inserted (nor below)
        counted = [r for r in batch if not kept.get(r.entity_generation_id, _NOTHING_KEPT).values]
        changes.page_rows([r.search_row for r in counted], [r.language for r in counted], -1)
    for batch in _chunks(leaving):  # each page's text read once, for its delete and its words' counts
        source = fulltext.source_rows(conn, batch)
        changes.full_text_rows(source, -1)
        fulltext.delete_rows(conn, source)
    entered_docids: dict[int, int] = {}
    for batch in _rows_of(conn, analyzer, new, _Boilerplate(partial(headings.after, conn=conn)), relinked):
        for rows in batch:
            writer.insert(rows, kept.get(rows.entity_generation_id, _NOTHING_KEPT))
            entered_docids[rows.entity_generation_id] = rows.docid
            page()
        counted = [r for r in batch if not kept.get(r.entity_generation_id, _NOTHING_KEPT).values]
        changes.page_rows([r.search_row for r in counted], [r.language for r in counted], 1)
    for batch in _chunks(entering):
        source = fulltext.source_rows(conn, batch)
        fulltext.insert_rows(conn, source)
        changes.full_text_rows(source, 1)
    pages += len(entering) - len(leaving)
    new_end = tier_end(conn, pages, top_tier_pages)
    enter, leave = moved_pages(conn, old_end, new_end, set(new))
    enter += [eg for eg, docid in entered_docids.items() if new_end and docid <= new_end]
    docids = dict(conn.execute("SELECT entity_generation_id, docid FROM search_page "
                               "WHERE entity_generation_id IN (SELECT value FROM json_each(?))",
                               (json.dumps(enter),)).fetchall())
    enter.sort(key=docids.__getitem__)
    for ids, sign in ((leave, -1), (enter, 1)):
        for batch in _stored_of(conn, ids):
            for rows in batch:
                writer.tier(rows, sign)
    try:
        changes.apply()
    except sqlite3.IntegrityError as exc:
        raise IndexDrift(str(exc)) from exc
    sections += writer.sections
    conn.execute("UPDATE search_top_tier SET pages = ?, sections = ?, last_docid = ?, last_section_docid = ?, "
                 "top_pages = ?, top_sections = ?",
                 (pages, sections, new_end, section_end(new_end), writer.top_pages, writer.top_sections))
    conn.execute("UPDATE search_index_build SET updated_unix_utc = ?", (int(time.time()),))
    report = _report(conn)
    report.pages_removed, report.pages_added, report.pages_reindexed = len(leaving), len(entering), len(again)
    report.pages_recounted = len(counts_only)
    report.pages_sections_kept = sum(k.sections for k in kept.values())
    return report


def _rebuild(conn: sqlite3.Connection, page: Callable[[], None], total: Callable[[int], None],
             top_tier_pages: int) -> IndexReport:
    """Every derived table emptied and filled from the searchable generations."""
    for table in sorted(FTS_TABLES):
        empty_fts(conn, table)
    for table in (*(t for t in QUERY_TABLES if t not in FTS_TABLES), *UPDATE_TABLES):
        conn.execute(f"DELETE FROM {table}")  # a name from the schema's tables, not input
    members = [r[0] for r in conn.execute(_MEMBERS_SQL)]
    total(len(members))
    conn.execute("DROP TABLE IF EXISTS temp.index_members")
    conn.execute("CREATE TEMP TABLE index_members (eg_id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp.index_members VALUES (?)", [(m,) for m in members])
    inlinks.count_all(conn, members)
    boilerplate.count_all(conn)
    conn.execute("DROP TABLE temp.index_members")
    for batch in _chunks(members, 5000):
        fulltext.insert(conn, batch)
    analyzer = Analyzer()
    writer = _Writer(conn)
    titles = _Boilerplate(partial(boilerplate.boilerplate_of, conn))
    languages: dict[str, int] = {}
    for batch in _rows_of(conn, analyzer, members, titles):
        for rows in batch:
            writer.insert(rows)
            languages[rows.language or ""] = languages.get(rows.language or "", 0) + 1
            page()
    end = tier_end(conn, len(members), top_tier_pages)
    tier = [r[0] for r in conn.execute("SELECT entity_generation_id FROM search_page WHERE docid <= ? ORDER BY docid",
                                       (end,))] if end else []
    for batch in _stored_of(conn, tier):
        for rows in batch:
            writer.tier(rows, 1)
    vocabulary.fill(conn, {code: n for code, n in languages.items() if code})
    conn.execute("INSERT INTO search_top_tier(pages, sections, last_docid, last_section_docid, top_pages, "
                 "top_sections) VALUES (?, ?, ?, ?, ?, ?)",
                 (len(members), writer.sections, end, section_end(end), writer.top_pages, writer.top_sections))
    now = int(time.time())
    conn.execute("INSERT INTO search_index_build(version, rebuilt_unix_utc, updated_unix_utc) VALUES (?, ?, ?)",
                 (index_version(), now, now))
    for table in sorted(FTS_TABLES):
        optimize_fts(conn, table)
    report = _report(conn)
    report.languages = languages
    report.pages_added = len(members)
    return report


def update_search_index(summary_db: str | Path, *, rebuild: bool = False, progress: bool = False) -> IndexReport:
    """:func:`update_index` on the summary database file ``summary_db``.

    Raises:
        DatabaseError: ``summary_db`` does not exist or is not a summary database, or
            SQLite failed (the message names the file).
    """
    conn = open_summary_db(summary_db, create=False)
    try:
        if rebuild:  # it rewrites most pages: the next publish reads them all anyway
            forget_changes(summary_db)
        with sqlite_errors(summary_db), recorded_writes(conn, summary_db):  # the pages it wrote, for publish
            return update_index(conn, rebuild=rebuild, progress=progress)
    finally:
        conn.close()
