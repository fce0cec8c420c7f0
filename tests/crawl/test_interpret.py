"""The interpreter of answers, without an HTTP client or a crawl loop: the crawl log
entry of an answer (textpile.crawl.interpret), and what a robots.txt answer means
(textpile.crawl.fetcher.robots.robots_answer)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx
import pytest

from textpile.crawl.crawldb.records import Candidate
from textpile.crawl.fetcher.fetch import FetchResult
from textpile.crawl.fetcher.robots import ROBOTS_MAX_BYTES, robots_answer
from textpile.crawl.interpret import Interpreter
from textpile.crawl.parser.packed import unpack_links
from textpile.crawl.policy.config import CrawlConfig
from textpile.crawl.workers.readers import PageReader
from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.store.urls import parse_url

SEED = "http://a.example/"
ORIGIN = "http://a.example:80"  # its str_origin
CONFIG = CrawlConfig(default_delay_ms=0, max_commands_per_run=1, recrawl_interval_s=0, seeds=[SEED],
                     user_agent="textpile-test (for tests)", session_parameters=("sid",))


def answer(status: int | None, headers: dict[str, str] | None = None, body: bytes | None = None,
           url: str = SEED + "page", **kwargs) -> FetchResult:
    return FetchResult(url=url, time_sent=1_700_000_000.5, duration_s=0.25, status=status,
                       headers=httpx.Headers(headers or {}), body=body, raw_size=len(body or b""), **kwargs)


def interpret(*results: FetchResult, candidate: Candidate | None = None, config: CrawlConfig = CONFIG):
    async def run():
        with PageReader(0) as reader:
            interpreter = Interpreter(config, "textpile-test", frozenset({ORIGIN}), reader)
            return await interpreter.interpret(parse_url(results[-1].url), list(results), candidate,
                                               origin=ORIGIN)

    return asyncio.run(run())


def test_an_html_answer_becomes_its_file_text_and_links():
    body = (b'<html><head><title>T</title><link rel="alternate" type="application/rss+xml" href="/feed.xml">'
            b'</head><body><p>Hello</p><a href="/b?sid=9">b</a><a href="http://other.example/x">x</a>'
            b'<a href="http://user:pw@a.example/c">c</a></body></html>')
    entry = interpret(answer(200, {"content-type": "text/html; charset=utf-8", "etag": '"e1"',
                                   "last-modified": "Tue, 14 Nov 2023 22:13:20 GMT"}, body))
    assert (entry.exit_code, entry.crawl_type, entry.time_started_unix, entry.time_taken_ms) == (
        ExitCode.file_ingested, CrawlType.file_crawl, 0, 0)
    [request] = entry.requests
    assert (request.url.str_url, request.time_sent_unix, request.duration_ms, request.exit_code, request.http_status,
            request.http_etag, request.server_last_modified_unix) == (
        SEED + "page", 1_700_000_000, 250, ExitCode.file_ingested, 200, '"e1"', 1_700_000_000)
    assert (entry.file.request_index, entry.file.media_type.essence, entry.file.size, entry.file.text,
            entry.file.last_modified_unix) == (0, "text/html", len(body), body, 1_700_000_000)
    # the session ID is stripped, the other origin and the credentialed link are not candidates
    assert [row[3] for row in unpack_links(entry.new_links)] == [SEED + "b"]
    assert [(m.url.str_url, m.kind, m.found_via) for m in entry.new_meta] == [(SEED + "feed.xml", "feed", "link")]
    assert entry.site_links is None  # discover_sites is off


def test_a_retried_fluke_keeps_both_requests_and_a_redirect_is_scheduled():
    entry = interpret(answer(None, exit_code=ExitCode.connection_failed, message="no connection"),
                      answer(301, {"location": "/moved?sid=1&x=2"}))
    assert entry.exit_code == ExitCode.permanent_redirect
    assert [(r.exit_code, r.http_status) for r in entry.requests] == [
        (ExitCode.connection_failed, None), (ExitCode.permanent_redirect, 301)]
    assert (entry.redirect.request_index, entry.redirect.to_url.str_url, entry.redirect.is_permanent) == (
        1, SEED + "moved?x=2", True)
    assert [u.str_url for u in entry.new_candidates] == [SEED + "moved?x=2"]


@pytest.mark.parametrize("location, code, message", [
    ("mailto:a@b.example", ExitCode.did_not_understand_answer,
     "redirect without a usable http(s) Location: 'mailto:a@b.example'"),
    ("http://u:p@a.example/", ExitCode.redirect, "redirect target carries a user name or password: not recorded, "
                                                 "not followed"),
])
def test_unusable_redirect_targets_are_neither_recorded_nor_followed(location, code, message):
    entry = interpret(answer(302, {"location": location}))
    assert (entry.exit_code, entry.message, entry.redirect, entry.new_candidates) == (code, message, None, [])


def test_refresh_noindex_canonical_and_a_failed_request():
    refresh = interpret(answer(200, {"content-type": "text/plain", "refresh": "0; url=/real"}, b"stub"))
    assert (refresh.exit_code, refresh.redirect.to_url.str_url, refresh.redirect.information_source, refresh.file) == (
        ExitCode.permanent_redirect, SEED + "real", InformationSource.response_header, None)
    noindex = interpret(answer(200, {"content-type": "text/plain", "x-robots-tag": "noindex"}, b"text"))
    assert (noindex.exit_code, noindex.message, noindex.file) == (
        ExitCode.blocked_at_request_of_remote, "the page asked not to be indexed (noindex)", None)
    canonical = interpret(answer(200, {"content-type": "text/html", "link": '<http://a.example/c>; rel="canonical"'},
                                 b"<p>x</p>"))
    assert (canonical.exit_code, canonical.message, [u.str_url for u in canonical.new_candidates]) == (
        ExitCode.not_canonical, "canonical URL is http://a.example/c", [SEED + "c"])
    failed = interpret(answer(None, exit_code=ExitCode.request_timeout, message="no answer within 30 s"))
    assert (failed.exit_code, failed.message, failed.file) == (ExitCode.request_timeout, "no answer within 30 s", None)


def test_a_sitemap_candidate_is_read_for_its_urls_and_dated():
    body = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<url><loc>http://a.example/one</loc></url><url><loc>http://other.example/two</loc></url></urlset>")
    candidate = Candidate(url_id=1, str_url=SEED + "sitemap.xml", last_contentful_crawl_time_unix=None,
                          last_contentful_http_etag=None,
                          server_last_modified_unix=None, meta_kind="sitemap", meta_depth=0,
                          sitemap_lastmod=1_600_000_000)
    entry = interpret(answer(200, {"content-type": "application/xml"}, body, url=SEED + "sitemap.xml"),
                      candidate=candidate)
    assert (entry.exit_code, entry.listing.kind, entry.file.text, entry.file.last_modified_unix) == (
        ExitCode.file_ingested, "sitemap", None, 1_600_000_000)
    assert [row[3] for row in unpack_links(entry.listing.links)] == [SEED + "one"]
    assert entry.message == "sitemap: 2 entries, 1 URL on seed origins, 1 on other origins (not crawled)"


@pytest.mark.parametrize("result, bad_target, expected", [
    (answer(200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /private\n"), None,
     (ExitCode.file_ingested, None, False, False, True)),
    (answer(200, {"content-type": "text/html"}, b"<html>not found</html>"), None,
     (ExitCode.file_of_unknown_type, "robots.txt answered with an HTML page: no rules, everything allowed",
      False, False, True)),
    (answer(200, {}, b"User-agent: *\nDisallow: /private\n", truncated=True), None,
     (ExitCode.file_ingested, f"robots.txt longer than {ROBOTS_MAX_BYTES} bytes: only its start was parsed",
      False, False, True)),
    (answer(308, {"location": "/robots.txt"}), None,
     (ExitCode.permanent_redirect, "robots.txt redirects too often or to nowhere: treated as unavailable (4xx), "
                                   "everything allowed", False, False, True)),
    (answer(429), None, (ExitCode.rate_limited, "robots.txt unavailable: nothing allowed for now", True, False,
                         False)),
    (answer(503), None, (ExitCode.server_internal_error, "robots.txt unavailable: nothing allowed for now", True,
                         False, False)),
    (answer(404), None, (ExitCode.file_not_found, "no robots.txt rules (4xx): everything allowed", False, False, True)),
    (answer(None, exit_code=ExitCode.connection_failed, message="refused to connect", blocked_address=True), None,
     (ExitCode.connection_failed, "refused to connect", True, True, False)),
    (answer(None, exit_code=ExitCode.request_timeout, message="no answer"), None,
     (ExitCode.request_timeout, "no answer", True, False, False)),
    (answer(301, {"location": "ftp://a.example/"}), "robots.txt redirects to a URL that is not http(s): "
                                                     "nothing allowed for now",
     (ExitCode.did_not_understand_answer, "robots.txt redirects to a URL that is not http(s): nothing allowed for now",
      True, False, False)),
])
def test_robots_answers(result, bad_target, expected):
    found = robots_answer(result, bad_target)
    assert (found.exit_code, found.message, found.unavailable, found.refused,
            found.rules.can_fetch(SEED + "page", "textpile-test")) == expected
    if expected[0] == ExitCode.file_ingested:
        assert not found.rules.can_fetch(SEED + "private", "textpile-test")


def test_the_archive_importer_builds_no_crawler():
    """Importing an archive needs the interpreter, not the crawl loop."""
    code = ("import sys, textpile.archives.importer\n"
            "print(sorted(m for m in sys.modules if m in ('textpile.crawl.loop.origin', 'textpile.crawl.loop.run')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
