"""Snippets: text around the matched terms, HTML-escaped, the terms in ``<mark>``.

FTS5's ``snippet()`` marks matches with :data:`OPEN` and :data:`CLOSE` (two control
characters); :func:`marked_to_html` escapes every piece of page text *first* and only
then turns the markers into ``<mark>`` elements, so page text can never inject markup.
Markers are paired as they come (a stray one in the stored text opens or closes at
most one element) and an open ``<mark>`` is always closed, so the output is balanced.
"""

from __future__ import annotations

import html

OPEN = "\x02"
CLOSE = "\x03"
ELLIPSIS = "…"


def marked_to_html(marked: str) -> str:
    """Return ``marked`` (text with OPEN/CLOSE markers) as escaped HTML with ``<mark>``."""
    out: list[str] = []
    buf: list[str] = []
    is_open = False
    for ch in marked:
        if ch == OPEN or ch == CLOSE:
            out.append(html.escape("".join(buf), quote=True))
            buf = []
            if ch == OPEN and not is_open:
                out.append("<mark>")
                is_open = True
            elif ch == CLOSE and is_open:
                out.append("</mark>")
                is_open = False
            continue
        buf.append(ch)
    out.append(html.escape("".join(buf), quote=True))
    if is_open:
        out.append("</mark>")
    return "".join(out)


def marked_to_text(marked: str) -> str:
    """Return ``marked`` as plain text: markers removed, whitespace collapsed."""
    return " ".join(marked.replace(OPEN, "").replace(CLOSE, "").split())


def has_mark(marked: str | None) -> bool:
    """True when ``marked`` holds at least one match marker."""
    return bool(marked) and OPEN in marked


def leading_text(text: str, max_chars: int = 240) -> str:
    """Return the start of ``text`` cut at a word boundary, with an ellipsis if cut."""
    flat = " ".join(text.replace(OPEN, " ").replace(CLOSE, " ").split())
    if len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + ELLIPSIS
