"""Hostile sites (issue #2 adversarial findings): answers that used to crash the whole
crawl, be retried as flukes, send credentials or be misdecoded. Each site is a raw
HTTP server on 127.0.0.1 (bytes written as they are, so headers can be invalid); a
second, well-behaved seed site shows that the run goes on with other origins and
finishes."""

from __future__ import annotations

import asyncio
import http.server
import sqlite3
import threading

import httpx
import pytest

from textpile.crawl.fetcher.fetch import fetch
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.parser import body as reader_module
from textpile.enums import ExitCode

from .crawlsite import Rows, config

HELLO = b"<p>hello</p>"


def raw(status: int, body: bytes = b"", headers: bytes = b"", content_type: bytes = b"text/html") -> bytes:
    """A whole HTTP/1.1 answer; ``headers`` are extra raw header lines (each ending in CRLF)."""
    return (b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n"
            % (status, content_type, len(body), headers)) + body


class RawSite:
    """A scripted site on 127.0.0.1 writing raw answers: ``routes`` maps a request target
    to bytes or to a callable taking the request headers (a dict) and returning bytes.
    Unknown targets get a 404. Requests are logged as (target, headers)."""

    def __init__(self, routes) -> None:
        self.routes = routes
        self.log: list[tuple[str, dict]] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                headers = dict(self.headers.items())
                site.log.append((self.path, headers))
                route = site.routes.get(self.path, raw(404))
                answer = route(headers) if callable(route) else route
                try:
                    self.wfile.write(answer)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> "RawSite":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def paths(self) -> list[str]:
        return [path for path, _ in self.log]


