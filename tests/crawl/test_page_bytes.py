"""A page read from its UTF-8 bytes gives what the same page read from its text gave
before (links, base, canonical, feeds, robots, refresh), on real documentation pages and
on markup that the HTML standard's rules make tricky; a body that is valid UTF-8 comes
back from the page reader as "the text is the body" and is stored as the same TEXT."""

from __future__ import annotations

import uuid

import pytest
from selectolax.lexbor import LexborHTMLParser

from sites import real_docs_root
from textpile.crawl.crawldb.records import FileRecord, LogEntry
from textpile.crawl.crawldb.sql import CrawlStore
from textpile.crawl.parser.body import read_body
from textpile.crawl.parser.page import _ELEMENTS, _LinkResolver, PageInfo, directives_from_tokens, read_page, FEED_TYPES
from textpile.crawl.parser.refresh import parse_refresh
from textpile.enums import CrawlType, ExitCode
from textpile.store.database import open_crawler_db
from textpile.store.mimetypes import parse_media_type
from textpile.store.urls import parse_url

from .crawlsite import TOKEN


def reference_read_page(text: str, page_url: str, token: str) -> PageInfo:
    """read_page as it was before links were read from bytes with the attributes' view:
    the text parsed, every element's attributes as a dict."""
    info = PageInfo(base_url=page_url)
    page = _LinkResolver(page_url)
    names = {"robots", token.lower()}
    base = canonical = refresh = None
    feeds, hrefs = [], []
    for node in LexborHTMLParser(text).css(_ELEMENTS):
        tag, attributes = node.tag, node.attributes
        if tag in ("a", "area"):
            rel = attributes.get("rel")
            if rel is None or "nofollow" not in rel.lower().split():
                hrefs.append(attributes.get("href") or "")
        elif tag == "meta":
            if (attributes.get("name") or "").strip().lower() in names:
                info.robots = info.robots | directives_from_tokens(attributes.get("content") or "")
            elif refresh is None and (attributes.get("http-equiv") or "").strip().lower() == "refresh":
                refresh = parse_refresh(attributes.get("content") or "")
        elif tag == "link":
            rels = (attributes.get("rel") or "").lower().split()
            if canonical is None and "canonical" in rels:
                canonical = attributes.get("href") or ""
            elif "alternate" in rels and (attributes.get("type") or "").strip().lower() in FEED_TYPES:
                feeds.append(attributes.get("href") or "")
        elif tag == "base" and base is None:
            base = attributes.get("href") or ""
    links = page
    resolved_base = page.http_url(base) if base else None
    if resolved_base is not None:
        info.base_url = resolved_base.str_url
        links = _LinkResolver(info.base_url)
    if canonical is not None:
        info.canonical = links.http_url(canonical)
    if refresh is not None:
        info.refresh = (refresh.delay_s, links.http_url(refresh.target) if refresh.target else None)
    for href in feeds:
        feed = links.http_url(href)
        if feed is not None and feed not in info.feeds:
            info.feeds.append(feed)
    seen = set()
    for href in hrefs:
        target = links.http_url(href)
        if target is not None and target.str_url not in seen:
            seen.add(target.str_url)
            info.links.append(target)
    return info


TRICKY = [
    # comments, including the short forms and "--!>", hide their links
    '<!--><a href="c1"><!-- <a href="hidden"> --!><a href="c2"><!--- <a href="h2"> ---><a href=c3>',
    # script text (with its escaped "<!--" and "<script>" states), style, title, textarea
    '<script><!--<script></script><a href="in-script"></script>--></script><a href="after-script">'
    '<style><a href="in-style"></style><title><a href="in-title"></title><textarea><a href=t></textarea><a href=z>',
    # <base href> after the links, resolved against the page; only the first counts
    '<a href="x.html"><base href="/docs/"><base href="/other/"><a href="y.html#f">',
    # entities in attributes: the attribute rule leaves "&not=" and "&copy2" as written
    '<a href="?a=1&amp;b=2&not=3&copy2&lt;&#x41;&#66;&eacute;">e</a><a href="caf&eacute;.html">',
    # case, duplicate attributes (the first wins), slashes and quotes
    '<A HREF="upper.html" href="second.html"><a/href=slash.html><a href=\'sq.html\' rel=NOFOLLOW>'
    '<a rel="external nofollow" href="nf.html"><area href="/map"><div title="<a href=q>"><a href=r>',
    # robots meta for "robots" and for the crawler's token, canonical, feeds, refresh
    f'<meta name="ROBOTS" content="noindex"><meta name="{TOKEN}" content="nofollow">'
    '<meta name="googlebot" content="none"><link rel="Canonical" href="/canon#x">'
    '<link rel="alternate" type="application/atom+xml" href="/feed.atom">'
    '<meta http-equiv="Refresh" content="5; url=/next.html">',
    # foreign content, templates, tables (foster parenting), select, noscript
    '<svg><a href="svg-a"><path d="M0"/></a></svg><template><a href="in-template"></template>'
    '<table><tr><td><a href="cell"></td></tr><a href="fostered"></table><select><a href="sel"></select>'
    '<noscript><a href="ns"></a></noscript><p><a href=fmt>one<p>two',
    # unusable links: other schemes, credentials, empty, fragment only
    '<a href="mailto:x@y"><a href="javascript:void(0)"><a href="http://u:p@h/"><a href=""><a href="#top">'
    '<a href="http://other.example/p">',
    # hrefs that differ only in their fragment, spellings of one URL, the page itself by
    # fragment and by name, a link over MAX_URL_CHARS only because of its fragment
    '<a href="#s1"><a href="t.html#a"><a href="./t.html#b"><a href="page.html"><a href="t.html">'
    '<a href="%7e/u"><a href="~/u#c"><a href="#s2"><a href="v.html#' + "f" * 8200 + '"><a href="v.html">',
    "",
    "just text, no markup",
]


