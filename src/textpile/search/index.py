"""Building textpile's search index from a summary database.

The tables are textpile's own (``schemas/summary/textpile_search.sql``), beside
unobtanium's documented ``full_text_entity_index``, and rebuilt with it from the
*searchable* generations (open, not marked duplicate, with a Gen1 text pile):

* ``search_index`` (FTS5, contentless: it keeps no copy of the text) holds each page's
  fields as analyzed terms (:mod:`textpile.search.analysis`): title, headings (section
  titles), names (section anchors that are identifiers, definition terms), parts
  (CamelCase parts), url (path words), anchor_text (texts of links to the page from
  other pages), description, text (main content) and secondary_text (without the lines
  that repeat a title of the page: a sidebar's table of contents). Its rowid is the
  page's ``search_page.docid``: pages are numbered in the order of a query-independent
  prior (:func:`page_prior`: linked from many pages' content, not a list of links), so
  FTS5, which yields matches in rowid order, yields the likeliest pages first and a
  search can stop after a bounded number of them (a query of common words never scores
  every match);
* ``section_search_index`` (FTS5, contentless, rowid = ``search_section.docid``, in the
  order of the pages' docids): each section's title, anchor name and the texts of links
  to that anchor; boilerplate headings (the same anchorless title on most of a site's
  pages: :func:`boilerplate_headings`) are neither sections nor headings here;
* ``search_index_top`` and ``section_search_index_top``: the *first tier* of both (a
  tiered index, Manning, Raghavan and Schütze, *Introduction to Information Retrieval*,
  section 7.2.1): the same rows for the first :data:`TOP_TIER_PAGES` pages in docid
  order, filled only when the index has more pages than that. FTS5's ``bm25()`` reads the whole document list of every phrase
  it scores to count the pages holding it; over the first tier that list is at most
  :data:`TOP_TIER_PAGES` long, and since both tiers yield matches in docid order, a scan
  that finds enough matches in the first tier finds the same pages the whole index
  would (only the IDF and average lengths are taken over the tier);
* ``search_top_tier``: one row, the pages and sections indexed and where the first tier
  ends (0 when there is none);
* ``search_language``: the stemmer languages of the index (queries are analyzed in each);
* ``search_page``: per page the analysis language, main-text length in terms, in-link
  counts, link density (the share of its main text that is link text: navigation pages
  are mostly links), and the analyzed terms of its title variants, URL and most frequent
  anchor texts (rerank features, :mod:`textpile.search.features`,
  matched at query time without analyzing again);
* ``search_section``: each indexed section's docid (its rowid) and section_summary_id.
  The rerank's analyzed strings of a section (its title and anchor name, stemmed and
  not: :func:`section_terms`) are not stored: a search analyzes the titles of the
  hundred-odd sections it reranks (about 2 ms) from ``section_summary``, which cost 0.023
  of the raw HTML stored on python3.11-doc.

These tables are derived: when their columns differ from what this code writes (a
database built by another textpile), they are dropped and made anew before the rebuild.

Anchor texts and in-links come from ``link_summary``: links between two different
searchable pages (any origin), a page's anchor text counted once per linking page.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import regex

from textpile.search.analysis import Analyzer
from textpile.errors import DatabaseError
from textpile.store.database import extension_sql
from textpile.store.gen2_piles import register_functions
from textpile.store.searchable import SEARCHABLE

#: Columns of search_index, in order (bm25 weights in textpile.search.rank follow it).
SEARCH_COLUMNS = ("title", "headings", "names", "parts", "url", "anchor_text", "description", "text",
                  "secondary_text")
SECTION_COLUMNS = ("title", "name", "anchor_text")
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
#: Pages in the first tier (``search_index_top``): an index with more pages than this gets one.
TOP_TIER_PAGES = 10_000
#: A heading without an anchor that more than this share of an origin's searchable pages
#: have, under the same title, and at least :data:`BOILERPLATE_MIN_PAGES` of them, is
#: boilerplate (a sidebar's "Navigation", "Next topic", "This Page"): neither a section of
#: the search index nor a heading of its page (see :func:`boilerplate_headings`).
BOILERPLATE_SHARE = 0.5
BOILERPLATE_MIN_PAGES = 20
_BOILERPLATE_SQL = """
WITH page AS (SELECT d.eg_id, u.origin_id FROM temp.search_doc d
              JOIN entity_generation eg ON eg.entity_generation_id = d.eg_id JOIN url u ON u.url_id = eg.url_id),
     origin_pages AS (SELECT origin_id, count(*) AS pages FROM page GROUP BY origin_id)
