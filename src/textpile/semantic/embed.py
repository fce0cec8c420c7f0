"""Embedding the searchable pages and sections of a summary database, incrementally.

After integration (``textpile summarize``, the Dagster asset ``embeddings``) every
searchable generation (open, not marked duplicate, with a text pile) gets a page vector
and one vector per section (``section_summary``). A page is embedded as its title,
description, headings (section titles, up to :data:`MAX_HEADINGS_CHARS`) and its text
(Gen2, else Gen1 main text); a section as the page title, the section title and the
first :data:`SECTION_TEXT_CHARS` characters of its span of the Gen2 text. A page's whole
text counts (up to the model's :data:`~textpile.semantic.model.MAX_TOKENS`): a mean of
token vectors costs its length. How the vectors are stored is
:mod:`textpile.store.embeddings`'. A generation is immutable, so a vector once made is kept as long as
its generation stays searchable with the same text pile: a page that changed gets a new
generation, which is embedded, while the old generation (now closed) loses its vectors.
Vectors of generations that stopped being searchable (closed, marked duplicate) are
deleted; a duplicate that became searchable again is embedded again. When textpile's
model changes (its name in ``embedding_model``), every vector is made anew. Last, the
coarse partition of the page vectors is brought up to date
(:func:`textpile.semantic.partition.update_partition_in`: none below 20,000 pages).

Work is committed per batch of pages, so an interrupted run keeps what it embedded and
the next run continues with the rest.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textpile.progress import progress_bar
from textpile.semantic.model import Embedder, load_embedder
from textpile.semantic.partition import MIN_PARTITION_PAGES, update_partition_in
from textpile.store.changed_pages import recorded_writes
from textpile.store.database import open_summary_db, sqlite_errors
from textpile.store.embeddings import encode_bits, encode_vectors, pack_section_codes
from textpile.store.searchable import SEARCHABLE

#: Pages embedded (and committed) together.
BATCH_PAGES = 200
#: Characters of the joined section titles that go into a page's text.
MAX_HEADINGS_CHARS = 2000
#: Characters of a section's own text that go into its vector.
SECTION_TEXT_CHARS = 1000

_SEARCHABLE = SEARCHABLE.format(eg="eg")
_STALE_PAGES = f"""
SELECT pe.entity_generation_id FROM page_embedding pe
LEFT JOIN entity_generation eg ON eg.entity_generation_id = pe.entity_generation_id
WHERE eg.entity_generation_id IS NULL OR NOT ({_SEARCHABLE}) OR eg.text_pile_id IS NOT pe.text_pile_id
"""
_STALE_SECTIONS = """
DELETE FROM page_section_embedding WHERE NOT EXISTS (
    SELECT 1 FROM page_embedding pe WHERE pe.entity_generation_id = page_section_embedding.entity_generation_id)
"""
_TO_EMBED = f"""
SELECT eg.entity_generation_id FROM entity_generation eg
WHERE {_SEARCHABLE}
  AND NOT EXISTS (SELECT 1 FROM page_embedding pe WHERE pe.entity_generation_id = eg.entity_generation_id)
ORDER BY eg.entity_generation_id
"""
_PAGES = """
SELECT eg.entity_generation_id, eg.text_pile_id, coalesce(nullif(dd.title, ''), dd.primary_headline, ''),
       dd.description, coalesce(g.text, tp.text, '')
FROM entity_generation eg
JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
LEFT JOIN text_pile_v0_2 g ON g.text_pile_id = eg.text_pile_v0_2_id
LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
WHERE eg.entity_generation_id IN ({marks})
ORDER BY eg.entity_generation_id
"""
_SECTIONS = """
SELECT entity_generation_id, section_index, title, level, start_offset, end_offset FROM section_summary
WHERE entity_generation_id IN ({marks}) ORDER BY entity_generation_id, section_index
"""


@dataclass
class EmbedReport:
    """What one embedding run did: pages and sections embedded, page vectors deleted
    (their generation is no longer searchable or changed), vectors kept, the model, and
    whether a model change made every vector anew; ``vector_lists`` the lists of the
    page vectors' partition (0: none, queries scan every vector) and ``lists_trained``
    whether its centroids were computed anew."""

    pages_embedded: int = 0
    sections_embedded: int = 0
    pages_removed: int = 0
    pages_kept: int = 0
    model: str = ""
    model_changed: bool = False
    vector_lists: int = 0
    lists_trained: bool = False
    seconds: float = 0.0



def page_text(title: str | None, description: str | None, headings: list[str], text: str | None) -> str:
    """The text a page's vector is made of (lines: title, description, headings, text)."""
    joined = "\n".join(headings)[:MAX_HEADINGS_CHARS]
    return "\n".join(part for part in (title or "", description or "", joined, text or "") if part)


