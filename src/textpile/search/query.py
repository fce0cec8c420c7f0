"""textpile's query language: parsing what a person typed into a safe query plan.

Source: unobtanium's query language (unobtanium-documentation.txt, viewer) as issue 4
specifies it, plus Dead Simple Search's any-term fallback
(dead-simple-search-how-it-works.txt, "The search process").

Syntax:

* words are all required (AND);
* ``"quoted text"`` is a phrase; quote pairs are ``"…"``, ``»…«`` and ``«…»``; inside
  quotes a backslash escapes the closing quote or a backslash. A quote opens a phrase
  only at the start of a word (after whitespace or at the start) and closes it only
  where it is not followed by a letter or digit; otherwise it is an ordinary character;
  an opening quote without a closing one is an ordinary character too;
* ``-"phrase"`` excludes pages holding the phrase; a bare ``-word`` is *not* an
  exclusion: it stays a required word (a pasted error message keeps all its words);
* ``site:example.org`` (that domain and its subdomains; an IP address or a value
  without a dot matches only that host, see :func:`matches_subdomains`), ``host:www.example.org``
  (exactly that host), either with a path prefix (``site:example.org/docs``: only URLs whose
  path starts with ``/docs``), ``lang:en`` (``primary_language`` en or en-*), each negatable
  with a leading ``-``;
* ``after:2024-01`` and ``before:2025`` (a year, ``YYYY-MM`` or ``YYYY-MM-DD``, UTC): only
  pages whose own date (:func:`textpile.search.filters.page_date_sql`) is on or after the
  start of that period, or before its start; a page without a date passes neither;
* ``sort:date`` lists the pages newest first by their own date (undated last),
  ``sort:relevance`` is the default order (:data:`SORTS`);
* ``OR`` (upper case) between two words or phrases makes them alternatives.

Any input is a valid query. Line breaks and tabs become spaces, other control characters,
NUL bytes and lone surrogates are dropped; the query is cut to :data:`MAX_QUERY_CHARS` characters and
:data:`MAX_TERMS` items, with a message saying so.
"""

from __future__ import annotations

import calendar
import datetime as dt
import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field

MAX_QUERY_CHARS = 1000
MAX_TERMS = 64

QUOTE_PAIRS = {'"': '"', "»": "«", "«": "»"}
FILTER_KINDS = ("site", "host", "lang", "after", "before")
#: The result orders (``sort:``): by the rerank's score, the default, or by page date.
SORTS = ("relevance", "date")
#: A date as ``after:``/``before:`` take it: a year, a month or a day.
_DATE_VALUE = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")


@dataclass(frozen=True)
class Term:
    """A word (``phrase=False``) or a quoted phrase, as typed (escapes resolved)."""

    text: str
    phrase: bool = False


@dataclass(frozen=True)
class Filter:
    """A ``site:``, ``host:`` or ``lang:`` filter; ``value`` is normalized lower case.
    ``path`` (``site:`` and ``host:`` only) is the path prefix written after the host
    (``site:example.org/docs`` -> ``/docs``; None when there is none): only URLs whose
    path starts with it pass (case-sensitive, as paths are; compared with the stored,
    percent-encoded path)."""

    kind: str
    value: str
    negated: bool = False
    path: str | None = None


@dataclass
class ParsedQuery:
    """The parse of a query.

    ``groups`` are the required items: each group is a list of alternatives (more than
    one when joined with ``OR``); ``excluded`` are the ``-"phrase"`` items; ``filters``
    the site/host/lang/after/before filters; ``sort`` the order ``sort:`` asked for (one
    of :data:`SORTS`, None when the query names none); ``messages`` explain anything
    dropped or cut.
    """

    groups: list[list[Term]] = field(default_factory=list)
    excluded: list[Term] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    sort: str | None = None

    @property
    def positive_terms(self) -> list[Term]:
        """Every required or alternative term, flattened in order."""
        return [t for g in self.groups for t in g]

    def is_empty(self) -> bool:
        """True when there is nothing to search for and nothing to filter by."""
        return not self.groups and not self.excluded and not self.filters


