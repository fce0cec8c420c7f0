"""Feeds (atextcrawler's feeds and feed crawls): RSS, Atom and JSON Feed found from
<link rel="alternate">, Link headers and sitemaps; their entries become candidates; a
feed is read again at its own, shorter interval and its new entries are crawled then.
Sites on 127.0.0.1; exact crawler database rows."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sites import Response, SiteServer
from textpile.crawl.discovery.feeds import FeedError, parse_feed
from textpile.crawl.discovery.meta import read_meta
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.parser.packed import unpack_links

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}
NOW = 1_750_000_000


def rss(*items: tuple[str, str]) -> str:
    entries = "".join(f"<item><title>{link}</title><link>{link}</link><pubDate>{date}</pubDate></item>"
                      for link, date in items)
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>{entries}</channel></rss>'


ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom news</title>
<entry><title>a</title><link rel="alternate" href="http://h/atom-a"/><updated>2024-05-01T10:00:00Z</updated></entry>
<entry><title>b</title><link href="/atom-b"/><published>2024-05-02T10:00:00Z</published></entry>
<entry><title>no link</title><id>urn:x</id></entry>
</feed>"""

JSON_FEED = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "JSON news", "items": [
    {"id": "1", "url": "http://h/json-1", "date_modified": "2024-05-03T00:00:00Z"},
    {"id": "2", "url": "http://h/json-2"}]})


def page(text: str, head: str = "") -> Response:
    return Response(200, f"<html><head><title>{text}</title>{head}</head><body><p>{text}</p></body></html>", HTML)


def test_parse_rss_atom_and_json_feed():
    feed = parse_feed(rss(("http://h/p1", "Wed, 01 May 2024 10:00:00 GMT"), ("http://h/p2", "")).encode(), NOW)
    assert (feed.title, feed.entries) == ("News", [("http://h/p1", 1714557600), ("http://h/p2", None)])
    atom = parse_feed(ATOM.encode(), NOW)
    assert atom.title == "Atom news"
    assert atom.entries[0] == ("http://h/atom-a", 1714557600)
    assert atom.entries[1][1] == 1714644000 and atom.entries[1][0].endswith("/atom-b")
    assert atom.notes == ["1 entry without a link"]
    assert parse_feed(JSON_FEED.encode(), NOW).entries == [("http://h/json-1", 1714694400), ("http://h/json-2", None)]
    with pytest.raises(FeedError):
        parse_feed(b"<html><body>no feed</body></html>", NOW)


def test_read_meta_reads_a_feed_served_as_text_plain():
    reading = read_meta(rss(("/p1", ""), ("http://elsewhere.example/x", "")).encode(), "http://h/feed",
                        None, frozenset({"http://h:80"}), frozenset(), NOW)
    assert reading.kind == "feed"
    assert [row[3] for row in unpack_links(reading.links)] == ["http://h/p1"]
    assert (reading.listed, reading.off_seed, reading.lastmod_kept) == (2, 1, None)


def test_feed_found_from_a_page_and_its_new_entry_crawled_on_the_next_feed_crawl(tmp_path):
    items = [("/post-1", "Wed, 01 May 2024 10:00:00 GMT"), ("/post-2", "Thu, 02 May 2024 10:00:00 GMT")]

    def feed(_req):
        return Response(200, rss(*items), {"Content-Type": "application/rss+xml"})

    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": page("home", '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
                          '<link rel="alternate" type="text/html" href="/not-a-feed">'),
        "/feed.xml": feed,
        "/atom": Response(200, ATOM.replace("http://h/atom-a", "/post-1"), {"Content-Type": "application/atom+xml"}),
        "/post-1": page("one"), "/post-2": page("two"), "/post-3": page("three"), "/atom-b": page("atom b"),
        "/linked": Response(200, "<p>linked</p>", {**HTML, "Link": '</atom>; rel="alternate"; type="application/atom+xml"'}),
    }
    routes["/"].body = routes["/"].body.replace("<p>home</p>", '<p>home</p><a href="/linked">l</a>')
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], recrawl="1 week", extra='feed_recrawl_interval = "1 hour"')
        db = tmp_path / "c.db"
        run_crawl(cfg, db, progress=False)
        first = Rows(db, {site.base_url: "S"}).log()
        items.append(("/post-3", "Fri, 03 May 2024 10:00:00 GMT"))
        run_crawl(cfg, db, progress=False)  # the feed is not due yet: nothing but robots.txt
        conn = sqlite3.connect(db)
        with conn:  # an hour and a bit later for the feeds, not for the pages
            conn.execute("UPDATE crawl_candidate SET last_crawl_time_unix_utc = last_crawl_time_unix_utc - 3700"
                         " WHERE url_id IN (SELECT url_id FROM textpile_meta_resource)")
        conn.close()
        run_crawl(cfg, db, progress=False)
    rows = Rows(db, {site.base_url: "S"})
    assert first == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/", 0, 20, None),
        ("S/feed.xml", 0, 20, "feed: 2 entries, 2 URLs on seed origins"),
        ("S/linked", 0, 20, None),
        ("S/atom", 0, 20, "feed: 2 entries, 2 URLs on seed origins; 1 entry without a link"),
        ("S/post-1", 0, 20, None),
        ("S/post-2", 0, 20, None),
        ("S/atom-b", 0, 20, None),
    ]
    assert rows.log()[len(first):] == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/feed.xml", 0, 20, "feed: 3 entries, 3 URLs on seed origins"),
        ("S/atom", 0, 20, "feed: 2 entries, 2 URLs on seed origins; 1 entry without a link"),
        ("S/post-3", 0, 20, None),
    ]
    assert rows.conn.execute("SELECT u.str_url, m.kind, m.found_via, m.entries, m.lastmod_kept"
                             " FROM textpile_meta_resource m JOIN url u USING(url_id) ORDER BY u.str_url").fetchall() == [
        (site.base_url + "/atom", "feed", "link", 2, 1), (site.base_url + "/feed.xml", "feed", "link", 3, 1)]
    assert rows.files()["S/feed.xml"][2] is None  # stored without text: not a page to search
