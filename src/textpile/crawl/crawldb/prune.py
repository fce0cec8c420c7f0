"""Pruning: the pages a site no longer leads to leave the index after a complete, healthy crawl.

Source: dead-simple-search-how-it-works.txt, "Indexing": "After a complete and healthy
crawl, pages that were not seen are deleted — this is how pages removed from your site
leave the index. Pruning is skipped if the crawl hit its page cap or looked unhealthy,
so an outage cannot empty a working index." textpile keeps the crawl log (append only,
unobtanium's "Crawl Log"): a pruned URL gets a crawl log entry with textpile's exit code
182 ``pruned`` (no request sent), which summarizing treats as 41 and 44 are treated: its
open entity generation is closed (:mod:`textpile.summarize.events`). Its crawl candidate
row, recrawl history and kept links are deleted, so it is not crawled again until a link,
sitemap or feed names it again (then it is a new candidate, crawled without validators).

**Seen** (reached): textpile crawls incrementally (pages not due are not fetched, and an
unchanged page answers 304 without its links), so what a crawl run saw is the closure of
the site's links as the database knows them at the end of the run: from the roots (the
configuration's seeds, every sitemap and feed, and every URL a sitemap or feed lists),
through the links each page gave on its latest answer that said something about it
(``textpile_page_links``: a contentful crawl or a noindex page; its links unless nofollow,
and its redirect, refresh or canonical target and feeds). A 304, an error or a page not due
keeps the links of its last reading, so an outage never takes links away.

**Complete** crawl of an origin (all of): its origin crawler finished because no due
candidate was left (its frontier exhausted), not out of patience, not refused, not stopped
by a database error; the run was not interrupted (Ctrl+C, SIGTERM, a kill: a killed run never
reaches this step) and never ran out of ``max_commands_per_run`` (a budget cut); and the
links of every page reached are known (a page crawled before textpile kept links has none
until its next crawl, which sends no validators so that its links are read).

**Healthy** (all of): robots.txt was available when the origin finished (a robots.txt
that could not be had makes the crawl of everything else doubtful), and at most
:data:`MAX_FAILURES_PER_SUCCESS` x its successful crawls failed in this run (5xx answers,
possible flukes that failed their retry, unforeseen errors: :mod:`textpile.crawl.loop.patience`).
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textpile.crawl.crawldb.records import LogEntry
from textpile.crawl.parser.packed import unpack_links
from textpile.enums import CrawlType, ExitCode
from textpile.store.urls import parse_url

if TYPE_CHECKING:
    from textpile.crawl.crawldb.sql import CrawlStore

#: Failures per successful crawl of an origin in one run above which it is not healthy
#: (one in a hundred: one broken page among many does not stop pruning; an outage does).
MAX_FAILURES_PER_SUCCESS = 0.01
#: zlib level of the kept links (fast; links compress about 10 to 1 at any level).
_ZLIB_LEVEL = 1


def pack_outlinks(entry: LogEntry) -> bytes:
    """The ``textpile_page_links.links`` value of ``entry`` (its ``outlinks`` must not be
    None): the str_url of each link of ``entry.outlinks``, then of its ``new_candidates``
    and ``new_meta``, without repeats, one per line, UTF-8, zlib-compressed."""
    urls = [row[3] for row in unpack_links(entry.outlinks or "")]
    urls += [url.str_url for url in entry.new_candidates]
    urls += [meta.url.str_url for meta in entry.new_meta]
    return zlib.compress("\n".join(dict.fromkeys(urls)).encode("utf-8"), _ZLIB_LEVEL)


def unpack_outlinks(blob: bytes) -> list[str]:
    """The str_url values :func:`pack_outlinks` packed into ``blob`` (empty: none).

    Raises:
        zlib.error: ``blob`` is not a zlib stream.
    """
    text = zlib.decompress(blob).decode("utf-8")
    return text.split("\n") if text else []


@dataclass
class OriginOutcome:
    """How one origin's crawl ended in a run, as pruning judges it (see the module doc).

    ``ended``: ``"finished"`` (no due candidate left), ``"out_of_commands"``,
    ``"out_of_patience"``, ``"refused"``, ``"database_error"`` or ``"interrupted"``;
    ``failures`` and ``successes``: its crawls that failed and succeeded in the run
    (robots.txt fetches included); ``robots_available``: robots.txt could be had when it
    ended."""

    ended: str
    failures: int = 0
    successes: int = 0
    robots_available: bool = True

    def not_complete_or_healthy(self, *, interrupted: bool, out_of_commands: bool, failed: bool) -> str | None:
        """Why this origin's crawl is not complete and healthy (a sentence), or None when
        it is. ``interrupted``, ``out_of_commands`` and ``failed`` (a database error) say
        so of the whole run."""
        if interrupted or self.ended == "interrupted":
            return "the crawl was interrupted"
        if failed or self.ended == "database_error":
            return "the crawl stopped on a database error"
        if out_of_commands or self.ended == "out_of_commands":
            return "the crawl ran out of crawl commands (max_commands_per_run)"
        if self.ended != "finished":
            return {"out_of_patience": "the crawl ran out of patience with the origin",
                    "refused": "the origin's address was refused"}.get(self.ended, f"the crawl ended: {self.ended}")
        if not self.robots_available:
            return "robots.txt could not be had"
        if self.failures > self.successes * MAX_FAILURES_PER_SUCCESS:
            return (f"{self.failures} of its {self.failures + self.successes} crawls failed "
                    f"(more than {MAX_FAILURES_PER_SUCCESS:.0%})")
        return None


@dataclass
class PruneResult:
    """What :func:`prune_origin` did: ``pruned`` lists the URLs pruned (str_url, in
    url_id order); ``skipped`` says why none was looked at (None when they were)."""

    pruned: list[str]
    skipped: str | None = None


def reached_urls(store: CrawlStore, seeds: list[str]) -> tuple[set[str], list[str]]:
    """The URLs the crawler database reaches (see the module doc, "Seen"), from ``seeds``
    (str_url) and every sitemap and feed and what they list, over every page's kept
    links; and the reached URLs that had a contentful crawl and whose links are not kept
    (not known: they make pruning wait)."""
    conn = store.conn
    links = dict(conn.execute("SELECT u.str_url, p.links FROM textpile_page_links p JOIN url u USING (url_id)"))
    todo = list(dict.fromkeys(seeds))
    todo += [u for (u,) in conn.execute(
        "SELECT u.str_url FROM url u WHERE u.url_id IN (SELECT url_id FROM textpile_meta_resource"
        " UNION SELECT url_id FROM textpile_listed_url)")]
    reached = set(todo)
    while todo:
        blob = links.get(todo.pop())
        if blob is None:
            continue
        for url in unpack_outlinks(blob):
            if url not in reached:
                reached.add(url)
                todo.append(url)
    unknown = [u for (u,) in conn.execute(
        "SELECT u.str_url FROM crawl_candidate c JOIN url u USING (url_id)"
        " WHERE c.last_contentful_crawl_time_unix_utc IS NOT NULL"
        " AND c.url_id NOT IN (SELECT url_id FROM textpile_page_links)"
        " AND c.url_id NOT IN (SELECT url_id FROM textpile_meta_resource)")
        if u in reached]
    return reached, unknown


def prune_origin(store: CrawlStore, str_origin: str, seeds: list[str], agent_uuid_hex: str,
                 reached: tuple[set[str], list[str]] | None = None) -> PruneResult:
    """Prune the crawl candidates of ``str_origin`` that the database no longer reaches
    (:func:`reached_urls` from ``seeds``, or ``reached``, what it gave: a run pruning
    several origins finds them once, as pruning an origin leaves what is reached as it
    was: the links it deletes are of pages nothing reaches) after a complete and healthy crawl of it: each
    gets a crawl log entry 182 ``pruned`` (file crawl, no request, a message naming the
    run ``agent_uuid_hex``) and loses its crawl_candidate, textpile_recrawl,
    textpile_page_links and textpile_listed_change rows, in one transaction. Only URLs
    that had a contentful crawl are pruned (one never fetched, or only blocked, has
    nothing in the index); sitemaps and feeds never are. Nothing is pruned while a reached page's links are not known
    (``skipped`` says how many).

    Raises:
        sqlite3.Error: the database refused it (nothing of it is kept).
    """
    reached, unknown = reached if reached is not None else reached_urls(store, seeds)
    if unknown:
        return PruneResult([], f"the links of {len(unknown)} page(s) are not known yet (crawled before textpile "
                               f"kept them, for example {unknown[0]}); they are read at their next crawl")
    rows = store.conn.execute(
        "SELECT c.url_id, u.str_url FROM crawl_candidate c JOIN url u USING (url_id)"
        " JOIN origin o ON o.origin_id = u.origin_id WHERE o.str_origin = ?"
        " AND c.last_contentful_crawl_time_unix_utc IS NOT NULL"
        " AND c.url_id NOT IN (SELECT url_id FROM textpile_meta_resource) ORDER BY c.url_id", (str_origin,)).fetchall()
    gone = [(url_id, str_url) for url_id, str_url in rows if str_url not in reached]
    if not gone:
        return PruneResult([])
    now = int(time.time())
    message = (f"pruned: no link, sitemap or feed reached it in the complete and healthy crawl run "
               f"{agent_uuid_hex} of {str_origin}")
    entries = [LogEntry(url=parse_url(str_url), crawl_type=CrawlType.file_crawl, time_started_unix=now,
                        time_taken_ms=0, exit_code=ExitCode.pruned, message=message, update_candidate=False)
               for _, str_url in gone]
    store.write_pruned(entries, [url_id for url_id, _ in gone])
    return PruneResult([str_url for _, str_url in gone])
