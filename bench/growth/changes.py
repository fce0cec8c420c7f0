"""The crawls of a day on a grown corpus: some pages changed, some gone.

A crawler database with one crawl run holding, for a share of the corpus's searchable
pages, a new crawl: a changed page gets the real HTML of the page it was copied from (from
that site's crawler database) with about one text run in eight put through another letter
swap, so it scrapes as a real page does and its words change; a gone page answers 404.
Summarizing it into the corpus is a run with that share changed.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from textpile.ids import uuid7
from textpile.store.database import open_crawler_db
from textpile.store.mimetypes import intern_mimetype
from textpile.store.searchable import searchable
from textpile.store.urls import intern_url

from corpus import _TABLES, copy_host

_TEXT_RUN = re.compile(r"<(\w*)[^<>]*>([^<>]{3,})(?=<)")
#: A link element, its start tag to its end tag (its text may be inside other elements).
_LINK = re.compile(r"<a\b[^<>]*>.*?</a\s*>", re.IGNORECASE | re.DOTALL)
#: The host of an absolute or scheme-relative URL in an href, src or action attribute.
_ATTRIBUTE_HOST = re.compile(r"""(\b(?:href|src|action)\s*=\s*["']?\s*(?:[A-Za-z][A-Za-z0-9+.-]*:)?//)([^/"'\s<>:?#]+)""",
                             re.IGNORECASE)
_LATEST_HTML = """
SELECT ft.text FROM url u JOIN file f ON f.url_id = u.url_id JOIN file_text ft ON ft.file_id = f.file_id
WHERE u.str_url = ? ORDER BY f.file_id DESC LIMIT 1
"""


def _changed_html(html: str, seed: int) -> str:
    """``html`` with about one text run (between tags) in eight put through letter swap
    ``seed``; the texts of links stay, also inside other elements of a link (``<a><code>``:
    an edit of a page rarely renames its links)."""
    table = _TABLES[seed % 16]
    links = [m.span() for m in _LINK.finditer(html)]
    count = [0]
    link = [0]  # the first link that does not end before the current text run

    def in_link(position: int) -> bool:
        while link[0] < len(links) and links[link[0]][1] <= position:
            link[0] += 1
        return link[0] < len(links) and links[link[0]][0] <= position

    def swap(m: re.Match) -> str:
        count[0] += 1
        if in_link(m.start(2)) or (count[0] + seed) % 8:
            return m.group()
        tag_end = m.start(2) - m.start()
        return m.group()[:tag_end] + m.group(2).translate(table)

    return _TEXT_RUN.sub(swap, html)


def _in_copy(html: str, copy: int) -> str:
    """``html`` with the host of each URL in its links (href, src and action attributes)
    put on copy ``copy``'s origins, as the corpus builder names them (:func:`corpus.copy_host`):
    a changed page of copy k links where its copy in the corpus links. Link texts stay as they are."""
    return _ATTRIBUTE_HOST.sub(lambda m: m.group(1) + copy_host(m.group(2), copy), html)


def pick(corpus: Path, share: float, offset: int) -> list[tuple[str, str]]:
    """(str_url, str_origin) of about ``share`` of the corpus's searchable pages (every n-th
    by generation id, from ``offset``)."""
    step = max(1, round(1 / share))
    with sqlite3.connect(f"file:{corpus}?mode=ro", uri=True) as conn:
        rows = conn.execute(f"SELECT u.str_url, o.str_origin FROM entity_generation eg JOIN url u USING (url_id) "
                            f"JOIN origin o USING (origin_id) WHERE {searchable('eg')} AND eg.url_fragment IS NULL "
                            "ORDER BY eg.entity_generation_id").fetchall()
    return rows[offset % step::step]


def write_changes(corpus: Path, origins: dict[str, list], crawler_db: Path, *, changed: float, gone: float,
                  seed: int, started: int = 2_000_000_000) -> dict[str, int]:
    """Write ``crawler_db`` (replaced) with a crawl run of the changes of ``corpus``:
    ``changed`` and ``gone`` shares of its pages; ``origins`` maps a corpus origin to
    [source summary database, source origin, copy] (written by the corpus builder).
    Returns the counts written."""
    for p in (crawler_db, Path(f"{crawler_db}-wal"), Path(f"{crawler_db}-shm")):
        p.unlink(missing_ok=True)
    sources: dict[str, sqlite3.Connection] = {}
    conn = open_crawler_db(crawler_db)
    counts = {"changed": 0, "gone": 0, "without_html": 0}
    agent = conn.execute("INSERT INTO agent(time_started_unix_utc, time_finished_unix_utc, agent_uuid, name, "
                         "http_user_agent) VALUES (?, ?, ?, 'growth', 'textpile-bench')",
                         (started, started + 3600, uuid7().bytes)).lastrowid
    html_type = intern_mimetype(conn, "text/html; charset=utf-8")
    t = started
    for kind, share, offset in (("changed", changed, 7), ("gone", gone, 503)):
        for str_url, str_origin in pick(corpus, share, offset):
            t += 1
            html = None
            if kind == "changed":
                source_db, source_origin, copy = origins[str_origin]
                crawler = Path(source_db).with_name("crawler.db")
                if str(crawler) not in sources:
                    sources[str(crawler)] = sqlite3.connect(f"file:{crawler}?mode=ro", uri=True)
                row = sources[str(crawler)].execute(_LATEST_HTML, (source_origin + str_url[len(str_origin):],)
                                                    ).fetchone()
                if row is None or row[0] is None:
                    counts["without_html"] += 1
                    continue
                text = row[0] if isinstance(row[0], str) else bytes(row[0]).decode("utf-8", "replace")
                html = _changed_html(_in_copy(text, copy), seed)
            url_id = intern_url(conn, str_url)
            exit_code, status = (20, 200) if html is not None else (44, 404)
            cl = conn.execute("INSERT INTO crawl_log(agent_id, url_id, crawl_type, crawl_uuid, time_started_unix_utc,"
                              " time_taken_ms, exit_code, message) VALUES (?, ?, 0, ?, ?, 12, ?, NULL)",
                              (agent, url_id, uuid7().bytes, t, exit_code)).lastrowid
            request = conn.execute("INSERT INTO request(crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,"
                                   " robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code,"
                                   " http_etag) VALUES (?, ?, ?, 10, 1, ?, NULL, ?, NULL)",
                                   (cl, url_id, t, exit_code, status)).lastrowid
            if html is not None:
                body = html.encode("utf-8")
                file_id = conn.execute("INSERT INTO file(crawl_log_id, request_id, url_id, last_modified_unix_utc,"
                                       " file_size, mimetype_id, canonical_url_id) VALUES (?, ?, ?, NULL, ?, ?, NULL)",
                                       (cl, request, url_id, len(body), html_type)).lastrowid
                conn.execute("INSERT INTO file_text(file_id, text) VALUES (?, ?)", (file_id, html))
            counts[kind] += 1
    conn.commit()
    conn.close()
    for source in sources.values():
        source.close()
    return counts


def write_origins(path: Path, origins: dict[str, list]) -> None:
    path.write_text(json.dumps(origins))


def read_origins(path: Path) -> dict[str, list]:
    return json.loads(path.read_text())
