"""Parts of the crawl loop on their own: robots.txt rules, the crawl delay, charsets,
crawl-time HTML reading, content decoding."""

from __future__ import annotations

import gzip
import zlib

import pytest

from textpile.crawl.fetcher.delay import CrawlDelay, parse_retry_after
from textpile.crawl.fetcher.fetch import (BodyTooLarge, TruncatedBody, UndecodableBody, decode_content,
                                          exit_code_for_status)
from textpile.crawl.fetcher.robots import RobotsRules, looks_like_html, user_agent_token
from textpile.crawl.parser.charset import decode_body
from textpile.crawl.parser.headers import x_robots_tag
from textpile.crawl.parser.page import read_page
from textpile.enums import ExitCode

ROBOTS = b"""User-agent: *
Disallow: /search/*?q=
Disallow: /*.pdf$
Disallow: /tmp
Crawl-delay: 500

User-agent: textpile-test
Disallow: /only-for-others
Allow: /tmp/public
Disallow: /tmp
"""


def test_user_agent_token():
    assert user_agent_token("example-net-crawler (for https://example.net/why)") == "example-net-crawler"
    assert user_agent_token("plainbot") == "plainbot"


@pytest.mark.parametrize("path,other,ours", [
    ("/search/x?q=1", False, True),
    ("/search/x?page=1", True, True),
    ("/file.pdf", False, True),
    ("/file.pdf?download", True, True),
    ("/file.pdf.html", True, True),
    ("/tmp/a", False, False),
    ("/tmp/public/a", False, True),
    ("/only-for-others", True, False),
])
def test_robots_wildcards_and_specific_group(path, other, ours):
    rules = RobotsRules.parse(ROBOTS)
    assert rules.can_fetch("http://h" + path, "otherbot") is other
    assert rules.can_fetch("http://h" + path, "textpile-test") is ours


def test_robots_bom_keeps_first_group_and_crawl_delay_capped():
    rules = RobotsRules.parse(b"\xef\xbb\xbf" + ROBOTS)
    assert rules.can_fetch("http://h/tmp/a", "otherbot") is False
    assert rules.crawl_delay_s("otherbot") == 120.0
    assert rules.crawl_delay_s("textpile-test") is None


def test_robots_failure_rules():
    assert RobotsRules.unavailable().can_fetch("http://h/", "x") is False
    assert RobotsRules.allow_all().can_fetch("http://h/x", "x") is True
    assert looks_like_html("text/html; charset=utf-8", b"\n<!DOCTYPE html><html>")
    assert not looks_like_html("text/plain", b"<html>")
    assert not looks_like_html("text/html", b"User-agent: *\nDisallow: /")


def test_politeness_delay_steps_down_and_429_raises_it():
    d = CrawlDelay(minimum_s=0.1)
    d.response_received(0.2, now=0.0)          # politeness 2: 0.2 * 4
    assert d.delay_s() == pytest.approx(0.8) and d.politeness == 1
    d.response_received(0.2, now=1.0)          # 0.2 * 2
    assert d.delay_s() == pytest.approx(0.4) and d.politeness == 0
    d.response_received(0.01, now=2.0)         # minimum wins
    assert d.delay_s() == pytest.approx(0.1) and d.politeness == 0
    d.response_received(0.2, rate_limited=True, retry_after_s=5, now=3.0)
    assert d.politeness == 1 and not d.autodecrement
    assert d.delay_s() == pytest.approx(0.4)
    assert d.wait_s(now=3.0) == pytest.approx(5.0)  # Retry-After
    d.response_received(0.2, now=9.0)
    assert d.politeness == 1                   # no more stepping down this run
    assert d.wait_s(now=9.1) == pytest.approx(0.3)


def test_retry_after():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("100000") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now_unix=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_charset_order():
    text = "na\u00efve \u201cquote\u201d \u20ac"
    cp = text.encode("cp1252")
    assert decode_body(cp, "windows-1252", is_html=True).text == text
    assert decode_body(cp, "iso-8859-1", is_html=True).text == text  # the browser meaning of latin-1
    meta = b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">' + cp
    decoded = decode_body(meta, None, is_html=True)
    assert decoded.source == "meta" and decoded.text.endswith(text)
    bom = b"\xef\xbb\xbf" + text.encode("utf-8")
    assert decode_body(bom, "windows-1252", is_html=True).text == text  # BOM beats the header
    assert decode_body(text.encode("utf-8"), None, is_html=False).text == text
    assert decode_body(text.encode("utf-8"), "no-such-charset", is_html=False).source == "detected"


