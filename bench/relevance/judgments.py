"""Judged queries made from each site's own data.

Classes (``Query.klass``):

* ``title``: a page's title (Sphinx ``std:doc`` display names; the ``<title>`` of
  PostgreSQL and SQLite pages, PostgreSQL's section numbers removed) -> that page;
* ``section``: a section title (Sphinx ``std:label`` display names) -> its page;
* ``api``: an API object's full name (Sphinx ``py:*`` objects such as
  ``sqlalchemy.orm.Session.execute``; SQLite's C functions from ``c3ref/funclist.html``)
  -> the page that documents it;
* ``command``: a PostgreSQL reference page's name (``CREATE INDEX``, ``pg_dump``);
* ``everyday``: a few hand-judged queries per site (the ones a user types);
* ``natural``: questions and paraphrases in a user's own words, hand-judged
  (natural.py), for the semantic and hybrid search modes.

A query's ``relevant`` pages are every page that the site's data gives for the same
text (two pages with one title are both right). Paths are relative to the site root.
Queries whose every relevant page is missing from the index are dropped (and counted):
the benchmark measures ranking, not crawl coverage.
"""

from __future__ import annotations

import html
import random
import re
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from natural import NATURAL


@dataclass(frozen=True)
class Query:
    """One judged query: ``relevant`` page paths (no fragment), ``anchor`` when the
    data names the section or object's anchor."""

    site: str
    klass: str
    text: str
    relevant: frozenset[str]
    anchor: str | None = None


_INV_LINE = re.compile(r"(?x)(.+?)\s+(\S+)\s+(-?\d+)\s+?(\S*)\s+(.*)")
API_ROLES = frozenset(f"py:{r}" for r in ("module", "class", "function", "method", "exception",
                                           "attribute", "data", "property"))


def read_objects_inv(path: Path) -> list[tuple[str, str, str, str]]:
    """Return (name, domain:role, uri, display name) of a Sphinx inventory v2 file.

    ``$`` at the end of a uri is the name; a display name ``-`` is the name.
    Raises ValueError when the file is not a version 2 inventory.
    """
    data = path.read_bytes()
    header, _, rest = data.partition(b"\n")
    if not header.startswith(b"# Sphinx inventory version 2"):
        raise ValueError(f"{path}: not a Sphinx inventory version 2")
    for _ in range(3):
        _, _, rest = rest.partition(b"\n")
    out = []
    for line in zlib.decompress(rest).decode("utf-8").splitlines():
        m = _INV_LINE.match(line.rstrip())
        if not m:
            continue
        name, role, _prio, uri, disp = m.groups()
        if uri.endswith("$"):
            uri = uri[:-1] + name
        out.append((name, role, uri, name if disp == "-" else disp))
    return out


def _page_and_anchor(uri: str) -> tuple[str, str | None]:
    page, _, anchor = uri.partition("#")
    return page or "index.html", anchor or None


def _group(items: list[tuple[str, str, str | None]], site: str, klass: str) -> list[Query]:
    """(text, page, anchor) items -> one Query per distinct text (case-insensitive)."""
    pages: dict[str, set[str]] = defaultdict(set)
    first: dict[str, tuple[str, str | None]] = {}
    for text, page, anchor in items:
        key = " ".join(text.split()).lower()
        if not key or not re.search(r"\w", key):
            continue
        pages[key].add(page)
        first.setdefault(key, (" ".join(text.split()), anchor))
    return [Query(site, klass, first[k][0], frozenset(v), first[k][1]) for k, v in pages.items()]


def sphinx_queries(site: str, root: Path) -> list[Query]:
    """title, section and api queries from ``root/objects.inv``."""
    titles, sections, apis = [], [], []
    for name, role, uri, disp in read_objects_inv(root / "objects.inv"):
        page, anchor = _page_and_anchor(uri)
        if role == "std:doc":
            titles.append((disp, page, None))
        elif role == "std:label" and disp != name and anchor:
            sections.append((disp, page, anchor))
        elif role in API_ROLES:
            apis.append((name, page, anchor))
    return _group(titles, site, "title") + _group(sections, site, "section") + _group(apis, site, "api")


_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_SECTION_NUMBER = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+")


def _html_title(path: Path) -> str | None:
    m = _TITLE.search(path.read_text(encoding="utf-8", errors="replace"))
    return " ".join(html.unescape(m.group(1)).split()) if m else None


def postgres_queries(site: str, root: Path) -> list[Query]:
    """command queries (sql-*.html, app-*.html titles) and title queries (other pages,
    section numbers removed), plus the everyday set."""
    commands, titles = [], []
    for path in sorted(root.glob("*.html")):
        title = _html_title(path)
        if not title:
            continue
        if path.name.startswith(("sql-", "app-")):
            commands.append((title, path.name, None))
        else:
            titles.append((_SECTION_NUMBER.sub("", title), path.name, None))
    # A page titled like the query is right whichever class it was listed in (the SQL
    # command DECLARE and ECPG's DECLARE are both titled "DECLARE").
    everything = {q.text.lower(): q.relevant for q in _group(commands + titles, site, "any")}
    return ([Query(q.site, q.klass, q.text, everything[q.text.lower()], q.anchor)
             for q in _group(commands, site, "command") + _group(titles, site, "title")]
            + _everyday(site, POSTGRES_EVERYDAY))


