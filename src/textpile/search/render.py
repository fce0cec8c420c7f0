"""The snippets of shown results: which text each comes from, read as far as it needs.

A result's snippet (:class:`textpile.search.snippets.SnippetMaker`) is made from its
:class:`SnippetSource`: the part of the page's Gen2 text that is the section the result
links to, else the start of its main text (else of its secondary text). A search makes
them for the results of the page shown only (:func:`render_snippets`, two queries for the
whole page). A search over shards asks each shard for its candidates without snippets
(each with its source, and the search's snippet words) and then the shards holding the
results shown for their snippets alone (:mod:`textpile.search.fanout`), as a search
engine's query and fetch phases: a shard answers 30 to 100 candidates for the 10 shown.
"""

from __future__ import annotations

import functools
import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textpile.search.snippets import (SNIPPET_SCAN, SnippetMaker, TextReader, leading_text, marked_to_html,
                                      marked_to_text, text_reader)
from textpile.store.gen2_piles import PackedText, has_packed_texts, has_table, packed_texts
from textpile.store.text_piles import MainText, decode_field, main_text_readers

if TYPE_CHECKING:
    from textpile.search.results import SearchResult

#: Results a shard renders per request, at most (a page of results is at most 100).
MAX_RENDER = 100


@dataclass(frozen=True)
class SnippetSource:
    """Where a result's snippet is read from: its page (``entity_generation_id``), the
    page's text piles (``text_pile_id``, ``text_pile_v0_2_id``, None when it has none)
    and, for a result linking to a section, that section's ``start`` and ``end`` in the
    Gen2 text (code points; None: the page's main text)."""

    entity_generation_id: int
    text_pile_id: int | None
    text_pile_v0_2_id: int | None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Snippet:
    """A rendered snippet: escaped HTML with ``<mark>`` around the matched words, and the
    same as plain text."""

    html: str
    text: str


def with_snippet(result: SearchResult, snippet: Snippet) -> None:
    """Give ``result`` its ``snippet`` (and its description, when its page has none: the
    snippet's text)."""
    result.snippet_html, result.snippet_text = snippet.html, snippet.text
    result.description = result.description or snippet.text
    result.snippet_source = None


def render_snippets(conn: sqlite3.Connection, words: list[list[str]], sources: list[SnippetSource]) -> list[Snippet]:
    """The snippet of each of ``sources``, in order, marking ``words`` (the word forms of
    each requirement, :class:`SnippetMaker`): the best window of its text, or its
    leading text when no word is found.

    Raises:
        sqlite3.Error: database problems.
    """
    maker = SnippetMaker(words)
    out = []
    with ExitStack() as opened:  # the long texts read in parts (textpile.store.gen2_piles.STREAM_BYTES)
        texts = _texts(conn, sources, opened)
        for source in sources:
            text = texts[source.entity_generation_id]
            marked = maker.snippet(text)
            if marked is not None:
                out.append(Snippet(marked_to_html(marked), marked_to_text(marked)))
            else:
                lead = leading_text(text)
                out.append(Snippet(marked_to_html(lead), lead))
    return out


