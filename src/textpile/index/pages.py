"""A page's rows in the search index, from what the summary database holds of it.

:func:`page_rows` is a pure function of a page's generation (its texts, description,
URL and sections: never changed once written), its in-links (the counts of
:mod:`textpile.index.inlinks`) and the boilerplate headings of its origin
(:mod:`textpile.index.boilerplate`). An update builds a page's old rows from the counts
as they were to delete them, and its new rows from the counts as they are
(:mod:`textpile.index.update`); a rebuild builds every page's rows from counts made from
scratch. Both write the same rows.

A page's fields (``search_index``): title, headings (section titles), names (section
anchors that are identifiers, definition terms), parts (CamelCase parts), url (path
words), anchor_text (texts of links to the page from other pages), description, text
(main content) and secondary_text (without the lines that repeat a title of the page: a
sidebar's table of contents). Its sections (``section_search_index``): each section's
title, anchor name and the texts of links to that anchor.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import regex

from textpile.index.docids import SECTIONS_PER_PAGE, page_docid, page_prior, section_docid
from textpile.index.analysis import Analyzer
from textpile.index.schema import QUERY_TABLES
from textpile.store.gen2_piles import pack, unpack

#: The separators between a page title and a site name (``Engine Configuration — SQLAlchemy``).
TITLE_PARTS = regex.compile(r"\s+[—–|·•:\-]\s+")
#: Anchor texts kept per page (the most frequent first) and their longest length.
MAX_ANCHOR_TEXTS = 40
MAX_ANCHOR_TEXT = 150
#: A section anchor made by a generator rather than a person (``id1``, ``id-1.9.3.69.5``,
#: ``section-3``, ``fn12``, ``toc``): not indexed as a name.
_GENERATED_ANCHOR = regex.compile(
    r"(?i)^(?:id|section|sec|s|toc|fn|footnote|ref|cite|note|n|a|anchor|h|heading|p|para|x|idm|index)?"
    r"[-_.:]?[\d\-_.:]*$|^[0-9a-f]{8,}$|^[\W\d_]+$")
_URL_WORDS = regex.compile(r"[\p{L}\p{N}]+")
_URL_SUFFIXES = (".html", ".htm", ".php", ".aspx", ".asp", ".jsp", ".shtml", ".xhtml")
#: The link_style flags of links in nav, header, footer or aside (bits 3 to 6,
#: textpile.store.links.FLAG_COLUMNS): links outside them are in the page's content.
NOT_CONTENT_FLAGS = (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6)

_PAGES_SQL = """
SELECT eg.entity_generation_id, eg.url_id, eg.url_fragment, u.origin_id,
       coalesce(nullif(dd.title, ''), dd.primary_headline, ''), dd.primary_headline, dd.description,
       dd.primary_language, u.str_url, tp.text, tp.secondary_text, tp.big_headlines, tp.small_headlines,
       (SELECT length(g.text) FROM text_pile_v0_2 g WHERE g.text_pile_id = eg.text_pile_v0_2_id)
FROM entity_generation eg
JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
JOIN url u ON u.url_id = eg.url_id
LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
WHERE eg.entity_generation_id IN (SELECT value FROM json_each(?))
ORDER BY eg.entity_generation_id
"""
_LINK_TEXT_SQL = f"""
SELECT coalesce(sum(length(t.text)), 0)
FROM link_list l, json_each(CAST(sqlar_uncompress(l.links_packed, l.links_size) AS TEXT)) j
JOIN link_target t ON t.link_target_id = json_extract(j.value, '$[0]')
JOIN link_style s ON s.link_style_id = json_extract(j.value, '$[1]')
WHERE l.entity_generation_id = ? AND s.html_tag_name = 'a' AND t.text IS NOT NULL
  AND s.flags & {NOT_CONTENT_FLAGS} = 0
