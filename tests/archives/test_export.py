"""``textpile export --warc``: a crawl of a site on 127.0.0.1 written as WARC/1.1 (exact
records read back with warcio), then imported into another crawler database: the same
pages (URLs, texts, statuses, redirects), summarized into the same searchable pages."""

from __future__ import annotations

import gzip
import json
import sqlite3

from warcio.archiveiterator import ArchiveIterator

from sites import Response, SiteServer
from textpile.archives.importer import import_archives
from textpile.cli import main
from textpile.crawl.loop.run import run_crawl
from textpile.store.database import open_crawler_db
from textpile.store.gen2_piles import register_functions
from textpile.summarize.pipeline import summarize

from crawl.crawlsite import config

HTML = {"Content-Type": "text/html; charset=utf-8"}
LATIN1 = {"Content-Type": "text/html; charset=iso-8859-1", "Last-Modified": "Tue, 02 Jan 2024 03:04:05 GMT",
          "ETag": '"v1"'}


def routes() -> dict[str, Response]:
    return {
        "/robots.txt": Response(404, "", {}),
        "/": Response(200, '<title>Home</title><a href="/caf%C3%A9">caf\u00e9</a> <a href="/old">old</a>'
                           ' <a href="/gone">gone</a> <a href="/print">print</a> <a href="/notes.txt">notes</a>', HTML),
        "/caf%C3%A9": Response(200, "<title>Caf\u00e9</title><p>cr\u00e8me br\u00fbl\u00e9e and caf\u00e9 au lait, "
                                    "served in the garden</p>".encode("iso-8859-1"), LATIN1),
        "/old": Response(301, "", {"Location": "/new"}),
        "/new": Response(200, "<title>New</title><p>the page that moved, with its garden of herbs</p>", HTML),
        "/gone": Response(404, "<p>not here</p>", HTML),
        "/print": Response(200, "<title>Print</title><p>printable garden notes</p>",
                           {**HTML, "Link": '</new>; rel="canonical"'}),
        "/notes.txt": Response(200, "plain notes about the garden and its herbs", {"Content-Type": "text/plain"}),
    }


def pages(crawler_db) -> dict[str, tuple]:
    """URL -> (exit code, status, text, canonical, redirect target) of each file crawl."""
    conn = sqlite3.connect(crawler_db)
    try:
        rows = conn.execute(
            "SELECT u.str_url, l.exit_code, r.http_status_code, ft.text, cu.str_url, tu.str_url FROM crawl_log l"
            " JOIN url u ON u.url_id = l.url_id JOIN request r ON r.crawl_log_id = l.crawl_log_id"
            " LEFT JOIN file f ON f.request_id = r.request_id LEFT JOIN file_text ft ON ft.file_id = f.file_id"
            " LEFT JOIN url cu ON cu.url_id = f.canonical_url_id LEFT JOIN redirect d ON d.request_id = r.request_id"
            " LEFT JOIN url tu ON tu.url_id = d.to_url_id WHERE l.crawl_type = 0").fetchall()
    finally:
        conn.close()
    return {url: tuple(rest) for url, *rest in rows}


def searchable(summary_db) -> list[tuple]:
    conn = register_functions(sqlite3.connect(summary_db))
    try:
        return conn.execute(
            "SELECT u.str_url, d.title, tp.text FROM entity_generation eg JOIN url u USING (url_id)"
            " JOIN document_description d USING (entity_generation_id) JOIN text_pile tp USING (text_pile_id)"
            " WHERE eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate ORDER BY u.str_url").fetchall()
    finally:
        conn.close()