SELECT p.origin_id, s.title FROM section_summary s
JOIN page p ON p.eg_id = s.entity_generation_id JOIN origin_pages o ON o.origin_id = p.origin_id
WHERE s.anchor IS NULL
GROUP BY p.origin_id, s.title
HAVING count(DISTINCT s.entity_generation_id) > max(o.pages) * ? AND count(DISTINCT s.entity_generation_id) >= ?
"""
_URL_WORDS = regex.compile(r"[\p{L}\p{N}]+")
_URL_SUFFIXES = (".html", ".htm", ".php", ".aspx", ".asp", ".jsp", ".shtml", ".xhtml")

_LINKS_SQL = f"""
CREATE TEMP TABLE search_inlink AS
SELECT tgt.entity_generation_id AS target, ls.entity_generation_id AS source,
       ls.link_to_fragment AS fragment, ls.text AS text,
       NOT (ls.in_nav OR ls.in_header OR ls.in_footer OR ls.in_aside) AS in_content
FROM link_summary ls
JOIN entity_generation src ON src.entity_generation_id = ls.entity_generation_id
JOIN entity_generation tgt ON tgt.url_id = ls.link_to_url AND tgt.url_fragment IS NULL
WHERE {SEARCHABLE.format(eg="src")} AND {SEARCHABLE.format(eg="tgt")}
  AND src.entity_generation_id <> tgt.entity_generation_id
"""
_DOCS_SQL = f"""
CREATE TEMP TABLE search_doc AS
SELECT eg.entity_generation_id AS eg_id,
       (SELECT count(DISTINCT source) FROM temp.search_inlink i WHERE i.target = eg.entity_generation_id) AS in_links,
       (SELECT count(DISTINCT source) FROM temp.search_inlink i
        WHERE i.target = eg.entity_generation_id AND i.in_content) AS content_in_links,
       (SELECT coalesce(sum(length(ls.text)), 0) FROM link_summary ls
        WHERE ls.entity_generation_id = eg.entity_generation_id AND ls.html_tag_name = 'a' AND ls.text IS NOT NULL
          AND NOT (ls.in_nav OR ls.in_header OR ls.in_footer OR ls.in_aside)) AS link_text,
       length(tp.text) AS text_chars
FROM entity_generation eg JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
WHERE {SEARCHABLE.format(eg="eg")}
"""
#: The derived tables and the columns this code writes (search_index, section_search_index:
#: FTS5 columns; search_page: its table columns).
DERIVED_TABLES = {
    "search_page": ("entity_generation_id", "docid", "language", "term_count", "text_length", "in_links",
                    "content_in_links", "link_density", "title_terms", "title_words",
                    "url_terms", "url_last_terms", "anchor_terms"),
    "search_section": ("section_summary_id", "docid"),
    "search_language": ("language", "pages"),
    "search_term": ("term", "docs"),
    "search_word": ("word", "docs"),
    "search_top_tier": ("pages", "sections", "last_docid", "last_section_docid"),
    "search_index": SEARCH_COLUMNS,
    "section_search_index": SECTION_COLUMNS,
    "search_index_top": SEARCH_COLUMNS,
    "section_search_index_top": SECTION_COLUMNS,
}
_COLUMNS_SQL = """
SELECT t.value, c.name FROM json_each(?) t, pragma_table_info(t.value) c ORDER BY t.key, c.cid
"""
_PAGES_SQL = """
SELECT d.eg_id, d.docid, coalesce(nullif(dd.title, ''), dd.primary_headline, ''), dd.primary_headline,
       dd.description, dd.primary_language, u.str_url, tp.text, tp.secondary_text, tp.big_headlines,
       tp.small_headlines, (SELECT length(g.text) FROM text_pile_v0_2 g WHERE g.text_pile_id = eg.text_pile_v0_2_id),
       d.in_links, d.content_in_links, d.link_text, u.origin_id
FROM temp.search_doc d
JOIN entity_generation eg ON eg.entity_generation_id = d.eg_id
JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
JOIN url u ON u.url_id = eg.url_id
LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
ORDER BY d.docid
"""


@dataclass
class IndexReport:
    """What a rebuild wrote: searchable pages, sections indexed, pages' languages."""

    pages: int = 0
    sections: int = 0
    languages: dict[str, int] | None = None
    top_tier_pages: int = 0  # pages in the first tier (0: the index has none)


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