"""
_SECTIONS_SQL = ("SELECT section_summary_id, anchor, title, level FROM section_summary "
                 "WHERE entity_generation_id = ? ORDER BY section_index")
_PAGE_COLUMNS = QUERY_TABLES["search_page"]
_INLINKS_SQL = "SELECT pages, content_pages FROM search_inlink WHERE url_id = ?"
_ANCHOR_TEXTS_SQL = ("SELECT t.link_to_fragment, t.text, c.pages FROM link_target t "
                     "JOIN search_link c ON c.link_target_id = t.link_target_id WHERE t.link_to_url = ?")


def url_words(str_url: str) -> str:
    """The words of a URL's path and query, without a page suffix such as ``.html``:
    ``https://x.org/docs/sql-createindex.html`` -> ``docs sql createindex``."""
    rest = str_url.split("://", 1)[-1]
    path = rest.split("/", 1)[1] if "/" in rest else ""
    path = path.split("#", 1)[0]
    lowered = path.lower()
    for suffix in _URL_SUFFIXES:
        if lowered.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return " ".join(_URL_WORDS.findall(path))


def title_variants(title: str | None, headline: str | None) -> list[str]:
    """The texts a title match is judged on: the title, its parts around site-name
    separators, the primary headline (distinct, in that order)."""
    out: list[str] = []
    for text in [title, *(TITLE_PARTS.split(title) if title else []), headline]:
        text = " ".join((text or "").split())
        if text and text not in out:
            out.append(text)
    return out


def last_segment(str_url: str) -> str:
    """The words of the last path segment of ``str_url`` (``sql-createindex``)."""
    path = str_url.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    return url_words("x://h/" + path.rsplit("/", 1)[-1]) if "/" in path.split("://", 1)[-1] else ""


def is_name_anchor(anchor: str | None) -> bool:
    """True when ``anchor`` reads as a name a person gave (``json.dumps``,
    ``sql-createindex-concurrently``), not a generated id (``id-1.9.3``, ``section-2``)."""
    return bool(anchor) and _GENERATED_ANCHOR.match(anchor) is None


def section_terms(analyzer: Analyzer, title: str, anchor: str | None,
                  language: str | None) -> tuple[str, str, str, str]:
    """``(title_terms, title_words, name_terms, name_words)`` of a section with heading
    ``title`` and ``anchor`` on a page analyzed in ``language`` (search_page.language):
    the title analyzed (stemmed, then not), and the anchor the same when it is a name
    (:func:`is_name_anchor`), else two empty strings. The section index holds the stemmed
    ones (section_search_index's title and name); the rerank
    (:mod:`textpile.search.features`) matches all four."""
    name = is_name_anchor(anchor)
    return (analyzer.analyze(title, language), analyzer.analyze(title, None),
            analyzer.analyze(anchor, language) if name else "", analyzer.analyze(anchor, None) if name else "")


def top_texts(rows: Iterable[tuple[str | None, int]]) -> list[str]:
    """The anchor texts of ``rows`` ((text, pages) pairs; the pages of one text summed
    after its whitespace is made single) that the most linking pages use, at most
    :data:`MAX_ANCHOR_TEXTS` texts of at most :data:`MAX_ANCHOR_TEXT` characters, in
    alphabetical order: a page's rows then change only when that set changes, not when
    one more or one less page links with one of its texts."""
    counted: dict[str, int] = {}
    for text, pages in rows:
        text = " ".join((text or "").split())[:MAX_ANCHOR_TEXT]
        if len(text) > 1 and any(c.isalnum() for c in text):
            counted[text] = counted.get(text, 0) + pages
    return sorted(t for t, _ in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_ANCHOR_TEXTS])


def _other_lines(secondary: str | None, sections: list, title: str | None, headline: str | None) -> str:
    """The lines of ``secondary`` (a page's secondary text) that are not its title, headline
    or one of its section titles (a sidebar's table of contents repeats them; the headings,
    names and section index hold them already)."""
    if not secondary:
        return ""
    known = {" ".join(t.split()) for t in [title or "", headline or "", *(r[2] for r in sections)]}
    return "\n".join(line for line in secondary.split("\n") if " ".join(line.split()) not in known)