def clean_text(raw: str) -> str:
    """Return ``raw`` with line and paragraph breaks, tabs and the other whitespace control
    characters made spaces, and the other control characters (NUL, ``\x01`` ...) and lone
    surrogates dropped: a stray one inside a word (``vac\x01uum``) leaves the word whole."""
    out = []
    for ch in raw:
        cat = unicodedata.category(ch)
        if cat in ("Zl", "Zp") or (cat == "Cc" and ch.isspace()):
            out.append(" ")
        elif cat not in ("Cc", "Cs"):
            out.append(ch)
    return "".join(out)


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in ("L", "N")


def _read_phrase(text: str, start: int) -> tuple[str, int] | None:
    """Read a quoted phrase whose opening quote is at ``start``.

    Returns (content, index after the closing quote), or None when it never closes.
    """
    closer = QUOTE_PAIRS[text[start]]
    i = start + 1
    buf: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and (text[i + 1] in QUOTE_PAIRS.values() or text[i + 1] in QUOTE_PAIRS or text[i + 1] == "\\"):
            buf.append(text[i + 1])
            i += 2
            continue
        if ch == closer and (i + 1 == len(text) or not _is_word_char(text[i + 1])):
            return "".join(buf), i + 1
        buf.append(ch)
        i += 1
    return None


def _filter_path(value: str) -> str | None:
    """The path prefix of a ``site:``/``host:`` value (``example.org/docs/`` -> ``/docs/``),
    without a query or fragment; None when the value names no path (or only ``/``)."""
    value = value.strip()
    if "://" in value:
        value = value.split("://", 1)[1]
    _, slash, rest = value.partition("/")
    path = "/" + rest.split("?", 1)[0].split("#", 1)[0] if slash else ""
    return path if len(path) > 1 else None


def date_start(value: str) -> int | None:
    """The start of the period ``value`` names (``2024``, ``2024-03``, ``2024-03-15``), as
    unix seconds UTC; None when ``value`` is no such date (month 13, day 31 of April)."""
    m = _DATE_VALUE.fullmatch(value)
    if m is None:
        return None
    year, month, day = int(m[1]), int(m[2] or 1), int(m[3] or 1)
    try:
        return calendar.timegm(dt.date(year, month, day).timetuple())
    except ValueError:
        return None


def _normalize_filter_value(kind: str, value: str) -> str | None:
    """Normalize a filter value: hosts lower case and punycode, languages lower case,
    dates as written (None when not a date: :func:`date_start`)."""
    value = value.strip().lower()
    if kind == "lang":
        return value or None
    if kind in ("after", "before"):
        return value if date_start(value) is not None else None
    if "://" in value:
        value = value.split("://", 1)[1]
    value = value.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in value:
        value = value.rsplit("@", 1)[1]
    if value.startswith("[") and "]" in value:
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    value = value.strip(".")
    if not value:
        return None
    if not value.isascii():
        try:
            value = value.encode("idna").decode("ascii")
        except UnicodeError:
            return value  # cannot be a stored host; matches nothing, which is the truth
    return value


def matches_subdomains(site: str) -> bool:
    """True when ``site:`` value ``site`` (normalized, see :class:`Filter`) also matches
    subdomains: a domain name with at least one dot whose last label is not all digits.

    An IP address (v4 or v6), a purely numeric value (``1``, ``0.0.1``) or a single
    label (``localhost``) matches only the host that equals it, so ``site:0.0.1`` never
    matches ``127.0.0.1`` by suffix.
    """
    try:
        ipaddress.ip_address(site)
    except ValueError:
        pass
    else:
        return False
    if "." not in site or ":" in site:
        return False
    return not site.rsplit(".", 1)[1].isdigit()


def _split_items(text: str) -> list[tuple[str, str, bool]]:
    """Split cleaned text into (kind, text, negated) items; kind is word or phrase."""
    return [item[:3] for item in _items_with_spans(text)]