def _same(a: PageInfo, b: PageInfo) -> None:
    assert a.links == b.links
    assert (a.base_url, a.robots, a.canonical, a.feeds, a.refresh) == (b.base_url, b.robots, b.canonical,
                                                                       b.feeds, b.refresh)


@pytest.mark.parametrize("html", TRICKY)
def test_tricky_markup_reads_the_same_from_bytes(html):
    url = "http://h.example/dir/page.html"
    expected = reference_read_page(html, url, TOKEN)
    _same(read_page(html, url, TOKEN), expected)
    _same(read_page(html.encode(), url, TOKEN), expected)


def test_tricky_markup_reads_as_the_html_standard_says():
    info = read_page(TRICKY[0] + TRICKY[1] + TRICKY[3], "http://h.example/dir/page.html", TOKEN)
    assert [u.str_url for u in info.links] == [
        "http://h.example/dir/c1", "http://h.example/dir/c2", "http://h.example/dir/c3",
        "http://h.example/dir/after-script", "http://h.example/dir/z",
        "http://h.example/dir/page.html?a=1&b=2&not=3&copy2%3CAB%C3%A9", "http://h.example/dir/caf%C3%A9.html"]
    based = read_page(TRICKY[2], "http://h.example/dir/page.html", TOKEN)
    assert based.base_url == "http://h.example/docs/"
    assert [u.str_url for u in based.links] == ["http://h.example/docs/x.html", "http://h.example/docs/y.html"]


def test_real_pages_read_the_same_from_bytes(tmp_path):
    root = real_docs_root(tmp_path)
    pages = sorted(p for p in root.rglob("*.html") if p.is_file() and not p.is_symlink())
    assert len(pages) >= 8
    links = 0
    for path in pages:
        body = path.read_bytes()
        url = f"http://docs.example/{path.relative_to(root).as_posix()}"
        expected = reference_read_page(body.decode("utf-8", "replace"), url, TOKEN)
        _same(read_page(body, url, TOKEN), expected)
        links += len(expected.links)
    assert links > 10 * len(pages) // 2


def test_broken_utf8_reads_as_replacement_characters():
    body = b'<a href="x\xff\xfey.html"><a href="\xe2\x82z.html"><a href="ok\xc3\xa9.html">'
    url = "http://h.example/"
    _same(read_page(body, url, TOKEN), reference_read_page(body.decode("utf-8", "replace"), url, TOKEN))


def test_a_valid_utf8_body_comes_back_as_the_text_itself():
    origins = frozenset({"http://h.example:80"})
    html = '<p>grüße — ok</p><a href="/a">a</a>'
    reading = read_body(html.encode(), "text/html", "utf-8", "http://h.example/", TOKEN, origins)
    assert (reading.text, reading.text_is_body, reading.link_count) == (None, True, 1)
    plain = read_body("grüße".encode(), "text/plain", None, "http://h.example/t", TOKEN, origins)
    assert (plain.text, plain.text_is_body) == (None, True)
    # Not the body's bytes: a BOM, another encoding, broken sequences, a U+FFFD of its own.
    for body, charset, text in [(b"\xef\xbb\xbf<p>bom</p>", None, "<p>bom</p>"),
                                ("<p>é</p>".encode("cp1252"), "windows-1252", "<p>é</p>"),
                                (b"<p>a\xffb</p>", "utf-8", "<p>a\ufffdb</p>"),
                                ("<p>\ufffd</p>".encode(), "utf-8", "<p>\ufffd</p>")]:
        reading = read_body(body, "text/html", charset, "http://h.example/", TOKEN, origins)
        assert (reading.text, reading.text_is_body) == (text, False)


def test_text_as_utf8_bytes_is_stored_as_the_same_text(tmp_path):
    rows = []
    for name, text in [("str", "grüße — \U0001F600 a\x00b"), ("bytes", "grüße — \U0001F600 a\x00b".encode())]:
        conn = open_crawler_db(tmp_path / f"{name}.db")
        store = CrawlStore(conn)
        store.start_agent(uuid.uuid4(), "test", "ua")
        entry = LogEntry(url=parse_url("http://h.example/p"), crawl_type=CrawlType.file_crawl, time_started_unix=1,
                         time_taken_ms=2, exit_code=ExitCode.file_ingested,
                         requests=[], update_candidate=False)
        entry.file = FileRecord(None, parse_media_type("text/html; charset=utf-8"), 10, None, text=text)
        store.write_entry(entry)
        rows.append(conn.execute("SELECT text, typeof(text), length(text), hex(text) FROM file_text").fetchall())
        conn.close()
    assert rows[0] == rows[1]
    text, kind, length, _hex = rows[0][0]
    assert (text, kind, length) == ("grüße — \U0001F600 a\x00b", "text", 11)  # length() stops at the NUL
