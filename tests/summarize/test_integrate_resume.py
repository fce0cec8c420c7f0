"""Staging per crawl run, re-integration, and resuming after an interrupt or a kill."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq

from textpile.store.gen2_piles import register_functions
from textpile.index.update import update_search_index
from textpile.summarize.pipeline import integrate_staged, scrape_staged, stage_crawl_log, summarize

from .summary_fixtures import CrawlerRows, dump_db, page, semantic_dump

BASE = "http://site.test"
TOPICS = ["xylophone melodies", "garden tomatoes", "river boats", "mountain trails", "winter bread",
          "copper kettles", "paper lanterns", "quiet libraries"]


def build_crawler_db(path: Path) -> tuple[bytes, bytes]:
    """Two crawl runs over 8 pages: run 1 fetches all, run 2 changes some, loses one,
    finds some unchanged and adds copies. Returns the two agent uuids."""
    with CrawlerRows(path) as rows:
        a1 = rows.agent(started=1000)
        t = 1000
        for i, topic in enumerate(TOPICS):
            t += 1
            rows.crawl(a1, f"{BASE}/p{i}.html", t, html=page(topic.title(), f"<p>All about {topic}, really.</p>"))
        a2 = rows.agent(started=2000)
        t = 2000
        for i, topic in enumerate(TOPICS):
            t += 1
            if i == 0:
                rows.crawl(a2, f"{BASE}/p{i}.html", t, 44)
            elif i % 2:
                rows.crawl(a2, f"{BASE}/p{i}.html", t, html=page(topic.title(), f"<p>New text on {topic}.</p>"))
            else:
                rows.crawl(a2, f"{BASE}/p{i}.html", t, html=page(topic.title(), f"<p>All about {topic}, really.</p>"))
        rows.crawl(a2, f"{BASE}/copy/p2-again.html", t + 1,
                   html=page(TOPICS[2].title(), f"<p>All about {TOPICS[2]}, really.</p>"))
        return rows.agent_uuid(a1), rows.agent_uuid(a2)


def test_stage_writes_parquet_per_batch(tmp_path):
    a1, _ = build_crawler_db(tmp_path / "c.db")
    report = stage_crawl_log(tmp_path / "c.db", tmp_path / "stage", agent_uuid=uuid.UUID(bytes=a1),
                             batch_size=3, progress=False)
    assert [p.name for p in report.batches] == ["batch-00001", "batch-00002", "batch-00003"]
    assert report.crawl_log_entries == 8 and report.files == 8
    first = report.batches[0]
    assert sorted(p.name for p in first.iterdir()) == [
        "crawl_log.parquet", "file.parquet", "file_text.parquet", "redirect.parquet", "request.parquet"]
    crawl_log = pq.read_table(first / "crawl_log.parquet").to_pylist()
    assert [(r["str_url"], r["time_started_unix_utc"], r["agent_uuid"]) for r in crawl_log] == [
        (f"{BASE}/p0.html", 1001, a1), (f"{BASE}/p1.html", 1002, a1), (f"{BASE}/p2.html", 1003, a1)]
    files = pq.read_table(first / "file.parquet").to_pylist()
    assert files[0]["str_mimetype"] == "text/html; charset=utf-8" and files[0]["mime_essence"] == "text/html"
    assert pq.ParquetFile(first / "file_text.parquet").metadata.row_group(0).column(1).compression == "ZSTD"
    # staging again replaces the folder's batches
    again = stage_crawl_log(tmp_path / "c.db", tmp_path / "stage", batch_size=100, progress=False)
    assert [p.name for p in again.batches] == ["batch-00001"]
    assert sorted(p.name for p in (tmp_path / "stage").iterdir()) == ["batch-00001"]
    assert again.crawl_log_entries == 17


def test_stages_per_crawl_run_equal_one_summarize(tmp_path):
    a1, a2 = build_crawler_db(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "whole.db", progress=False)

    parts = tmp_path / "parts.db"
    for agent in (a1, a2):
        stage_dir = tmp_path / f"stage-{agent.hex()}"
        stage_crawl_log(tmp_path / "c.db", stage_dir, agent_uuid=uuid.UUID(bytes=agent), summary_db=parts,
                        batch_size=5, progress=False)
        scrape_staged(stage_dir, progress=False)
        integrate_staged(parts, stage_dir, progress=False)
    assert update_search_index(parts).pages == 7  # 8 pages + 1 copy, minus the 404 and the duplicate
    assert semantic_dump(parts) == semantic_dump(tmp_path / "whole.db")

    # re-staging a crawl run that is already integrated, without the summary db filter,
    # re-scraping and re-integrating it changes nothing
    before = dump_db(parts)
    stage_dir = tmp_path / "restage"
    stage_crawl_log(tmp_path / "c.db", stage_dir, agent_uuid=uuid.UUID(bytes=a2), batch_size=4, progress=False)
    scrape_staged(stage_dir, progress=False)
    report = integrate_staged(parts, stage_dir, progress=False)
    assert report.crawls_integrated == 0 and report.crawls_skipped == 9
    update_search_index(parts)
    assert dump_db(parts) == before


def test_resume_after_half(tmp_path):
    build_crawler_db(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "whole.db", progress=False)
    # the first half: only the crawl log entries that existed before run 2
    half = tmp_path / "half.db"
    stage_dir = tmp_path / "stage"
    conn = register_functions(sqlite3.connect(str(tmp_path / "c.db")))
    (first_agent,) = conn.execute("SELECT agent_uuid FROM agent ORDER BY agent_id LIMIT 1").fetchone()
    conn.close()
    stage_crawl_log(tmp_path / "c.db", stage_dir, agent_uuid=uuid.UUID(bytes=first_agent), progress=False)
    scrape_staged(stage_dir, progress=False)
    integrate_staged(half, stage_dir, progress=False)
    report = summarize(tmp_path / "c.db", half, progress=False)
    assert report.pages_processed == 9
    assert semantic_dump(half) == semantic_dump(tmp_path / "whole.db")


def test_ctrl_c_between_batches_resumes(tmp_path, monkeypatch):
    build_crawler_db(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "whole.db", progress=False)
    import textpile.summarize.pipeline as pipeline

    real = pipeline.integrate_batch
    calls = []

    def interrupting(conn, batch_dir):
        calls.append(batch_dir)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(conn, batch_dir)

    monkeypatch.setattr(pipeline, "integrate_batch", interrupting)
    report = summarize(tmp_path / "c.db", tmp_path / "s.db", batch_size=4, progress=False)
    assert report.interrupted and report.pages_processed == 8
    monkeypatch.setattr(pipeline, "integrate_batch", real)
    report = summarize(tmp_path / "c.db", tmp_path / "s.db", batch_size=4, progress=False)
    assert not report.interrupted and report.pages_processed == 9
    assert semantic_dump(tmp_path / "s.db") == semantic_dump(tmp_path / "whole.db")


KILLER = """
import os, sys
import textpile.summarize.duplicates as duplicates
from textpile.summarize.pipeline import summarize
real = duplicates.reconcile
calls = []
def dying(*args):
    calls.append(1)
    result = real(*args)  # the batch's rows are written but not committed yet
    if len(calls) == 2:
        os._exit(9)
    return result
duplicates.reconcile = dying
summarize(sys.argv[1], sys.argv[2], batch_size=4, progress=False)
"""


def test_kill_inside_a_batch_transaction_resumes(tmp_path):
    build_crawler_db(tmp_path / "c.db")
    summarize(tmp_path / "c.db", tmp_path / "whole.db", progress=False)
    summary = tmp_path / "s.db"
    proc = subprocess.run([sys.executable, "-c", KILLER, str(tmp_path / "c.db"), str(summary)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 9, proc.stderr
    conn = register_functions(sqlite3.connect(str(summary)))
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM crawl_summary").fetchone() == (4,)  # only batch 1 committed
    assert conn.execute("SELECT count(*) FROM crawl_summary cs LEFT JOIN entity_generation eg "
                        "USING (entity_generation_id) WHERE eg.entity_generation_id IS NULL").fetchone() == (0,)
    conn.close()
    report = summarize(tmp_path / "c.db", summary, batch_size=4, progress=False)
    assert report.pages_processed == 13
    assert semantic_dump(summary) == semantic_dump(tmp_path / "whole.db")
