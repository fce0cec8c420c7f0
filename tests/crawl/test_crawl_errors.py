"""Failure handling of the crawl loop with scripted transports (a scripted transport):
fluke retries, deadlines, size caps, patience, robots.txt failures (RFC 9309), the
Last-Modified / Date rule, and the SSRF filter with the real default transport."""

from __future__ import annotations

import asyncio
import sqlite3

import httpx

from sites import Response, SiteServer
from textpile.crawl.fetcher.fetch import FetchLimits
from textpile.crawl.loop.run import run_crawl

from .crawlsite import Rows, config

SITE = "http://site.example"
HTML = {"content-type": "text/html; charset=utf-8"}


class ScriptedTransport(httpx.AsyncBaseTransport):
    """Answers with ``handler(request)`` (sync or async) without reading the response
    first (httpx.MockTransport reads it, which hides the raw stream)."""

    def __init__(self, handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = self.handler(request)
        if asyncio.iscoroutine(response):
            response = await response
        # Response(content=...) is already read; hand the body over as a fresh stream.
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=httpx.ByteStream(response.content), request=request)


def mock(handler) -> ScriptedTransport:
    return ScriptedTransport(handler)


def crawl(tmp_path, handler, *, limits=None, seeds=(SITE + "/",), **kw):
    cfg = config(tmp_path, list(seeds), **kw)
    db = tmp_path / "crawl.db"
    report = run_crawl(cfg, db, transport=mock(handler), progress=False, limits=limits)
    return report, Rows(db, {SITE: "S"})