@dataclass(frozen=True)
class PageSource:
    """What a page's rows are made of, besides its in-links and boilerplate headings: one
    searchable generation as the summary database holds it (immutable)."""

    entity_generation_id: int
    url_id: int
    url_fragment: str | None
    origin_id: int
    title: str
    headline: str | None
    description: str | None
    language: str | None
    str_url: str
    text: str | None
    secondary: str | None
    big_headlines: str | None
    small_headlines: str | None
    text_length: int  # code points of the Gen2 text; 0 without one
    link_text: int  # characters of the text of its content links (<a> outside nav, header, footer, aside)
    sections: tuple[tuple[int, str | None, str, int], ...]  # (section_summary_id, anchor, title, level)

    @property
    def anchorless_titles(self) -> frozenset[str]:
        """The titles of its headings without an anchor (the boilerplate candidates)."""
        return frozenset(title for _, anchor, title, _ in self.sections if anchor is None)

    @property
    def link_density(self) -> float:
        """The share of its main text that is the text of its content links, 0 to 1."""
        return min(1.0, self.link_text / len(self.text)) if self.text else 0.0


def load_sources(conn: sqlite3.Connection, ids: list[int]) -> list[PageSource]:
    """The :class:`PageSource` of each generation of ``ids`` that has a text pile, in id
    order (a generation without one is left out)."""
    out = []
    for row in conn.execute(_PAGES_SQL, (json.dumps(ids),)).fetchall():
        eg_id = row[0]
        link_text = conn.execute(_LINK_TEXT_SQL, (eg_id,)).fetchone()[0]
        sections = tuple(conn.execute(_SECTIONS_SQL, (eg_id,)).fetchall())
        out.append(PageSource(*row[:13], row[13] or 0, link_text, sections))
    return out


@dataclass(frozen=True)
class InLinks:
    """The links to a page from other indexed pages: how many pages, how many from their
    content, and the (fragment, text, pages) of each link with a text."""

    pages: int = 0
    content_pages: int = 0
    texts: tuple[tuple[str | None, str, int], ...] = ()


NO_INLINKS = InLinks()


def load_inlinks(conn: sqlite3.Connection, url_id: int, url_fragment: str | None) -> InLinks:
    """The :class:`InLinks` of a page at ``url_id`` as the in-link counts hold them now
    (none for a generation of a URL with a fragment: links name the URL)."""
    if url_fragment is not None:
        return NO_INLINKS
    counts = conn.execute(_INLINKS_SQL, (url_id,)).fetchone()
    if counts is None:
        return NO_INLINKS
    return InLinks(counts[0], counts[1], tuple(conn.execute(_ANCHOR_TEXTS_SQL, (url_id,)).fetchall()))


def same_rows(old: InLinks, new: InLinks, entity_generation_id: int, link_density: float) -> bool:
    """True when a page's search_index and section_search_index rows are the same with its
    in-links ``old`` and ``new`` (the page's generation id and stored link density given):
    the same docid, the same anchor texts and the same anchor texts per fragment. Its
    search_page row then differs at most in its in-link counts."""
    def docid(links: InLinks) -> int:
        return page_docid(page_prior(links.pages, links.content_pages, link_density), entity_generation_id)

    def fragments(links: InLinks) -> dict[str, list[str]]:
        by_fragment: dict[str, list[tuple[str, int]]] = {}
        for fragment, text, pages in links.texts:
            if fragment is not None:
                by_fragment.setdefault(fragment, []).append((text, pages))
        return {fragment: top_texts(rows) for fragment, rows in by_fragment.items()}

    return (docid(old) == docid(new)
            and top_texts((t, n) for _, t, n in old.texts) == top_texts((t, n) for _, t, n in new.texts)
            and fragments(old) == fragments(new))


@dataclass(frozen=True)
class PageRows:
    """A page's rows: its search_index row (docid, then :data:`SEARCH_COLUMNS` values),
    its section rows (docid, the three section columns, section_summary_id), its
    search_page row (the table's columns in order), and the anchor of each indexed
    section (None: it has none), which its in-link texts are found by."""

    entity_generation_id: int
    docid: int
    origin_id: int
    language: str | None  # the stemmer language code (None: not stemmed)
    search_row: tuple
    section_rows: tuple[tuple, ...]
    page_row: tuple
    section_anchors: tuple[str | None, ...]


