"""``textpile export --warc``: the crawler database's HTTP exchanges as a WARC/1.1 file,
written with warcio (the Webrecorder project's maintained WARC library, which
:mod:`textpile.archives.warc` reads with).

Every request of a file crawl or a metadata crawl (sitemaps, feeds) that got an HTTP
answer becomes one ``response`` record, in crawl log order: its URL
(``WARC-Target-URI``), the time it was sent (``WARC-Date``, seconds), the status, and
the headers the crawler database keeps: ``Content-Type`` (the file's media type; a text
body with ``charset=utf-8``, as it is stored), ``Last-Modified``, ``ETag``, ``Location``
(a redirect's target), ``Link: <...>; rel="canonical"`` (the canonical the file
claimed, in its markup or a header). The body is the file's text as stored (``file_text``,
UTF-8). An answer whose body the crawler did not keep has none: a redirect or an error
page (the database never had it), and a file it did not store, marked ``WARC-Truncated:
unspecified`` (ISO 28500 6.3.20: the record holds less than the answer had): a file of
another type, and a page whose canonical named another URL (exit code 180: its body is
discarded, its file row keeps the media type and the canonical, written as the Link
header, so that the importer decides 180 again). robots.txt fetches are left out (their
rules are not kept). A ``warcinfo`` record comes first. Importing the file (``textpile
import``) gives the same pages: the same URLs with the same texts, statuses, redirects
and canonicals.

What the database does not keep cannot be exported: the other response headers
(X-Robots-Tag among them), the bytes of a body before decoding, the request's headers.
Source: ISO 28500:2017 (WARC 1.1).
"""

from __future__ import annotations

import datetime
import io
import os
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from textpile import __version__
from textpile.enums import CrawlType
from textpile.errors import TextpileError
from textpile.store.database import open_crawler_db, sqlite_errors

#: Reason phrases of the statuses written (any other: no phrase).
_REASONS = {200: "OK", 203: "Non-Authoritative Information", 204: "No Content", 206: "Partial Content",
            301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
            307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 410: "Gone", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}

_EXCHANGES_SQL = """
SELECT r.request_id, u.str_url, r.time_sent_unix_utc, r.http_status_code, r.server_last_modified_unix_utc,
       r.http_etag, m.mime_type, m.mime_subtype, ft.text, cu.str_url, f.file_id IS NOT NULL,
       (SELECT tu.str_url FROM redirect d JOIN url tu ON tu.url_id = d.to_url_id
        WHERE d.request_id = r.request_id AND d.information_source = 1 ORDER BY d.redirect_id LIMIT 1)
FROM crawl_log l
JOIN request r ON r.crawl_log_id = l.crawl_log_id
JOIN url u ON u.url_id = r.url_id
LEFT JOIN file f ON f.request_id = r.request_id
LEFT JOIN mimetype m ON m.mimetype_id = f.mimetype_id
LEFT JOIN file_text ft ON ft.file_id = f.file_id
LEFT JOIN url cu ON cu.url_id = f.canonical_url_id
WHERE l.crawl_type IN (?, ?) AND r.http_status_code IS NOT NULL
ORDER BY l.crawl_log_id, r.request_id
"""


@dataclass
class ExportReport:
    """What :func:`export_warc` wrote: ``records`` response records (``bodies`` of them
    with a body) and the file's ``bytes``."""

    path: Path
    records: int = 0
    bodies: int = 0
    bytes: int = 0


def export_warc(database: str | Path, path: str | Path) -> ExportReport:
    """Write the exchanges of crawler database ``database`` (opened read-only) to the
    WARC/1.1 file ``path`` (see the module doc), gzip-compressed record by record when
    its name ends in ``.gz``. The file is written beside its final name and renamed into
    place when complete, so an interrupted export leaves no partial file.

    Raises:
        DatabaseError: the crawler database cannot be opened or read.
        TextpileError: ``path`` cannot be written (names the file and the cause).
    """
    path = Path(path)
    report = ExportReport(path)
    conn = open_crawler_db(database, create=False, read_only=True)
    partial = path.with_name(path.name + ".partial")
    try:
        with sqlite_errors(database):
            rows = conn.execute(_EXCHANGES_SQL, (int(CrawlType.file_crawl), int(CrawlType.metadata_crawl)))
            try:
                with open(partial, "wb") as out:
                    writer = WARCWriter(out, gzip=path.name.endswith(".gz"), warc_version="WARC/1.1")
                    writer.write_record(writer.create_warcinfo_record(path.name, {
                        "software": f"textpile {__version__}", "format": "WARC File Format 1.1",
                        "description": f"exchanges of the crawler database {Path(database).name}"}))
                    for row in rows:
                        writer.write_record(_response(writer, row))
                        report.records += 1
                        report.bodies += row[8] is not None
                os.replace(partial, path)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                raise TextpileError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        conn.close()
    report.bytes = path.stat().st_size
    return report


def _response(writer: WARCWriter, row: tuple):
    """The ``response`` record of one exchange row of :data:`_EXCHANGES_SQL`."""
    (_, url, sent, status, last_modified, etag, mime_type, mime_subtype, text, canonical, has_file, location) = row
    body = b"" if text is None else text.encode("utf-8", "surrogatepass")
    headers = []
    if mime_type is not None:
        media = f"{mime_type}/{mime_subtype}"
        headers.append(("Content-Type", media + ("; charset=utf-8" if text is not None else "")))
    if last_modified is not None:
        headers.append(("Last-Modified", formatdate(last_modified, usegmt=True)))
    if etag is not None:
        headers.append(("ETag", etag))
    if location is not None:
        headers.append(("Location", location))
    if canonical is not None:
        headers.append(("Link", f'<{canonical}>; rel="canonical"'))
    headers.append(("Content-Length", str(len(body))))
    status_line = f"{status} {_REASONS.get(status, '')}".rstrip()
    http_headers = StatusAndHeaders(status_line, headers, protocol="HTTP/1.1")
    date = datetime.datetime.fromtimestamp(sent, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    warc_headers = {"WARC-Date": date}
    if has_file and text is None:
        warc_headers["WARC-Truncated"] = "unspecified"  # a body the database did not keep
    return writer.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                     http_headers=http_headers, warc_headers_dict=warc_headers)
