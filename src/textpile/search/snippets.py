"""Snippets: text around the matched terms, HTML-escaped, the terms in ``<mark>``.

FTS5's ``snippet()`` marks matches with :data:`OPEN` and :data:`CLOSE` (two control
characters); :func:`marked_to_html` escapes every piece of page text *first* and only
then turns the markers into ``<mark>`` elements, so page text can never inject markup.
Markers are paired as they come (a stray one in the stored text opens or closes at
most one element) and an open ``<mark>`` is always closed, so the output is balanced.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

OPEN = "\x02"
CLOSE = "\x03"
ELLIPSIS = "…"


_MARKERS = re.compile(f"([{OPEN}{CLOSE}])")


def marked_to_html(marked: str) -> str:
    """Return ``marked`` (text with OPEN/CLOSE markers) as escaped HTML with ``<mark>``."""
    markers = _MARKERS.findall(marked)
    if markers == [OPEN, CLOSE] * (len(markers) // 2):  # well paired (escaping leaves markers alone)
        return html.escape(marked, quote=True).replace(OPEN, "<mark>").replace(CLOSE, "</mark>")
    return _paired_to_html(marked)


def _paired_to_html(marked: str) -> str:
    """:func:`marked_to_html` for any markers: paired as they come, a stray one ignored."""
    out: list[str] = []
    is_open = False
    for piece in _MARKERS.split(marked):
        if piece == OPEN:
            if not is_open:
                out.append("<mark>")
                is_open = True
        elif piece == CLOSE:
            if is_open:
                out.append("</mark>")
                is_open = False
        elif piece:
            out.append(html.escape(piece, quote=True))
    if is_open:
        out.append("</mark>")
    return "".join(out)


def marked_to_text(marked: str) -> str:
    """Return ``marked`` as plain text: markers removed, whitespace collapsed."""
    return " ".join(marked.replace(OPEN, "").replace(CLOSE, "").split())


def has_mark(marked: str | None) -> bool:
    """True when ``marked`` holds at least one match marker."""
    return bool(marked) and OPEN in marked


#: A text read from its start: called with n, the first n code points (fewer when it is
#: shorter). A snippet reads a page's first part, and more only when it needs it
#: (:class:`textpile.store.text_piles.MainText` gives one for a stored text).
TextReader = Callable[[int], str]


def text_reader(text: str | TextReader) -> TextReader:
    """``text`` as a :data:`TextReader` (a string reads as its own prefixes)."""
    return text if callable(text) else (lambda n: text[:n])


def leading_text(text: str | TextReader, max_chars: int = 240) -> str:
    """Return the start of ``text`` cut at a word boundary, with an ellipsis if cut: the
    text (a string or a :data:`TextReader`) is read only as far as that needs."""
    read = text_reader(text)
    want = 2 * max_chars + 16
    while True:
        part = read(want)
        # the flattened start of a text is the start of the flattened text
        flat = " ".join(part.replace(OPEN, " ").replace(CLOSE, " ").split())
        if len(flat) > max_chars or len(part) < want:
            break
        want *= 4
    if len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + ELLIPSIS


_CJK_START = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: Characters of page text a snippet shows (about 35 words).
SNIPPET_CHARS = 240
#: Characters before the first match that a snippet keeps.
SNIPPET_LEAD = 60
#: Characters of a page's text searched for the query's words (the start of the text,
#: or of the best section: about 2,000 words). On the speed benchmark's 409 queries at
#: 100K pages a scan of 30,000 gave another snippet for 4 of 3,919 results and read
#: 2.5 times the text (6% of a search's CPU time).
SNIPPET_SCAN = 12_000
#: Characters looked at first (the rest of SNIPPET_SCAN only when not every word is there).
SNIPPET_FIRST = 2_000


#: Word forms this long at least are looked for one by one (:meth:`SnippetMaker._matches`);
#: with a shorter one (``a``, ``of``: found inside most words, each find a false hit) the
#: expression's scan is faster.
_FIND_FORM_CHARS = 3
#: Word forms shorter than this mark only themselves, not the words they begin ("a"
#: would mark "and", "all", "access").
_WHOLE_WORD_BELOW = 3


def _phrase_pattern(form: str) -> str:
    """The expression of a phrase form (words separated by spaces): each word a word
    prefix (one or two letters: that word only), anything but word characters between them
    (spaces, a line break, the hyphen of "write-ahead"), as FTS5 reads a phrase."""
    return r"\W+".join(re.escape(w) + (r"\w*" if len(w) >= _WHOLE_WORD_BELOW else r"(?!\w)") for w in form.split())


#: What a split form's words are written apart by (:class:`SnippetMaker`): a space, a
#: hyphen or dash, a slash, an underscore, a no-break space, a line break or a tab.
_SPLIT_JOINTS = (" ", "-", "\u2010", "\u2011", "\u2013", "\u2014", "/", "_", "\u00a0", "\n", "\t")


def _is_split(form: str) -> bool:
    """Whether ``form`` (no spaces) is a split form: words joined by hyphens."""
    return "-" in form.strip("-")


def _split_pattern(form: str) -> str:
    """The expression of a split form (words joined by hyphens, :class:`SnippetMaker`):
    its words written apart by one of :data:`_SPLIT_JOINTS`, the last a word prefix (one
    or two letters: that word only)."""
    words = form.split("-")
    joint = "[" + re.escape("".join(_SPLIT_JOINTS)) + "]"
    return joint.join(re.escape(w) for w in words) + (r"\w*" if len(words[-1]) >= _WHOLE_WORD_BELOW else r"(?!\w)")


def _form_of(found: str, form: str) -> bool:
    """Whether the matched text ``found`` (lower case) is an occurrence of ``form`` (a
    phrase's words are found with anything but word characters between them: ``back-end``
    is one of ``back end``; a split form's with one of :data:`_SPLIT_JOINTS`)."""
    if " " not in form:
        if _is_split(form):
            return found.translate(_TO_HYPHEN).startswith(form)
        return found.startswith(form)
    words, parts = _NOT_WORD.split(found), form.split()
    return len(words) == len(parts) and all(w.startswith(p) for w, p in zip(words, parts))


_NOT_WORD = re.compile(r"\W+")
_TO_HYPHEN = str.maketrans(dict.fromkeys(_SPLIT_JOINTS, "-"))


class SnippetMaker:
    """Makes snippets for one query: the part of a text with the most of its words.

    ``words``: per query requirement, the word forms to find, each matched as a word
    prefix, case-insensitively (analyzed stems and the words as typed, so ``indexes`` is
    marked for the query ``index``). CJK forms match anywhere. A form of several words
    separated by spaces is a phrase: its words in that order, each a word prefix, with
    anything but word characters between them, marked as one. A requirement with a
    phrase form is looked for as that phrase only; a text in which no phrase and no other
    word is found gets the snippet of its forms word by word instead. A form of words
    joined by hyphens is a word's split form (``back-end`` for ``backend``): its words
    written apart by a space, a hyphen or another of :data:`_SPLIT_JOINTS`, the last a
    word prefix, marked as one, and looked for beside the requirement's other forms.
    A blank form finds nothing.
    """

    def __init__(self, words: list[list[str]]) -> None:
        words = [[f for f in group if f.strip()] for group in words]  # (a blank form finds nothing)
        if any(" " in f for group in words for f in group):
            phrased = [[f for f in group if " " in f] or group for group in words]
            self._words_instead: SnippetMaker | None = SnippetMaker(
                [[f for f in group if " " not in f] for group in words])
            words = phrased
        else:
            self._words_instead = None
        forms = sorted({f.lower() for group in words for f in group if f}, key=len, reverse=True)
        self._groups = [[f.lower() for f in group if f] for group in words]
        self._known: dict[str, int] = {}
        if not forms:
            self._pattern = None
            self._wanted = 0
            return
        phrases = [_phrase_pattern(f) for f in forms if " " in f]
        splits = [f for f in forms if " " not in f and _is_split(f)]
        forms = [f for f in forms if " " not in f and f not in splits]
        cjk = [re.escape(f) for f in forms if _CJK_START.match(f)]
        plain = [re.escape(f) for f in forms if not _CJK_START.match(f)]
        parts = [r"\b(?:" + "|".join(phrases + [_split_pattern(f) for f in splits]) + ")"] if phrases or splits else []
        longer = [f for f in plain if len(f) >= _WHOLE_WORD_BELOW]
        short = [f for f in plain if len(f) < _WHOLE_WORD_BELOW]
        if longer:  # a word prefix, extended to the end of the word
            parts.append(r"\b(?:" + "|".join(longer) + r")\w*")
        if short:  # a word of one or two characters: itself only (not every word it starts)
            parts.append(r"\b(?:" + "|".join(short) + r")(?!\w)")
        if cjk:  # CJK has no word boundaries: the form itself
            parts.append("(?:" + "|".join(cjk) + ")")
        self._pattern = re.compile("|".join(parts))  # over the lower-cased text
        self._source = "|".join(parts)
        self._pattern_any_case: re.Pattern | None = None  # compiled when first needed (rare)
        self._wanted = len([g for g in self._groups if g])
        # a phrase is found where its first word is; a split form where its longer word is
        # (its ways of writing differ only in the one character between its two words)
        starts = forms + [f.split()[0] for f in {f.lower() for group in words for f in group} if " " in f]
        by_places = not cjk and all(len(f.split("-")) == 2 for f in splits)  # (a longer one: the expression)
        split_keys = []
        for left, right in (f.split("-") for f in splits) if by_places else ():
            split_keys.append((left, 0) if len(left) >= len(right) else (right, -(len(left) + 1)))
        by_places = by_places and all(f[:1].isalnum() or f[:1] == "_" for f in starts + splits) \
            and all(len(k) >= _FIND_FORM_CHARS for k in starts + [k for k, _ in split_keys])
        #: whether matches are found by their places (:meth:`_matches`): not with CJK forms,
        #: a form not starting with a word character, a short one (found inside most words:
        #: the expression skips them faster) or a split form of more than two words
        self._by_places = by_places
        #: the forms looked for with find: a form another one begins (``warn``, ``warnings``)
        #: finds every place of the longer one, whose finds would only repeat them
        self._finds: list[str] = []
        for f in sorted(set(starts), key=lambda f: (len(f), f)) if by_places else ():  # (an order of its own)
            if not any(f.startswith(g) for g in self._finds):
                self._finds.append(f)
        #: the split forms' longer words, each with where the form starts from it
        self._split_finds: list[tuple[str, int]] = sorted(set(split_keys)) if by_places else []

    def _matches(self, lowered: str, pattern: re.Pattern, start: int = 0) -> Iterator[re.Match]:
        """``pattern.finditer(lowered, start)``, found faster: the places of the word forms
        are found with ``str.find`` (in C, far faster than trying the alternation at every
        position; a form another one begins is found by that one; a split form by its
        longer word, one character after the other), all of them at once and sorted, and
        each is confirmed with ``pattern.match`` there, which sees the character before it
        (``\\b``) and extends the match to the end of the word. A form found inside a
        confirmed match (a longer form, the rest of the word) is not a match of its own, as
        in finditer. Without places (:attr:`_by_places`), finditer itself."""
        if not self._by_places or pattern is not self._pattern:
            yield from pattern.finditer(lowered, start)
            return
        places: list[int] = []
        for form in self._finds:
            at = lowered.find(form, start)
            while at != -1:
                places.append(at)
                at = lowered.find(form, at + 1)
        for key, offset in self._split_finds:
            at = lowered.find(key, start - offset)
            while at != -1:
                places.append(at + offset)
                at = lowered.find(key, at + 1)
        places.sort()  # (a place twice is skipped below: a match there ended past it, or was none)
        end = start
        match = pattern.match
        for at in places:
            if at < end:
                continue
            m = match(lowered, at)
            if m is not None:
                end = m.end()
                yield m

    def _lowered(self, text: str) -> tuple[str, re.Pattern]:
        """``text`` lower-cased and the pattern for it; a text with a rare character whose
        lower case is longer is searched as it is, case-insensitively."""
        lowered = text.lower()
        if len(lowered) == len(text):
            return lowered, self._pattern
        if self._pattern_any_case is None:
            self._pattern_any_case = re.compile(self._source, re.IGNORECASE)
        return text, self._pattern_any_case

    def _group_of(self, found: str) -> int:
        found = found.lower()
        got = self._known.get(found)
        if got is None:
            got = next((i for i, group in enumerate(self._groups) if any(_form_of(found, f) for f in group)), -1)
            self._known[found] = got
        return got

    def _best_window(self, read: TextReader):
        """Scan the text ``read`` gives (lower-cased) for its matches in text order, for
        the window (from a match, :data:`SNIPPET_CHARS` - :data:`SNIPPET_LEAD` characters)
        with the most distinct query words, earliest first; the scan stops when a window
        holds every word, or at its cap of 120 matches. Most texts hold every word early:
        the first :data:`SNIPPET_FIRST` characters are read, lower-cased and scanned
        first, the rest (to :data:`SNIPPET_SCAN`) only when the scan goes on (from where it
        stopped: the matches are the same). Returns ``(text, lowered, pattern, matches,
        best)``: the text read (its first part when the scan ended there), it as searched
        and the pattern used on it, the matches ``(start, end, group)`` seen and the index
        of the one starting the best window."""
        head = SNIPPET_FIRST + SNIPPET_CHARS
        text = read(head + 1)
        cut = SNIPPET_FIRST if len(text) > head else None
        lowered, pattern = self._lowered(text[:head] if cut else text)
        matches: list[tuple[int, int, int]] = []
        window: dict[int, int] = {}
        first = 0
        best, best_count = 0, 0
        width = SNIPPET_CHARS - SNIPPET_LEAD
        resume = 0  # where the scan goes on in the whole text: after the last match taken
        known, wanted = self._known, self._wanted
        while True:
            length = len(lowered)
            for m in self._matches(lowered, pattern, resume):
                at, end = m.span()
                if cut is not None and (at >= cut or end >= length):
                    break  # beyond the first part (or a word it may cut): for the whole text
                found = m.group()
                group = known.get(found)  # (a lower-cased text's matches are their own keys)
                if group is None:
                    group = self._group_of(found)
                matches.append((at, end, group))
                resume = end
                window[group] = window.get(group, 0) + 1
                while matches[first][0] + width <= at:
                    group = matches[first][2]
                    left = window[group] - 1
                    if left:
                        window[group] = left
                    else:
                        del window[group]
                    first += 1
                if len(window) > best_count:
                    best, best_count = first, len(window)
                    if best_count >= wanted:
                        return text, lowered, pattern, matches, best
                if len(matches) >= 120:
                    return text, lowered, pattern, matches, best
            if cut is None:
                return text, lowered, pattern, matches, best
            cut = None
            text = read(SNIPPET_SCAN)
            whole, whole_pattern = self._lowered(text)
            if whole_pattern is not pattern:  # searched another way: from the start again
                matches, window, first, best, best_count, resume = [], {}, 0, 0, 0, 0
            lowered, pattern = whole, whole_pattern

    def snippet(self, text: str | TextReader) -> str | None:
        """A marked snippet (OPEN/CLOSE around matches) of ``text`` (a string or a
        :data:`TextReader`), or None when none of the query's words occurs in its first
        :data:`SNIPPET_SCAN` characters."""
        if self._pattern is None:
            return None
        text, lowered, pattern, matches, best = self._best_window(text_reader(text))
        if not matches:
            return self._words_instead.snippet(text) if self._words_instead is not None else None
        start = max(0, matches[best][0] - SNIPPET_LEAD)
        if start:
            space = text.find(" ", start, matches[best][0])
            start = space + 1 if space != -1 else start
        end = min(len(text), start + SNIPPET_CHARS)
        if end < len(text):
            space = text.rfind(" ", max(start, matches[best][1]), end)
            end = space if space != -1 else end
        spans: list[list[int]] = []
        for m in pattern.finditer(lowered, start, end):
            s, e = m.span()
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