def _link_columns(analyzer: Analyzer, inlinks: InLinks, anchors: tuple[str | None, ...],
                  code: str | None) -> tuple[str, tuple[str, ...], str]:
    """What a page's rows hold of its in-link texts (``code``: its stemmer language):
    its anchor_text column, each indexed section's anchor_text column (the section
    anchors ``anchors``) and its search_page.anchor_terms."""
    texts = top_texts((text, pages) for _, text, pages in inlinks.texts)
    by_fragment: dict[str, list[tuple[str, int]]] = {}
    for fragment, text, pages in inlinks.texts:
        if fragment is not None:
            by_fragment.setdefault(fragment, []).append((text, pages))
    sections = tuple(analyzer.analyze("\n".join(top_texts(by_fragment.get(anchor, []))), code) if anchor else ""
                     for anchor in anchors)
    return (analyzer.analyze("\n".join(texts), code), sections,
            "\n".join(analyzer.analyze(t, code) for t in texts))


def page_rows(analyzer: Analyzer, source: PageSource, inlinks: InLinks, boilerplate: frozenset[str]) -> PageRows:
    """The rows of ``source`` with ``inlinks`` when the anchorless headings titled as in
    ``boilerplate`` are boilerplate on its origin (module docstring). Sections after the
    first :data:`~textpile.index.docids.SECTIONS_PER_PAGE` indexed ones are left out.

    Raises:
        DatabaseError: the generation id is too large for a docid (textpile.index.docids).
    """
    language = source.language
    code = analyzer.stemmer_language(language)  # analyzing in ``language`` is analyzing in ``code``
    sections = [r for r in source.sections if r[1] is not None or r[2] not in boilerplate][:SECTIONS_PER_PAGE]
    anchors = tuple(anchor for (_, anchor, _, _) in sections)
    anchor_text, section_anchor_texts, anchor_terms = _link_columns(analyzer, inlinks, anchors, code)
    title, headline, text = source.title, source.headline, source.text
    headings = [t for (_, _, t, level) in sections if level < 7] or [source.big_headlines, source.small_headlines]
    names = [a for (_, a, _, _) in sections if is_name_anchor(a)]
    names += [t for (_, _, t, level) in sections if level == 7]
    all_titles = "\n".join([title or "", headline or ""])
    body, body_parts = analyzer.analyze_with_parts(text, language)
    url_terms = analyzer.analyze(url_words(source.str_url), language)
    density = source.link_density
    docid = page_docid(page_prior(inlinks.pages, inlinks.content_pages, density), source.entity_generation_id)
    search_row = (
        docid,
        analyzer.analyze(all_titles, language),
        analyzer.analyze("\n".join(h for h in headings if h), language),
        analyzer.analyze("\n".join(names), language),
        " ".join(p for p in (analyzer.camel_parts("\n".join([all_titles, *(h for h in headings if h), *names]),
                                                  language), body_parts) if p),
        url_terms,
        anchor_text,
        analyzer.analyze(source.description, language),
        body,
        analyzer.analyze(_other_lines(source.secondary, sections, title, headline), language),
    )
    section_rows = tuple(
        (section_docid(docid, position),
         analyzer.analyze(stitle, language),
         analyzer.analyze(anchor, language) if is_name_anchor(anchor) else "",
         section_anchor_texts[position],
         section_id)
        for position, (section_id, anchor, stitle, _level) in enumerate(sections))
    variants = title_variants(title, headline)
    page_row = (
        source.entity_generation_id, docid, source.origin_id, code, len(body.split()) if body else 0,
        source.text_length, inlinks.pages, inlinks.content_pages, density,
        "\n".join(analyzer.analyze(v, language) for v in variants),
        "\n".join(analyzer.analyze(v, None) for v in variants),
        url_terms, analyzer.analyze(last_segment(source.str_url), language),
        anchor_terms)
    return PageRows(source.entity_generation_id, docid, source.origin_id, code, search_row, section_rows, page_row,
                    anchors)