def section_text(page_title: str | None, title: str, body: str) -> str:
    """The text a section's vector is made of: ``page title: section title`` and its text."""
    head = f"{page_title}: {title}" if page_title else title
    return head + "\n" + body[:SECTION_TEXT_CHARS]

def _model_id(conn: sqlite3.Connection, embedder: Embedder, report: EmbedReport) -> int:
    """The id of ``embedder``'s row in embedding_model; another model's vectors are deleted."""
    rows = conn.execute("SELECT embedding_model_id, name, dimensions FROM embedding_model").fetchall()
    for model_id, name, dimensions in rows:
        if name == embedder.name and dimensions == embedder.dimensions and len(rows) == 1:
            return model_id
    with conn:
        if rows:
            report.model_changed = True
        conn.execute("DELETE FROM page_section_embedding")
        conn.execute("DELETE FROM page_embedding_list")
        conn.execute("DELETE FROM page_embedding")
        conn.execute("DELETE FROM embedding_model")
        return conn.execute("INSERT INTO embedding_model(name, dimensions) VALUES (?, ?)",
                            (embedder.name, embedder.dimensions)).lastrowid


def _remove_stale(conn: sqlite3.Connection) -> int:
    stale = [r[0] for r in conn.execute(_STALE_PAGES)]
    with conn:
        for start in range(0, len(stale), 500):
            chunk = stale[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM page_section_embedding WHERE entity_generation_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM page_embedding_list WHERE entity_generation_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM page_embedding WHERE entity_generation_id IN ({marks})", chunk)
        conn.execute(_STALE_SECTIONS)
    return len(stale)


def _embed_batch(conn: sqlite3.Connection, embedder: Embedder, model_id: int, ids: list[int],
                 report: EmbedReport, on_page: Callable[[], None] | None) -> None:
    marks = ", ".join("?" * len(ids))
    pages = conn.execute(_PAGES.format(marks=marks), ids).fetchall()
    sections: dict[int, list[tuple]] = {}
    for eg_id, *rest in conn.execute(_SECTIONS.format(marks=marks), ids):
        sections.setdefault(eg_id, []).append(tuple(rest))
    page_texts, section_rows, section_texts = [], [], []
    for eg_id, _pile, title, description, text in pages:
        own = sections.get(eg_id, [])
        headings = [t for (_index, t, level, _s, _e) in own if level < 7]
        page_texts.append(page_text(title, description, headings, text))
        for section_index, stitle, _level, start, end in own:
            section_rows.append((eg_id, section_index))
            section_texts.append(section_text(title, stitle, text[start:end]))
    page_blobs = encode_vectors(embedder.embed(page_texts))
    codes = encode_bits(embedder.embed(section_texts)) if section_texts else None
    by_page: dict[int, tuple[list[int], list[int]]] = {}
    for row, (eg_id, section_index) in enumerate(section_rows):
        indexes, rows = by_page.setdefault(eg_id, ([], []))
        indexes.append(section_index)
        rows.append(row)
    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO page_embedding(entity_generation_id, embedding_model_id, text_pile_id, vector)"
            " VALUES (?, ?, ?, ?)",
            [(eg_id, model_id, pile, blob) for (eg_id, pile, *_), blob in zip(pages, page_blobs)])
        conn.executemany(
            "INSERT OR REPLACE INTO page_section_embedding(entity_generation_id, codes) VALUES (?, ?)",
            [(eg_id, pack_section_codes(indexes, codes[rows])) for eg_id, (indexes, rows) in by_page.items()])
    report.pages_embedded += len(pages)
    report.sections_embedded += len(section_rows)
    if on_page is not None:
        for _ in pages:
            on_page()


