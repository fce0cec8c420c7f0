"""Batches of crawl log entries sent to the crawler database process are bounded in
bytes as well as in entries (issue 10: a batch of big pages is pickled whole in the
crawl's process and unpickled whole in the database process)."""

from __future__ import annotations

import asyncio
import uuid

from textpile.crawl.crawldb import writer as crawldb
from textpile.crawl.crawldb.records import FileRecord, LogEntry
from textpile.crawl.crawldb.writer import CrawlerDb
from textpile.enums import CrawlType, ExitCode
from textpile.store.database import open_crawler_db
from textpile.store.mimetypes import parse_media_type
from textpile.store.urls import parse_url


def _page_entry(number: int, text: bytes) -> LogEntry:
    entry = LogEntry(url=parse_url(f"http://h.example/{number}.html"), crawl_type=CrawlType.file_crawl,
                     time_started_unix=1, time_taken_ms=2, exit_code=ExitCode.file_ingested, requests=[],
                     update_candidate=False)
    entry.file = FileRecord(None, parse_media_type("text/html; charset=utf-8"), len(text), None, text=text)
    return entry


def test_entries_go_to_the_database_process_once_their_texts_reach_the_byte_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(crawldb, "MAX_PENDING_BYTES", 3000)
    conn = open_crawler_db(tmp_path / "crawl.db")
    db = CrawlerDb(conn)
    db.start_agent(uuid.uuid4(), "test", "ua")
    written: list[str] = []

    async def scenario() -> list[int]:
        db.full = asyncio.Event()
        pending = []
        for number in range(7):
            db.queue_entry(_page_entry(number, b"x" * 1000), lambda entry, error: written.append(entry.url.path))
            pending.append(db.pending)
        assert not db.full.is_set()  # 7 entries are far below MAX_PENDING_ENTRIES: the bytes sent them
        await db.drain()
        return pending

    try:
        # Every third entry reaches 3000 bytes: the three are sent, the count starts again.
        assert asyncio.run(scenario()) == [1, 2, 0, 1, 2, 0, 1]
        assert written == [f"/{number}.html" for number in range(7)]
        rows = conn.execute("SELECT length(text) FROM file_text ORDER BY rowid").fetchall()
        assert rows == [(1000,)] * 7
    finally:
        conn.close()


def test_a_query_whose_caller_was_cancelled_while_it_ran_leaves_no_error_and_the_next_one_runs(tmp_path):
    conn = open_crawler_db(tmp_path / "crawl.db")
    db = CrawlerDb(conn)
    db.start_agent(uuid.uuid4(), "test", "ua")
    problems: list[dict] = []

    async def scenario() -> list:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: problems.append(context))
        ask = dict(recrawl_interval_s=3600, force=False, limit=5)
        task = asyncio.ensure_future(db.due_candidates("http://h.example", **ask))
        await asyncio.sleep(0)  # the query is with the database process now
        task.cancel()  # its caller gives up (a deadline, the crawl stopping)
        next_one = await db.due_candidates("http://h.example", **ask)
        await db.drain()
        return next_one

    try:
        assert asyncio.run(scenario()) == []
        # before: the next query never ran (the crawl stalled): setting the cancelled future's result
        # raised InvalidStateError in the done callback, before it started the next job
        assert [str(p.get("exception")) for p in problems] == []
    finally:
        conn.close()
