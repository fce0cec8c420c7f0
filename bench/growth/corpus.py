"""A summary database of N pages, made in minutes from real pages replicated with varied text.

The source is one or more real summary databases (the relevance benchmark's sites,
crawled and summarized by textpile). Copy k of a source lives on origins of its own
(``c<k>-<host>``); every URL, link, section and description is copied, links point
into the same copy, and the text is varied without changing a single offset: in about
one line of 20 (chosen by the line's position and k) every ASCII letter goes through one
of 16 letter swaps chosen by k, so each copy brings rare words of its own while common
words stay common, and the Gen1 spans, section offsets and UTF-8 sizes of the source
stay exact. Nothing is scraped or integrated again: rows are written as integration
writes them (digests made unique per copy), about 2,000 pages per second.

The search index is not built here: the benchmark measures that (``update_index``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

import deflate

from textpile.ids import uuid7_bytes
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import BLOCK_BYTES, pack_text, register_functions, unpack
from textpile.store.searchable import searchable

_PAIRS = ("ae", "io", "tn", "sr", "lc", "dm", "pb", "gk", "uo", "hf", "vw", "yj")
#: 16 letter swaps: table k swaps the pairs whose bit is set in k + 1.
_TABLES = [str.maketrans({**{a: b for i, (a, b) in enumerate(_PAIRS) if (k + 1) >> (i % 4) & 1},
                          **{b: a for i, (a, b) in enumerate(_PAIRS) if (k + 1) >> (i % 4) & 1}}) for k in range(16)]


def _pack(value: bytes) -> tuple[bytes, int]:
    """:func:`textpile.store.gen2_piles.pack` at libdeflate's level 6 instead of its
    slowest: the same stream format, 2-3% larger, several times faster to write."""
    packed = bytes(deflate.zlib_compress(value, 6))
    return (packed, len(value)) if len(packed) < len(value) else (bytes(value), len(value))


def vary(text: str, copy: int) -> str:
    """``text`` with about one line of 20 (by position and ``copy``) put through letter swap
    ``copy % 16``; the same length in code points and in UTF-8 bytes. Copy 0 is the source."""
    if not copy or not text:
        return text
    table = _TABLES[copy % 16]
    lines = text.split("\n")
    for i in range(len(lines)):
        if (i * 7 + copy) % 20 == 0:
            lines[i] = lines[i].translate(table)
    return "\n".join(lines)


def copy_host(host: str | None, copy: int) -> str:
    """The host that ``host`` (None: an origin without one) has in copy ``copy`` of the corpus."""
    return f"c{copy}-{(host or 'nohost').lower().replace('.', '-')}.example"


class _Copier:
    """Copies of one source database into the target connection (the source attached as ``src``)."""

    def __init__(self, conn: sqlite3.Connection, source: Path, origin_map: dict[str, list]) -> None:
        self.conn = conn
        self.source = source
        self.origin_map = origin_map  # new str_origin -> [source database, source str_origin, copy]
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        self.pages = [r[0] for r in conn.execute(
            f"SELECT eg.entity_generation_id FROM src.entity_generation eg WHERE {searchable('eg')} ORDER BY 1")]
        self.styles = {old: self._style(row) for old, *row in conn.execute(
            "SELECT link_style_id, flags, destination_type, link_locality, html_tag_name FROM src.link_style")}
        conn.commit()
        conn.execute("DETACH DATABASE src")
        self.next_link_id = 1

    def _style(self, row) -> int:
        found = self.conn.execute("SELECT link_style_id FROM link_style WHERE flags = ? AND destination_type IS ? "
                                  "AND link_locality = ? AND html_tag_name IS ?", row).fetchone()
        if found:
            return found[0]
        return self.conn.execute("INSERT INTO link_style(flags, destination_type, link_locality, html_tag_name) "
                                 "VALUES (?, ?, ?, ?)", row).lastrowid

    def copy(self, copy: int, limit: int) -> int:
        """Write copy ``copy`` of at most ``limit`` pages; return the pages written."""
        conn = self.conn
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{self.source}?mode=ro",))
        try:
            row = conn.execute("SELECT first_link_summary_id + link_count FROM link_list"
                               " ORDER BY first_link_summary_id DESC LIMIT 1").fetchone()
            self.next_link_id = row[0] if row else 1
            origins = self._origins(copy)
            urls = self._urls(origins)
            targets = self._targets(urls)
            written = 0
            for eg_id in self.pages[:limit]:
                self._page(eg_id, copy, urls, targets)
                written += 1
            return written
        finally:
            conn.commit()
            conn.execute("DETACH DATABASE src")

    def _origins(self, copy: int) -> dict[int, int]:
        out = {}
        for old, port, scheme, host, str_origin in self.conn.execute(
                "SELECT origin_id, port, scheme, host, str_origin FROM src.origin").fetchall():
            new_host = copy_host(host, copy)
            new_str = str_origin.replace(f"//{host}", f"//{new_host}", 1) if host else f"{scheme}://{new_host}"
            self.conn.execute("INSERT OR IGNORE INTO origin(port, scheme, host, str_origin) VALUES (?, ?, ?, ?)",
                              (port, scheme, new_host, new_str))
            out[old] = (self.conn.execute("SELECT origin_id FROM origin WHERE str_origin = ?", (new_str,)).fetchone()[0],
                        str_origin, new_str)
            self.origin_map[new_str] = [str(self.source), str_origin, copy]
        return out

    def _urls(self, origins) -> dict[int, int]:
        out = {}
        for url_id, origin_id, path, query, user, password, str_url in self.conn.execute(
                "SELECT url_id, origin_id, path, query, username, password, str_url FROM src.url").fetchall():
            new_origin, old_str, new_str = origins[origin_id]
            new_url = new_str + str_url[len(old_str):] if str_url.startswith(old_str) else str_url
            if not str_url.startswith(old_str):  # a default port left out of the URL
                scheme_host = old_str.rsplit(":", 1)[0]
                new_url = new_str.rsplit(":", 1)[0] + str_url[len(scheme_host):]
            self.conn.execute("INSERT OR IGNORE INTO url(origin_id, path, query, username, password, str_url) "
                              "VALUES (?, ?, ?, ?, ?, ?)", (new_origin, path, query, user, password, new_url))
            out[url_id] = self.conn.execute("SELECT url_id FROM url WHERE str_url = ?", (new_url,)).fetchone()[0]
        return out

    def _targets(self, urls: dict[int, int]) -> dict[int, int]:
        out = {}
        for target, url, fragment, text in self.conn.execute(
                "SELECT link_target_id, link_to_url, link_to_fragment, text FROM src.link_target").fetchall():
            out[target] = self.conn.execute("INSERT INTO link_target(link_to_url, link_to_fragment, text) "
                                            "VALUES (?, ?, ?)", (urls[url], fragment, text)).lastrowid
        return out

    def _page(self, eg_id: int, copy: int, urls: dict[int, int], targets: dict[int, int]) -> None:
        conn = self.conn
        (url_id, fragment, first, last, tp1, tp2) = conn.execute(
            "SELECT url_id, url_fragment, first_seen_unix_utc, last_seen_unix_utc, text_pile_id, text_pile_v0_2_id "
            "FROM src.entity_generation WHERE entity_generation_id = ?", (eg_id,)).fetchone()
        salt = copy.to_bytes(4, "big")
        new_tp2 = None
        if tp2 is not None:
            digest, text_packed, text_size, meta, meta_size, cache, cache_size = conn.execute(
                "SELECT blake2b512_digest, text_packed, text_size, metadata_packed, metadata_size, "
                "segmentation_cache_packed, segmentation_cache_size FROM src.text_pile_gen2 WHERE text_pile_id = ?",
                (tp2,)).fetchone()
            text = vary(unpack(text_packed, text_size).decode("utf-8"), copy).encode("utf-8")
            packed, size, points = pack_text(text) if len(text) > BLOCK_BYTES else (*_pack(text), [])
            new_tp2 = conn.execute(
                "INSERT INTO text_pile_gen2(blake2b512_digest, text_packed, text_size, metadata_packed, metadata_size,"
                " segmentation_cache_packed, segmentation_cache_size) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (hashlib.blake2b(digest + salt).digest(), packed, size, meta, meta_size, cache, cache_size)).lastrowid
            conn.executemany("INSERT INTO text_pile_gen2_block(text_pile_id, char_offset, byte_offset, packed_offset)"
                             " VALUES (?, ?, ?, ?)", [(new_tp2, *p) for p in points])
        row = conn.execute("SELECT * FROM src.text_pile_gen1 WHERE text_pile_id = ?", (tp1,)).fetchone()
        new_tp1 = conn.execute(f"INSERT INTO text_pile_gen1 VALUES (NULL, ?, ?{', ?' * (len(row) - 3)})",
                               (hashlib.blake2b(row[1] + salt).digest(), new_tp2, *row[3:])).lastrowid
        new_eg = conn.execute(
            "INSERT INTO entity_generation(entity_generation_uuid, url_id, url_fragment, first_seen_unix_utc,"
            " last_seen_unix_utc, confirmed_end_unix_utc, marked_duplicate, text_pile_id, text_pile_v0_2_id)"
            " VALUES (?, ?, ?, ?, ?, NULL, 0, ?, ?)",
            (uuid7_bytes(), urls[url_id], fragment, first, last, new_tp1, new_tp2)).lastrowid
        dd = conn.execute("SELECT time_created_unix_utc, time_updated_unix_utc, primary_language, title,"
                          " primary_headline, description, indexiness FROM src.document_description"
                          " WHERE entity_generation_id = ?", (eg_id,)).fetchone()
        if dd is not None:
            conn.execute("INSERT INTO document_description VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (new_eg, dd[0], dd[1], dd[2], vary(dd[3], copy) if dd[3] else dd[3], dd[4], dd[5], dd[6]))
        conn.execute("INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level,"
                     " start_offset, end_offset) SELECT ?, section_index, anchor, title, level, start_offset,"
                     " end_offset FROM src.section_summary WHERE entity_generation_id = ?", (new_eg, eg_id))
        links = conn.execute("SELECT first_link_summary_id, link_count, links_packed, links_size FROM src.link_list"
                             " WHERE entity_generation_id = ?", (eg_id,)).fetchone()
        if links is not None:
            pairs = json.loads(unpack(links[2], links[3]))
            remapped = json.dumps([[targets[t], self.styles[s]] for t, s in pairs], separators=(",", ":"))
            conn.execute("INSERT INTO link_list VALUES (?, ?, ?, ?, ?)",
                         (new_eg, self.next_link_id, len(pairs), *_pack(remapped.encode())))
            self.next_link_id += len(pairs)


def build_corpus(target: Path, sources: list[Path], pages: int, log=print) -> dict:
    """Write a summary database of ``pages`` searchable pages at ``target`` (replaced) from
    copies of ``sources`` (summary databases); return figures (pages, seconds) and
    ``origins``: each new origin's [source database, source origin, copy]."""
    started = time.monotonic()
    tmp = target.with_name(target.name + ".building")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    conn = register_functions(open_summary_db(tmp))
    conn.execute("PRAGMA synchronous=OFF")
    origins: dict[str, list] = {}
    copiers = [_Copier(conn, source, origins) for source in sources]
    per_copy = sum(len(c.pages) for c in copiers)
    if not per_copy:
        raise SystemExit(f"no searchable pages in {', '.join(map(str, sources))}")
    written = copy = 0
    while written < pages:
        for copier in copiers:
            if written >= pages:
                break
            written += copier.copy(copy, pages - written)
        copy += 1
        log(f"   building: {written}/{pages} pages ({copy} copies of {per_copy}, {time.monotonic() - started:.0f} s)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    tmp.replace(target)
    return {"pages": written, "seconds": time.monotonic() - started, "origins": origins}
