"""Judged queries made from each site's own data.

Classes (``Query.klass``):

* ``title``: a page's title (Sphinx ``std:doc`` display names; the ``<title>`` of
  PostgreSQL and SQLite pages, PostgreSQL's section numbers removed) -> that page;
* ``section``: a section title (Sphinx ``std:label`` display names) -> its page;
* ``api``: an API object's full name (Sphinx ``py:*`` objects such as
  ``sqlalchemy.orm.Session.execute``; SQLite's C functions from ``c3ref/funclist.html``)
  -> the page that documents it;
* ``command``: a PostgreSQL reference page's name (``CREATE INDEX``, ``pg_dump``);
* ``title`` on sites without an objects.inv (javadoc, rustdoc, AsciiDoc, Doxygen,
  Texinfo): each page's ``<title>`` without what its generator adds
  (:func:`generator_title_queries`);
* ``everyday``: what a user types, two to five words, hand-judged (everyday.py);
* ``natural``: questions and paraphrases in a user's own words, hand-judged
  (natural.py).

A query's ``relevant`` pages are every page that the site's data gives for the same
text (two pages with one title are both right; on the rustdoc site, an item's page
and its re-exported copies, :func:`rustdoc_twins`). Paths are relative to the site root.
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

from everyday import EVERYDAY
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
    section numbers removed)."""
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
             for q in _group(commands, site, "command") + _group(titles, site, "title")])


_FUNC_LINK = re.compile(r"<a href='\.\./(c3ref/[^'#]+)(?:#([^']*))?'>(sqlite3_\w+)</a>")


def sqlite_queries(site: str, root: Path) -> list[Query]:
    """api queries (C functions of c3ref/funclist.html) and title queries (page titles)."""
    apis = [(m.group(3), m.group(1), m.group(2))
            for m in _FUNC_LINK.finditer((root / "c3ref" / "funclist.html").read_text(encoding="utf-8"))]
    titles = []
    for path in sorted(list(root.glob("*.html")) + list((root / "c3ref").glob("*.html"))):
        title = _html_title(path)
        if title:
            titles.append((title, path.relative_to(root).as_posix(), None))
    return _group(apis, site, "api") + _group(titles, site, "title")


#: Per generator, what its ``<title>`` adds around a page's own title (the product's
#: name, the manual's name and version, a man page's section), removed for title queries.
_TITLE_NOISE = {
    "javadoc": re.compile(r"\s*\((?:Java SE|JDK)[^()]*\)$"),       # "ExecutorService (Java SE 17 & JDK 17)"
    "rustdoc": re.compile(r"\s+-\s+Rust$"),                          # "HashMap in std::collections - Rust"
    "asciidoc": re.compile(r"\(\d\)$"),                              # "git-reset(1)"
    "doxygen": re.compile(r"^Eigen:\s*"),                             # "Eigen: The Matrix class"
    "texinfo": re.compile(r"\s*\(GNU Octave \(version [^()]*\)\)$"),  # "Basic Vectorization (GNU Octave (...))"
}
#: A Doxygen class title's template parameters ("Eigen::Matrix< _Scalar, _Rows, ... > Class
#: Template Reference"): nobody types them, so title queries leave them out.
_TEMPLATE_ARGS = re.compile(r"\s*<[^<>]*>")
_REDIRECT = re.compile(rb"<meta[^>]+http-equiv=[\"']?refresh", re.I)


def generator_title_queries(site, root: Path) -> list[Query]:
    """title queries of a site without an objects.inv: each crawled page's ``<title>``
    without what its generator adds (``_TITLE_NOISE``; Doxygen's template parameters
    too). Redirect pages and titles that more than two pages share (Doxygen's many
    "Reference" pages name no page) are left out; two pages with one title are both right."""
    noise = _TITLE_NOISE[site.kind]
    items = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root).as_posix()
        if not site.in_scope(rel) or _REDIRECT.search(path.read_bytes()[:4096]):
            continue
        title = _html_title(path)
        if not title:
            continue
        title = noise.sub("", title)
        if site.kind == "doxygen":
            while _TEMPLATE_ARGS.search(title):
                title = _TEMPLATE_ARGS.sub("", title)
        items.append((title, rel, None))
    return [q for q in _group(items, site.name, "title") if len(q.relevant) <= 2]


_DESCRIPTION = re.compile(rb'<meta name="description" content="([^"]*)"')
_DECLARATION = re.compile(rb'<div class="docblock item-decl">(.*?)</div>', re.S)
_TAG = re.compile(rb"<[^>]+>")


def rustdoc_twins(root: Path, site) -> dict[str, frozenset[str]]:
    """Pages rustdoc renders twice: an item re-exported at another path
    (``std/collections/struct.HashMap.html`` and ``std/collections/hash_map/struct.HashMap.html``)
    gets a full page at each, with one file name, one description and one declaration
    (its text; ``f32::consts::LOG2_E`` and ``f64::consts::LOG2_E`` differ in it). Maps
    each such page to all of its copies."""
    groups: dict[tuple[str, bytes, bytes], set[str]] = defaultdict(set)
    for path in root.rglob("*.html"):
        rel = path.relative_to(root).as_posix()
        if not site.in_scope(rel):
            continue
        data = path.read_bytes()
        description, declaration = _DESCRIPTION.search(data[:4096]), _DECLARATION.search(data)
        if description and description.group(1) and declaration:
            groups[(path.name, description.group(1), _TAG.sub(b"", declaration.group(1)))].add(rel)
    return {rel: frozenset(paths) for paths in groups.values() if len(paths) > 1 for rel in paths}


def hand_judged(site) -> list[Query]:
    """The everyday (everyday.py) and natural (natural.py) queries of ``site``."""
    return ([Query(site.name, "everyday", text, frozenset(pages)) for text, pages in EVERYDAY.get(site.name, {}).items()]
            + [Query(site.name, "natural", text, frozenset(pages)) for text, pages in NATURAL.get(site.name, {}).items()])


def site_queries(site, root: Path) -> list[Query]:
    """All judged queries of ``site`` (a sites.Site) served from ``root``."""
    if site.kind == "sphinx":
        return sphinx_queries(site.name, root) + hand_judged(site)
    if site.kind == "postgres":
        return postgres_queries(site.name, root) + hand_judged(site)
    if site.kind == "sqlite":
        return sqlite_queries(site.name, root) + hand_judged(site)
    if site.kind in _TITLE_NOISE:
        queries = generator_title_queries(site, root) + hand_judged(site)
        if site.kind == "rustdoc":
            twins = rustdoc_twins(root, site)
            queries = [Query(q.site, q.klass, q.text, frozenset().union(q.relevant, *(twins.get(p, ()) for p in q.relevant)),
                             q.anchor) for q in queries]
        return queries
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
