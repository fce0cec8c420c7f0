"""Media types: parsing ``Content-Type`` values and storing them in mimetype/mime_parameter.

Source: unobtanium-documentation.txt, page "Base Database" (mimetype, mime_parameter).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from email.message import Message

#: Media types read as HTML: the HTML standard's ``text/html`` and XHTML.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Media types whose text textpile keeps: the crawler stores it, the summarizer scrapes
#: it into text piles (HTML and plain text).
TEXT_TYPES = HTML_TYPES | {"text/plain"}


@dataclass(frozen=True)
class MediaType:
    """A parsed media type. Type, subtype, parameter names and charset are lower case."""

    mime_type: str
    mime_subtype: str
    params: tuple[tuple[str, str], ...] = field(default=())

    @property
    def mime_suffix(self) -> str | None:
        """The structured syntax suffix after ``+`` (``xml`` for ``atom+xml``), or None."""
        return self.mime_subtype.rsplit("+", 1)[1] if "+" in self.mime_subtype else None

    @property
    def charset(self) -> str | None:
        """The charset parameter, or None."""
        return dict(self.params).get("charset")

    @property
    def essence(self) -> str:
        """``type/subtype`` without parameters."""
        return f"{self.mime_type}/{self.mime_subtype}"

    @property
    def str_mimetype(self) -> str:
        """The whole type with its parameters sorted alphabetically by name."""
        rest = "".join(f"; {k}={v}" for k, v in sorted(self.params))
        return self.essence + rest


def parse_media_type(value: str | None) -> MediaType:
    """Parse a Content-Type header value. A missing or malformed value gives
    ``application/octet-stream`` (RFC 9110: the recipient may treat it as unknown data).
    """
    if not value or "/" not in value.split(";", 1)[0]:
        return MediaType("application", "octet-stream")
    msg = Message()
    msg["content-type"] = value
    essence = value.split(";", 1)[0].strip().lower()
    mtype, _, subtype = essence.partition("/")
    params = []
    for key, val in msg.get_params(header="content-type")[1:]:
        key = key.strip().lower()
        val = str(val).strip()
        if key == "charset":
            val = val.lower()
        if key:
            params.append((key, val))
    return MediaType(mtype.strip() or "application", subtype.strip() or "octet-stream", tuple(params))


def intern_mimetype(conn: sqlite3.Connection, media_type: MediaType | str | None) -> int:
    """Return the ``mimetype_id`` for ``media_type``, inserting it and its parameters if new."""
    mt = media_type if isinstance(media_type, MediaType) else parse_media_type(media_type)
    row = conn.execute("SELECT mimetype_id FROM mimetype WHERE str_mimetype = ?", (mt.str_mimetype,)).fetchone()
    if row:
        return row[0]
    cur = conn.execute(
        "INSERT INTO mimetype(mime_type, mime_subtype, mime_suffix, charset, str_mimetype) VALUES (?, ?, ?, ?, ?)",
        (mt.mime_type, mt.mime_subtype, mt.mime_suffix, mt.charset, mt.str_mimetype),
    )
    mimetype_id = cur.lastrowid
    conn.executemany(
        "INSERT INTO mime_parameter(mimetype_id, key, value) VALUES (?, ?, ?)",
        [(mimetype_id, k, v) for k, v in mt.params],
    )
    return mimetype_id
