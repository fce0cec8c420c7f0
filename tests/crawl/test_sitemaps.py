"""Sitemaps (dead-simple-search "Sitemap discovery"): robots.txt Sitemap: lines, the
well-known places, sitemap indexes, gzip by its magic bytes, caps, <lastmod> formats and
the build-stamp rule. Parsing tests on bytes; crawl tests on sites served on 127.0.0.1
with exact crawler database rows."""

from __future__ import annotations

import gzip
import sqlite3
import time

import pytest

from sites import Response, SiteServer
from textpile.crawl.discovery.meta import read_meta
from textpile.crawl.discovery.sitemaps import MAX_SITEMAP_URLS, SitemapError, parse_lastmod, parse_sitemap
from textpile.crawl.loop.run import run_crawl

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}
XML = {"Content-Type": "application/xml"}
NOW = 1_750_000_000  # 2025-06-15T15:06:40Z
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*entries: tuple[str, str | None]) -> str:
    items = "".join(f"<url><loc>{loc}</loc>" + (f"<lastmod>{mod}</lastmod>" if mod else "") + "</url>"
                    for loc, mod in entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{items}</urlset>'


def sitemapindex(*locs: str) -> str:
    items = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>{items}</sitemapindex>'


def page(text: str) -> Response:
    return Response(200, f"<html><head><title>{text}</title></head><body><p>{text}</p></body></html>", HTML)


@pytest.mark.parametrize("text,unix", [
    ("2024", 1704067200),
    ("2024-05", 1714521600),
    ("2024-05-01", 1714521600),
    ("2024-05-01T10:00+02:00", 1714550400),
    ("2024-05-01T10:00:00.5Z", 1714557600),
    ("2024-05-01 10:00:00", 1714557600),
    ("2024-05-01T10:00:00+0200", 1714550400),
    ("2024-05-01T10:00:00 UTC", 1714557600),
    ("Wed, 01 May 2024 10:00:00 GMT", 1714557600),
    (" 2024-05-01T10:00:00-05:00 ", 1714575600),
    ("1989-12-31", None),        # before 1990: doubtful
    ("2025-06-17", None),        # more than a day after NOW
    ("2024-13-01", None),
    ("yesterday", None),
    ("", None),
    (None, None),
])
def test_lastmod_in_its_real_world_formats(text, unix):
    assert parse_lastmod(text, NOW) == unix


def test_parse_urlset_index_and_text():
    sitemap = parse_sitemap(urlset(("/a", "2024-05-01"), ("http://h/b", None), ("http://h/c", "2024-05-02")).encode(),
                            NOW)
    assert (sitemap.kind, sitemap.entries, sitemap.dated, sitemap.lastmod_kept) == (
        "urlset", [("/a", 1714521600), ("http://h/b", None), ("http://h/c", 1714608000)], 2, True)
    index = parse_sitemap(sitemapindex("http://h/s1.xml", "http://h/s2.xml").encode(), NOW)
    assert (index.kind, index.entries) == ("sitemapindex", [("http://h/s1.xml", None), ("http://h/s2.xml", None)])
    # no namespace, odd spacing, a comment inside
    loose = parse_sitemap(b"<urlset><url><!-- x --><loc>\n  http://h/x \n</loc></url></urlset>", NOW)
    assert loose.entries == [("http://h/x", None)] and loose.lastmod_kept is None
    text = parse_sitemap(b"\xef\xbb\xbfhttp://h/1\r\n\r\nnot a url\nhttps://h/2\n", NOW, text_allowed=True)
    assert (text.kind, text.entries) == ("text", [("http://h/1", None), ("https://h/2", None)])
    with pytest.raises(SitemapError, match="not XML"):
        parse_sitemap(b"http://h/1\n", NOW)
    with pytest.raises(SitemapError, match=r"the root element is <html>, not <urlset> or <sitemapindex>"):
        parse_sitemap(b"<html><body>hi</body></html>", NOW)
    with pytest.raises(SitemapError, match="corrupt gzip data"):
        parse_sitemap(b"\x1f\x8b\x08\x00garbage", NOW)


def test_gzip_by_magic_bytes_entity_safety_and_caps():
    body = gzip.compress(urlset(("http://h/z", "2024-01-01"), ("http://h/y", "2024-01-02")).encode())
    assert parse_sitemap(body, NOW).entries == [("http://h/z", 1704067200), ("http://h/y", 1704153600)]
    # gzip that ends early: what was decoded is read, and said so
    cut = parse_sitemap(body[: len(body) - 12], NOW)
    assert cut.entries == [("http://h/z", 1704067200), ("http://h/y", 1704153600)]
    assert cut.notes[0].startswith("truncated gzip data: only the ")
    # one dated URL is a single value covering all dated URLs: discarded (the seed's rule)
    assert parse_sitemap(urlset(("http://h/z", "2024-01-01")).encode(), NOW).lastmod_kept is False
    # an entity bomb is not expanded, an external entity not fetched
    evil = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
            b'<!ENTITY e SYSTEM "file:///etc/passwd">]><urlset><url><loc>http://h/&b;&e;</loc></url></urlset>')
    assert all("aaaa" not in loc and "root:" not in loc for loc, _ in parse_sitemap(evil, NOW).entries)
    many = urlset(*[(f"http://h/{i}", None) for i in range(MAX_SITEMAP_URLS + 3)]).encode()
    capped = parse_sitemap(many, NOW)
    assert len(capped.entries) == MAX_SITEMAP_URLS
    assert capped.notes == [f"3 entries beyond the first {MAX_SITEMAP_URLS} not read"]


