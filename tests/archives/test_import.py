"""``textpile import``: real WARC files (pywb's sample archive), a WACZ made of one, and
a zshot archive built here from the seed's DDL, into the crawler database; exact rows,
then summarize and search find the imported pages."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sqlite3
import zipfile
from pathlib import Path

import pytest

from archive_samples import pywb_warcs
from textpile.archives import importer
from textpile.archives.importer import import_archives
from textpile.archives.kinds import ArchiveKindError, archive_kind
from textpile.cli import main

DDL = Path(__file__).resolve().parent.parent / "data" / "zshot-0.54.2.sql"
IANA_CODES = {"duplicate": 10, "file_did_not_change": 128, "file_ingested": 16, "file_of_unknown_type": 13,
              "redirect": 4}


@pytest.fixture(scope="module")
def warcs(tmp_path_factory) -> Path:
    return pywb_warcs()


def log_rows(db: Path, agent_name: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT u.str_url, l.crawl_type, l.exit_code, l.time_started_unix_utc, l.message FROM crawl_log l"
            " JOIN url u USING(url_id) JOIN agent a USING(agent_id) WHERE a.name = ? ORDER BY l.crawl_log_id",
            (agent_name,)).fetchall()
    finally:
        conn.close()


def search(capsys, summary: Path, query: str) -> list[str]:
    capsys.readouterr()
    assert main(["search", "-s", str(summary), "--format", "json", query]) == 0
    return [r["url"] for r in json.loads(capsys.readouterr().out)["list"]]


def test_kind_from_bytes_not_names(warcs, tmp_path):
    shutil.copy(warcs / "iana.warc.gz", tmp_path / "crawl.bin")
    assert archive_kind(tmp_path / "crawl.bin") == "warc"
    assert archive_kind(warcs / "example.warc") == "warc"
    assert archive_kind(warcs / "example.arc.gz") == "warc"
    (tmp_path / "a.wacz").write_bytes(b"")
    with zipfile.ZipFile(tmp_path / "a.wacz", "w") as z:
        z.writestr("datapackage.json", "{}")
    assert archive_kind(tmp_path / "a.wacz") == "wacz"
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(ArchiveKindError, match=r"a SQLite database, but not a zshot archive \(application_id 0, "
                                               r"zshot's is 2054383727\)"):
        archive_kind(other)
    (tmp_path / "notes.warc").write_text("hello")
    with pytest.raises(ArchiveKindError, match=r"notes.warc: not a WARC, WACZ or zshot archive \(it starts with b'hello'\)"):
        archive_kind(tmp_path / "notes.warc")


def test_real_warc_imported_summarized_and_searched(warcs, tmp_path, capsys):
    db, summary = tmp_path / "crawl.db", tmp_path / "summary.db"
    assert main(["import", "-c", str(db), "--no-progress", str(warcs / "iana.warc.gz")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'[[Import_Report]]\narchive = "{warcs / "iana.warc.gz"}"\nkind = "warc"\n'
                          f'sha256 = "{hashlib.sha256((warcs / "iana.warc.gz").read_bytes()).hexdigest()}"\n')
    assert "exchanges = 171\ncrawl_log_entries = 171\nskipped = 0\nproblems = 0\n" in out
    rows = log_rows(db, "import iana.warc.gz")
    counts: dict[int, int] = {}
    for row in rows:
        counts[row[2]] = counts.get(row[2], 0) + 1
    assert counts == {181: 10, 34: 128, 20: 16, 29: 13, 32: 4}
    # the archive's own time (WARC-Date 2014-01-26T20:06:24Z), status and headers
    assert rows[0] == ("http://www.iana.org/", 0, 20, 1390766784, None)
    conn = sqlite3.connect(db)
    assert conn.execute(
        "SELECT r.time_sent_unix_utc, r.http_status_code, r.robotstxt_approved, r.request_duration_ms, r.exit_code"
        " FROM request r JOIN url u USING(url_id) WHERE u.str_url = 'http://www.iana.org/'"
        " ORDER BY r.request_id LIMIT 1").fetchone() == (1390766784, 200, 0, None, 20)
    text = conn.execute("SELECT t.text FROM file_text t JOIN file f USING(file_id) JOIN url u USING(url_id)"
                        " WHERE u.str_url = 'http://www.iana.org/domains/root/db'").fetchone()[0]
    assert "<title>IANA — Root Zone Database</title>" in text
    # revisits of a payload stored already: not stored twice
    assert conn.execute("SELECT count(*) FROM crawl_log l JOIN file f USING(crawl_log_id)"
                        " WHERE l.exit_code IN (34, 181)").fetchone() == (0,)
    dup = [r for r in rows if r[2] == 181][0]
    assert dup[4].startswith("the same payload as http://www.iana.org/") and dup[4].endswith("): not stored twice")
    # the same bytes again: nothing imported twice
    assert main(["import", "-c", str(db), "--no-progress", str(warcs / "iana.warc.gz")]) == 0
    assert "already_imported_by_run = " in capsys.readouterr().out
    assert conn.execute("SELECT count(*) FROM crawl_log").fetchone() == (171,)
    conn.close()
    assert main(["summarize", "-c", str(db), "-s", str(summary), "--no-progress"]) == 0
    assert search(capsys, summary, "root zone database")[0] == "http://www.iana.org/domains/root/db"
    assert search(capsys, summary, "time zone database")[0] == "http://www.iana.org/time-zones"


def test_revisits_of_another_archive_and_a_truncated_file(warcs, tmp_path, capsys):
    db = tmp_path / "crawl.db"
    # dupes.warc.gz revisits payloads of the iana crawl: unknown without it
    reports = import_archives(db, [warcs / "dupes.warc.gz"])
    assert (reports[0].exchanges, reports[0].entries, len(reports[0].problems)) == (12, 4, 8)
    assert reports[0].problems[0].message == (
        "http://www.iana.org/: a revisit of a payload that neither this archive nor the crawler database holds "
        "(http://www.iana.org/): not imported")
    db2 = tmp_path / "crawl2.db"
    first, second = import_archives(db2, [warcs / "iana.warc.gz", warcs / "dupes.warc.gz"])
    assert first.exit_code_counts == IANA_CODES
    assert second.exit_code_counts == {"file_did_not_change": 9, "file_ingested": 1, "file_of_unknown_type": 1,
                                       "redirect": 1}
    assert second.problems == []
    # a file cut in the middle of a gzip member: what came before is imported
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes((warcs / "iana.warc.gz").read_bytes()[:300_000])
    capsys.readouterr()
    assert main(["import", "-c", str(tmp_path / "c3.db"), "--no-progress", str(cut)]) == 0
    captured = capsys.readouterr()
    assert "exchanges = 9\ncrawl_log_entries = 9\nskipped = 0\nproblems = 1\n" in captured.out
    assert captured.err == (f"textpile: {cut}: after offset 198285: the file ends in the middle of a gzip member "
                            "(truncated): the records before were imported\n")
    # one gzip member for the whole file (warcio refuses it; read decompressed)
    single = import_archives(tmp_path / "c4.db", [warcs / "example-bad.warc.gz.bad"])[0]
    assert (single.exchanges, single.exit_code_counts, single.problems) == (
        3, {"file_ingested": 1, "file_did_not_change": 1, "redirect": 1}, [])


def test_interrupted_import_resumes_after_what_it_wrote(warcs, tmp_path, monkeypatch):
    db = tmp_path / "crawl.db"
    monkeypatch.setattr(importer, "BATCH", 50)
    real_write, calls = importer._write, []

    def write_then_stop(store, entries, report, done):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_write(store, entries, report, done)

    monkeypatch.setattr(importer, "_write", write_then_stop)
    with pytest.raises(KeyboardInterrupt):
        import_archives(db, [warcs / "iana.warc.gz"])
    assert sqlite3.connect(db).execute("SELECT exchanges_done, finished_unix_utc FROM textpile_archive_import"
                                       ).fetchone() == (50, None)
    monkeypatch.setattr(importer, "_write", real_write)
    report = import_archives(db, [warcs / "iana.warc.gz"])[0]
    assert (report.resumed_after, report.entries) == (50, 121)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*), count(DISTINCT agent_id) FROM crawl_log").fetchone() == (171, 1)
    assert conn.execute("SELECT exchanges_done, finished_unix_utc IS NOT NULL FROM textpile_archive_import"
                        ).fetchone() == (171, 1)


def make_wacz(path: Path, warc: Path) -> Path:
    """A WACZ 1.1.1 of one WARC: archive/, datapackage.json with its digest, pages.jsonl."""
    data = warc.read_bytes()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("archive/data.warc.gz"), data, compress_type=zipfile.ZIP_STORED)
        z.writestr("pages/pages.jsonl", '{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'
                   '{"id": "1", "url": "http://www.iana.org/", "ts": "2014-01-26T20:06:24Z"}\n')
        z.writestr("datapackage.json", json.dumps({
            "profile": "data-package", "wacz_version": "1.1.1", "resources": [
                {"name": "data.warc.gz", "path": "archive/data.warc.gz",
                 "hash": "sha256:" + hashlib.sha256(data).hexdigest(), "bytes": len(data)}]}))
    return path


def test_wacz_imported(warcs, tmp_path, capsys):
    wacz = make_wacz(tmp_path / "iana.wacz", warcs / "iana.warc.gz")
    db = tmp_path / "crawl.db"
    report = import_archives(db, [wacz])[0]
    assert (report.kind, report.exchanges, report.exit_code_counts, report.problems) == ("wacz", 171, IANA_CODES, [])
    assert log_rows(db, "import iana.wacz")[0] == ("http://www.iana.org/", 0, 20, 1390766784, None)
    assert main(["summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--no-progress"]) == 0
    assert search(capsys, tmp_path / "s.db", "root zone database")[0] == "http://www.iana.org/domains/root/db"


PAGE = ("<!doctype html><html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>"
        "<p>{text}</p></body></html>")


def make_zshot(path: Path) -> Path:
    """A zshot 0.54.2 archive written with the seed's DDL: a crawl of https://zs.example
    obeying robots.txt, with a page, its revalidated copy (a 304 revisit), the same
    payload at another URL (an identical-payload revisit), a noindex page, a page
    robots.txt disallows, and an exchange whose body was lost."""
    conn = sqlite3.connect(path)
    conn.executescript(DDL.read_text("utf-8"))
    conn.execute("INSERT INTO crawl VALUES (1, 'a0b1', '0.54.2', 'https://zs.example/', 1, '2026-10-21T15:00:00.000000Z',"
                 " '2026-10-21T15:01:00.000000Z', 'zshot -t sqlite https://zs.example/')")
    bodies = {
        "robots": b"User-agent: *\nDisallow: /private\n",
        "home": PAGE.format(title="Zebra handbook", head="", text="How to brush a zebra: stripes first, "
                            "then the mane. A long page about zebra care and quagga history.").encode(),
        "quiet": PAGE.format(title="Quiet page", head='<meta name="robots" content="noindex">',
                             text="Nobody should find this quiet page about zebras.").encode(),
        "private": PAGE.format(title="Private", head="", text="private zebra notes").encode(),
    }
    digests = {}
    for name, body in bodies.items():
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        digests[name] = digest
        conn.execute("INSERT INTO payloads VALUES (?, ?, ?, 0)", (digest, body, len(body)))
    html = json.dumps([["Content-Type", "text/html; charset=utf-8"], ["ETag", '"z1"'],
                       ["Last-Modified", "Wed, 21 Oct 2026 12:00:00 GMT"]])
    text = json.dumps([["Content-Type", "text/plain"]])
    resources = [  # id, time, url, status, headers, digest, served, reason, revisit_of
        (1, "2026-10-21T15:00:01.000000Z", "https://zs.example/robots.txt", 200, text, digests["robots"], "full", None, None),
        (2, "2026-10-21T15:00:02.500000Z", "https://zs.example/", 200, html, digests["home"], "full", None, None),
        (3, "2026-10-21T15:00:03.000000Z", "https://zs.example/handbook?sessionid=77", 200, html, digests["home"],
         "revisit", "identical-payload", 2),
        (4, "2026-10-21T15:00:04.000000Z", "https://zs.example/", 304, html, digests["home"], "revisit",
         "not-modified", 2),
        (5, "2026-10-21T15:00:05.000000Z", "https://zs.example/quiet", 200, html, digests["quiet"], "full", None, None),
        (6, "2026-10-21T15:00:06.000000Z", "https://zs.example/private/notes", 200, html, digests["private"], "full",
         None, None),
        (7, "2026-10-21T15:00:07.000000Z", "https://zs.example/lost", 200, html, None, "omitted", None, None),
    ]
    conn.execute("INSERT INTO pages(id, page_id, url, requested_url, title, depth, captured_at, document_resource_id,"
                 " document_status) VALUES (1, 'p1', 'https://zs.example/', 'https://zs.example/', 'Zebra handbook',"
                 " 0, '2026-10-21T15:00:02.500000Z', 2, 200)")
    for rid, when, url, status, headers, digest, served, reason, of in resources:
        conn.execute("INSERT INTO resources(id, started_at, url, method, request_headers, status, status_text,"
                     " response_headers, content_type, resource_type, payload_digest)"
                     " VALUES (?, ?, ?, 'GET', '[]', ?, 'OK', ?, 'text/html', 'document', ?)",
                     (rid, when, url, status, headers, digest))
        conn.execute("INSERT INTO page_resources VALUES (1, ?, ?, ?, ?, ?)", (rid, served, reason, of, int(rid == 2)))
    conn.execute("PRAGMA application_id = 2054383727")
    conn.commit()
    conn.close()
    return path


def test_zshot_archive_imported_with_robots_revisits_and_noindex(tmp_path, capsys):
    archive = make_zshot(tmp_path / "capture.zshot")
    assert archive_kind(archive) == "zshot"
    db = tmp_path / "crawl.db"
    report = import_archives(db, [archive])[0]
    assert [(p.where, p.message) for p in report.problems] == [
        ("resources.id 7", "https://zs.example/lost: the archive kept no response (omitted)")]
    home = "the same payload as https://zs.example/ (sha256:" + hashlib.sha256(
        make_zshot_home()).hexdigest() + "): not stored twice"
    assert log_rows(db, "import capture.zshot") == [
        ("https://zs.example/robots.txt", 1, 20, 1792594801, "from the archive capture.zshot"),
        ("https://zs.example/", 0, 20, 1792594802, None),
        ("https://zs.example/handbook", 0, 181, 1792594803, home),
        ("https://zs.example/", 0, 34, 1792594804, None),
        ("https://zs.example/quiet", 0, 171, 1792594805, "the page asked not to be indexed (noindex)"),
        ("https://zs.example/private/notes", 0, 170, 1792594806,
         "disallowed by https://zs.example:443/robots.txt of the archive for textpile-crawler: its answer is not "
         "imported"),
    ]
    conn = sqlite3.connect(db)
    # crawl.robots_checked = 1 and robots.txt allowed it; headers as archived
    assert conn.execute("SELECT r.http_status_code, r.http_etag, r.server_last_modified_unix_utc,"
                        " r.robotstxt_approved FROM request r JOIN url u USING(url_id)"
                        " WHERE u.str_url = 'https://zs.example/' ORDER BY r.request_id").fetchall() == [
        (200, '"z1"', 1792584000, 1), (304, '"z1"', 1792584000, 1)]
    # only the home page is a file: robots.txt fetches and noindex answers keep none, as in a crawl
    assert conn.execute("SELECT count(*) FROM file").fetchone() == (1,)
    conn.close()
    assert main(["summarize", "-c", str(db), "-s", str(tmp_path / "s.db"), "--no-progress"]) == 0
    assert search(capsys, tmp_path / "s.db", "zebra") == ["https://zs.example/"]


def make_zshot_home() -> bytes:
    return PAGE.format(title="Zebra handbook", head="", text="How to brush a zebra: stripes first, "
                       "then the mane. A long page about zebra care and quagga history.").encode()


def test_import_refuses_what_is_not_an_archive(tmp_path, capsys):
    bad = tmp_path / "readme.txt"
    bad.write_text("not an archive")
    assert main(["import", "-c", str(tmp_path / "c.db"), str(bad)]) == 1
    assert capsys.readouterr().err == (f"textpile: error: {bad}: not a WARC, WACZ or zshot archive "
                                       "(it starts with b'not an archive')\n")
    assert not (tmp_path / "c.db").exists()