def test_x_robots_tag():
    assert x_robots_tag(["noindex"], "mybot").noindex
    assert not x_robots_tag(["googlebot: noindex"], "mybot").noindex
    assert x_robots_tag(["MyBot: none"], "mybot").nofollow
    assert not x_robots_tag(["unavailable_after: 25 Jun 2010 15:00:00 PST"], "mybot").noindex
    assert x_robots_tag(["nofollow, noarchive"], "mybot").nofollow


def test_read_page():
    html = ('<html><head><base href="http://h/docs/"><meta name="ROBOTS" content="NOFOLLOW">'
            '<link rel="canonical alternate" href="/c#x"></head><body>'
            '<a href="a.html#s">a</a><a href="a.html">again</a><a href="ftp://h/f">f</a>'
            '<a rel="nofollow" href="n.html">n</a><area href="/map"></body></html>')
    info = read_page(html, "http://h/page", "mybot")
    assert [u.str_url for u in info.links] == ["http://h/docs/a.html", "http://h/map"]
    assert info.robots.nofollow and not info.robots.noindex
    assert info.canonical.str_url == "http://h/c"
    assert read_page("", "http://h/", "x").links == []


def test_decode_content():
    body = b"hello " * 100
    assert decode_content(gzip.compress(body), "x-gzip", 10_000) == body
    assert decode_content(zlib.compress(body), "deflate", 10_000) == body
    assert decode_content(gzip.compress(gzip.compress(body)), "gzip, gzip", 10_000) == body
    with pytest.raises(BodyTooLarge):
        decode_content(gzip.compress(b"\0" * 1_000_000), "gzip", 10_000)
    with pytest.raises(UndecodableBody):
        decode_content(body, "br", 10_000)
    with pytest.raises(UndecodableBody, match=r"^corrupt gzip body: "):
        decode_content(b"\x1f\x8b\x08 not gzip after all", "gzip", 10_000)
    # a plain body behind a false Content-Encoding: read as it is, and said so
    notes: list[str] = []
    assert decode_content(b"<p>not gzip</p>", "gzip", 10_000, notes=notes) == b"<p>not gzip</p>"
    assert decode_content(b"plain", "deflate, gzip", 10_000, notes=notes) == b"plain"
    assert notes == ["Content-Encoding says gzip, but the body is plain text: read as it is"] * 2 + [
        "Content-Encoding says deflate, but the body is plain text: read as it is"]
    assert decode_content(zlib.compress(body)[2:], "deflate", 10_000) == body  # raw deflate
    # binary bytes that are no gzip stream are not taken as plain
    with pytest.raises(UndecodableBody):
        decode_content(b"\x00\x01binary", "gzip", 10_000)


def test_truncated_compressed_bodies():
    body = ("<p>" + "quokka lives on rottnest island " * 400 + "</p>").encode()
    for coding, data in (("gzip", gzip.compress(body)), ("deflate", zlib.compress(body)),
                         ("deflate", zlib.compress(body)[2:-4])):
        cut = data[: len(data) // 2]
        with pytest.raises(TruncatedBody, match=rf"^the {coding} stream ends early: {len(cut)} bytes received, "):
            decode_content(cut, coding, 10_000_000)
        # robots.txt reads only a prefix on purpose: a truncated stream is fine there
        assert body.startswith(decode_content(cut, coding, 10_000_000, truncate=True))
    # gzip without its 8-byte trailer (CRC, size) is cut off too
    with pytest.raises(TruncatedBody):
        decode_content(gzip.compress(body)[:-8], "gzip", 10_000_000)


def test_exit_codes_for_status():
    assert [exit_code_for_status(s) for s in (200, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404,
                                             405, 410, 429, 500, 503, 100)] == [
        ExitCode.file_ingested, ExitCode.permanent_redirect, ExitCode.redirect, ExitCode.redirect,
        ExitCode.file_did_not_change, ExitCode.redirect, ExitCode.permanent_redirect,
        ExitCode.server_blamed_client, ExitCode.server_blamed_client, ExitCode.server_blamed_client,
        ExitCode.file_not_found, ExitCode.server_blamed_client, ExitCode.file_gone, ExitCode.rate_limited,
        ExitCode.server_internal_error, ExitCode.server_internal_error, ExitCode.did_not_understand_answer]
