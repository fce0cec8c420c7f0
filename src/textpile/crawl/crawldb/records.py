"""The records of a crawl: a crawl log entry with its data tree, and a due candidate.

Source: unobtanium-documentation.txt, pages "Crawler Database" (agent, crawl_log,
request, file, file_text, redirect, crawl_candidate) and "Crawl Data Tree" (a crawl log
entry owns its requests, files and redirects).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textpile.crawl.policy.recrawl import RecrawlState
from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.store.mimetypes import MediaType
from textpile.store.urls import ParsedUrl


@dataclass
class RequestRecord:
    """One request of a crawl log entry (a row of ``request``). Times: unix seconds."""

    url: ParsedUrl
    time_sent_unix: int
    duration_ms: int | None
    exit_code: ExitCode
    server_last_modified_unix: int | None = None
    http_status: int | None = None
    http_etag: str | None = None
    robotstxt_approved: bool = True


@dataclass
class FileRecord:
    """A fetched file (rows of ``file`` and, when ``text`` is set, ``file_text``);
    ``request_index`` points into the entry's requests; None for a file read from a
    dump (no request). ``text`` is a str, or bytes that are the text in UTF-8 (a body
    that is valid UTF-8 is stored as it came, never decoded and encoded again on its
    way through the crawl's processes); both give the same TEXT value."""

    request_index: int | None
    media_type: MediaType
    size: int | None
    last_modified_unix: int | None
    canonical_url: ParsedUrl | None = None
    text: str | bytes | None = None


@dataclass
class RedirectRecord:
    """A redirect (a row of ``redirect``): a redirect answer (information source
    response_header) or a meta refresh (file_body). ``request_index`` points into the
    entry's requests; None for a redirect read from a dump (no request)."""

    request_index: int | None
    to_url: ParsedUrl
    is_permanent: bool
    last_modified_unix: int | None = None
    information_source: InformationSource = InformationSource.response_header


@dataclass(frozen=True)
class MetaCandidate:
    """A sitemap or feed to crawl (a ``textpile_meta_resource`` row and a crawl
    candidate): ``kind`` ``"sitemap"`` or ``"feed"``, ``found_via`` one of the schema's
    values, ``depth`` the sitemap index levels above it."""

    url: ParsedUrl
    kind: str
    found_via: str
    depth: int = 0


@dataclass
class Listing:
    """What a crawled sitemap or feed listed: ``kind`` (``"sitemap"`` or ``"feed"``), the
    listed URLs packed (:mod:`textpile.crawl.parser.packed`) with ``modified`` their dates in the
    same order, ``lastmod_kept`` as the schema's column. The URLs become crawl candidates
    (a sitemap index lists sitemaps: those come as MetaCandidates too)."""

    kind: str
    links: str = ""
    modified: list[int | None] = field(default_factory=list)
    lastmod_kept: bool | None = None


@dataclass
class SiteLinks:
    """Links of a crawled page to origins outside the seeds (site discovery):
    ``str_origin`` -> distinct URLs of it linked."""

    origins: dict[str, int]


@dataclass
class LogEntry:
    """One crawl log entry with its data tree and the candidates it discovered.

    ``update_candidate``: update the crawled URL's crawl_candidate row (file crawls; not
    robots.txt fetches). ``new_candidates``: URLs to add as never-crawled candidates;
    ``new_links``: more of them, a page's links packed (:mod:`textpile.crawl.parser.packed`).
    ``new_meta``: sitemaps and feeds to register (and add as candidates); ``listing``:
    what the crawled URL listed when it is a sitemap or feed; ``site_links``: its links
    to origins outside the seeds (written with site discovery on). ``chain_links`` and
    ``anchored_links``: the keys of the page's links with digits of its own digit pattern
    and of another (the crawl loop's trap count, :mod:`textpile.crawl.policy.traps`; not written).
    ``recrawl``: the URL's recrawl history after this crawl (:mod:`textpile.crawl.policy.recrawl`).
    ``outlinks``: when not None, the page's links (packed, usually the same string as
    ``new_links``, which a big page's write may empty) replace what
    textpile_page_links keeps of it, with its ``new_candidates`` and ``new_meta``
    (:mod:`textpile.crawl.crawldb.prune`); None leaves them (a 304, an error).
    """

    url: ParsedUrl
    crawl_type: CrawlType
    time_started_unix: int
    time_taken_ms: int
    exit_code: ExitCode
    message: str | None = None
    requests: list[RequestRecord] = field(default_factory=list)
    file: FileRecord | None = None
    redirect: RedirectRecord | None = None
    update_candidate: bool = True
    new_candidates: list[ParsedUrl] = field(default_factory=list)
    new_links: str = ""
    new_meta: list[MetaCandidate] = field(default_factory=list)
    listing: Listing | None = None
    site_links: SiteLinks | None = None
    chain_links: tuple[int, ...] = ()
    anchored_links: tuple[int, ...] = ()
    #: the URL's recrawl history after this crawl, written to textpile_recrawl (None: unchanged)
    recrawl: RecrawlState | None = None
    outlinks: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A due crawl candidate: its url, and what a conditional request needs: the time and
    ETag of its last contentful crawl, and the Last-Modified header that crawl's answer
    gave (``server_last_modified_unix``, unix seconds; None when it gave none).
    ``meta_kind`` (``"sitemap"``, ``"feed"`` or None) and ``meta_depth`` say whether it
    is a known sitemap or feed; ``sitemap_lastmod`` is the latest ``<lastmod>`` a sitemap
    that kept its dates gave it (unix seconds; None without)."""

    url_id: int
    str_url: str
    last_contentful_crawl_time_unix: int | None
    last_contentful_http_etag: str | None
    server_last_modified_unix: int | None = None
    meta_kind: str | None = None
    meta_depth: int | None = None
    sitemap_lastmod: int | None = None
    #: its recrawl history (textpile_recrawl; :mod:`textpile.crawl.policy.recrawl`): its own
    #: interval (None: the configuration's), its last text's digest, unchanged answers in a row
    recrawl_interval_s: int | None = None
    content_digest: int | None = None
    unchanged_answers: int = 0
    #: whether the database keeps its links (textpile_page_links) or it is a sitemap or
    #: feed: without, it is requested without validators, so that its links are read
    links_known: bool = True