def test_build_stamp_dates_discarded():
    stamp = "2024-05-01T12:00:00Z"
    entries = [(f"http://h/{i}", stamp) for i in range(3)] + [("http://h/x", "2023-01-01"), ("http://h/y", None)]
    sitemap = parse_sitemap(urlset(*entries).encode(), NOW)
    assert sitemap.lastmod_kept is False
    assert sitemap.entries == [(loc, None) for loc, _ in entries]
    assert sitemap.discarded == ("3 of 4 dated entries share the lastmod 2024-05-01T12:00:00Z, a build stamp: "
                                 "dates discarded")
    # exactly half is not more than half: kept
    half = parse_sitemap(urlset(("http://h/1", stamp), ("http://h/2", stamp), ("http://h/3", "2024-01-01"),
                                ("http://h/4", "2024-01-02")).encode(), NOW)
    assert half.lastmod_kept is True and half.entries[0] == ("http://h/1", 1714564800)


def test_read_meta_resolves_and_keeps_seed_origins():
    origins = frozenset({"http://h:80", "http://other:80"})
    body = urlset(("/rel", "2024-05-01"), ("http://h/abs?sid=5", None), ("http://other/x", None),
                  ("https://elsewhere.example/y", None), ("mailto:a@b", None), ("http://h/rel#frag", "2024-05-03"))
    reading = read_meta(body.encode(), "http://h/maps/sitemap.xml", "sitemap", origins, frozenset({"sid"}), NOW)
    from textpile.crawl.parser.packed import unpack_links
    assert reading.kind == "sitemap"
    assert [row[3] for row in unpack_links(reading.links)] == ["http://h/rel", "http://h/abs", "http://other/x"]
    # the later of two dates for one URL wins
    assert reading.modified == [1714694400, None, None]
    assert (reading.listed, reading.off_seed, reading.unusable) == (6, 1, 1)
    assert read_meta(b"<html><p>hi</p></html>", "http://h/x", None, origins, frozenset(), NOW) is None