def boilerplate_headings(conn: sqlite3.Connection) -> set[tuple[int, str]]:
    """``(origin_id, title)`` of the boilerplate headings (:data:`BOILERPLATE_SHARE`) of the
    pages in temp.search_doc. On python3.11-doc: Navigation, This Page, Previous topic, Next
    topic, Table of Contents, 23% of its sections; leaving them out of the search tables
    keeps the relevance benchmark's table as it was (0.949 / 0.931 / 0.949) and makes the
    summary database smaller by 0.5% of the raw HTML."""
    return {(origin, title) for origin, title in conn.execute(
        _BOILERPLATE_SQL, (BOILERPLATE_SHARE, BOILERPLATE_MIN_PAGES))}


def _other_lines(secondary: str | None, sections: list, title: str | None, headline: str | None) -> str:
    """The lines of ``secondary`` (a page's secondary text) that are not its title, headline
    or one of its section titles (a sidebar's table of contents repeats them; the headings,
    names and section index hold them already)."""
    if not secondary:
        return ""
    known = {" ".join(t.split()) for t in [title or "", headline or "", *(r[2] for r in sections)]}
    return "\n".join(line for line in secondary.split("\n") if " ".join(line.split()) not in known)


def page_prior(in_links: int, content_in_links: int, link_density: float) -> float:
    """The query-independent prior a page's docid follows (larger first): linked from the
    content of many pages, mostly its own text rather than links. Nothing else depends on
    its scale; it only orders the pages."""
    return math.log1p(content_in_links) + 0.5 * math.log1p(in_links) - 3.0 * link_density


def _top_texts(rows: list[tuple[str, int]]) -> list[str]:
    """Distinct anchor texts, most linking pages first, cut to the limits."""
    counted: dict[str, int] = {}
    for text, pages in rows:
        text = " ".join((text or "").split())[:MAX_ANCHOR_TEXT]
        if len(text) > 1 and any(c.isalnum() for c in text):
            counted[text] = counted.get(text, 0) + pages
    return [t for t, _ in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_ANCHOR_TEXTS]]


#: Every column of the :data:`DERIVED_TABLES`, no row: one statement, prepared once per
#: connection (Python's statement cache) and again only when the schema changes.
_READS_SQL = "SELECT * FROM " + ", ".join(DERIVED_TABLES) + " LIMIT 0"
#: Older layouts of derived tables that a database opened read-only is read in as it is
#: (moved on its next write-open, textpile.store.migrations): search_page with
#: anchor_texts (the raw anchor texts, which nothing read) and search_section with the
#: analyzed strings of its sections (now analyzed at query time, :func:`section_terms`).
_PAGE_COLUMNS = DERIVED_TABLES["search_page"]
OLDER_LAYOUTS = {
    "search_page": (_PAGE_COLUMNS[:_PAGE_COLUMNS.index("link_density") + 1] + ("anchor_texts",)
                    + _PAGE_COLUMNS[_PAGE_COLUMNS.index("link_density") + 1:],),
    "search_section": (("section_summary_id", "docid", "entity_generation_id", "title_terms", "title_words",
                        "name_terms", "name_words"),),
}
_READS_ACCEPTED = frozenset(
    tuple(column for columns in layout for column in columns)
    for layout in itertools.product(*((columns, *OLDER_LAYOUTS.get(table, ())) for table, columns in
                                      DERIVED_TABLES.items())))


def require_search_index(conn: sqlite3.Connection) -> None:
    """Raise DatabaseError unless the database has textpile's search tables with the
    columns this code reads, in its order (a summary database summarized by an older
    textpile has others).

    Raises:
        DatabaseError: the search tables are missing or differ.
        sqlite3.Error: the database cannot be read (locked, corrupt).
    """
    try:
        cursor = conn.execute(_READS_SQL)
    except sqlite3.OperationalError:
        if _search_tables_current(conn):
            raise  # the tables are right: something else failed
    else:
        if tuple(d[0] for d in cursor.description) in _READS_ACCEPTED:
            return
    raise DatabaseError(
        "this summary database has no search index of this textpile version (it was summarized by an "
        "older one): run `textpile summarize` on it once to build it")


def _search_tables_current(conn: sqlite3.Connection) -> bool:
    """True when every table of :data:`DERIVED_TABLES` has exactly its columns."""
    found: dict[str, list[str]] = {table: [] for table in DERIVED_TABLES}
    for table, column in conn.execute(_COLUMNS_SQL, (json.dumps(list(DERIVED_TABLES)),)):
        found[table].append(column)
    return all(tuple(found[table]) == columns for table, columns in DERIVED_TABLES.items())


