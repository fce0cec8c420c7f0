"""The links between indexed pages, counted: what a page's anchor texts and in-links come from.

A page's rows in the search index hold the texts of links to it (and to its sections)
from other indexed pages, and its docid follows how many pages link to it
(:mod:`textpile.index.docids`). Links are stored per source page (``link_list``), so
finding the links *to* a page would mean reading every page's links. Instead two tables
count them, kept up to date as pages enter and leave the index:

* ``search_link``: per link of ``link_target`` with a text (a destination URL, fragment
  and text), the indexed pages holding it;
* ``search_inlink``: per URL, the indexed pages linking to it, and those of them with
  such a link outside nav, header, footer and aside (in their content).

A page linking to its own URL does not count. The texts of links to a URL, with their
fragments and page counts, are then one indexed lookup (``link_target_by_url_fragment``). A
page's anchor text counts are the sums over the links of one text (the same text to
several fragments of a page from one source counts once per fragment).
"""

from __future__ import annotations

import json
import sqlite3

from textpile.index.pages import NOT_CONTENT_FLAGS

#: The links of the source pages in temp.index_sources(eg_id), one row per link.
_LINK_ROWS_SQL = f"""
CREATE TEMP TABLE index_link_rows AS
SELECT l.entity_generation_id AS source, t.link_target_id AS target, t.link_to_url AS url,
       t.text IS NOT NULL AS has_text, (s.flags & {NOT_CONTENT_FLAGS}) = 0 AS content
FROM temp.index_sources x
JOIN link_list l ON l.entity_generation_id = x.eg_id
JOIN entity_generation src ON src.entity_generation_id = l.entity_generation_id,
     json_each(CAST(sqlar_uncompress(l.links_packed, l.links_size) AS TEXT)) j
JOIN link_target t ON t.link_target_id = json_extract(j.value, '$[0]')
JOIN link_style s ON s.link_style_id = json_extract(j.value, '$[1]')
WHERE t.link_to_url <> src.url_id
"""
_PER_TARGET_SQL = ("SELECT target, count(DISTINCT source) AS pages, url FROM temp.index_link_rows WHERE has_text "
                   "GROUP BY target")
_PER_URL_SQL = ("SELECT url, count(DISTINCT source), count(DISTINCT CASE WHEN content THEN source END) "
                "FROM temp.index_link_rows GROUP BY url")


def _link_rows(conn: sqlite3.Connection, sources: list[int]) -> None:
    """Fill temp.index_link_rows with the links of the generations ``sources``."""
    conn.execute("DROP TABLE IF EXISTS temp.index_sources")
    conn.execute("DROP TABLE IF EXISTS temp.index_link_rows")
    conn.execute("CREATE TEMP TABLE index_sources (eg_id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp.index_sources VALUES (?)", [(s,) for s in sources])
    conn.execute(_LINK_ROWS_SQL)


