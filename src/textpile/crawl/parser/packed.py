"""A page's links packed into one string, to cross process boundaries cheaply.

A page reader (worker process) finds a page's links; the crawl's database process makes
them crawl candidates. Between the two they pass through the event loop's process, where
20,000 URL objects would cost tens of milliseconds to unpickle and pickle again; one
string costs a copy. Format: one line per link, ``str_origin``, ``path``, ``query`` and
``str_url`` separated by tabs (``\\x00`` for a URL without query). None of these contain
a tab, a line feed or NUL: the WHATWG parser removes tabs and newlines and
percent-encodes controls. Links with a user name or password are never packed (the
crawler never schedules them).
"""

from __future__ import annotations

from collections.abc import Iterable

from textpile.store.urls import ParsedUrl

NO_QUERY = "\x00"


def pack_links(links: Iterable[ParsedUrl]) -> str:
    """``links`` (without user name or password) as one string (see the module doc).

    Raises:
        ValueError: a link carries a user name or password.
    """
    lines = []
    for url in links:
        if url.username is not None or url.password is not None:
            raise ValueError(f"a link with credentials is never packed: {url.str_url!r}")
        query = NO_QUERY if url.query is None else url.query
        lines.append(f"{url.str_origin}\t{url.path}\t{query}\t{url.str_url}")
    return "\n".join(lines)


def unpack_links(packed: str) -> list[tuple[str, str, str | None, str]]:
    """``(str_origin, path, query, str_url)`` of each link in ``packed``, in order."""
    if not packed:
        return []
    rows = []
    for line in packed.split("\n"):
        origin, path, query, str_url = line.split("\t")
        rows.append((origin, path, None if query == NO_QUERY else query, str_url))
    return rows