def test_page_only_in_a_robots_txt_sitemap_and_a_gzip_sitemap_named_xml(tmp_path):
    routes = {
        "/robots.txt": Response(200, "User-agent: *\nAllow: /\nSitemap: /maps/main.xml\n", {"Content-Type": "text/plain"}),
        "/": page("home"),
        "/maps/main.xml": Response(200, gzip.compress(urlset(("/hidden", "2024-05-01T10:00:00Z"),
                                                             ("/also", "2024-05-02")).encode()), XML),
        "/hidden": page("only in the sitemap"),
        "/also": page("also only in the sitemap"),
        "/sitemap.xml": page("never asked for: robots.txt names the sitemap"),
    }
    with SiteServer(routes) as site:
        run_crawl(config(tmp_path, [site.base_url + "/"], sitemaps=True), tmp_path / "c.db", progress=False)
        asked = [r.path for r in site.log]
    rows = Rows(tmp_path / "c.db", {site.base_url: "S"})
    assert rows.log() == [
        ("S/robots.txt", 1, 20, None),
        ("S/maps/main.xml", 0, 20, "sitemap: 2 entries, 2 URLs on seed origins"),
        ("S/", 0, 20, None),
        ("S/hidden", 0, 20, None),
        ("S/also", 0, 20, None),
    ]
    assert "/sitemap.xml" not in asked and "/sitemap_index.xml" not in asked
    conn = rows.conn
    assert conn.execute("SELECT u.str_url, m.kind, m.found_via, m.depth, m.entries, m.lastmod_kept"
                        " FROM textpile_meta_resource m JOIN url u USING(url_id)").fetchall() == [
        (site.base_url + "/maps/main.xml", "sitemap", "robots.txt", 0, 2, 1)]
    assert conn.execute("SELECT u.str_url, lu.modified_unix_utc FROM textpile_listed_url lu"
                        " JOIN url u USING(url_id) ORDER BY u.str_url").fetchall() == [
        (site.base_url + "/also", 1714608000), (site.base_url + "/hidden", 1714557600)]
    files = rows.files()
    # the sitemap is stored as a file without text; a page gets the sitemap's date
    assert files["S/maps/main.xml"][:3] == ("application/xml", len(routes["/maps/main.xml"].body), None)
    assert files["S/hidden"][4] == 1714557600 and files["S/also"][4] == 1714608000


def test_well_known_sitemaps_and_an_index_two_levels_deep(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": page("home"),
        "/sitemap.xml": Response(404, "", {}),
        "/sitemap_index.xml": Response(200, sitemapindex("/maps/level1.xml"), XML),
        "/maps/level1.xml": Response(200, sitemapindex("/maps/level2.xml", "http://elsewhere.invalid/s.xml"), XML),
        "/maps/level2.xml": Response(200, urlset(("/deep", None)), {"Content-Type": "text/xml"}),
        "/deep": page("two index levels down"),
    }
    with SiteServer(routes) as site:
        run_crawl(config(tmp_path, [site.base_url + "/"], sitemaps=True), tmp_path / "c.db", progress=False)
    rows = Rows(tmp_path / "c.db", {site.base_url: "S"})
    assert rows.log() == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/sitemap.xml", 0, 44, None),
        ("S/sitemap_index.xml", 0, 20, "sitemap index: 1 entry, 1 URL on seed origins"),
        ("S/", 0, 20, None),
        ("S/maps/level1.xml", 0, 20, "sitemap index: 2 entries, 1 URL on seed origins, 1 on other origins (not crawled)"),
        ("S/maps/level2.xml", 0, 20, "sitemap: 1 entry, 1 URL on seed origins"),
        ("S/deep", 0, 20, None),
    ]
    assert rows.conn.execute("SELECT u.str_url, m.kind, m.found_via, m.depth FROM textpile_meta_resource m"
                             " JOIN url u USING(url_id) ORDER BY m.depth, u.str_url").fetchall() == [
        (site.base_url + "/sitemap.xml", "sitemap", "well-known", 0),
        (site.base_url + "/sitemap_index.xml", "sitemap", "well-known", 0),
        (site.base_url + "/maps/level1.xml", "sitemap", "sitemap index", 1),
        (site.base_url + "/maps/level2.xml", "sitemap", "sitemap index", 2),
    ]
    urls = {r[0] for r in rows.conn.execute("SELECT str_url FROM url")}
    assert "http://elsewhere.invalid/s.xml" not in urls