GOOD_ROUTES = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/two">2</a>'), "/two": raw(200, HELLO)}
GOOD_LOG = [("G/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
            ("G/", 0, 20, None), ("G/two", 0, 20, None)]


def crawl(tmp_path, hostile: RawSite, *, force_recrawl=False, page_readers=None, **kw):
    """Crawl the hostile site H and a good site G (both seeds); return the report,
    Rows with labels H and G, and the good site's log. ``page_readers=0`` reads pages
    in this process (so that a monkeypatched reader function is the one called)."""
    with RawSite(GOOD_ROUTES) as good:
        cfg = config(tmp_path, [hostile.base_url + "/", good.base_url + "/"], **kw)
        db = tmp_path / "crawl.db"
        report = run_crawl(cfg, db, progress=False, force_recrawl=force_recrawl, page_readers=page_readers)
    rows = Rows(db, {hostile.base_url: "H", good.base_url: "G"})
    return report, rows


def hostile_log(rows: Rows) -> list[tuple]:
    return [row for row in rows.log() if row[0].startswith("H")]


def good_log(rows: Rows) -> list[tuple]:
    return [row for row in rows.log() if row[0].startswith("G")]


def finished(rows: Rows) -> bool:
    return all(r[0] is not None for r in rows.conn.execute("SELECT time_finished_unix_utc FROM agent"))


NON_TEXT_LABELS = ["undefined", "base64", "rot13", "hex", "zlib", "bz2", "uu", "quopri", "idna", "punycode",
                   "utf-7", "x-user-defined"]


def test_non_text_charset_labels_are_ignored_in_header_and_meta(tmp_path):
    cafe = "<p>caf\u00e9</p>".encode("utf-8")
    routes = {"/robots.txt": raw(404)}
    links = []
    for label in NON_TEXT_LABELS:
        routes[f"/h-{label}"] = raw(200, cafe, content_type=b"text/html; charset=" + label.encode())
        routes[f"/m-{label}"] = raw(200, b'<meta charset="' + label.encode() + b'">' + cafe)
        links += [f"/h-{label}", f"/m-{label}"]
    routes["/"] = raw(200, "".join(f'<a href="{link}">x</a>' for link in links).encode(),
                      content_type=b"text/html; charset=undefined")
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == ([("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                  ("H/", 0, 20, None)] + [(f"H{link}", 0, 20, None) for link in links])
    files = rows.files()
    for link in links:
        assert "caf\u00e9" in files[f"H{link}"][2], link
    assert good_log(rows) == GOOD_LOG
    assert report.out_of_patience_origins == [] and finished(rows)


def test_overlong_link_is_dropped_at_link_collection(tmp_path):
    long_path = "/" + "a" * 70000
    routes = {"/robots.txt": raw(404),
              "/": raw(200, f'<a href="{long_path}">x</a><a href="/ok">ok</a>'.encode()),
              "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                 ("H/", 0, 20, None), ("H/ok", 0, 20, None)]
    assert rows.conn.execute("SELECT max(length(str_url)) FROM url").fetchone()[0] < 100
    assert good_log(rows) == GOOD_LOG and finished(rows)


def test_overlong_stored_candidate_is_logged_not_fetched(tmp_path):
    from textpile.crawl.crawldb.writer import CrawlerDb
    from textpile.store.database import open_crawler_db
    from textpile.store.urls import parse_url

    routes = {"/robots.txt": raw(404), "/": raw(200, HELLO)}
    with RawSite(routes) as site:
        conn = open_crawler_db(tmp_path / "crawl.db")
        CrawlerDb(conn).add_candidates([parse_url(site.base_url + "/" + "b" * 9000),
                                        parse_url(site.base_url.replace("//", "//u:p@") + "/auth")])
        conn.close()
        report, rows = crawl(tmp_path, site)
    with_user = site.base_url.replace("//", "//u:p@") + "/auth"
    assert [row for row in rows.log() if not row[0].startswith("G")] == [
        ("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("H/" + "b" * 9000, 0, 173, "is longer than 8192 characters"),
        (with_user, 0, 173, "carries a user name or password"),
        ("H/", 0, 20, None),
    ]
    assert site.paths() == ["/robots.txt", "/"]
    assert finished(rows)


def test_url_httpx_refuses_is_an_exit_code_not_an_exception():
    async def go():
        async with httpx.AsyncClient() as client:
            return await fetch(client, "http://127.0.0.1:9/" + "a" * 70000)

    result = asyncio.run(go())
    assert (result.exit_code, result.message) == (
        ExitCode.blocked_url_by_local_policy, "the HTTP client refuses this URL: InvalidURL: URL too long")


def test_credentialed_url_is_never_fetched():
    async def go():
        async with httpx.AsyncClient() as client:
            return await fetch(client, "http://user:pw@127.0.0.1:9/")

    result = asyncio.run(go())
    assert (result.exit_code, result.message) == (
        ExitCode.blocked_url_by_local_policy, "URLs with a user name or password are never fetched")


def test_retry_after_with_a_non_ascii_digit(tmp_path):
    routes = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/limited">l</a><a href="/ok">ok</a>'),
              "/limited": raw(429, headers=b"Retry-After: \xb2\r\n"), "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    log = hostile_log(rows)
    assert log[:2] == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"), ("H/", 0, 20, None)]
    assert sorted(log[2:]) == [("H/limited", 0, 49, None)] * 3 + [("H/ok", 0, 20, None)]
    assert good_log(rows) == GOOD_LOG and report.out_of_patience_origins == [] and finished(rows)


def test_non_ascii_etag_is_not_sent_back(tmp_path):
    routes = {"/robots.txt": raw(404), "/": raw(200, HELLO, headers=b'ETag: "caf\xc3\xa9"\r\n')}
    with RawSite(routes) as site:
        crawl(tmp_path, site)
        _, rows = crawl(tmp_path, site, force_recrawl=True)
    assert hostile_log(rows) == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                 ("H/", 0, 20, None)] * 2
    recrawl = [headers for path, headers in site.log if path == "/"][1]
    # no valid ETag to send back, and no Last-Modified was stored: an unconditional request
    assert "If-None-Match" not in recrawl and "If-Modified-Since" not in recrawl
    assert good_log(rows) == GOOD_LOG and finished(rows)  # the second run's good site


UNREACHABLE = "robots.txt redirects to an unusable Location ({}): nothing allowed for now"


@pytest.mark.parametrize("location, message", [
    (b"http://xn--zz.example/robots.txt",
     UNREACHABLE.format("invalid host name 'xn--zz.example': 'xn--zz' is not a valid punycode label")),
    (b"http://" + b"a" * 64 + b".example/robots.txt",
     UNREACHABLE.format("invalid host name '" + "a" * 64 + ".example': a label is empty or longer than 63")),
    (b"http://[::1", UNREACHABLE.format("invalid IPv6 address in URL 'http://[::1'")),
    (b"http://user:pw@example.invalid/robots.txt",
     "robots.txt redirects to a URL that carries a user name or password: nothing allowed for now"),
])
def test_robots_redirect_to_an_unusable_target_is_unreachable(tmp_path, location, message):
    routes = {"/robots.txt": raw(301, headers=b"Location: " + location + b"\r\n"), "/": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == [("H/robots.txt", 1, 42, message)] * 5
    assert site.paths() == ["/robots.txt"] * 5  # one request per fetch: not a fluke
    assert report.out_of_patience_origins == [site.base_url]
    assert good_log(rows) == GOOD_LOG and finished(rows)


@pytest.mark.parametrize("location, message", [
    (b"http://[::1", "redirect without a usable http(s) Location: 'http://[::1'"),
    (b"http://xn--zz.example/", "redirect without a usable http(s) Location: 'http://xn--zz.example/'"),
    (b"http://a b.example/", "redirect without a usable http(s) Location: 'http://a b.example/'"),
])
def test_page_redirect_with_an_invalid_location_is_not_understood(tmp_path, location, message):
    routes = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/moved">m</a><a href="/ok">ok</a>'),
              "/moved": raw(302, headers=b"Location: " + location + b"\r\n"), "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                 ("H/", 0, 20, None), ("H/moved", 0, 42, message), ("H/ok", 0, 20, None)]
    assert site.paths().count("/moved") == 1
    assert rows.redirects() == []
    assert good_log(rows) == GOOD_LOG and report.out_of_patience_origins == [] and finished(rows)


def test_links_and_redirects_with_credentials_are_never_followed(tmp_path):
    routes = {"/robots.txt": raw(404), "/plain": raw(200, HELLO), "/auth": raw(200, HELLO)}
    with RawSite(routes) as site:
        with_user = site.base_url.replace("http://", "http://user:pw@")
        routes["/"] = raw(200, (f'<a href="{with_user}/auth">a</a><a href="/plain">p</a><a href="/r">r</a>'
                                f'<link rel="canonical" href="{with_user}/">').encode())
        routes["/r"] = raw(302, headers=f"Location: {with_user}/auth\r\n".encode())
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == [
        ("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"), ("H/", 0, 20, None),
        ("H/plain", 0, 20, None),
        ("H/r", 0, 32, "redirect target carries a user name or password: not recorded, not followed")]
    assert site.paths() == ["/robots.txt", "/", "/plain", "/r"]
    assert not any("Authorization" in headers for _, headers in site.log)
    assert rows.conn.execute("SELECT count(*) FROM url WHERE username IS NOT NULL OR password IS NOT NULL"
                             ).fetchone() == (0,)
    assert rows.redirects() == []
    assert good_log(rows) == GOOD_LOG and finished(rows)


def test_undeclared_charset_prefers_utf8_with_a_stray_byte(tmp_path):
    mostly_utf8 = ("<p>" + "caf\u00e9 na\u00efve " * 30 + "</p>").encode("utf-8") + b"<p>\xb2</p>"
    cp1252 = "<p>Gr\u00fc\u00dfe aus M\u00fcnchen, sch\u00f6ne Stra\u00dfe, \u201cquoted\u201d</p>".encode("cp1252")
    routes = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/u">u</a><a href="/w">w</a>'),
              "/u": raw(200, mostly_utf8), "/w": raw(200, cp1252)}
    with RawSite(routes) as site:
        _, rows = crawl(tmp_path, site)
    files = rows.files()
    assert files["H/u"][2].startswith("<p>caf\u00e9 na\u00efve caf\u00e9")
    assert files["H/u"][2].endswith("<p>\ufffd</p>")
    assert files["H/w"][2] == cp1252.decode("cp1252")
    assert good_log(rows) == GOOD_LOG


def test_huge_robots_txt_is_parsed_up_to_500_kib(tmp_path):
    robots = b"User-agent: *\nDisallow: /private\n" + b"# filler line of a very long robots.txt\n" * 280_000
    assert len(robots) > 11_000_000
    routes = {"/robots.txt": raw(200, robots, content_type=b"text/plain"),
              "/": raw(200, b'<a href="/private">p</a><a href="/ok">ok</a>'), "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site)
    assert hostile_log(rows) == [
        ("H/robots.txt", 1, 20, "robots.txt longer than 512000 bytes: only its start was parsed"),
        ("H/", 0, 20, None),
        ("H/private", 0, 170, "disallowed by H/robots.txt for textpile-test"),
        ("H/ok", 0, 20, None)]
    assert report.out_of_patience_origins == [] and finished(rows)


def test_safety_net_logs_unknown_error_and_goes_on(tmp_path, monkeypatch):
    real = reader_module.read_page

    def read_page(text, page_url, token):
        if page_url.endswith("/bug"):  # only the hostile site has /bug
            raise RuntimeError("boom " + "x" * 1000)
        return real(text, page_url, token)

    monkeypatch.setattr(reader_module, "read_page", read_page)
    routes = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/bug">b</a><a href="/ok">ok</a>'),
              "/bug": raw(200, HELLO), "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        report, rows = crawl(tmp_path, site, page_readers=0)
    log = hostile_log(rows)
    assert log[:2] == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"), ("H/", 0, 20, None)]
    assert log[2][:3] == ("H/bug", 0, -999)
    assert log[2][3] == "unexpected error: RuntimeError: boom " + "x" * 480 + "\u2026"
    assert log[3:] == [("H/ok", 0, 20, None)]
    assert rows.candidates()["H/bug"][:2] == (-999, True)  # logged: the next run does not repeat it at once
    assert good_log(rows) == GOOD_LOG and report.out_of_patience_origins == [] and finished(rows)


def test_safety_net_patience_runs_out(tmp_path, monkeypatch):
    """Five pages whose reading fails: out of patience, no sixth request. Pages are read
    while the next request waits out its delay, so the 0.5 s delay lets each failure
    count before the next request (with no delay one more page could be under way)."""
    real = reader_module.read_page
    links = "".join(f'<a href="/p{i}">x</a>' for i in range(8)).encode()
    routes = {"/robots.txt": raw(404), "/": raw(200, links)}
    for i in range(8):
        routes[f"/p{i}"] = raw(200, HELLO)
    with RawSite(routes) as site:
        def read_page(text, page_url, token):
            if page_url.startswith(site.base_url + "/p"):
                raise RuntimeError("boom")
            return real(text, page_url, token)

        monkeypatch.setattr(reader_module, "read_page", read_page)
        report, rows = crawl(tmp_path, site, page_readers=0, delay_ms=500)
    assert hostile_log(rows) == ([("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                  ("H/", 0, 20, None)]
                                 + [(f"H/p{i}", 0, -999, "unexpected error: RuntimeError: boom") for i in range(5)])
    assert report.out_of_patience_origins == [site.base_url]
    assert good_log(rows) == GOOD_LOG and finished(rows)


def test_safety_net_keeps_database_errors(tmp_path, monkeypatch):
    real = reader_module.read_page
    routes = {"/robots.txt": raw(404), "/": raw(200, b'<a href="/ok">ok</a>'), "/ok": raw(200, HELLO)}
    with RawSite(routes) as site:
        def read_page(text, page_url, token):
            if page_url.startswith(site.base_url):
                raise sqlite3.OperationalError("disk I/O error")
            return real(text, page_url, token)

        monkeypatch.setattr(reader_module, "read_page", read_page)
        report, rows = crawl(tmp_path, site, page_readers=0)
    assert hostile_log(rows) == [("H/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
                                 ("H/", 0, -3, "database error: disk I/O error")]
    assert site.paths() == ["/robots.txt", "/"]
    assert report.out_of_patience_origins == [site.base_url]
    assert good_log(rows) == GOOD_LOG and finished(rows)
