"""Site discovery (atextcrawler-introduction.md: "external links contribute to the site
list"; "the start page is fetched and criteria are applied to its content to determine
whether the site is relevant"; site annotations, whose black- or whitelisting has
precedence over the relevance filter).

With ``discover_sites = true`` the crawl counts each crawled page's links to origins
outside the seeds (``textpile_site_link``). :func:`discovered_sites` lists those origins
with how many pages link to them; :func:`check_sites` fetches a discovered site's start
page politely (its robots.txt first, through the crawler's own fetcher and SSRF filter,
the crawl delay between the two requests) and judges it with
:func:`judge_start_page` (``textpile_site_check``). These fetches are not crawl log
entries: nothing outside the seeds is summarized or searchable. An origin becomes a seed
only when the configuration's ``allow_sites`` names it; ``deny_sites`` keeps it out of
the list's candidates and out of checks.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass

import httpx
from selectolax.lexbor import LexborHTMLParser

from textpile.crawl.fetcher.fetch import FetchLimits, exit_code_for_status, fetch
from textpile.crawl.fetcher.robots import ROBOTS_MAX_BYTES, RobotsRules, looks_like_html, user_agent_token
from textpile.crawl.parser.charset import decode_body
from textpile.crawl.policy.config import CrawlConfig
from textpile.enums import ExitCode
from textpile.store.mimetypes import HTML_TYPES, parse_media_type
from textpile.store.urls import parse_url


@dataclass(frozen=True)
class Check:
    """The verdict on a start page (a ``textpile_site_check`` row)."""

    checked_unix: int
    exit_code: int
    relevant: bool | None
    verdict: str


@dataclass(frozen=True)
class DiscoveredSite:
    """An origin outside the seeds that crawled pages link to: ``pages`` linking to it,
    ``links`` distinct URLs of it over those pages, ``annotation`` ``"allowed"``,
    ``"denied"`` or None (from the configuration), ``check`` the latest verdict or None."""

    str_origin: str
    pages: int
    links: int
    annotation: str | None
    check: Check | None


def origin_of(url: str) -> str:
    """The ``str_origin`` of ``url`` as the crawler stores it.

    Raises:
        UrlError: ``url`` is not an absolute URL.
    """
    return parse_url(url).str_origin


def annotation(config: CrawlConfig, str_origin: str) -> str | None:
    """``"denied"`` when ``deny_sites`` names the origin (deny wins), ``"allowed"`` when
    ``allow_sites`` does, else None."""
    if str_origin in {origin_of(u) for u in config.deny_sites}:
        return "denied"
    if str_origin in {origin_of(u) for u in config.allow_sites}:
        return "allowed"
    return None


def discovered_sites(conn: sqlite3.Connection, config: CrawlConfig, *, min_pages: int = 1) -> list[DiscoveredSite]:
    """The origins outside the seeds (and outside ``allow_sites``, which are seeds) that
    at least ``min_pages`` crawled pages link to, most linked first (then by links, then
    by origin), with their annotation and latest check."""
    seeds = {origin_of(s) for s in config.seeds}
    rows = conn.execute(
        """SELECT o.str_origin, count(DISTINCT l.from_url_id), sum(l.links),
                  c.checked_unix_utc, c.exit_code, c.relevant, c.verdict
           FROM textpile_site_link l JOIN origin o ON o.origin_id = l.to_origin_id
           LEFT JOIN textpile_site_check c ON c.origin_id = l.to_origin_id
           GROUP BY l.to_origin_id HAVING count(DISTINCT l.from_url_id) >= ?
           ORDER BY 2 DESC, 3 DESC, 1""", (min_pages,)).fetchall()
    out = []
    for origin, pages, links, checked, code, relevant, verdict in rows:
        if origin in seeds:
            continue
        check = None if checked is None else Check(checked, code, None if relevant is None else bool(relevant), verdict)
        out.append(DiscoveredSite(origin, pages, links, annotation(config, origin), check))
    return out


def judge_start_page(text: str, config: CrawlConfig) -> tuple[bool, str]:
    """Whether the start page ``text`` (HTML) meets the relevance criteria, and why.

    Criteria (all that are configured must hold): at least ``relevance_min_words``
    words of visible text; a language of ``relevance_languages`` in ``<html lang>``
    (primary subtag, any case; empty: any language); at least one of
    ``relevance_words`` in its text (case-insensitive; empty: no such requirement)."""
    tree = LexborHTMLParser(text)
    for node in tree.css("script, style, noscript, template"):
        node.decompose()
    body = tree.body or tree.root
    visible = body.text(separator=" ") if body is not None else ""
    words = visible.split()
    lang_node = tree.css_first("html")
    lang = ((lang_node.attributes.get("lang") if lang_node is not None else None) or "").strip()
    met, missed = [], []
    if len(words) >= config.relevance_min_words:
        met.append(f"{len(words)} words (at least {config.relevance_min_words})")
    else:
        missed.append(f"only {len(words)} words (at least {config.relevance_min_words} wanted)")
    if config.relevance_languages:
        primary = lang.split("-")[0].lower()
        wanted = ", ".join(config.relevance_languages)
        if primary and primary in {x.lower() for x in config.relevance_languages}:
            met.append(f"language {lang} (one of {wanted})")
        else:
            missed.append(f"language {lang or 'not declared'} (not one of {wanted})")
    if config.relevance_words:
        lowered = " ".join(words).lower()
        found = [w for w in config.relevance_words if w.lower() in lowered]
        if found:
            met.append("mentions " + ", ".join(found))
        else:
            missed.append("mentions none of " + ", ".join(config.relevance_words))
    relevant = not missed
    return relevant, ("relevant: " + "; ".join(met)) if relevant else ("not relevant: " + "; ".join(missed))


async def check_site(client: httpx.AsyncClient, str_origin: str, config: CrawlConfig,
                     limits: FetchLimits = FetchLimits()) -> Check:
    """Fetch ``str_origin``'s robots.txt, then (when it allows) its start page ``/``,
    waiting ``default_delay_ms`` (or robots.txt's Crawl-delay) between the two, and
    judge the page (:func:`judge_start_page`). Never raises for network trouble: the
    verdict says what went wrong."""
    token = user_agent_token(config.user_agent)
    start = parse_url("/", str_origin).str_url
    robots_url = parse_url("/robots.txt", str_origin).str_url
    answer = await fetch(client, robots_url, limits=limits, truncate_at=ROBOTS_MAX_BYTES)
    if answer.exit_code is not None or answer.status is None:
        rules = RobotsRules.unavailable()
    elif 200 <= answer.status < 300 and not looks_like_html(answer.headers.get("content-type"), answer.body or b""):
        rules = RobotsRules.parse(answer.body or b"", truncated=answer.truncated)
    elif 400 <= answer.status < 500 or 200 <= answer.status < 300:
        rules = RobotsRules.allow_all()
    else:
        rules = RobotsRules.unavailable()
    now = int(time.time())
    if not rules.can_fetch(start, token):
        return Check(now, int(ExitCode.blocked_by_robots_txt), None,
                     f"robots.txt of {str_origin} does not allow {token} to fetch {start} (or could not be read)")
    delay = rules.crawl_delay_s(token)
    await asyncio.sleep(delay if delay is not None else config.default_delay_ms / 1000.0)
    page = await fetch(client, start, limits=limits)
    now = int(time.time())
    if page.exit_code is not None:
        return Check(now, int(page.exit_code), None, f"{start}: {page.message or ExitCode(page.exit_code).name}")
    if not 200 <= (page.status or 0) < 300:
        where = page.headers.get("location")
        return Check(now, int(exit_code_for_status(page.status)), None,
                     f"{start} answered {page.status}" + (f" (to {where})" if where else ""))
    media = parse_media_type(page.headers.get("content-type"))
    if media.essence not in HTML_TYPES:
        return Check(now, int(ExitCode.file_of_unknown_type), None, f"{start} is {media.essence or 'untyped'}, not HTML")
    text = decode_body(page.body or b"", media.charset, is_html=True).text
    relevant, verdict = judge_start_page(text, config)
    return Check(now, int(ExitCode.file_ingested), relevant, verdict)


def record_check(conn: sqlite3.Connection, str_origin: str, check: Check) -> None:
    """Store ``check`` as the origin's ``textpile_site_check`` row (replacing an older one)."""
    url = parse_url("/", str_origin)
    with conn:
        origin_id = conn.execute("SELECT origin_id FROM origin WHERE str_origin = ?", (str_origin,)).fetchone()[0]
        row = conn.execute("SELECT url_id FROM url WHERE str_url = ?", (url.str_url,)).fetchone()
        if row is None:
            row = (conn.execute("INSERT INTO url(origin_id, path, query, username, password, str_url)"
                                " VALUES (?, ?, NULL, NULL, NULL, ?)", (origin_id, url.path, url.str_url)).lastrowid,)
        conn.execute("INSERT OR REPLACE INTO textpile_site_check(origin_id, start_url_id, checked_unix_utc, exit_code,"
                     " relevant, verdict) VALUES (?, ?, ?, ?, ?, ?)",
                     (origin_id, row[0], check.checked_unix, check.exit_code,
                      None if check.relevant is None else int(check.relevant), check.verdict))


async def check_sites(conn: sqlite3.Connection, origins: list[str], config: CrawlConfig, *,
                      transport: httpx.AsyncBaseTransport | None = None) -> list[Check]:
    """:func:`check_site` for each of ``origins`` in turn (one request at a time), each
    verdict stored (:func:`record_check`) as soon as it is known, so an interrupted check
    keeps what it judged. ``transport`` replaces textpile's SSRF-filtered transport (tests)."""
    from textpile.crawl.fetcher.ssrf import make_transport

    transport = transport or make_transport(allow_private_addresses=config.allow_private_addresses)
    headers = {"User-Agent": config.user_agent}
    checks = []
    async with httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False, headers=headers,
                                 timeout=httpx.Timeout(FetchLimits().deadline_s)) as client:
        for origin in origins:
            check = await check_site(client, origin, config)
            record_check(conn, origin, check)
            checks.append(check)
    return checks
