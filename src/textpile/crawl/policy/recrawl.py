"""Adaptive recrawl: each page's next visit comes from its own history.

Source: Apache Nutch's AdaptiveFetchSchedule (an unchanged page's fetch interval grows by
``db.fetch.schedule.adaptive.inc_rate``, 0.4, a changed page's shrinks by
``dec_rate``, 0.2, within a minimum and a maximum); StormCrawler's AdaptiveScheduler does
the same from a page's signature. Issue 33: a page that answered 304 ten times in a row
was fetched as often as one that changes on every visit.

An answer is *unchanged* when it is 304 (file_did_not_change, to a conditional request)
or its text is the text of the URL's previous stored answer (a self-duplicate: the same
XXH3-64 digest); *changed* when its text differs from that previous text. Anything else
(the first text of a URL, a redirect, an error) leaves the interval as it is. The
interval starts at the configuration's ``recrawl_interval`` and stays within
``min_recrawl_interval`` and ``max_recrawl_interval`` (:meth:`CrawlConfig.recrawl_bounds_s`);
the crawler database keeps it per URL (schemas/crawler/textpile_recrawl.sql) and a URL
is due when its own interval has passed since its last crawl. Feeds keep their
``feed_recrawl_interval``, and a URL a sitemap or feed lists as changed is due at once,
as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from xxhash import xxh3_64_intdigest

#: Growth of an unchanged page's interval (Nutch: db.fetch.schedule.adaptive.inc_rate).
INC_RATE = 0.4
#: Shrinking of a changed page's interval (Nutch: db.fetch.schedule.adaptive.dec_rate).
DEC_RATE = 0.2


@dataclass(frozen=True)
class RecrawlState:
    """What the crawler database keeps of a URL's recrawl history (textpile_recrawl):
    ``interval_s`` None for the configuration's recrawl_interval, ``content_digest`` of
    its last stored text (None without one), ``unchanged_answers`` in a row."""

    interval_s: int | None = None
    content_digest: int | None = None
    unchanged_answers: int = 0


def text_digest(text: str | bytes) -> int:
    """XXH3-64 of a stored text's UTF-8 as a signed 64-bit integer (as SQLite stores it)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    value = xxh3_64_intdigest(data)
    return value - (1 << 64) if value >> 63 else value


def next_state(previous: RecrawlState, unchanged: bool | None, digest: int | None, default_s: int,
               bounds_s: tuple[int, int]) -> RecrawlState:
    """The recrawl state after an answer: ``unchanged`` True (304, or a text whose
    ``digest`` equals the previous one), False (a text that differs), None (no verdict:
    the interval stays); ``digest`` the new text's (None: keep the previous one).
    ``default_s`` is the configuration's recrawl_interval, ``bounds_s`` its (min, max); a
    recrawl_interval of 0 (every URL due: ``--force-recrawl``) leaves the interval as it is."""
    interval = previous.interval_s
    streak = previous.unchanged_answers
    if unchanged is not None:
        streak = streak + 1 if unchanged else 0
    if unchanged is not None and default_s > 0:
        base = default_s if interval is None else interval
        grown = base * (1 + INC_RATE) if unchanged else base * (1 - DEC_RATE)
        low, high = bounds_s
        interval = int(min(high, max(low, round(grown))))
    return RecrawlState(interval, previous.content_digest if digest is None else digest, streak)


def verdict(previous_digest: int | None, not_modified: bool, digest: int | None) -> bool | None:
    """True (unchanged), False (changed) or None (no verdict) for an answer that was a 304
    (``not_modified``) or stored a text of ``digest`` (None: no text), against the
    URL's ``previous_digest``."""
    if not_modified:
        return True
    if digest is None or previous_digest is None:
        return None
    return digest == previous_digest