def test_sitemap_index_depth_cap(tmp_path):
    routes = {"/robots.txt": Response(200, "Sitemap: /i0.xml\n", {"Content-Type": "text/plain"}), "/": page("home"),
              **{f"/i{n}.xml": Response(200, sitemapindex(f"/i{n + 1}.xml"), XML) for n in range(4)},
              "/i4.xml": Response(200, urlset(("/too-deep", None)), XML), "/too-deep": page("x")}
    with SiteServer(routes) as site:
        run_crawl(config(tmp_path, [site.base_url + "/"], sitemaps=True), tmp_path / "c.db", progress=False)
    log = Rows(tmp_path / "c.db", {site.base_url: "S"}).log()
    assert [row[0] for row in log] == ["S/robots.txt", "S/i0.xml", "S/", "S/i1.xml", "S/i2.xml", "S/i3.xml"]
    assert log[-1][3] == ("sitemap index: 1 entry, 1 URL on seed origins; at sitemap index depth 3: its sitemaps "
                          "(depth 4) are beyond the depth of 3 and not read")


def test_build_stamped_lastmods_discarded_in_the_crawl(tmp_path):
    stamp = "2024-05-01T12:00:00Z"
    routes = {"/robots.txt": Response(200, "Sitemap: /sitemap.xml\n", {"Content-Type": "text/plain"}),
              "/": page("home"),
              "/sitemap.xml": Response(200, urlset(("/a", stamp), ("/b", stamp), ("/c", "2023-03-01")), XML),
              "/a": page("a"), "/b": page("b"), "/c": page("c")}
    with SiteServer(routes) as site:
        run_crawl(config(tmp_path, [site.base_url + "/"], sitemaps=True), tmp_path / "c.db", progress=False)
    rows = Rows(tmp_path / "c.db", {site.base_url: "S"})
    assert rows.log()[1] == ("S/sitemap.xml", 0, 20, "sitemap: 3 entries, 3 URLs on seed origins; 2 of 3 dated "
                             "entries share the lastmod 2024-05-01T12:00:00Z, a build stamp: dates discarded")
    assert rows.conn.execute("SELECT entries, lastmod_kept FROM textpile_meta_resource").fetchall() == [(3, 0)]
    assert rows.conn.execute("SELECT count(*), count(modified_unix_utc) FROM textpile_listed_url").fetchone() == (3, 0)
    assert {url: f[4] for url, f in rows.files().items() if url in ("S/a", "S/b", "S/c")} == {
        "S/a": None, "S/b": None, "S/c": None}


def test_sitemap_lastmod_brings_a_changed_page_forward(tmp_path):
    """A page the sitemap dates after its last crawl is due again before its recrawl
    interval; one dated before it is not."""
    state = {"mod": "2024-01-01"}

    def sitemap(_req):
        return Response(200, urlset(("/news", state["mod"]), ("/old", "2024-01-01")), XML)

    routes = {"/robots.txt": Response(200, "Sitemap: /sitemap.xml\n", {"Content-Type": "text/plain"}),
              "/": page("home"), "/sitemap.xml": sitemap, "/news": page("news"), "/old": page("old")}
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], sitemaps=True, recrawl="1 week")
        db = tmp_path / "c.db"
        run_crawl(cfg, db, progress=False)
        state["mod"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
        # the sitemap itself is read again when its own interval passed: make it due
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("UPDATE crawl_candidate SET last_crawl_time_unix_utc = last_crawl_time_unix_utc - 8 * 86400"
                         " WHERE url_id = (SELECT url_id FROM url WHERE str_url = ?)", (site.base_url + "/sitemap.xml",))
        conn.close()
        run_crawl(cfg, db, progress=False)
        run_crawl(cfg, db, progress=False)
    log = Rows(db, {site.base_url: "S"}).log()
    assert [row[0] for row in log] == ["S/robots.txt", "S/sitemap.xml", "S/", "S/news", "S/old",
                                       "S/robots.txt", "S/sitemap.xml", "S/news",
                                       "S/robots.txt"]
    assert sqlite3.connect(db).execute("SELECT count(*) FROM textpile_listed_change").fetchone() == (0,)
