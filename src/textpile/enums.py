"""Enumerations with fixed numbers, exactly as unobtanium-documentation.txt defines them.

Sources (seed unobtanium-documentation.txt): "Crawl exit code", "Crawl Log" (crawl types),
"Information Source", "Link destination type", "Link Locality". One exit code is
textpile's own, beside the seed's numbers: 182 ``pruned`` (dead-simple-search-how-it-works.txt,
"Indexing": after a complete and healthy crawl, pages that were not seen are deleted).
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Crawl exit codes (page "Crawl exit code"). Stored as the integer value."""

    database_error = -3
    cancelled = -2
    someone_stole_my_work = -1
    file_ingested = 20
    file_of_unknown_type = 29
    permanent_redirect = 31
    redirect = 32
    file_did_not_change = 34
    server_blamed_client = 40
    file_gone = 41
    did_not_understand_answer = 42
    file_not_found = 44
    rate_limited = 49
    server_internal_error = 50
    connection_failed = 100
    request_timeout = 101
    error_reading_response = 102
    blocked_by_robots_txt = 170
    blocked_at_request_of_remote = 171
    blocked_origin_by_local_policy = 172
    blocked_url_by_local_policy = 173
    blocked_by_challenge = 174
    not_canonical = 180
    duplicate = 181
    #: textpile's extension: no link, sitemap or feed reached the URL in a complete and
    #: healthy crawl of its origin (:mod:`textpile.crawl.crawldb.prune`); no request was
    #: sent. Summarizing closes its open generation, as 41 and 44 do.
    pruned = 182
    unknown_error = -999

    @property
    def is_contentful(self) -> bool:
        """True for the codes the seed calls contentful (the crawler learned something)."""
        return self in CONTENTFUL

    @property
    def could_be_fluke(self) -> bool:
        """True for the codes worth retrying once at once (section "Could be a Fluke")."""
        return self in FLUKES

    @classmethod
    def parse(cls, value: str | int) -> "ExitCode":
        """Return the exit code named by ``value``: its name (``file_ingested``) or number.

        Raises:
            ValueError: ``value`` names no exit code; the message lists the valid names.
        """
        text = str(value).strip()
        try:
            return cls(int(text))
        except ValueError:
            pass
        try:
            return cls[text.lower()]
        except KeyError:
            names = ", ".join(f"{c.name} ({c.value})" for c in cls)
            raise ValueError(f"unknown exit code {value!r}; expected one of: {names}") from None


CONTENTFUL = frozenset(
    {
        ExitCode.file_ingested,
        ExitCode.file_of_unknown_type,
        ExitCode.permanent_redirect,
        ExitCode.redirect,
        ExitCode.file_not_found,
        ExitCode.file_gone,
        ExitCode.not_canonical,
        ExitCode.duplicate,
    }
)

FLUKES = frozenset(
    {
        ExitCode.unknown_error,
        ExitCode.connection_failed,
        ExitCode.request_timeout,
        ExitCode.error_reading_response,
    }
)


class CrawlType(enum.IntEnum):
    """Crawl types (page "Crawl Log")."""

    file_crawl = 0
    robotstxt_fetch = 1
    metadata_crawl = 2


class InformationSource(enum.IntEnum):
    """Where a piece of information came from (page "Information Source")."""

    unknown = 0
    response_header = 1
    file_metadata = 2
    file_body = 3
    summary = 4


class LinkDestinationType(enum.IntEnum):
    """What to expect when following a link (page "Link destination type")."""

    file = 0
    document = 1
    feed = 2
    stylesheet = 3
    script = 4
    media = 100
    media_image = 101
    media_audio = 102
    media_video = 103
    communication = 1000


class LinkLocality(enum.IntEnum):
    """How far a link reaches (page "Link Locality")."""

    self_link = 0
    in_link = 1
    out_link = 2