#: The search_index columns from the anchor texts (``search_row[_ANCHOR_COLUMN]``), and
#: the search_page columns of the in-link counts and the anchor terms.
_ANCHOR_COLUMN = 6
_IN_LINKS, _CONTENT_IN_LINKS, _LINK_DENSITY, _ANCHOR_TERMS = 6, 7, 8, 13


def relinked_rows(analyzer: Analyzer, rows: PageRows, inlinks: InLinks) -> PageRows:
    """The rows of the page of ``rows`` with the in-links ``inlinks`` instead (its
    boilerplate headings the same): what :func:`page_rows` makes of its source with them,
    from its rows alone (only the docid, the in-link counts and the anchor texts depend
    on in-links), so its text is not analyzed again."""
    anchor_text, section_anchor_texts, anchor_terms = _link_columns(analyzer, inlinks, rows.section_anchors,
                                                                    rows.language)
    page = rows.page_row
    docid = page_docid(page_prior(inlinks.pages, inlinks.content_pages, page[_LINK_DENSITY]),
                       rows.entity_generation_id)
    search_row = (docid, *rows.search_row[1:_ANCHOR_COLUMN], anchor_text, *rows.search_row[_ANCHOR_COLUMN + 1:])
    section_rows = tuple((section_docid(docid, position), r[1], r[2], section_anchor_texts[position], r[4])
                         for position, r in enumerate(rows.section_rows))
    page_row = (page[0], docid, *page[2:_IN_LINKS], inlinks.pages, inlinks.content_pages,
                *page[_LINK_DENSITY:_ANCHOR_TERMS], anchor_terms)
    return PageRows(rows.entity_generation_id, docid, rows.origin_id, rows.language, search_row, section_rows,
                    page_row, rows.section_anchors)


#: The compression level of a page's stored terms (libdeflate's 6: 2.65 KB per page of the
#: 10K-page growth corpus against 10.9 KB as they are, at 0.15 CPU-s per 1,000 pages;
#: level 10 saves 2% more at 3x the time).
TERMS_LEVEL = 6


def pack_terms(rows: PageRows) -> tuple[bytes, int]:
    """``(terms, terms_size)`` of search_page_terms for ``rows``: the FTS5 values of its
    search_index row and section rows and its section anchors (JSON, packed as
    ``sqlar_compress`` packs: :func:`textpile.store.gen2_piles.pack`)."""
    value = json.dumps([rows.search_row[1:], [[*r[1:4], r[4], a] for r, a in zip(rows.section_rows,
                                                                                  rows.section_anchors)]],
                       ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return pack(value, TERMS_LEVEL)


_STORED_SQL = f"""
SELECT {', '.join('p.' + c for c in _PAGE_COLUMNS)}, t.terms, t.terms_size
FROM search_page p JOIN search_page_terms t ON t.entity_generation_id = p.entity_generation_id
WHERE p.entity_generation_id IN (SELECT value FROM json_each(?))
ORDER BY p.docid
"""


def stored_rows(conn: sqlite3.Connection, ids: list[int]) -> list[PageRows]:
    """The rows of the indexed pages of ``ids`` as the index holds them (search_page and
    the terms search_page_terms keeps: :func:`pack_terms`), in docid order; a page
    without both rows is left out. These are the values its FTS5 rows were inserted
    with, so they delete them exactly."""
    out = []
    for row in conn.execute(_STORED_SQL, (json.dumps(ids),)).fetchall():
        page_row, docid = tuple(row[:-2]), row[1]
        search, sections = json.loads(unpack(row[-2], row[-1]))
        out.append(PageRows(page_row[0], docid, page_row[2], page_row[3], (docid, *search),
                            tuple((section_docid(docid, position), *s[:4])
                                  for position, s in enumerate(sections)),
                            page_row, tuple(s[4] for s in sections)))
    return out
