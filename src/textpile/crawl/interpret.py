"""Interpreting an answer: the crawl log entry of an HTTP answer (status, headers, body).

No HTTP client and no crawl loop: the answers come from the fetcher (the origin
crawler's requests) or from a web archive (``textpile import``), and both become the
same crawl log entries with the same data trees: exit code from the status, redirects,
text of HTML and plain text, meta robots and X-Robots-Tag, canonicals, meta refresh and
Refresh headers, links as candidates of the seed origins, sitemaps and feeds. Bodies are
read by the run's page readers (worker processes, :class:`~textpile.crawl.workers.readers.PageReader`).

Sources: unobtanium-documentation.txt, pages "Crawl Loop" (links, canonical, robots
directives, what is recorded), "Crawl exit code", "Crawl Data Tree";
dead-simple-search-how-it-works.txt, "Page dates" (a sitemap's lastmod before the
Last-Modified header).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

from textpile.crawl.crawldb.records import (Candidate, FileRecord, Listing, LogEntry, MetaCandidate, RedirectRecord,
                                            RequestRecord, SiteLinks)
from textpile.crawl.discovery.meta import MetaReading, maybe_meta
from textpile.crawl.discovery.sitemaps import MAX_SITEMAP_DEPTH
from textpile.crawl.fetcher.fetch import FetchResult, exit_code_for_status, parse_http_date
from textpile.crawl.fetcher.sniff import mislabeled_text_type
from textpile.crawl.parser.body import PageReading
from textpile.crawl.parser.charset import codec_for_label
from textpile.crawl.parser.headers import (header_canonical, header_feeds, header_refresh, parse_link_header,
                                           x_robots_tag)
from textpile.crawl.parser.packed import pack_links, unpack_links
from textpile.crawl.parser.page import unusable_reason
from textpile.crawl.parser.refresh import MAX_REDIRECT_DELAY_S
from textpile.crawl.policy.config import CrawlConfig
from textpile.crawl.policy.recrawl import RecrawlState, next_state, text_digest, verdict
from textpile.crawl.policy.traps import query_variant, strip_session_ids
from textpile.crawl.workers.readers import PageReader
from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.store.mimetypes import TEXT_TYPES, parse_media_type
from textpile.store.urls import ParsedUrl, UrlError, parse_url


@dataclass
class Interpreter:
    """Turns answers into crawl log entries for one crawl run or one archive import.

    ``config`` says whether sitemaps and feeds are read, whether links to other origins
    are recorded (``discover_sites``) and which session-ID parameters are stripped;
    ``token`` is the crawler's robots.txt token (for meta robots and X-Robots-Tag);
    ``seed_origins`` the ``str_origin`` values whose links become candidates; ``reader``
    reads the bodies off the event loop (started by the caller).
    """

    config: CrawlConfig
    token: str
    seed_origins: frozenset[str]
    reader: PageReader

    @functools.cached_property
    def session(self) -> frozenset[str]:
        """The session-ID parameter names stripped from every URL found (lower case)."""
        return self.config.session_names

    def clean(self, url: ParsedUrl | None) -> ParsedUrl | None:
        """``url`` without its session-ID parameters (:func:`textpile.crawl.policy.traps.strip_session_ids`)."""
        return None if url is None else strip_session_ids(url, self.session)

    def is_seed_origin(self, url: ParsedUrl) -> bool:
        """True when ``url`` is http(s) and shares its origin with a seed."""
        return url.scheme in ("http", "https") and url.str_origin in self.seed_origins

    async def interpret(self, url: ParsedUrl, results: list[FetchResult], candidate: Candidate | None = None,
                        origin: str = "") -> LogEntry:
        """The file crawl entry of ``url`` whose answers are ``results`` (in request order:
        a possible fluke's retry after the first; the last one decides), times left at 0
        for the caller to fill. ``candidate`` is the crawl candidate crawled (its sitemap
        date, its meta kind and depth), None when there is none (an archive's answer).
        ``origin`` is the page reader queue the body waits in (the origin crawler's
        ``str_origin``).

        A result with an ``exit_code`` (no answer, a body too large ...) is that exit
        code; a 3xx is a redirect, recorded and scheduled when its Location is a usable
        http(s) URL (else 42 did_not_understand_answer, or a redirect neither recorded
        nor followed when the target has credentials or is too long); a 2xx is read
        (:meth:`read_file`); every other status its exit code
        (:func:`~textpile.crawl.fetcher.fetch.exit_code_for_status`).

        Raises:
            what the page reader raises (``BrokenProcessPool`` when a worker died).
        """
        last = results[-1]
        entry = LogEntry(url=url, crawl_type=CrawlType.file_crawl, time_started_unix=0, time_taken_ms=0,
                         exit_code=ExitCode.unknown_error)
        entry.requests = [request_record(r, r.exit_code or exit_code_for_status(r.status)) for r in results]
        index = len(results) - 1
        if last.exit_code is not None:
            entry.exit_code = last.exit_code
            entry.message = last.message
            return entry
        code = exit_code_for_status(last.status)
        headers = last.headers
        modified = parse_http_date(headers.get("last-modified"))
        file_modified = None if modified is not None and modified == parse_http_date(headers.get("date")) else modified
        if code in (ExitCode.permanent_redirect, ExitCode.redirect):
            location = headers.get("location")
            target = None
            if location:
                try:
                    target = parse_url(location, url.str_url)
                except UrlError:
                    target = None
            reason = unusable_reason(target) if target is not None and target.scheme in ("http", "https") else None
            if target is None or target.scheme not in ("http", "https"):
                code = ExitCode.did_not_understand_answer
                entry.message = f"redirect without a usable http(s) Location: {location[:200]!r}"
            elif reason is not None:
                # Neither stored nor followed: credentials stay out of the database.
                entry.message = f"redirect target {reason}: not recorded, not followed"
            else:
                target = self.clean(target)
                entry.redirect = RedirectRecord(index, target, code == ExitCode.permanent_redirect, file_modified)
                if self.is_seed_origin(target):
                    entry.new_candidates.append(target)
        elif code == ExitCode.file_ingested:
            code = await self.read_file(url, last, entry, index, file_modified, candidate, origin)
        entry.exit_code = code
        entry.requests[-1].exit_code = code
        if entry.listing is None and (code.is_contentful or code == ExitCode.blocked_at_request_of_remote):
            # what the page leads to now (pruning's graph); a 304 or an error keeps the last
            entry.outlinks = entry.new_links
        if candidate is not None:
            entry.recrawl = self.recrawl_state(candidate, entry)
        return entry

    def recrawl_state(self, candidate: Candidate, entry: LogEntry) -> RecrawlState | None:
        """The recrawl history of ``candidate`` after its crawl ``entry``
        (:mod:`textpile.crawl.policy.recrawl`: a 304 or the same text lengthens its
        interval, another text shortens it), None when nothing about it changes."""
        text = entry.file.text if entry.file is not None else None
        digest = None if text is None else text_digest(text)
        unchanged = verdict(candidate.content_digest, entry.exit_code == ExitCode.file_did_not_change, digest)
        if unchanged is None and digest is None:
            return None
        previous = RecrawlState(candidate.recrawl_interval_s, candidate.content_digest, candidate.unchanged_answers)
        config = self.config
        return next_state(previous, unchanged, digest, config.recrawl_interval_s, config.recrawl_bounds_s)

    async def read_file(self, url: ParsedUrl, result: FetchResult, entry: LogEntry, index: int,
                        file_modified: int | None, candidate: Candidate | None = None, origin: str = "") -> ExitCode:
        """Read a 2xx answer into ``entry``: file and text rows, discovered candidates,
        noindex / canonical decisions. Returns the exit code. The body is decoded and
        read by the page reader (a worker process, in ``origin``'s queue), not on the
        event loop.

        A body labelled as text that is binary (:func:`~textpile.crawl.fetcher.sniff.mislabeled_text_type`,
        which looks at its first 1445 bytes only) is stored with its real media type and no
        text: 29 file_of_unknown_type, the message naming the label and the real type.

        A sitemap or feed (:mod:`textpile.crawl.discovery.meta`) is read for its URLs
        (:meth:`read_listing`). A file a sitemap dated (``candidate.sitemap_lastmod``) gets
        that date as its last modification, before the Last-Modified header
        (dead-simple-search "Page dates": the sitemap's lastmod, then the header).
        Feeds the page announces become feed candidates; its links to origins outside
        the seeds are recorded when site discovery is on."""
        config = self.config
        body = result.body or b""
        media_type = parse_media_type(result.headers.get("content-type"))
        directives = x_robots_tag(result.headers.get_list("x-robots-tag"), self.token)
        header_links = parse_link_header(result.headers.get_list("link"))
        reading = PageReading()
        entry.message = result.note
        if candidate is not None and candidate.sitemap_lastmod is not None:
            file_modified = candidate.sitemap_lastmod
        if media_type.essence in TEXT_TYPES:
            utf16 = (codec_for_label(media_type.charset) or "").startswith("utf-16")
            real_type = mislabeled_text_type(body, utf16_declared=utf16)
            if real_type is not None:
                entry.message = (f"labelled {media_type.essence}, but the content is {real_type} "
                                 "(binary bytes; WHATWG MIME sniffing)")
                media_type = parse_media_type(real_type)
        hint = candidate.meta_kind if candidate is not None else None
        if (config.sitemaps or config.feeds) and maybe_meta(body, media_type.essence, hint):
            meta = await self.reader.read_meta(body, url.str_url, hint, self.seed_origins, self.session,
                                               int(time.time()), origin)
            if meta is not None:
                depth = candidate.meta_depth if candidate is not None and candidate.meta_depth is not None else 0
                return self.read_listing(entry, FileRecord(index, media_type, len(body), file_modified),
                                         meta, depth, directives.nofollow)
        if media_type.essence in TEXT_TYPES:
            reading = await self.reader.read(body, media_type.essence, media_type.charset, url.str_url,
                                             self.token, self.seed_origins, origin, self.session)
            directives = directives | reading.robots
        variants = reading.variants_dropped
        header_canonical_url = self.clean(header_canonical(header_links, url.str_url))
        if reading.canonical is None and header_canonical_url is not None and header_canonical_url.str_url != url.str_url \
                and reading.links:
            # a Link header names the canonical: its query-string variants are not followed either
            rows = unpack_links(reading.links)
            kept = [parse_url(row[3]) for row in rows if not query_variant(parse_url(row[3]), header_canonical_url)]
            variants += len(rows) - len(kept)
            reading.links = pack_links(kept)
        if not directives.nofollow:
            entry.new_links = reading.links
            entry.chain_links, entry.anchored_links = reading.chain_links, reading.anchored_links
            if config.feeds:
                feeds = reading.feeds + [self.clean(f) for f in header_feeds(header_links, url.str_url)]
                entry.new_meta = [MetaCandidate(feed, "feed", "link") for feed in dict.fromkeys(feeds)
                                  if self.is_seed_origin(feed) and feed.str_url != url.str_url]
            if config.discover_sites and reading.other_origins:
                entry.site_links = SiteLinks(reading.other_origins)
        if directives.noindex:
            entry.message = "the page asked not to be indexed (noindex)"
            return ExitCode.blocked_at_request_of_remote
        refresh, source = header_refresh(result.headers.get("refresh"), url.str_url), InformationSource.response_header
        if refresh is not None and refresh[1] is not None:
            refresh = (refresh[0], self.clean(refresh[1]))
        if refresh is None:
            refresh, source = reading.refresh, InformationSource.file_body
        if refresh is not None and refresh[0] <= MAX_REDIRECT_DELAY_S and refresh[1] is not None \
                and refresh[1].str_url != url.str_url:
            # A client-side redirect to a stub page: recorded as a redirect (read from the
            # file's body, or from a Refresh header), not indexed; the target is
            # scheduled like a redirect's.
            delay, target = refresh
            permanent = delay == 0  # an instant refresh redirects for good, as search engines treat it
            entry.redirect = RedirectRecord(index, target, permanent, file_modified, information_source=source)
            what = "meta refresh" if source == InformationSource.file_body else "Refresh header"
            entry.message = f"{what} after {delay} s to {target.str_url}: a client-side redirect, not indexed"
            if self.is_seed_origin(target):
                entry.new_candidates.append(target)
            return ExitCode.permanent_redirect if permanent else ExitCode.redirect
        canonical = reading.canonical or header_canonical_url
        if canonical is not None and canonical.str_url != url.str_url:
            entry.message = f"canonical URL is {canonical.str_url}"
            if variants:
                entry.message += (f"; {_counted(variants, 'link', 'links')} to query-string variants of it "
                                  "not followed")
            if self.is_seed_origin(canonical):
                entry.new_candidates.append(canonical)
            # its body is discarded; the file row keeps what it was and the canonical it named
            entry.file = FileRecord(request_index=index, media_type=media_type, size=len(body),
                                    last_modified_unix=file_modified, canonical_url=canonical)
            return ExitCode.not_canonical
        text = body if reading.text_is_body else reading.text
        entry.file = FileRecord(request_index=index, media_type=media_type, size=len(body),
                                last_modified_unix=file_modified, canonical_url=canonical, text=text)
        return ExitCode.file_ingested if text is not None else ExitCode.file_of_unknown_type

    def read_listing(self, entry: LogEntry, file: FileRecord, meta: MetaReading, depth: int,
                     nofollow: bool) -> ExitCode:
        """Fill ``entry`` for a sitemap or feed ``meta`` read at sitemap index ``depth``:
        its file row without text, its listing (the listed URLs become candidates, a
        sitemap index's sitemaps become sitemap candidates one level deeper, up to
        :data:`~textpile.crawl.discovery.sitemaps.MAX_SITEMAP_DEPTH`) and a message counting what it
        listed. 20 file_ingested. Sitemaps while ``sitemaps`` is off, feeds while
        ``feeds`` is off, and any listing whose answer said nofollow list nothing."""
        config = self.config
        kind = "feed" if meta.kind == "feed" else "sitemap"
        label = {"sitemap": "sitemap", "sitemapindex": "sitemap index", "feed": "feed"}[meta.kind]
        entry.file = file
        notes = list(meta.notes)
        links, modified = meta.links, meta.modified
        if nofollow:
            links, modified = "", []
            notes.append("the answer said nofollow: its URLs are not followed")
        elif (kind == "sitemap" and not config.sitemaps) or (kind == "feed" and not config.feeds):
            links, modified = "", []
            notes.append(f"{kind}s are off (the {kind}s setting): its URLs are not followed")
        elif meta.kind == "sitemapindex":
            if depth + 1 > MAX_SITEMAP_DEPTH:
                notes.append(f"at sitemap index depth {depth}: its sitemaps (depth {depth + 1}) are beyond "
                             f"the depth of {MAX_SITEMAP_DEPTH} and not read")
                links, modified = "", []
            else:
                entry.new_meta = [MetaCandidate(parse_url(row[3]), "sitemap", "sitemap index", depth + 1)
                                  for row in unpack_links(links)]
        entry.listing = Listing(kind, links, modified, meta.lastmod_kept)
        parts = [f"{label}: {_counted(meta.listed, 'entry', 'entries')}, "
                 f"{_counted(meta.link_count, 'URL', 'URLs')} on seed origins"]
        if meta.off_seed:
            parts.append(f"{meta.off_seed} on other origins (not crawled)")
        if meta.unusable:
            parts.append(f"{meta.unusable} not usable as http(s) URLs")
        entry.message = "; ".join([", ".join(parts), *notes])
        return ExitCode.file_ingested


def request_record(result: FetchResult, code: ExitCode) -> RequestRecord:
    """The request row of ``result`` with exit code ``code``."""
    return RequestRecord(
        url=parse_url(result.url), time_sent_unix=int(result.time_sent),
        duration_ms=int(result.duration_s * 1000), exit_code=code,
        server_last_modified_unix=parse_http_date(result.headers.get("last-modified")),
        http_status=result.status, http_etag=result.headers.get("etag"),
    )


def _counted(count: int, one: str, many: str) -> str:
    """``"1 entry"``, ``"3 entries"``."""
    return f"{count} {one if count == 1 else many}"
