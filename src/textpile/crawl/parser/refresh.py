"""Meta refresh: ``<meta http-equiv="refresh" content="0; url=/real">``, a client-side
redirect when it names a target and fires soon.

Sources: dead-simple-search-how-it-works.txt, "Deciding what not to index" (a meta
refresh with a target is a client-side redirect to a stub page; delays over ten seconds
are self-refreshing pages like dashboards, and index normally); the HTML standard's
"shared declarative refresh steps" (how browsers read the content attribute);
unobtanium-documentation.txt, page "Information Source" (3 file_body: the redirect is
read from the content of the file).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The longest delay, in seconds, at which a meta refresh with a target counts as a
#: redirect (longer ones index normally).
MAX_REDIRECT_DELAY_S = 10

_WHITESPACE = " \t\n\f\r"


@dataclass(frozen=True)
class Refresh:
    """A parsed refresh: ``delay_s`` whole seconds, ``target`` the URL text as written
    (relative or absolute, unresolved), or None when it reloads the page itself."""

    delay_s: int
    target: str | None


def parse_refresh(content: str) -> Refresh | None:
    """The refresh of a meta refresh ``content`` attribute, read as the HTML standard's
    shared declarative refresh steps read it, or None when browsers ignore it.

    ``"0; url=/real"``, ``"5;URL='/x'"``, ``"3, /y"`` and ``"0 url=/z"`` name targets;
    ``"30"`` reloads the page itself; ``"; url=/x"`` and ``"soon"`` are ignored. A
    fractional part (``"1.5"``) is ignored as browsers ignore it.
    """
    text = content
    length = len(text)
    pos = 0
    while pos < length and text[pos] in _WHITESPACE:
        pos += 1
    start = pos
    while pos < length and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    digits = text[start:pos]
    if not digits and (pos >= length or text[pos] != "."):
        return None
    delay = int(digits) if digits else 0
    while pos < length and (text[pos] == "." or (text[pos].isascii() and text[pos].isdigit())):
        pos += 1
    if pos < length:
        if text[pos] not in ";," + _WHITESPACE:
            return None
        while pos < length and text[pos] in _WHITESPACE:
            pos += 1
        if pos < length and text[pos] in ";,":
            pos += 1
        while pos < length and text[pos] in _WHITESPACE:
            pos += 1
    if pos >= length:
        return Refresh(delay, None)
    if text[pos:pos + 3].lower() == "url":
        after = pos + 3
        while after < length and text[after] in _WHITESPACE:
            after += 1
        if after < length and text[after] == "=":
            pos = after + 1
            while pos < length and text[pos] in _WHITESPACE:
                pos += 1
    quote = ""
    if pos < length and text[pos] in "'\"":
        quote = text[pos]
        pos += 1
    target = text[pos:]
    if quote and quote in target:
        target = target[:target.index(quote)]
    target = target.strip(_WHITESPACE)
    return Refresh(delay, target or None)
