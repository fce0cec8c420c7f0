"""Patience: when an origin crawler gives up on its origin.

Source: unobtanium-documentation.txt, page "Crawl Loop" (patience: persisting trouble
makes the crawler give up on an origin; a database error at once; possible flukes are
retried in the same run). textpile judges the trouble by its rate, not by a count: an
origin gives up when :data:`GIVE_UP_FAILURES` of its last :data:`PATIENCE_WINDOW` crawls
failed, or, before it answered anything in this run, after :data:`FIRST_FAILURES`
failures (an origin that is down costs as few requests as before). A failure is a
robots.txt that could not be had, a 5xx answer, a possible fluke that failed its
immediate retry too, or an unforeseen error (-999); an answer (2xx, 3xx, 4xx) is a
success; a 429 is neither (the crawl delay slows down instead). A URL's failures count
once per run: the URLs that fail and are tried again later (:data:`RETRY_SPACING` other
candidates later) cannot make the origin give up while its other pages answer, so an
origin with some broken URLs among good ones crawls every good one (issue 33: 8 URLs
that reset the connection among 20 good ones used to exhaust the patience of 5 when
their retries came one after another at the end).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

#: Crawl outcomes of an origin that its give-up decision looks at (the latest ones).
PATIENCE_WINDOW = 10
#: Failures among the last PATIENCE_WINDOW outcomes that make the origin give up.
GIVE_UP_FAILURES = 9
#: Failures that make an origin give up before any success in this run.
FIRST_FAILURES = 5
#: Candidates crawled before a failed URL is tried again (the rest of the todo list when shorter).
RETRY_SPACING = 8


@dataclass
class Patience:
    """The patience of one origin crawler over one run (see the module doc)."""

    #: True for each failure, False for each success, the latest PATIENCE_WINDOW
    outcomes: deque = field(default_factory=lambda: deque(maxlen=PATIENCE_WINDOW))
    succeeded: bool = False
    failures: int = 0
    #: successes in this run (pruning's health: textpile.crawl.crawldb.prune)
    successes: int = 0
    #: url ids whose failure was counted in this run
    charged: set = field(default_factory=set)
    #: given up for good (a database error, a refused address)
    gone: bool = False

    def success(self) -> None:
        """The origin answered."""
        self.outcomes.append(False)
        self.succeeded = True
        self.successes += 1

    def failure(self, url_id: int | None = None) -> None:
        """A crawl of ``url_id`` failed (None: robots.txt could not be had, which counts
        each time); a URL already counted in this run does not count again."""
        if url_id is not None:
            if url_id in self.charged:
                return
            self.charged.add(url_id)
        self.outcomes.append(True)
        self.failures += 1

    def give_up(self) -> None:
        """Give up at once (a database error, an address the SSRF filter refused)."""
        self.gone = True

    @property
    def exhausted(self) -> bool:
        """True when the origin crawler gives up (see the module doc)."""
        if self.gone:
            return True
        if not self.succeeded:
            return self.failures >= FIRST_FAILURES
        return sum(self.outcomes) >= GIVE_UP_FAILURES