def test_fluke_retried_once_at_once_in_the_same_entry(tmp_path):
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if request.url.path == "/" and calls.count("/") == 1:
            raise httpx.ReadError("connection reset", request=request)
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        return httpx.Response(200, headers=HTML, text="<p>ok</p>")

    report, rows = crawl(tmp_path, handler)
    assert rows.log() == [("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                          ("S/", 0, 20, None)]
    assert [r[:3] for r in rows.requests("S/")] == [("S/", 102, None), ("S/", 20, 200)]
    assert report.total_requests == 3


def test_last_modified_equal_to_date_is_not_a_file_date(tmp_path):
    date = "Tue, 02 Jan 2024 03:04:05 GMT"

    def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        lm = date if request.url.path == "/" else "Mon, 01 Jan 2024 00:00:00 GMT"
        body = '<a href="/other">o</a>' if request.url.path == "/" else "x"
        return httpx.Response(200, headers={**HTML, "date": date, "last-modified": lm}, text=body)

    _, rows = crawl(tmp_path, handler)
    files = rows.files()
    assert files["S/"][4] is None
    assert files["S/other"][4] == 1704067200
    assert rows.requests("S/")[0][5] == 1704164645
    assert rows.requests("S/other")[0][5] == 1704067200


def test_deadline_covers_the_whole_request_and_flukes_cost_patience(tmp_path):
    async def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        await asyncio.sleep(0.5)
        return httpx.Response(200, headers=HTML, text="slow")

    report, rows = crawl(tmp_path, handler, limits=FetchLimits(deadline_s=0.1))
    log = rows.log()
    assert log[1] == ("S/", 0, 101, "no complete answer within 0.1 s")
    assert [r[:3] for r in rows.requests("S/")][:2] == [("S/", 101, None), ("S/", 101, None)]
    # retried in the same run (un-ignored) at most twice more: 3 entries, patience 5 -> 2
    assert [e[2] for e in log] == [44, 101, 101, 101]
    assert report.out_of_patience_origins == []
    assert rows.candidates()["S/"] == (101, True, False, None)


def test_body_over_the_cap_is_not_understood(tmp_path):
    def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        return httpx.Response(200, headers=HTML, content=b"x" * 5000)

    _, rows = crawl(tmp_path, handler, limits=FetchLimits(max_body_bytes=1000))
    assert rows.log()[1] == ("S/", 0, 42, "BodyTooLarge: Content-Length 5000 exceeds 1000 bytes")
    assert rows.files() == {}


def test_robots_5xx_disallows_and_exhausts_patience(tmp_path):
    def handler(request):
        return httpx.Response(503, text="down")

    report, rows = crawl(tmp_path, handler)
    unavailable = ("S/robots.txt", 1, 50, "robots.txt unavailable: nothing allowed for now")
    assert rows.log() == [unavailable] * 5
    assert report.out_of_patience_origins == ["http://site.example:80"]
    # the seed was never crawled and stays due for the next run
    assert rows.candidates() == {"S/": (None, False, False, None)}


def test_robots_unreachable_then_reachable(tmp_path):
    calls = []

    def handler(request):
        calls.append(request.url.path)
        if request.url.path == "/robots.txt" and calls.count("/robots.txt") <= 2:
            raise httpx.ConnectError("refused", request=request)
        if request.url.path == "/robots.txt":
            return httpx.Response(200, text="User-agent: *\nDisallow: /x\n")
        return httpx.Response(200, headers=HTML, text='<a href="/x">x</a>')

    report, rows = crawl(tmp_path, handler)
    log = rows.log()
    assert [(u, t, e) for u, t, e, _ in log] == [("S/robots.txt", 1, 100), ("S/robots.txt", 1, 20),
                                                  ("S/", 0, 20), ("S/x", 0, 170)]
    # the first entry holds both attempts (fluke retry)
    assert [r[1] for r in rows.requests("S/robots.txt")] == [100, 100, 20]


def test_robots_redirect_is_followed(tmp_path):
    def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(301, headers={"location": "/real-robots.txt"})
        if request.url.path == "/real-robots.txt":
            return httpx.Response(200, text="User-agent: *\nDisallow: /\n")
        return httpx.Response(200, headers=HTML, text="x")

    _, rows = crawl(tmp_path, handler)
    assert [(u, t, e) for u, t, e, _ in rows.log()] == [("S/robots.txt", 1, 20), ("S/", 0, 170)]
    assert [(r[0], r[1], r[2]) for r in rows.conn.execute(
        "SELECT u.str_url, r.exit_code, r.http_status_code FROM request r JOIN url u USING(url_id)")] == [
        ("http://site.example/robots.txt", 31, 301), ("http://site.example/real-robots.txt", 20, 200)]


def test_server_errors_exhaust_patience(tmp_path):
    def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        if request.url.path == "/":
            return httpx.Response(200, headers=HTML, text="".join(f'<a href="/p{i}">p</a>' for i in range(10)))
        return httpx.Response(500)

    report, rows = crawl(tmp_path, handler)
    assert [e for _, _, e, _ in rows.log()] == [44, 20, 50, 50, 50, 50, 50]
    assert report.out_of_patience_origins == ["http://site.example:80"]
    # the rest stays due
    due = [u for u, c in rows.candidates().items() if c[0] is None]
    assert due == [f"S/p{i}" for i in range(5, 10)]


def test_max_commands_is_a_total_over_the_run(tmp_path):
    other = "http://other.example"

    def handler(request):
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        return httpx.Response(200, headers=HTML, text="".join(f'<a href="/p{i}">p</a>' for i in range(10)))

    report, rows = crawl(tmp_path, handler, seeds=(SITE + "/", other + "/"), max_commands=7)
    assert report.total_requests == 7
    assert rows.conn.execute("SELECT COUNT(*) FROM crawl_log").fetchone() == (7,)


def test_loopback_refused_without_allow_private_addresses(tmp_path, capsys):
    with SiteServer({"/": Response(200, "<p>secret admin page</p>")}) as site:
        cfg = config(tmp_path, [site.base_url + "/"], allow_private=False)
        db = tmp_path / "crawl.db"
        report = run_crawl(cfg, db, progress=False)  # the real default transport
        assert site.log == []
    refusal = (f"refused to connect to 127.0.0.1:{site.port}: 127.0.0.1 is a loopback address; crawling loopback, "
               "private, link-local or reserved addresses needs allow_private_addresses = true in the "
               "configuration or --allow-private-addresses")
    # said once on stderr although the progress display is off
    assert capsys.readouterr().err == refusal + "\n"
    rows = Rows(db, {site.base_url: "L"})
    log = rows.log()
    assert log == [("L/robots.txt", 1, 172, refusal)]
    assert report.out_of_patience_origins == []  # listed as refused only
    assert report.origins == [site.base_url]
    assert report.refused_origins == {site.base_url: refusal}
    assert report.every_origin_refused
    assert report.refusal_message() == "nothing crawled: every seed origin was refused: " + refusal
    assert rows.candidates() == {"L/": (None, False, False, None)}
    assert rows.conn.execute("SELECT COUNT(*) FROM file").fetchone() == (0,)


def test_gaps_between_requests_to_one_origin_not_shorter_than_the_delay(tmp_path):
    delay_ms = 120
    routes = {"/robots.txt": Response(404, "", {"Content-Type": "text/plain"}),
              "/": Response(200, "".join(f'<a href="/p{i}">p</a>' for i in range(6)))}
    routes.update({f"/p{i}": Response(200, "<p>x</p>") for i in range(6)})
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], delay_ms=delay_ms)
        run_crawl(cfg, tmp_path / "crawl.db", progress=False)
        times = [r.monotonic for r in site.log]
    assert len(times) == 8
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= delay_ms / 1000, gaps