def test_warc_out_then_in_gives_the_same_pages(tmp_path, capsys):
    with SiteServer(routes()) as site:
        crawled = tmp_path / "crawl.db"
        run_crawl(config(tmp_path, [site.base_url + "/"]), crawled, progress=False)
    base = site.base_url
    warc = tmp_path / "out.warc.gz"
    capsys.readouterr()
    assert main(["export", "-c", str(crawled), "--warc", str(warc)]) == 0
    report = capsys.readouterr().out
    assert report.splitlines()[:4] == ["[Export_Report]", f"warc = {json.dumps(str(warc))}",
                                       "response_records = 7", "with_body = 4"]
    assert not (tmp_path / "out.warc.gz.partial").exists()
    with gzip.open(warc, "rb") as stream:
        records = [(r.rec_headers.get_header("WARC-Type"), r.rec_headers.get_header("WARC-Target-URI"),
                    r.http_headers.get_statuscode() if r.http_headers else None,
                    r.http_headers.get_header("Content-Type") if r.http_headers else None)
                   for r in ArchiveIterator(stream)]
    assert records[0][:2] == ("warcinfo", None)
    assert sorted(records[1:]) == sorted([
        ("response", f"{base}/", "200", "text/html; charset=utf-8"),
        ("response", f"{base}/caf%C3%A9", "200", "text/html; charset=utf-8"),
        ("response", f"{base}/old", "301", None),
        ("response", f"{base}/new", "200", "text/html; charset=utf-8"),
        ("response", f"{base}/gone", "404", None),
        ("response", f"{base}/notes.txt", "200", "text/plain; charset=utf-8"),
        ("response", f"{base}/print", "200", "text/html"),
    ])
    with gzip.open(warc, "rb") as stream:
        cafe = next(r for r in ArchiveIterator(stream) if r.rec_headers.get_header("WARC-Target-URI", "").endswith("9"))
        assert (cafe.http_headers.get_header("Last-Modified"), cafe.http_headers.get_header("ETag")) == (
            "Tue, 02 Jan 2024 03:04:05 GMT", '"v1"')
        assert "cr\u00e8me br\u00fbl\u00e9e" in cafe.content_stream().read().decode("utf-8")
    with gzip.open(warc, "rb") as stream:
        # the page canonical to another: its body was not kept, its canonical was
        printed = next(r for r in ArchiveIterator(stream)
                       if r.rec_headers.get_header("WARC-Target-URI", "").endswith("/print"))
        assert (printed.rec_headers.get_header("WARC-Truncated"), printed.http_headers.get_header("Link"),
                printed.content_stream().read()) == ("unspecified", f'<{base}/new>; rel="canonical"', b"")

    imported = tmp_path / "imported.db"
    import_archives(imported, [warc], progress=False)
    original = pages(crawled)
    assert pages(imported) == original
    # the page whose canonical is another: no body, its canonical kept (issue 33)
    assert original[f"{base}/print"] == (180, 200, None, f"{base}/new", None)
    assert original[f"{base}/old"] == (31, 301, None, None, f"{base}/new")
    assert "cr\u00e8me br\u00fbl\u00e9e" in original[f"{base}/caf%C3%A9"][2]

    summarize(crawled, tmp_path / "crawled-summary.db", progress=False)
    summarize(imported, tmp_path / "imported-summary.db", progress=False)
    found = searchable(tmp_path / "crawled-summary.db")
    assert [(url[len(base):], title) for url, title, _ in found] == [
        ("/", "Home"), ("/caf%C3%A9", "Caf\u00e9"), ("/new", "New"), ("/notes.txt", None)]
    assert searchable(tmp_path / "imported-summary.db") == found


def test_export_refuses_a_missing_database_and_an_unwritable_file(tmp_path, capsys):
    assert main(["export", "-c", str(tmp_path / "none.db"), "--warc", str(tmp_path / "x.warc")]) == 1
    assert "none.db" in capsys.readouterr().err
    assert not (tmp_path / "x.warc").exists()
    db = tmp_path / "empty.db"
    open_crawler_db(db).close()
    assert main(["export", "-c", str(db), "--warc", str(tmp_path / "no" / "dir" / "x.warc")]) == 1
    err = capsys.readouterr().err
    assert err == f"textpile: error: cannot write {tmp_path / 'no' / 'dir' / 'x.warc'}: No such file or directory\n"
