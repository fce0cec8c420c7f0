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


#: Characters of page text a snippet shows (about 35 words).
SNIPPET_CHARS = 240
#: Characters before the first match that a snippet keeps.
SNIPPET_LEAD = 60
#: Characters of a page's text searched for the query's words (the start of the text,
#: or of the best section).
SNIPPET_SCAN = 100_000


class SnippetMaker:
    """Makes snippets for one query: the part of a text with the most of its words.

    ``words``: per query requirement, the word forms to find, each matched as a word
    prefix, case-insensitively (analyzed stems and the words as typed, so ``indexes`` is
    marked for the query ``index``). CJK forms match anywhere.
    """

    def __init__(self, words: list[list[str]]) -> None:
        import regex

        forms = sorted({f.lower() for group in words for f in group if f}, key=len, reverse=True)
        self._groups = [[f.lower() for f in group if f] for group in words]
        if not forms:
            self._pattern = None
            return
        cjk = [regex.escape(f) for f in forms if regex.match(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]", f)]
        words = [regex.escape(f) for f in forms if not regex.match(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]", f)]
        parts = []
        if words:  # a word prefix, extended to the end of the word
            parts.append(r"(?<![\p{L}\p{N}])(?:" + "|".join(words) + r")[\p{L}\p{N}\p{M}]*")
        if cjk:  # CJK has no word boundaries: the form itself
            parts.append("(?:" + "|".join(cjk) + ")")
        self._pattern = regex.compile("|".join(parts), regex.IGNORECASE)

    def _group_of(self, found: str) -> int:
        found = found.lower()
        for i, group in enumerate(self._groups):
            if any(found.startswith(f) for f in group):
                return i
        return -1

    def snippet(self, text: str) -> str | None:
        """A marked snippet (OPEN/CLOSE around matches) of ``text``, or None when none of
        the query's words occurs in its first :data:`SNIPPET_SCAN` characters."""
        if self._pattern is None or not text:
            return None
        text = text[:SNIPPET_SCAN]
        matches = []
        for m in self._pattern.finditer(text):
            matches.append((m.start(), m.end(), self._group_of(m.group())))
            if len(matches) >= 400:
                break
        if not matches:
            return None
        best, best_count = 0, -1
        for i, (start, _, _) in enumerate(matches):
            groups = {g for (s, _, g) in matches[i:] if s < start + SNIPPET_CHARS - SNIPPET_LEAD}
            if len(groups) > best_count:
                best, best_count = i, len(groups)
        start = max(0, matches[best][0] - SNIPPET_LEAD)
        if start:
            space = text.find(" ", start, matches[best][0])
            start = space + 1 if space != -1 else start
        end = min(len(text), start + SNIPPET_CHARS)
        if end < len(text):
            space = text.rfind(" ", max(start, matches[best][1]), end)
            end = space if space != -1 else end
        spans: list[list[int]] = []
        for s, e, _ in matches:
            if s < start or e > end:
                continue
            if spans and not text[spans[-1][1]:s].strip():
                spans[-1][1] = e  # words of a phrase in one mark
            else:
                spans.append([s, e])
        out, pos = [], start
        for s, e in spans:
            out.append(text[pos:s])
            out.append(OPEN + text[s:e] + CLOSE)
            pos = e
        out.append(text[pos:end])
        body = " ".join("".join(out).split())
        return (ELLIPSIS if start > 0 else "") + body + (ELLIPSIS if end < len(text) else "")