_FUNC_LINK = re.compile(r"<a href='\.\./(c3ref/[^'#]+)(?:#([^']*))?'>(sqlite3_\w+)</a>")


def sqlite_queries(site: str, root: Path) -> list[Query]:
    """api queries (C functions of c3ref/funclist.html) and title queries (page titles),
    plus the everyday set."""
    apis = [(m.group(3), m.group(1), m.group(2))
            for m in _FUNC_LINK.finditer((root / "c3ref" / "funclist.html").read_text(encoding="utf-8"))]
    titles = []
    for path in sorted(list(root.glob("*.html")) + list((root / "c3ref").glob("*.html"))):
        title = _html_title(path)
        if title:
            titles.append((title, path.relative_to(root).as_posix(), None))
    return _group(apis, site, "api") + _group(titles, site, "title") + _everyday(site, SQLITE_EVERYDAY)


def _everyday(site: str, table: dict[str, tuple[str, ...]]) -> list[Query]:
    return [Query(site, "everyday", text, frozenset(pages)) for text, pages in table.items()]


#: Hand-judged everyday queries: the query and the pages that answer it.
POSTGRES_EVERYDAY = {
    "create index concurrently": ("sql-createindex.html",),
    "CREATE INDEX": ("sql-createindex.html",),
    "vacuum full": ("sql-vacuum.html",),
    "explain analyze": ("sql-explain.html", "using-explain.html"),
    "window functions": ("tutorial-window.html", "functions-window.html"),
    "row level security": ("ddl-rowsecurity.html",),
    "foreign key": ("ddl-constraints.html", "tutorial-fk.html"),
    "json operators": ("functions-json.html",),
    "pg_dump": ("app-pgdump.html",),
    "streaming replication": ("warm-standby.html",),
    "connection string": ("libpq-connect.html",),
    "upsert on conflict": ("sql-insert.html",),
    "table partitioning": ("ddl-partitioning.html",),
    "full text search": ("textsearch.html", "textsearch-intro.html"),
    "autovacuum": ("routine-vacuuming.html", "runtime-config-autovacuum.html"),
    "common table expressions": ("queries-with.html",),
    "date formatting": ("functions-formatting.html",),
    "uuid type": ("datatype-uuid.html",),
    "listen notify": ("sql-listen.html", "sql-notify.html"),
    "alter table add column": ("sql-altertable.html",),
}
SQLITE_EVERYDAY = {
    "create index": ("lang_createindex.html",),
    "foreign keys": ("foreignkeys.html",),
    "full text search": ("fts5.html", "fts3.html"),
    "json functions": ("json1.html",),
    "write ahead log": ("wal.html",),
    "vacuum": ("lang_vacuum.html",),
    "upsert": ("lang_upsert.html",),
    "window functions": ("windowfunctions.html",),
    "datatypes": ("datatype3.html",),
    "date and time functions": ("lang_datefunc.html",),
    "autoincrement": ("autoinc.html",),
    "pragma journal_mode": ("pragma.html",),
    "query planner": ("queryplanner.html", "optoverview.html"),
    "sqlite3_prepare_v2": ("c3ref/prepare.html",),
    "busy timeout": ("c3ref/busy_timeout.html",),
    "attach database": ("lang_attach.html",),
    "strict tables": ("stricttables.html",),
    "generated columns": ("gencol.html",),
    "savepoint": ("lang_savepoint.html",),
    "explain query plan": ("eqp.html",),
}


def site_queries(site, root: Path) -> list[Query]:
    """All judged queries of ``site`` (a sites.Site) served from ``root``."""
    natural = [Query(site.name, "natural", text, frozenset(pages))
               for text, pages in NATURAL.get(site.name, {}).items()]
    if site.kind == "sphinx":
        return sphinx_queries(site.name, root) + natural
    if site.kind == "postgres":
        return postgres_queries(site.name, root) + natural
    if site.kind == "sqlite":
        return sqlite_queries(site.name, root) + natural
    raise ValueError(f"unknown site kind {site.kind!r}")


def sample(queries: list[Query], indexed_pages: set[str], per_class: int, seed: int = 9) -> tuple[list[Query], int]:
    """Keep queries with at least one indexed relevant page (relevant pages cut to the
    indexed ones), then at most ``per_class`` per class (seeded; everyday and natural
    kept whole).

    Returns (queries, number dropped because no relevant page is indexed).
    """
    kept, dropped = [], 0
    for q in queries:
        rel = frozenset(p for p in q.relevant if p in indexed_pages)
        if not rel:
            dropped += 1
            continue
        kept.append(Query(q.site, q.klass, q.text, rel, q.anchor))
    by_class: dict[str, list[Query]] = defaultdict(list)
    for q in kept:
        by_class[q.klass].append(q)
    out = []
    rng = random.Random(seed)
    for klass in sorted(by_class):
        items = sorted(by_class[klass], key=lambda q: q.text)
        if klass not in ("everyday", "natural") and len(items) > per_class:
            items = sorted(rng.sample(items, per_class), key=lambda q: q.text)
        out.extend(items)
    return out, dropped