def test_crawl_delay_from_robots_txt(tmp_path):
    routes = {"/robots.txt": Response(200, "User-agent: *\nCrawl-delay: 0.3\n", {"Content-Type": "text/plain"}),
              "/": Response(200, '<a href="/a">a</a><a href="/b">b</a>'),
              "/a": Response(200, "a"), "/b": Response(200, "b")}
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], delay_ms=0)
        run_crawl(cfg, tmp_path / "crawl.db", progress=False)
        times = [r.monotonic for r in site.log]
    assert len(times) == 4
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.3


def test_database_of_another_kind_is_refused(tmp_path):
    from textpile.errors import DatabaseError
    from textpile.store.database import open_summary_db

    open_summary_db(tmp_path / "s.db").close()
    cfg = config(tmp_path, [SITE + "/"])
    try:
        run_crawl(cfg, tmp_path / "s.db", transport=mock(lambda r: httpx.Response(404)), progress=False)
    except DatabaseError as exc:
        assert "expected a crawler database" in str(exc)
    else:
        raise AssertionError("a summary database was accepted")
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'agent'").fetchone() == (0,)


class RoutingTransport(httpx.AsyncBaseTransport):
    """Requests to ``SITE`` answered by ``handler``; every other one goes to ``network``."""

    def __init__(self, handler, network: httpx.AsyncBaseTransport) -> None:
        self.site = mock(handler)
        self.network = network

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if str(request.url).startswith(SITE + "/"):
            return await self.site.handle_async_request(request)
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()


def test_one_refused_origin_among_others_is_reported_and_the_rest_crawled(tmp_path, capsys):
    from textpile.crawl.loop.report import format_report
    from textpile.crawl.fetcher.ssrf import make_transport

    def handler(request):
        return httpx.Response(200, text="<p>public page</p>", headers=HTML) if request.url.path == "/" \
            else httpx.Response(404)

    with SiteServer({"/": Response(200, "<p>secret</p>")}) as site:
        cfg = config(tmp_path, [SITE + "/", site.base_url + "/"], allow_private=False)
        db = tmp_path / "crawl.db"
        transport = RoutingTransport(handler, make_transport(allow_private_addresses=False))
        report = run_crawl(cfg, db, transport=transport, progress=False)
        assert site.log == []
    refusal = (f"refused to connect to 127.0.0.1:{site.port}: 127.0.0.1 is a loopback address; crawling loopback, "
               "private, link-local or reserved addresses needs allow_private_addresses = true in the "
               "configuration or --allow-private-addresses")
    assert capsys.readouterr().err == refusal + "\n"
    assert report.refused_origins == {site.base_url: refusal}
    assert not report.every_origin_refused
    assert report.refusal_message() == refusal
    assert report.ingested_files == 1
    text = format_report(report)
    assert f'refused_origins = ["{site.base_url}"]\n' in text
    assert text.endswith(f'[Crawl_Statistics_Report.refusal_reasons]\n"{site.base_url}" = "{refusal}"\n')
