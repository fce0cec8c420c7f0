"""URL traps: session-ID parameters stripped before URLs become candidates, and a
calendar that links ever forward capped per run. Sites on 127.0.0.1; exact rows."""

from __future__ import annotations

import sqlite3

import pytest

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.crawl.policy.traps import DEFAULT_SESSION_PARAMETERS, calendar_pattern, session_names, strip_session_ids
from textpile.errors import ConfigError
from textpile.store.urls import parse_url

from .crawlsite import Rows, config, write_config

HTML = {"Content-Type": "text/html; charset=utf-8"}
NAMES = session_names(DEFAULT_SESSION_PARAMETERS)


def strip(url: str, names=NAMES) -> str:
    return strip_session_ids(parse_url(url), names).str_url


def test_strip_session_ids():
    assert strip("http://h/shop;jsessionid=A1B2?item=1") == "http://h/shop?item=1"
    assert strip("http://h/a;JSESSIONID=x;v=2/b") == "http://h/a;v=2/b"
    assert strip("http://h/p?PHPSESSID=abc") == "http://h/p"
    assert strip("http://h/p?a=1&sid=9&b=2&SessionID=3") == "http://h/p?a=1&b=2"
    assert strip("http://h/p?osCsid=1&zenid=2&cfid=3&cftoken=4") == "http://h/p"
    assert strip("http://h/p?side=1&sidebar=2") == "http://h/p?side=1&sidebar=2"
    assert strip("http://h/p?sid=1", frozenset()) == "http://h/p?sid=1"
    assert strip("http://h/p?token=1&sid=2", frozenset({"token"})) == "http://h/p?sid=2"
    url = parse_url("http://h/plain?x=1")
    assert strip_session_ids(url, NAMES) is url


@pytest.mark.parametrize("url,pattern", [
    ("http://h/cal?month=2024-05", "http://h:80/cal?month=#-#"),
    ("http://h/events/2024/05/", "http://h:80/events/#/#/"),
    ("http://h/day?d=20240501", "http://h:80/day?d=#"),
    ("http://h/2024/05/my-post", "http://h:80/#/#/my-post"),
    ("http://h/item/1234", None),
    ("http://h/page/7", None),
    ("http://h/docs/3.11/library/os.html", None),
    ("http://h/day?d=20241301", None),
])
def test_calendar_pattern(url, pattern):
    assert calendar_pattern(parse_url(url)) == pattern


def test_trap_settings_are_checked(tmp_path):
    path = write_config(tmp_path, ["http://h/"], extra='session_parameters = ["a b"]')
    with pytest.raises(ConfigError, match=r"session_parameters\[0\]: found 'a b'; expected a parameter name"):
        load_config(path)
    path = write_config(tmp_path, ["http://h/"], extra="max_urls_per_pattern = -1")
    with pytest.raises(ConfigError, match="max_urls_per_pattern: found negative number -1"):
        load_config(path)
    cfg = load_config(write_config(tmp_path, ["http://h/?sid=3"], extra='session_parameters = ["Token"]'))
    assert cfg.session_names == frozenset({"token"}) and cfg.max_urls_per_pattern == 25


def month_after(year: int, month: int) -> tuple[int, int]:
    return (year + 1, 1) if month == 12 else (year, month + 1)


def calendar_routes() -> dict[str, Response]:
    routes = {}
    year, month = 2024, 1
    for _ in range(36):
        nxt = month_after(year, month)
        routes[f"/cal?month={year}-{month:02d}"] = Response(
            200, f'<p>{year}-{month:02d}</p><a href="/cal?month={nxt[0]}-{nxt[1]:02d}">next</a>', HTML)
        year, month = nxt
    return routes


POLICIES = """
max_urls_per_pattern = 5

[[url_query_paramters]]
if.url.path.equals = "/cal"
allow = ["month"]

[[url_query_paramters]]
if.url.path.equals = "/shop"
allow = ["item"]
"""


def test_session_ids_stripped_and_calendar_capped_per_run(tmp_path):
    routes = {
        "/robots.txt": Response(404, "", {}),
        "/": Response(200, '<a href="/shop;jsessionid=ABC123?item=1">a</a> <a href="/shop;jsessionid=DEF456?item=1">b</a>'
                           ' <a href="/about?PHPSESSID=f00">c</a> <a href="/about?sid=42">d</a>'
                           ' <a href="/cal?month=2024-01">calendar</a>', HTML),
        "/shop?item=1": Response(200, "<p>item one</p>", HTML),
        "/about": Response(200, "<p>about</p>", HTML),
        **calendar_routes(),
    }
    with SiteServer(routes) as site:
        cfg = config(tmp_path, [site.base_url + "/"], extra=POLICIES)
        db = tmp_path / "crawl.db"
        run_crawl(cfg, db, progress=False)
        first = Rows(db, {site.base_url: "S"}).log()
        run_crawl(cfg, db, progress=False)
    cap = ("URL trap: 5 URLs of the calendar-like pattern S/cal?month=#-# were crawled in this run "
           "(max_urls_per_pattern); due again in the next run")
    assert first == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        ("S/", 0, 20, None),
        ("S/shop?item=1", 0, 20, None),
        ("S/about", 0, 20, None),
        *[(f"S/cal?month=2024-{m:02d}", 0, 20, None) for m in range(1, 6)],
        ("S/cal?month=2024-06", 0, 173, cap),
    ]
    urls = [row[0] for row in sqlite3.connect(db).execute("SELECT str_url FROM url ORDER BY url_id")]
    assert not any("sessionid" in u.lower() or "sid=" in u.lower() for u in urls)
    # the next run: the capped month was left due, so it comes first, then four more
    rows = Rows(db, {site.base_url: "S"})
    second = rows.log()[len(first):]
    assert second == [
        ("S/robots.txt", 1, 44, "no robots.txt rules (4xx): everything allowed"),
        *[(f"S/cal?month=2024-{m:02d}", 0, 20, None) for m in range(6, 11)],
        ("S/cal?month=2024-11", 0, 173, cap),
    ]
    assert rows.candidates()["S/cal?month=2024-11"] == (None, False, False, None)
