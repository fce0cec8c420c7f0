"""Pages are read off the event loop (issue 10): worker processes decode and parse them,
so a huge page of one origin never holds up the requests to another origin."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.parser.body import read_body
from textpile.crawl.parser.packed import pack_links, unpack_links
from textpile.crawl.workers.readers import READER_PROCESS_NAME, PageReader
from textpile.store.urls import parse_url

from .crawlsite import TOKEN, config

TEXT = {"Content-Type": "text/plain"}


def big_page(name: str, links: int = 20_000, size: int = 3_000_000) -> str:
    """An HTML page of ``size`` characters with ``links`` distinct links to missing pages."""
    anchors = "".join(f'<a href="/{name}/p{i}.html">link {i}</a> ' for i in range(links))
    filler = "<p>" + "lorem ipsum dolor sit amet " * 200 + "</p>"
    body = anchors
    while len(body) < size:
        body += filler
    return f"<html><head><title>{name}</title></head><body>{body}</body></html>"


def test_read_body_keeps_links_of_the_given_origins():
    html = ('<a href="/a">a</a><a href="http://other.example/x">x</a><a href="https://h.example/b#f">b</a>'
            '<meta name="robots" content="noindex"><link rel="canonical" href="http://other.example/c">')
    reading = read_body(html.encode("cp1252"), "text/html", "windows-1252", "https://h.example/p", TOKEN,
                        frozenset({"https://h.example:443"}))
    assert unpack_links(reading.links) == [("https://h.example:443", "/a", None, "https://h.example/a"),
                                           ("https://h.example:443", "/b", None, "https://h.example/b")]
    assert (reading.link_count, reading.other_links) == (2, 1)
    assert reading.robots.noindex and not reading.robots.nofollow
    assert reading.canonical.str_url == "http://other.example/c"
    assert reading.text == html
    assert read_body(b"\xff\xd8", "image/jpeg", None, "https://h.example/i", TOKEN, frozenset()).text is None
    plain = read_body("grüße".encode(), "text/plain", None, "https://h.example/t", TOKEN, frozenset())
    assert (plain.text, plain.text_is_body, plain.links) == (None, True, "")  # the text is the body


def test_page_reader_processes_give_the_same_reading():
    html = b'<a href="/a">a</a><a href="/b">b</a>'
    origins = frozenset({"http://h.example:80"})

    async def both():
        with PageReader(1) as processes, PageReader(0) as thread:
            return (await processes.read(html, "text/html", None, "http://h.example/", TOKEN, origins),
                    await thread.read(html, "text/html", None, "http://h.example/", TOKEN, origins))

    in_process, in_thread = asyncio.run(both())
    assert [row[3] for row in unpack_links(in_process.links)] == ["http://h.example/a", "http://h.example/b"]
    assert in_process == in_thread


def test_huge_pages_of_one_origin_do_not_hold_up_another_origin(tmp_path):
    """Origin A serves three 3 MB pages of 20,000 links each (crawl delay 0.2 s); origin
    B a chain of small pages (robots.txt Crawl-delay 1 s). Reading A's pages costs about a
    second of CPU each: read on the event loop, each one stops B for that long. B's
    requests must keep their pace: never closer than its delay, never further apart than
    twice its delay and half a second more (room for a machine at a load of 10)."""
    a_routes = {"/robots.txt": Response(404, "", TEXT),
                "/": Response(200, '<a href="/big1">1</a><a href="/big2">2</a><a href="/big3">3</a>')}
    for i in (1, 2, 3):
        a_routes[f"/big{i}"] = Response(200, big_page(f"big{i}"))
    b_routes = {"/robots.txt": Response(200, "User-agent: *\nCrawl-delay: 1\n", TEXT)}
    for i in range(60):
        b_routes["/" if i == 0 else f"/b{i}"] = Response(200, f'<p>page {i}</p><a href="/b{i + 1}">next</a>')
    with SiteServer(a_routes) as a, SiteServer(b_routes) as b:
        cfg = config(tmp_path, [a.base_url + "/", b.base_url + "/"], delay_ms=200, max_commands=60)
        report = run_crawl(cfg, tmp_path / "crawl.db", progress=False)
    assert not report.interrupted
    big = [r for r in a.log if r.path in ("/big1", "/big2", "/big3")]
    assert [r.path for r in big] == ["/big1", "/big2", "/big3"]
    b_times = [r.monotonic for r in b.log]
    assert b_times[0] < big[0].monotonic and big[-1].monotonic < b_times[-1] - 3.0  # B crawled meanwhile
    gaps = [later - earlier for earlier, later in zip(b_times, b_times[1:])]
    assert min(gaps) >= 1.0
    # Half a second of room per share of a core this process gets: a machine at a load of 10 on
    # 2 cores runs it 5 times slower, and read on the event loop, A's 3 pages would stop B for
    # about a second of CPU each, stretched as much.
    slowdown = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    assert max(gaps) <= 1.0 + 1.5 * slowdown, f"B waited {max(gaps):.2f} s between two requests (slowdown {slowdown:.1f})"
    conn = sqlite3.connect(tmp_path / "crawl.db")
    candidates = conn.execute("SELECT count(*) FROM crawl_candidate c JOIN url u USING (url_id)"
                              " WHERE u.str_url LIKE ?", (a.base_url + "/big_/p%",)).fetchone()[0]
    conn.close()
    assert candidates == 60_000


def test_packed_links_round_trip():
    links = [parse_url("https://h.example/a?"), parse_url("https://h.example/b?x=1#f"), parse_url("http://h.example/")]
    packed = pack_links(links)
    assert packed == ("https://h.example:443\t/a\t\thttps://h.example/a?\n"
                      "https://h.example:443\t/b\tx=1\thttps://h.example/b?x=1\n"
                      "http://h.example:80\t/\t\x00\thttp://h.example/")
    assert unpack_links(packed) == [("https://h.example:443", "/a", "", "https://h.example/a?"),
                                    ("https://h.example:443", "/b", "x=1", "https://h.example/b?x=1"),
                                    ("http://h.example:80", "/", None, "http://h.example/")]
    assert unpack_links("") == [] and pack_links([]) == ""
    with pytest.raises(ValueError, match="never packed: 'https://u:p@h.example/'"):
        pack_links([parse_url("https://u:p@h.example/")])


def test_page_readers_are_named_by_their_role():
    comm = Path("/proc/self/comm")

    async def ask():
        with PageReader(1) as reader:
            return await reader._queue("", comm.read_text, ())

    assert asyncio.run(ask()) == f"{READER_PROCESS_NAME}\n"


def test_two_page_readers_at_least_also_on_one_cpu(monkeypatch):
    from textpile import processes
    from textpile.crawl.workers import readers as reader

    monkeypatch.setattr(processes, "usable_cpus", lambda: 1)
    assert reader.default_readers() == 2
    assert PageReader().processes == 2 and PageReader().per_origin == 1
    monkeypatch.setattr(processes, "usable_cpus", lambda: 8)
    assert reader.default_readers() == 8
