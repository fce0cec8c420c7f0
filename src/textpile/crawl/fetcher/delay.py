"""The crawl delay of one origin crawler.

Source: unobtanium-documentation.txt, page "Crawl Delay between Requests": the wait is
the longer of a minimum delay (robots.txt Crawl-delay capped at 2 minutes, else the
configured default) and a politeness delay (the last response time times
2**politeness). The politeness factor starts at 2 and steps down to 0; a 429 raises it by
1 and stops the stepping down for the rest of the run. Retry-After (RFC 9110 10.2.3) is
honoured, capped at :data:`MAX_RETRY_AFTER_S`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from textpile.crawl.fetcher.fetch import parse_http_date

#: The longest Retry-After honoured, in seconds (the same cap as Crawl-delay).
MAX_RETRY_AFTER_S = 120.0
#: delay-seconds of RFC 9110 10.2.3: ASCII digits only (``str.isdigit`` also accepts
#: ``²`` and other digits ``float`` cannot read).
_DELAY_SECONDS = re.compile(r"[0-9]+", re.ASCII)


def parse_retry_after(value: str | None, now_unix: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delay-seconds or an HTTP date), capped at
    :data:`MAX_RETRY_AFTER_S`; None when absent or unreadable (any value that is
    neither ASCII digits nor an HTTP date). A date in the past gives 0."""
    if value is None:
        return None
    value = value.strip()
    if _DELAY_SECONDS.fullmatch(value):
        return min(float(value), MAX_RETRY_AFTER_S)
    when = parse_http_date(value)
    if when is None:
        return None
    now = time.time() if now_unix is None else now_unix
    return min(max(when - now, 0.0), MAX_RETRY_AFTER_S)


@dataclass
class CrawlDelay:
    """Delay state of one origin. Times are ``time.monotonic()`` seconds.

    ``minimum_s`` is the minimum delay; :meth:`wait_s` says how long to wait before the
    next request may start, measured from the end of the previous answer (so that the
    server never sees two requests of this origin closer than the delay, whatever the
    connection set-up and transfer times).
    """

    minimum_s: float
    politeness: int = 2
    autodecrement: bool = True
    politeness_delay_s: float = 0.0
    last_answer_end: float | None = None
    not_before: float = field(default=0.0)

    def delay_s(self) -> float:
        """The current delay between request starts, in seconds."""
        return max(self.minimum_s, self.politeness_delay_s)

    def wait_s(self, now: float | None = None) -> float:
        """Seconds to sleep before the next request may start (0 when it may start now)."""
        now = time.monotonic() if now is None else now
        due = self.not_before
        if self.last_answer_end is not None:
            due = max(due, self.last_answer_end + self.delay_s())
        return max(0.0, due - now)

    def response_received(self, duration_s: float, *, rate_limited: bool = False,
                          retry_after_s: float | None = None, now: float | None = None) -> None:
        """Record that an answer (or a failure) just ended after ``duration_s`` seconds
        and adapt the politeness factor.

        The politeness delay becomes ``duration_s * 2**politeness`` with the factor as it
        is for this response; then the factor steps down by one (not below 0).

        ``rate_limited`` (a 429) raises the factor by 1 and stops the stepping down.
        ``retry_after_s`` pushes the next request at least that far from now.
        """
        now = time.monotonic() if now is None else now
        self.last_answer_end = now
        if rate_limited:
            self.politeness += 1
            self.autodecrement = False
        self.politeness_delay_s = max(0.0, duration_s) * (2 ** self.politeness)
        if not rate_limited and self.autodecrement and self.politeness > 0:
            self.politeness -= 1
        if retry_after_s is not None:
            self.not_before = max(self.not_before, now + retry_after_s)