def _drop_temp(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE temp.index_link_rows")
    conn.execute("DROP TABLE temp.index_sources")


def count_all(conn: sqlite3.Connection, members: list[int]) -> None:
    """Fill the (empty) search_link and search_inlink from the links of every page of
    ``members`` (entity_generation_ids: the pages the index will hold)."""
    _link_rows(conn, members)
    conn.execute(f"INSERT INTO search_link(link_target_id, pages) SELECT target, pages FROM ({_PER_TARGET_SQL})")
    conn.execute(f"INSERT INTO search_inlink(url_id, pages, content_pages) {_PER_URL_SQL}")
    _drop_temp(conn)


_LINK_LISTS_SQL = """
SELECT eg.entity_generation_id, eg.url_id, l.links_size, l.links_packed FROM json_each(?) j
JOIN entity_generation eg ON eg.entity_generation_id = j.value
JOIN link_list l ON l.entity_generation_id = eg.entity_generation_id
"""


def _without_same_links(conn: sqlite3.Connection, leaving: list[int], entering: list[int]) -> tuple[list[int], list[int]]:
    """``leaving`` and ``entering`` (generation ids) without the pairs of a leaving and an
    entering generation of one URL with the same stored link list (``link_list``, the same
    bytes): what such a page counts in the link tables depends on its URL and its links
    alone, so the two cancel out (a page that changed its text but not its links: 996 of
    the 1,000 pages changed by the growth benchmark at 100,000 pages). Reading their links
    costs about 0.5 ms a page."""
    if not leaving or not entering:
        return leaving, entering
    old: dict[tuple, list[int]] = {}
    for eg, url, size, packed in conn.execute(_LINK_LISTS_SQL, (json.dumps(leaving),)):
        old.setdefault((url, size, packed), []).append(eg)
    same: set[int] = set()
    for eg, url, size, packed in conn.execute(_LINK_LISTS_SQL, (json.dumps(entering),)):
        match = old.get((url, size, packed))
        if match:
            same.update((match.pop(), eg))
    if not same:
        return leaving, entering
    return [eg for eg in leaving if eg not in same], [eg for eg in entering if eg not in same]


class LinkChanges:
    """What the pages leaving and entering the index change in the link counts: computed
    first (:meth:`of`), read for the URLs whose pages must be indexed again
    (:attr:`urls`), written with :meth:`apply` once the old rows are deleted."""

    def __init__(self, per_target: dict[int, int], per_url: dict[int, tuple[int, int]],
                 target_urls: dict[int, int]) -> None:
        self.per_target = per_target
        self.per_url = per_url
        self.target_urls = target_urls

    @property
    def urls(self) -> set[int]:
        """The URLs whose in-link counts or anchor texts change. A page that changed keeps
        most of its links: its old generation leaves and its new one enters with the same
        links, which cancel out."""
        return ({url for url, change in self.per_url.items() if change != (0, 0)}
                | {self.target_urls[target] for target, change in self.per_target.items() if change})

    @classmethod
    def of(cls, conn: sqlite3.Connection, leaving: list[int], entering: list[int]) -> "LinkChanges":
        """The changes of the pages ``leaving`` and ``entering`` the index (generation ids)."""
        per_target: dict[int, int] = {}
        per_url: dict[int, tuple[int, int]] = {}
        target_urls: dict[int, int] = {}
        leaving, entering = _without_same_links(conn, leaving, entering)
        for sources, sign in ((leaving, -1), (entering, 1)):
            if not sources:
                continue
            _link_rows(conn, sources)
            for target, pages, url in conn.execute(_PER_TARGET_SQL):
                per_target[target] = per_target.get(target, 0) + sign * pages
                target_urls[target] = url
            for url, pages, content in conn.execute(_PER_URL_SQL):
                was = per_url.get(url, (0, 0))
                per_url[url] = (was[0] + sign * pages, was[1] + sign * content)
            _drop_temp(conn)
        return cls(per_target, per_url, target_urls)

    def apply(self, conn: sqlite3.Connection) -> None:
        """Add the changes to search_link and search_inlink; rows counting no page go.

        Raises:
            sqlite3.IntegrityError: a count would fall below 0 (the tables do not match
                the index: it must be rebuilt).
        """
        targets = [(t, d) for t, d in self.per_target.items() if d]
        urls = [(u, d[0], d[1]) for u, d in self.per_url.items() if d != (0, 0)]
        conn.executemany("INSERT INTO search_link(link_target_id, pages) VALUES (?, ?) "
                         "ON CONFLICT(link_target_id) DO UPDATE SET pages = pages + excluded.pages", targets)
        conn.executemany("INSERT INTO search_inlink(url_id, pages, content_pages) VALUES (?, ?, ?) "
                         "ON CONFLICT(url_id) DO UPDATE SET pages = pages + excluded.pages, "
                         "content_pages = content_pages + excluded.content_pages", urls)
        ids = json.dumps([t for t, _ in targets])
        if conn.execute("SELECT count(*) FROM search_link WHERE link_target_id IN (SELECT value FROM json_each(?)) "
                        "AND pages < 0", (ids,)).fetchone()[0]:
            raise sqlite3.IntegrityError("the link counts (search_link) do not match the search index")
        conn.execute("DELETE FROM search_link WHERE link_target_id IN (SELECT value FROM json_each(?)) AND pages = 0",
                     (ids,))
        ids = json.dumps([u for u, _, _ in urls])
        if conn.execute("SELECT count(*) FROM search_inlink WHERE url_id IN (SELECT value FROM json_each(?)) "
                        "AND (pages < 0 OR content_pages < 0)", (ids,)).fetchone()[0]:
            raise sqlite3.IntegrityError("the in-link counts (search_inlink) do not match the search index")
        conn.execute("DELETE FROM search_inlink WHERE url_id IN (SELECT value FROM json_each(?)) AND pages = 0",
                     (ids,))