def embed_summary_in(conn: sqlite3.Connection, embedder: Embedder | None = None, *,
                     on_total: Callable[[int], None] | None = None,
                     on_page: Callable[[], None] | None = None, batch_pages: int = BATCH_PAGES,
                     min_partition_pages: int = MIN_PARTITION_PAGES, progress: bool = False) -> EmbedReport:
    """Bring the vectors of the summary database ``conn`` up to date (module docstring).

    ``embedder`` defaults to :func:`textpile.semantic.model.load_embedder` (loaded only
    when something needs embedding); ``on_total`` gets the number of pages to embed,
    ``on_page`` is called per page embedded; ``progress`` shows an "Embedding" progress
    display of the same (:func:`textpile.progress.progress_bar`); ``min_partition_pages`` is
    :func:`~textpile.semantic.partition.update_partition_in`'s ``min_pages``.

    Raises:
        textpile.semantic.model.ModelError: the model's package or files are missing.
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    if progress:
        with progress_bar("Embedding", None) as bar:
            return embed_summary_in(conn, embedder, on_total=_each(bar.update_total, on_total),
                                    on_page=_each(bar.advance, on_page), batch_pages=batch_pages,
                                    min_partition_pages=min_partition_pages)
    started = time.monotonic()
    report = EmbedReport()
    todo = [r[0] for r in conn.execute(_TO_EMBED)]
    stale = conn.execute(f"SELECT count(*) FROM ({_STALE_PAGES})").fetchone()[0]
    if embedder is None and (todo or stale or conn.execute("SELECT count(*) FROM embedding_model").fetchone()[0] == 0):
        embedder = load_embedder()
    if embedder is None:  # nothing to do and a model row exists: keep it
        report.model = conn.execute("SELECT name FROM embedding_model").fetchone()[0]
        report.pages_kept = conn.execute("SELECT count(*) FROM page_embedding").fetchone()[0]
        if on_total is not None:
            on_total(0)
        _partition(conn, report, min_partition_pages)
        report.seconds = time.monotonic() - started
        return report
    report.model = embedder.name
    model_id = _model_id(conn, embedder, report)
    report.pages_removed = _remove_stale(conn)
    if report.model_changed:
        todo = [r[0] for r in conn.execute(_TO_EMBED)]
    report.pages_kept = conn.execute("SELECT count(*) FROM page_embedding").fetchone()[0]
    if on_total is not None:
        on_total(len(todo))
    for start in range(0, len(todo), batch_pages):
        _embed_batch(conn, embedder, model_id, todo[start:start + batch_pages], report, on_page)
    _partition(conn, report, min_partition_pages)
    report.seconds = time.monotonic() - started
    return report


def _each(*callbacks):
    """One callback calling each of ``callbacks`` that is not None, with the same arguments."""
    chosen = [c for c in callbacks if c is not None]

    def call(*args) -> None:
        for callback in chosen:
            callback(*args)

    return call


def _partition(conn: sqlite3.Connection, report: EmbedReport, min_pages: int) -> None:
    partition = update_partition_in(conn, min_pages=min_pages)
    report.vector_lists, report.lists_trained = partition.lists, partition.trained


def embed_summary(summary_db: str | Path, embedder: Embedder | None = None, *,
                  on_total: Callable[[int], None] | None = None,
                  on_page: Callable[[], None] | None = None, progress: bool = False) -> EmbedReport:
    """:func:`embed_summary_in` on the summary database file ``summary_db``.

    Raises:
        DatabaseError: ``summary_db`` is missing, not a summary database, corrupt,
            read-only or locked (the message names the file).
        textpile.semantic.model.ModelError: the model's package or files are missing.
    """
    conn = open_summary_db(summary_db, create=False)
    try:
        with sqlite_errors(summary_db), recorded_writes(conn, summary_db):
            return embed_summary_in(conn, embedder, on_total=on_total, on_page=on_page, progress=progress)
    finally:
        conn.close()