def with_words_replaced(raw: str, replacements: dict[str, str]) -> str:
    """The query ``raw`` (cleaned, :func:`clean_text`) with each word written outside quotes
    that is a key of ``replacements`` (as typed) replaced by its value; its phrases,
    filters, exclusions and every other word kept as written ("did you mean" corrects the
    words of a query, not the rest of it)."""
    text = clean_text(raw)
    out, last = [], 0
    for kind, content, _negated, start, end in _items_with_spans(text):
        if kind == "word" and content in replacements:
            out.append(text[last:start] + replacements[content])
            last = end
    return "".join(out) + text[last:]


def _items_with_spans(text: str) -> list[tuple[str, str, bool, int, int]]:
    """:func:`_split_items`'s items, each with its start and end in ``text``."""
    items: list[tuple[str, str, bool, int, int]] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        negated = False
        j = i
        if text[j] == "-" and j + 1 < n and text[j + 1] in QUOTE_PAIRS:
            negated = True
            j += 1
        if text[j] in QUOTE_PAIRS:
            got = _read_phrase(text, j)
            if got is not None:
                content, end = got
                items.append(("phrase", content, negated, i, end))
                i = end
                continue
        # an ordinary word: up to the next whitespace
        end = i
        while end < n and not text[end].isspace():
            end += 1
        items.append(("word", text[i:end], False, i, end))
        i = end
    return items


def parse_query(raw: str) -> ParsedQuery:
    """Parse ``raw`` (any string) into a :class:`ParsedQuery`; never raises for any input."""
    parsed = ParsedQuery()
    text = clean_text(raw)
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        parsed.messages.append(f"The query was cut to its first {MAX_QUERY_CHARS} characters.")
    items = _split_items(text)
    if len(items) > MAX_TERMS:
        items = items[:MAX_TERMS]
        parsed.messages.append(f"Only the first {MAX_TERMS} words and phrases of the query were used.")

    # Filters first, then OR grouping of the positive terms.
    sequence: list[Term | str] = []  # Term or the marker "OR"
    for kind, content, negated in items:
        if kind == "word":
            word = content
            neg = False
            if word.startswith("-") and ":" in word:
                neg = True
                word = word[1:]
            key, sep, value = word.partition(":")
            if sep and not neg and key.lower() == "sort":
                if value.lower() in SORTS:
                    parsed.sort = value.lower()
                else:
                    parsed.messages.append(f"The order {content!r} is unknown and was ignored "
                                           f"(sort:{' or sort:'.join(SORTS)}).")
                continue
            if sep and key.lower() in FILTER_KINDS:
                normalized = _normalize_filter_value(key.lower(), value)
                if normalized is None and key.lower() in ("after", "before") and value.strip():
                    parsed.messages.append(f"The filter {content!r} is no date (YYYY, YYYY-MM or YYYY-MM-DD) "
                                           "and was ignored.")
                elif normalized is None:
                    parsed.messages.append(f"The filter {content!r} has no value and was ignored.")
                else:
                    path = _filter_path(value) if key.lower() in ("site", "host") else None
                    parsed.filters.append(Filter(key.lower(), normalized, neg, path))
                continue
            if content == "OR":
                sequence.append("OR")
                continue
            sequence.append(Term(content, phrase=False))
        else:
            term = Term(content, phrase=True)
            if negated:
                parsed.excluded.append(term)
            else:
                sequence.append(term)

    # "OR" is an operator only between two terms; elsewhere it is the word OR.
    groups: list[list[Term]] = []
    i = 0
    while i < len(sequence):
        item = sequence[i]
        if item == "OR":
            prev_is_term = i > 0 and isinstance(sequence[i - 1], Term) and groups
            next_is_term = i + 1 < len(sequence) and isinstance(sequence[i + 1], Term)
            if prev_is_term and next_is_term:
                groups[-1].append(sequence[i + 1])
                i += 2
                continue
            groups.append([Term("OR")])
            i += 1
            continue
        groups.append([item])
        i += 1
    parsed.groups = groups
    return parsed
