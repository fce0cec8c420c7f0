"""``textpile import``: web archives into the crawler database as crawl log entries.

Each archive (WARC, WACZ or zshot, told apart by :func:`textpile.archives.kinds.archive_kind`)
becomes one crawl run: an ``agent`` row named ``import <file name>`` whose crawl log
entries carry the archive's own times, statuses, headers and bodies. Every answer is
interpreted by the crawler's interpreter, as one it fetched (:class:`textpile.crawl.interpret.Interpreter`:
exit code from the status, redirects, text of HTML and plain text, meta robots,
canonicals, meta refresh, links as candidates of the archive's origins, sitemaps and
feeds), so the summarizer and search treat imported pages as crawled ones. Source of the
rows' meaning: unobtanium-documentation.txt (crawler database schema, "Crawl Loop").

* robots.txt: a robots.txt answer in the archive is a ``robotstxt_fetch`` entry, and its
  rules are honoured for every URL of its origin (a disallowed URL is logged as 170
  ``blocked_by_robots_txt`` without its answer); ``request.robotstxt_approved`` is true
  when a robots.txt of the archive allowed the URL, or the archive says its capture
  obeyed robots.txt (zshot's ``crawl.robots_checked``).
* Revisits and duplicates are not stored twice: a revisit (WARC ``revisit`` record, zshot
  ``served = 'revisit'``), and a full answer whose payload digest equals an earlier one
  of the same archive, is 34 ``file_did_not_change`` for the same URL and 181
  ``duplicate`` (its message naming the URL storing the payload) for another.
* An archive whose bytes were imported already (SHA-256) is not imported again; one
  interrupted is resumed after the last exchange written (``textpile_archive_import``,
  schemas/crawler/textpile_import.sql).
* Records that cannot be read are reported one by one (:class:`~textpile.archives.exchange.Problem`)
  and the rest is imported.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from textpile.archives.exchange import Exchange, Problem
from textpile.archives.kinds import FORMAT_OF_KIND, ArchiveFormat, archive_kind
from textpile.crawl.crawldb.records import LogEntry, RequestRecord
from textpile.crawl.crawldb.recovery import crawl_lock_path
from textpile.crawl.crawldb.sql import CrawlStore
from textpile.crawl.fetcher.fetch import FetchResult, exit_code_for_status, parse_http_date
from textpile.crawl.fetcher.robots import RobotsRules, user_agent_token
from textpile.crawl.interpret import Interpreter
from textpile.crawl.policy.config import CrawlConfig
from textpile.crawl.workers.readers import PageReader
from textpile.enums import CrawlType, ExitCode
from textpile.errors import DatabaseError, TextpileError
from textpile.ids import uuid7
from textpile.progress import progress_bar
from textpile.store.database import open_crawler_db, sqlite_errors
from textpile.store.locks import exclusive_lock, lock_holder
from textpile.store.urls import ParsedUrl, UrlError, parse_url

#: Crawl log entries written per transaction (with the resume point).
BATCH = 200
#: The user agent whose robots.txt token judges imported pages when no configuration names one.
IMPORT_USER_AGENT = "textpile-crawler"


@dataclass
class ImportReport:
    """What importing one archive did.

    ``run`` is the crawl run's agent UUID (None when nothing was imported); ``exchanges``
    counts the answers read, ``entries`` the crawl log entries written by exit code name
    (``exit_code_counts``); ``skipped`` the answers not imported (non-http(s) URLs, POST
    answers); ``problems`` the records that could not be read; ``resumed_after`` the
    exchanges an earlier, interrupted import had written already; ``already_imported``
    names the earlier run when the same bytes were imported before (nothing done).
    """

    path: Path
    kind: str
    sha256: str = ""
    run: uuid.UUID | None = None
    exchanges: int = 0
    entries: int = 0
    skipped: int = 0
    exit_code_counts: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    resumed_after: int = 0
    already_imported: str | None = None
    duration_s: float = 0.0


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def import_archives(database: str | Path, paths: list[Path], *, config: CrawlConfig | None = None,
                    progress: bool = False, page_readers: int | None = 0,
                    agent_uuids: list[uuid.UUID] | None = None) -> list[ImportReport]:
    """Import each archive of ``paths`` into the crawler database ``database`` (created
    if missing), one crawl run each, in the given order.

    ``config`` gives the robots.txt token (its user agent), the session-ID parameters
    stripped and whether sitemaps and feeds are read; None: textpile's defaults with the
    user agent :data:`IMPORT_USER_AGENT`. ``page_readers`` as for
    :func:`textpile.crawl.loop.run.run_crawl` (0: a thread of this process). ``agent_uuids``
    names the crawl runs, one per path (the Dagster layer's partition keys); new UUID v7s
    when None (an interrupted import goes on in its own run whatever is given). Holds the
    crawl lock of the database (no crawl runs beside an import).

    Raises:
        ArchiveKindError: a file is not an archive textpile reads (checked for every file first).
        OSError: a file cannot be read.
        DatabaseError: the crawler database cannot be opened, or its lock is held.
    """
    kinds = [(Path(p), archive_kind(Path(p))) for p in paths]
    if agent_uuids is not None and len(agent_uuids) != len(kinds):
        raise ValueError(f"agent_uuids: {len(agent_uuids)} given for {len(kinds)} archives")
    conn = open_crawler_db(database)
    lock = crawl_lock_path(database)
    reports = []
    with ExitStack() as stack:
        stack.callback(conn.close)
        try:
            held = stack.enter_context(exclusive_lock(lock, wait=False))
        except OSError as exc:
            raise DatabaseError(f"{os.fspath(database)}: cannot create or lock {lock}: {exc.strerror or exc}") from None
        if not held:
            pid = lock_holder(lock)
            raise TextpileError(f"{os.fspath(database)}: a crawl or import is running on this crawler database "
                                f"(lock {lock}{f' held by pid {pid}' if pid is not None else ''})")
        for i, (path, kind) in enumerate(kinds):
            started = time.monotonic()
            report = ImportReport(path=path, kind=kind, run=None if agent_uuids is None else agent_uuids[i])
            with sqlite_errors(database):
                _import_one(conn, path, kind, report, config, progress, page_readers)
            report.duration_s = time.monotonic() - started
            reports.append(report)
    return reports


def _default_config(origins: list[str]) -> CrawlConfig:
    return CrawlConfig(default_delay_ms=0, max_commands_per_run=0, recrawl_interval_s=0, seeds=origins or
                       ["http://localhost/"], user_agent=IMPORT_USER_AGENT)


def _import_one(conn: sqlite3.Connection, path: Path, kind: str, report: ImportReport, config: CrawlConfig | None,
                progress: bool, page_readers: int | None) -> None:
    report.sha256 = file_sha256(path)
    row = conn.execute("SELECT a.agent_uuid, i.finished_unix_utc, i.exchanges_done, i.agent_id"
                       " FROM textpile_archive_import i JOIN agent a USING(agent_id) WHERE i.sha256 = ?",
                       (report.sha256,)).fetchone()
    if row is not None and row[1] is not None:
        report.already_imported = uuid.UUID(bytes=row[0]).hex
        report.run = None
        return
    archive_format = FORMAT_OF_KIND[kind]
    try:
        robots_checked = archive_format.robots_checked(path)
    except ValueError as exc:
        report.run = None
        report.problems.append(Problem(str(path), f"not a readable {archive_format.name} archive: {exc}", fatal=True))
        return
    origins, robots, total = _survey(path, archive_format)
    store = CrawlStore(conn)
    if row is not None:  # an interrupted import of these bytes: go on with its run
        store.agent_id = row[3]
        report.run = uuid.UUID(bytes=row[0])
        report.resumed_after = row[2]
    else:
        report.run = report.run or uuid7()
        store.start_agent(report.run, f"import {path.name}", None)
        with conn:
            conn.execute("INSERT INTO textpile_archive_import(sha256, file_name, kind, agent_id, started_unix_utc,"
                         " finished_unix_utc, exchanges_done) VALUES (?, ?, ?, ?, ?, NULL, 0)",
                         (report.sha256, path.name, kind, store.agent_id, int(time.time())))
    cfg = config or _default_config(sorted(origins))
    asyncio.run(_interpret_all(store, path, archive_format, report, cfg, frozenset(origins), robots, robots_checked,
                               progress, page_readers, total))
    with conn:
        conn.execute("UPDATE textpile_archive_import SET finished_unix_utc = ? WHERE sha256 = ?",
                     (int(time.time()), report.sha256))
    store.finish_agent()


def _is_robots_url(url: ParsedUrl) -> bool:
    return url.path == "/robots.txt" and url.query is None


def _survey(path: Path, archive_format: ArchiveFormat) -> tuple[set[str], dict[str, RobotsRules], int]:
    """The http(s) origins the archive answers for, the robots.txt rules it holds
    per origin, and how many exchanges it holds (the progress total) (the latest answer of each: 2xx parsed, 4xx allow all, 5xx disallow, as
    RFC 9309 and the crawler read them)."""
    origins: set[str] = set()
    robots: dict[str, RobotsRules] = {}
    exchanges = 0
    for item in archive_format.read(path):
        if not isinstance(item, Exchange):
            continue
        exchanges += 1
        try:
            url = parse_url(item.url)
        except UrlError:
            continue
        if url.scheme not in ("http", "https"):
            continue
        origins.add(url.str_origin)
        if _is_robots_url(url) and item.status is not None and item.revisit is None:
            if 200 <= item.status < 300:
                robots[url.str_origin] = RobotsRules.parse(item.body or b"", truncated=item.truncated)
            elif 400 <= item.status < 500:
                robots[url.str_origin] = RobotsRules.allow_all()
            elif item.status >= 500:
                robots[url.str_origin] = RobotsRules.unavailable()
    return origins, robots, exchanges


async def _interpret_all(store: CrawlStore, path: Path, archive_format: ArchiveFormat, report: ImportReport,
                         config: CrawlConfig, origins: frozenset[str], robots: dict[str, RobotsRules],
                         robots_checked: bool, progress: bool, page_readers: int | None, total: int) -> None:
    """Interpret and write every exchange after ``report.resumed_after`` (``total``
    exchanges, for the progress display)."""
    token = user_agent_token(config.user_agent)
    first_of_digest: dict[str, str] = {}
    pending: list[LogEntry] = []
    done = 0
    with PageReader(page_readers) as reader, progress_bar(f"Importing {path.name}", total, enabled=progress) as bar:
        reader.start()
        interpreter = Interpreter(config, token, origins, reader)
        for item in archive_format.read(path):
            if isinstance(item, Problem):
                report.problems.append(item)
                continue
            report.exchanges += 1
            done += 1
            bar.advance(1)
            entry = await _entry(item, interpreter, store, first_of_digest, robots, robots_checked, report)
            if done <= report.resumed_after or entry is None:
                continue  # written by the interrupted import (the digests above are still learnt)
            pending.append(entry)
            if len(pending) >= BATCH:
                _write(store, pending, report, done)
        _write(store, pending, report, done)


def _write(store: CrawlStore, entries: list[LogEntry], report: ImportReport,
           done: int) -> None:
    """Write ``entries`` and the resume point ``done`` in one transaction."""
    if not entries:
        return
    store.write_with(entries, "UPDATE textpile_archive_import SET exchanges_done = ? WHERE sha256 = ?",
                     (done, report.sha256))
    for entry in entries:
        name = ExitCode(entry.exit_code).name
        report.exit_code_counts[name] = report.exit_code_counts.get(name, 0) + 1
    report.entries += len(entries)
    entries.clear()


async def _entry(item: Exchange, interpreter: Interpreter, store: CrawlStore, first_of_digest: dict[str, str],
                 robots: dict[str, RobotsRules], robots_checked: bool, report: ImportReport) -> LogEntry | None:
    """The crawl log entry of one archived exchange (interpreted as a fetched answer by
    ``interpreter``, :func:`answer`), or None when it is not imported."""
    token = interpreter.token
    try:
        url = interpreter.clean(parse_url(item.url))
    except UrlError as exc:
        report.problems.append(Problem(item.where, f"not a usable URL: {exc}"))
        return None
    if url.scheme not in ("http", "https"):
        report.skipped += 1
        return None
    started = int(item.time_unix)
    headers = httpx.Headers(item.headers)
    approved = robots_checked
    if _is_robots_url(url):
        code = exit_code_for_status(item.status)
        if code == ExitCode.file_ingested and item.revisit is not None:
            code = ExitCode.file_did_not_change
        return LogEntry(url=url, crawl_type=CrawlType.robotstxt_fetch, time_started_unix=started, time_taken_ms=0,
                        exit_code=code, message=f"from the archive {report.path.name}",
                        requests=[_request(url, item, headers, code, True)], update_candidate=False)
    rules = robots.get(url.str_origin)
    if rules is not None:
        if not rules.can_fetch(url.str_url, token):
            return LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=started, time_taken_ms=0,
                            exit_code=ExitCode.blocked_by_robots_txt,
                            message=f"disallowed by {url.str_origin}/robots.txt of the archive for {token}: "
                                    "its answer is not imported")
        approved = True
    digest = item.payload_digest
    original = first_of_digest.get(digest) if digest else None
    if item.revisit is not None and original is None and item.body is None:
        # the payload is in another archive or crawl: known when that stored this URL before
        original = item.refers_to_url or item.url
        try:
            known = store.has_contentful_crawl(interpreter.clean(parse_url(original)))
        except UrlError:
            known = False
        if not known:
            report.problems.append(Problem(item.where, f"{item.url}: a revisit of a payload that neither this "
                                                       f"archive nor the crawler database holds ({original}): "
                                                       "not imported"))
            return None
    if original is not None and (item.status is None or 200 <= item.status < 300):
        try:
            same = interpreter.clean(parse_url(original)).str_url == url.str_url
        except UrlError:
            same = False
        code = ExitCode.file_did_not_change if same or item.revisit == "not-modified" else ExitCode.duplicate
        message = None if code == ExitCode.file_did_not_change else (
            f"the same payload as {original} ({digest}): not stored twice")
        return LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=started, time_taken_ms=0,
                        exit_code=code, message=message, requests=[_request(url, item, headers, code, approved)])
    if digest and item.status is not None and 200 <= item.status < 300:
        first_of_digest.setdefault(digest, url.str_url)
    entry = await interpreter.interpret(url, [answer(item, url, headers)], origin=url.str_origin)
    entry.time_started_unix = started
    entry.time_taken_ms = 0
    for request in entry.requests:
        request.robotstxt_approved = approved
        request.duration_ms = None
    if item.truncated:
        entry.message = "; ".join(m for m in (entry.message, "the archive cut its body") if m)
    return entry


def answer(item: Exchange, url: ParsedUrl, headers: httpx.Headers) -> FetchResult:
    """The archived exchange ``item`` of ``url`` (session IDs stripped) with its
    ``headers`` as the fetcher would have given it: the body of a 2xx answer only, no
    duration."""
    return FetchResult(url=url.str_url, time_sent=item.time_unix, duration_s=0.0, status=item.status,
                       headers=headers, body=item.body if item.status is not None and 200 <= item.status < 300
                       else None, raw_size=len(item.body or b""), truncated=item.truncated)


def _request(url: ParsedUrl, item: Exchange, headers: httpx.Headers, code: ExitCode, approved: bool) -> RequestRecord:
    return RequestRecord(url=url, time_sent_unix=int(item.time_unix), duration_ms=None, exit_code=code,
                         server_last_modified_unix=parse_http_date(headers.get("last-modified")),
                         http_status=item.status, http_etag=headers.get("etag"), robotstxt_approved=approved)
