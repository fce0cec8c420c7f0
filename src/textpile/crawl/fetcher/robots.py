"""robots.txt rules of one origin: parsing with protego, RFC 9309 failure handling.

Sources: unobtanium-documentation.txt, page "Crawler User-Agent and robots.txt" (the
user-agent token is the user agent up to its first space, rules for ``*`` apply when
the crawler is not named, re-fetch every 30 minutes), page "Crawl Delay between
Requests" (Crawl-delay capped at 2 minutes); RFC 9309 section 2.3.1 (4xx: allow all;
5xx or unreachable: disallow all); dead-simple-search-how-it-works.txt, "robots.txt"
(the ``*`` and ``$`` wildcards, hence protego rather than urllib.robotparser);
RFC 9309 section 2.5 (parse at least the first 500 KiB).

:func:`robots_answer` says what the last answer of a robots.txt fetch means: the rules
in force until the next fetch, the crawl log entry's exit code and message.
"""

from __future__ import annotations

from dataclasses import dataclass

from protego import Protego

from textpile.crawl.fetcher.fetch import FetchResult, exit_code_for_status
from textpile.enums import ExitCode

#: Seconds after which robots.txt is fetched again (hard coded in the seed).
ROBOTS_EXPIRY_S = 30 * 60
#: How much of a robots.txt is read and parsed, in bytes (RFC 9309 2.5: at least 500
#: kibibytes; the rest is ignored).
ROBOTS_MAX_BYTES = 500 * 1024
#: The largest Crawl-delay honoured, in seconds (page "Crawl Delay between Requests").
MAX_CRAWL_DELAY_S = 120.0
#: The HTTP statuses of a redirect that a robots.txt fetch follows (RFC 9309 2.3.1.2).
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


def user_agent_token(user_agent: str) -> str:
    """The product token matched against robots.txt: ``user_agent`` up to its first space."""
    return user_agent.strip().split(" ", 1)[0]


@dataclass
class RobotsRules:
    """What one robots.txt allows. ``parser`` None means no rules (allow all) unless
    ``disallow_all`` is set (the file was unavailable: RFC 9309 "complete disallow")."""

    parser: Protego | None = None
    disallow_all: bool = False

    @classmethod
    def allow_all(cls) -> "RobotsRules":
        """Rules allowing everything (no robots.txt, a 4xx answer, an HTML page)."""
        return cls(None, False)

    @classmethod
    def unavailable(cls) -> "RobotsRules":
        """Rules disallowing everything (5xx answer or unreachable server)."""
        return cls(None, True)

    @classmethod
    def parse(cls, body: bytes, *, truncated: bool = False) -> "RobotsRules":
        """Parse a robots.txt body. It is decoded as UTF-8 (RFC 9309 2.3), a byte order
        mark removed first so that the first group keeps its ``User-agent`` line, bytes
        that are not UTF-8 replaced. ``truncated``: ``body`` is only the start of the
        file (see :data:`ROBOTS_MAX_BYTES`); it is cut after its last line break so that
        a half line never becomes a rule."""
        if truncated:
            end = max(body.rfind(b"\n"), body.rfind(b"\r"))
            body = body[: end + 1]
        text = body.decode("utf-8-sig", errors="replace")
        return cls(Protego.parse(text), False)

    def can_fetch(self, url: str, token: str) -> bool:
        """True when ``url`` (absolute) may be crawled by the crawler named ``token``."""
        if self.disallow_all:
            return False
        if self.parser is None:
            return True
        return bool(self.parser.can_fetch(url, token))

    def sitemaps(self) -> list[str]:
        """The values of the ``Sitemap:`` lines, as written (absolute or relative), in order."""
        return [] if self.parser is None else [str(line).strip() for line in self.parser.sitemaps if str(line).strip()]

    def names_sitemaps(self) -> bool:
        """True when robots.txt has any ``Sitemap:`` line (even one naming no usable URL:
        the site said where its sitemaps are, so the well-known places are not tried)."""
        return bool(self.sitemaps())

    def crawl_delay_s(self, token: str) -> float | None:
        """The Crawl-delay for ``token`` in seconds, capped at 2 minutes; None when absent."""
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(token)
        if delay is None:
            return None
        return min(float(delay), MAX_CRAWL_DELAY_S)


def looks_like_html(content_type: str | None, body: bytes) -> bool:
    """True for a robots.txt answer that is an HTML page (an error page served with 200,
    as Python's pydoc server does): declared text/html and starting with ``<``."""
    if not content_type or "html" not in content_type.lower():
        return False
    return body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


@dataclass(frozen=True)
class RobotsAnswer:
    """What a robots.txt fetch found: ``rules`` in force until the next fetch, the crawl
    log entry's ``exit_code`` and ``message`` (None: nothing to say), ``unavailable``
    when nothing is allowed until robots.txt is fetched again (which costs the origin
    one patience), and ``refused`` when the SSRF filter refused the origin's address
    (the origin stops instead)."""

    exit_code: ExitCode
    message: str | None
    rules: RobotsRules
    unavailable: bool = False
    refused: bool = False


def robots_answer(last: FetchResult, bad_target: str | None = None) -> RobotsAnswer:
    """What the last answer ``last`` of a robots.txt fetch means (RFC 9309 2.3.1):

    * ``bad_target`` (a message): a redirect led to a target that cannot be used (not a
      URL, not http(s), credentials in it): 42 did_not_understand_answer, unavailable;
    * no answer (``last.exit_code`` set: no connection, a timeout, a refused address):
      that exit code, unavailable (``refused`` when the SSRF filter refused the address);
    * 2xx: its rules (only the start of a truncated body, said in the message); an HTML
      page (:func:`looks_like_html`, an error page served with 200) is 29
      file_of_unknown_type and allows everything;
    * a redirect still (too many hops): everything allowed, as for 4xx;
    * 429 and 5xx: unavailable, nothing allowed for now;
    * other 4xx and anything else: everything allowed.
    """
    if bad_target is not None:
        return RobotsAnswer(ExitCode.did_not_understand_answer, bad_target, RobotsRules.unavailable(),
                            unavailable=True)
    if last.exit_code is not None:
        return RobotsAnswer(last.exit_code, last.message, RobotsRules.unavailable(), unavailable=True,
                            refused=bool(last.blocked_address))
    code = exit_code_for_status(last.status)
    status = last.status
    if 200 <= status < 300:
        body = last.body or b""
        if looks_like_html(last.headers.get("content-type"), body):
            return RobotsAnswer(ExitCode.file_of_unknown_type,
                                "robots.txt answered with an HTML page: no rules, everything allowed",
                                RobotsRules.allow_all())
        message = (f"robots.txt longer than {ROBOTS_MAX_BYTES} bytes: only its start was parsed"
                   if last.truncated else None)
        return RobotsAnswer(code, message, RobotsRules.parse(body, truncated=last.truncated))
    if status in REDIRECT_STATUSES:
        return RobotsAnswer(code, "robots.txt redirects too often or to nowhere: treated as unavailable (4xx), "
                                  "everything allowed", RobotsRules.allow_all())
    if status == 429 or status >= 500:
        return RobotsAnswer(code, "robots.txt unavailable: nothing allowed for now", RobotsRules.unavailable(),
                            unavailable=True)
    if 400 <= status < 500:
        return RobotsAnswer(code, "no robots.txt rules (4xx): everything allowed", RobotsRules.allow_all())
    return RobotsAnswer(code, "robots.txt answer not understood: everything allowed", RobotsRules.allow_all())