def _texts(conn: sqlite3.Connection, sources: list[SnippetSource], opened: ExitStack) -> dict[int, TextReader]:
    """{entity_generation_id: the text its snippet comes from}, as a :data:`TextReader`
    (read only as far as its snippet needs, at most :data:`SNIPPET_SCAN` characters): its
    section's part of the Gen2 text, else the start of its main text (else of its
    secondary text); two queries for the whole page of results (a long text is read
    through a handle on its row that ``opened`` closes)."""
    out: dict[int, TextReader] = {}
    spans: dict[tuple[int, int, int], list[int]] = {}  # (pile, start, length) -> the results showing it
    for source in sources:
        if source.start is not None and source.text_pile_v0_2_id is not None:
            span = (source.text_pile_v0_2_id, source.start + 1,
                    min(max((source.end or 0) - source.start, 0), SNIPPET_SCAN))
            spans.setdefault(span, []).append(source.entity_generation_id)
    packed = has_packed_texts(conn)
    if spans and packed:  # each text inflated only as far as its snippets read (textpile.store.gen2_piles)
        texts = packed_texts(conn, [pile for pile, _, _ in spans], opened)
        for span in sorted(spans):
            pile, start, length = span
            if pile in texts and length and texts[pile].text(start - 1, 1):
                read = functools.partial(_read_part, texts[pile], start - 1, length)
                out.update((eg_id, read) for eg_id in spans[span])
    elif spans:
        values = ", ".join("(?, ?, ?)" for _ in spans)
        for pile, start, length, text in conn.execute(
                f"WITH want(pile, start, length) AS (VALUES {values}) "
                "SELECT want.pile, want.start, want.length, substr(g.text, want.start, want.length) FROM want "
                "JOIN text_pile_v0_2 g ON g.text_pile_id = want.pile", [v for span in spans for v in span]):
            if text:
                out.update((eg_id, text_reader(text)) for eg_id in spans[(pile, start, length)])
    piles: dict[int, list[int]] = {}  # text pile -> the results reading it (generations may share one)
    for source in sources:
        if source.entity_generation_id not in out and source.text_pile_id is not None:
            piles.setdefault(source.text_pile_id, []).append(source.entity_generation_id)
    if piles:
        if packed:
            readers = ((pile, functools.partial(_read_main, main))
                       for pile, main in main_text_readers(conn, list(piles), opened))
        else:
            readers = ((pile, text_reader(text[:SNIPPET_SCAN])) for pile, text in _main_texts(conn, list(piles)))
        for pile, read in readers:
            for eg_id in piles[pile]:
                out[eg_id] = read
    for source in sources:
        out.setdefault(source.entity_generation_id, text_reader(""))
    return out


def _read_part(text: PackedText, start: int, length: int, chars: int) -> str:
    """The first ``chars`` code points of the part of ``text`` at ``start``, ``length`` long."""
    return text.text(start, min(chars, length))


def _read_main(main: MainText, chars: int) -> str:
    """The first ``chars`` code points of ``main``, at most :data:`SNIPPET_SCAN`."""
    return main.prefix(min(chars, SNIPPET_SCAN))


def _main_texts(conn: sqlite3.Connection, piles: list[int]):
    """Yield ``(text_pile_id, text)`` for ``piles``: each pile's main text, else its
    secondary text, its first :data:`SNIPPET_SCAN` characters. Read as the ``text_pile``
    view computes it (:func:`decode_field`) but each Gen2 text once, as bytes (the view
    reads it again for every span of a field, and decodes all of it); a database of the
    older layout, where ``text_pile`` is a table, is read from that table. (A database
    with packed Gen2 texts is read by :func:`textpile.store.text_piles.main_text_readers`.)"""
    marks = ", ".join("?" * len(piles))
    if has_table(conn, "text_pile_gen1"):
        for pile, text_spans, secondary_spans, gen2 in conn.execute(
                "SELECT g1.text_pile_id, g1.text_spans, g1.secondary_text_spans, CAST(g2.text AS BLOB) "
                "FROM text_pile_gen1 g1 LEFT JOIN text_pile_v0_2 g2 ON g2.text_pile_id = g1.text_pile_v0_2_id "
                f"WHERE g1.text_pile_id IN ({marks})", piles):
            yield pile, (decode_field(text_spans, gen2, SNIPPET_SCAN)
                         or decode_field(secondary_spans, gen2, SNIPPET_SCAN))[:SNIPPET_SCAN]
        return
    yield from conn.execute(
        "SELECT text_pile_id, CASE WHEN text != '' THEN substr(text, 1, ?) ELSE substr(secondary_text, 1, ?) END "
        f"FROM text_pile WHERE text_pile_id IN ({marks})", [SNIPPET_SCAN, SNIPPET_SCAN, *piles])