def ensure_current_tables(conn: sqlite3.Connection) -> None:
    """Drop derived search tables whose columns are not :data:`DERIVED_TABLES`' and
    create every missing extension table (``section_summary`` is never dropped)."""
    conn.execute("DROP TABLE IF EXISTS search_vocabulary")  # an fts5vocab table of an older textpile
    for table, columns in DERIVED_TABLES.items():
        found = tuple(row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,)))
        if found and found != columns:
            conn.execute(f"DROP TABLE {table}")  # a name from DERIVED_TABLES, not input
    conn.executescript(extension_sql("summary"))


def rebuild_search_index(conn: sqlite3.Connection, *, on_page: Callable[[], None] | None = None,
                         top_tier_pages: int = TOP_TIER_PAGES) -> IndexReport:
    """Empty and refill the search tables (search_index, section_search_index, their
    first tier, search_page, search_section, search_language, search_term, search_word)
    from the searchable generations of the summary database ``conn``, in one
    transaction; ``on_page`` is called after each page (progress). ``top_tier_pages``
    (at least 1) is the size of the first tier, built when there are more pages. Returns
    what was written.

    Raises:
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    analyzer = Analyzer()
    report = IndexReport(languages={})
    register_functions(conn)  # the text_pile view unpacks the Gen2 texts (textpile.store.gen2_piles)
    ensure_current_tables(conn)
    with conn:
        for table in ("search_index", "section_search_index", "search_index_top", "section_search_index_top"):
            empty_fts(conn, table)
        for table in ("search_page", "search_section", "search_language", "search_term", "search_word",
                      "search_top_tier"):
            conn.execute(f"DELETE FROM {table}")
        for table in ("search_inlink", "search_doc", "search_page_text", "search_fragment_text"):
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
        conn.execute(_LINKS_SQL)
        conn.execute("CREATE INDEX temp.search_inlink_by_target ON search_inlink(target)")
        _number_pages(conn)
        conn.execute("CREATE TEMP TABLE search_page_text AS SELECT target, text, count(DISTINCT source) AS pages "
                     "FROM temp.search_inlink WHERE text IS NOT NULL GROUP BY target, text")
        conn.execute("CREATE INDEX temp.search_page_text_by_target ON search_page_text(target)")
        conn.execute("CREATE TEMP TABLE search_fragment_text AS SELECT target, fragment, text, "
                     "count(DISTINCT source) AS pages FROM temp.search_inlink "
                     "WHERE text IS NOT NULL AND fragment IS NOT NULL GROUP BY target, fragment, text")
        conn.execute("CREATE INDEX temp.search_fragment_text_by_target ON search_fragment_text(target)")
        pages = conn.execute("SELECT count(*) FROM temp.search_doc").fetchone()[0]
        boilerplate = boilerplate_headings(conn)
        top = max(1, top_tier_pages) if pages > max(1, top_tier_pages) else 0  # last docid of the first tier
        page_rows, section_rows, stats_rows = [], [], []
        section_docid = top_section = 0
        for (eg_id, docid, title, headline, description, language, str_url, text, secondary, big, small,
             text_length, in_links, content_in_links, link_text, origin_id) in conn.execute(_PAGES_SQL):
            code = analyzer.stemmer_language(language)
            page_sections = conn.execute(
                "SELECT section_summary_id, anchor, title, level FROM section_summary "
                "WHERE entity_generation_id = ? ORDER BY section_index", (eg_id,)).fetchall()
            if boilerplate:
                page_sections = [r for r in page_sections if r[1] is not None or (origin_id, r[2]) not in boilerplate]
            by_fragment: dict[str, list[tuple[str, int]]] = {}
            for fragment, ftext, pages in conn.execute(
                    "SELECT fragment, text, pages FROM temp.search_fragment_text WHERE target = ?", (eg_id,)):
                by_fragment.setdefault(fragment, []).append((ftext, pages))
            anchors = _top_texts(conn.execute("SELECT text, pages FROM temp.search_page_text WHERE target = ?",
                                              (eg_id,)).fetchall())
            headings = [t for (_, _, t, level) in page_sections if level < 7] or [big, small]
            names = [a for (_, a, _, _) in page_sections if is_name_anchor(a)]
            names += [t for (_, _, t, level) in page_sections if level == 7]
            all_titles = "\n".join([title or "", headline or ""])
            body = analyzer.analyze(text, language)
            url_terms = analyzer.analyze(url_words(str_url), language)
            page_rows.append((
                docid,
                analyzer.analyze(all_titles, language),
                analyzer.analyze("\n".join(headings), language),
                analyzer.analyze("\n".join(names), language),
                analyzer.camel_parts("\n".join([all_titles, *headings, *names, text]), language),
                url_terms,
                analyzer.analyze("\n".join(anchors), language),
                analyzer.analyze(description, language),
                body,
                analyzer.analyze(_other_lines(secondary, page_sections, title, headline), language),
            ))
            density = min(1.0, link_text / len(text)) if text else 0.0
            variants = title_variants(title, headline)
            stats_rows.append((
                eg_id, docid, code, len(body.split()) if body else 0, text_length or 0, in_links,
                content_in_links, density,
                "\n".join(analyzer.analyze(v, language) for v in variants),
                "\n".join(analyzer.analyze(v, None) for v in variants),
                url_terms, analyzer.analyze(last_segment(str_url), language),
                "\n".join(analyzer.analyze(a, language) for a in anchors)))
            for section_id, anchor, stitle, level in page_sections:
                section_docid += 1
                section_rows.append((
                    section_docid,
                    analyzer.analyze(stitle, language),
                    analyzer.analyze(anchor, language) if is_name_anchor(anchor) else "",
                    analyzer.analyze("\n".join(_top_texts(by_fragment.get(anchor, []))), language) if anchor else "",
                    section_id,
                ))
            if docid <= top:
                top_section = section_docid
            report.pages += 1
            report.languages[code or ""] = report.languages.get(code or "", 0) + 1
            if len(page_rows) >= 500:
                _flush(conn, page_rows, section_rows, stats_rows, top, top_section)
                report.sections += len(section_rows)
                page_rows, section_rows, stats_rows = [], [], []
            if on_page is not None:
                on_page()
        _flush(conn, page_rows, section_rows, stats_rows, top, top_section)
        report.sections += len(section_rows)
        conn.execute("INSERT INTO search_top_tier(pages, sections, last_docid, last_section_docid) "
                     "VALUES (?, ?, ?, ?)", (report.pages, report.sections, top, top_section))
        report.top_tier_pages = top
        conn.executemany("INSERT INTO search_language(language, pages) VALUES (?, ?)",
                         [(code, n) for code, n in report.languages.items() if code])
        _fill_vocabularies(conn)
        for table in ("search_inlink", "search_doc", "search_page_text", "search_fragment_text"):
            conn.execute(f"DROP TABLE temp.{table}")
        for table in ("search_index", "section_search_index", "search_index_top", "section_search_index_top"):
            optimize_fts(conn, table)
    return report


#: The FTS5 tables of a summary database: the documented one and textpile's search index.
FTS_TABLES = frozenset({"full_text_entity_index", "search_index", "section_search_index", "search_index_top",
                        "section_search_index_top"})


#: The leaf size of the FTS5 tables (their ``pgsz`` option; FTS5's default is 4050, one
#: SQLite page): per leaf FTS5 writes its first term and first rowid whole, so longer
#: leaves make the index smaller (python3.11-doc: 0.0017 to 0.0032 of the raw HTML less, up to 1.6% of its FTS5
#: tables; 32400 gives only 0.0002 more), and a search as fast (60 queries
#: interleaved, CPU: 0.518 s against 0.520 s).
FTS_PAGE_BYTES = 16200


def optimize_fts(conn: sqlite3.Connection, table: str) -> None:
    """Merge the segments of the FTS5 ``table`` into one (FTS5's ``optimize``): a filled
    index has a dozen (search_index at 100K pages: 12), and every term of a query is
    looked up, and its document list read, in each of them. One segment makes a search
    14% cheaper at 100K pages (bench/bench_search.py) and the index smaller; at 100K
    pages the four search tables take about 12 s.

    Raises:
        ValueError: ``table`` is not one of the summary schema's FTS5 tables.
    """
    if table not in FTS_TABLES:
        raise ValueError(f"{table!r} is not an FTS5 table of the summary database ({', '.join(sorted(FTS_TABLES))})")
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # one of FTS_TABLES


def empty_fts(conn: sqlite3.Connection, table: str) -> None:
    """Empty the FTS5 ``table`` (``delete-all``) and set its leaf size to
    :data:`FTS_PAGE_BYTES` (``pgsz``, a configuration value kept in its ``_config`` table,
    not part of the table's definition) for the rows written next.

    Raises:
        ValueError: ``table`` is not one of the summary schema's FTS5 tables.
    """
    if table not in FTS_TABLES:
        raise ValueError(f"{table!r} is not an FTS5 table of the summary database ({', '.join(sorted(FTS_TABLES))})")
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")  # one of FTS_TABLES
    # set only when it differs: a configuration write bumps the table's structure cookie,
    # and a table rebuilt twice must hold the same bytes as one rebuilt once
    row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'pgsz'").fetchone()
    if row is None or row[0] != FTS_PAGE_BYTES:
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('pgsz', ?)", (FTS_PAGE_BYTES,))


def _fill_vocabularies(conn: sqlite3.Connection) -> None:
    """Fill search_term (every term of search_index with its page count) and search_word
    (the words of full_text_entity_index of three or more characters, with theirs)."""
    for table in ("search_terms_vocab", "search_words_vocab"):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
    conn.execute("CREATE VIRTUAL TABLE temp.search_terms_vocab USING fts5vocab(main, search_index, 'row')")
    conn.execute("INSERT INTO search_term(term, docs) SELECT term, doc FROM temp.search_terms_vocab")
    conn.execute("CREATE VIRTUAL TABLE temp.search_words_vocab USING fts5vocab(main, full_text_entity_index, 'row')")
    conn.execute("INSERT INTO search_word(word, docs) SELECT term, doc FROM temp.search_words_vocab "
                 "WHERE length(term) >= 3")
    for table in ("search_terms_vocab", "search_words_vocab"):
        conn.execute(f"DROP TABLE temp.{table}")


def _number_pages(conn: sqlite3.Connection) -> None:
    """Fill temp.search_doc (one row per searchable page with its link figures) and
    give each page its docid: 1 for the largest :func:`page_prior`, ties by id."""
    conn.execute(_DOCS_SQL)
    rows = conn.execute("SELECT eg_id, in_links, content_in_links, link_text, text_chars FROM temp.search_doc"
                        ).fetchall()
    ordered = sorted(rows, key=lambda r: (-page_prior(r[1], r[2], min(1.0, r[3] / r[4]) if r[4] else 0.0), r[0]))
    conn.execute("ALTER TABLE temp.search_doc ADD COLUMN docid INTEGER")
    conn.execute("CREATE UNIQUE INDEX temp.search_doc_by_eg ON search_doc(eg_id)")  # one lookup per update
    conn.executemany("UPDATE temp.search_doc SET docid = ? WHERE eg_id = ?",
                     [(i, r[0]) for i, r in enumerate(ordered, start=1)])


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


_PAGE_INSERT = ("INSERT INTO {table}(rowid, " + ", ".join(SEARCH_COLUMNS) + ") VALUES (?"
                + ", ?" * len(SEARCH_COLUMNS) + ")")
_SECTION_INSERT = ("INSERT INTO {table}(rowid, " + ", ".join(SECTION_COLUMNS) + ") VALUES (?"
                   + ", ?" * len(SECTION_COLUMNS) + ")")


def _flush(conn: sqlite3.Connection, page_rows: list, section_rows: list, stats_rows: list, top: int,
           top_section: int) -> None:
    """Write a batch of pages; those with a docid up to ``top`` (the first tier's last
    page, 0 when there is no first tier) and the sections up to ``top_section`` (theirs)
    go to the first tier too."""
    conn.executemany(_PAGE_INSERT.format(table="search_index"), page_rows)
    sections = [r[:4] for r in section_rows]
    conn.executemany(_SECTION_INSERT.format(table="section_search_index"), sections)
    top_pages = [r for r in page_rows if r[0] <= top]
    if top_pages:
        conn.executemany(_PAGE_INSERT.format(table="search_index_top"), top_pages)
        conn.executemany(_SECTION_INSERT.format(table="section_search_index_top"),
                         [r for r in sections if r[0] <= top_section])
    conn.executemany("INSERT INTO search_section(section_summary_id, docid) VALUES (?, ?)",
                     [(r[4], r[0]) for r in section_rows])
    conn.executemany(
        "INSERT INTO search_page(" + ", ".join(DERIVED_TABLES["search_page"]) + ") VALUES (?"
        + ", ?" * (len(DERIVED_TABLES["search_page"]) - 1) + ")", stats_rows)
