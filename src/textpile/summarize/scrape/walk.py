"""One pass over a parsed HTML tree: visible text lines, semantic spans, links, h1s, sections.

Every other extractor of the scrape works on what this walk collects, so the tree is
walked once (``lxml.etree.iterwalk``, iterative: deeply nested markup cannot exhaust
the Python stack).

Text rules:

- Block elements (``p``, ``div``, ``li``, ``h1``…, ``td``, ``pre``, …) and ``br`` end the
  current line; one line per paragraph, headline, list item or table cell.
- Whitespace runs collapse to one space; lines are stripped; empty lines are dropped.
  Inside ``pre`` every newline also ends a line.
- Text under ``head``, ``script``, ``style``, ``template``, ``noscript``, ``svg``,
  ``select``, ``datalist``, ``iframe``, ``object``, ``canvas`` and elements with a
  ``hidden`` attribute, ``aria-hidden="true"`` or an inline ``display:none`` is not
  visible and never collected; comments and processing instructions are skipped.

Lines are joined by ``"\\n"`` into the Gen2 text; spans are code point offsets into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from textpile.summarize.scrape.gen2_codec import MarkerKind
from textpile.summarize.scrape.result import LOCATION_FLAGS
from textpile.summarize.scrape.sections import (
    DEFINITION_LEVEL, MAX_SECTIONS, Section, clean_title, close_heading_spans, heading_anchor, own_anchor,
)

BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html "
    "legend li main menu nav ol p pre section summary table tbody td tfoot th thead tr ul "
    "option optgroup".split()
)
#: Subtrees whose text is never visible (not collected, links inside ignored).
SKIP_TAGS = frozenset(
    "script style template noscript svg math select datalist iframe object canvas "
    "textarea".split()
)
HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
#: Location signature flag set by each tag (seed page "Location Signature").
LOCATION_TAGS = {
    "header": "in_header", "footer": "in_footer", "aside": "in_aside", "nav": "in_nav",
    "form": "in_form", "main": "in_main", "article": "in_article", "section": "in_section",
    "table": "in_table", "figure": "in_figure", "address": "in_address", "code": "in_code",
    "h1": "in_headline", "h2": "in_headline", "h3": "in_headline", "h4": "in_headline",
    "h5": "in_headline", "h6": "in_headline",
    "ul": "in_list", "ol": "in_list", "dl": "in_list", "p": "in_paragraph",
}
_FLAG_INDEX = {name: i for i, name in enumerate(LOCATION_FLAGS)}
#: Gen2 marker kind of each tag (regions, blocks and inline semantics).
MARKER_TAGS = {
    "h1": MarkerKind.heading_1, "h2": MarkerKind.heading_2, "h3": MarkerKind.heading_3,
    "h4": MarkerKind.heading_4, "h5": MarkerKind.heading_5, "h6": MarkerKind.heading_6,
    "p": MarkerKind.paragraph, "li": MarkerKind.list_item, "dt": MarkerKind.list_item,
    "dd": MarkerKind.list_item, "pre": MarkerKind.code, "code": MarkerKind.code,
    "kbd": MarkerKind.code, "samp": MarkerKind.code, "blockquote": MarkerKind.quote,
    "q": MarkerKind.quote, "td": MarkerKind.table_cell, "th": MarkerKind.table_cell,
    "em": MarkerKind.emphasis, "i": MarkerKind.emphasis, "strong": MarkerKind.strong,
    "b": MarkerKind.strong, "a": MarkerKind.link, "nav": MarkerKind.nav,
    "aside": MarkerKind.aside, "header": MarkerKind.header, "footer": MarkerKind.footer,
    "main": MarkerKind.main, "article": MarkerKind.article,
}
CODE_TAGS = frozenset(("code", "kbd", "samp", "tt"))
#: Elements that can be links, with the attribute holding the target.
LINK_ATTRIBUTE = {
    "a": "href", "area": "href", "link": "href", "img": "src", "script": "src",
    "audio": "src", "video": "src", "source": "src", "track": "src",
}
# region bits of a Line
REGION_NAV, REGION_ASIDE, REGION_HEADER, REGION_FOOTER, REGION_MAIN, REGION_ARTICLE = (
    1, 2, 4, 8, 16, 32,
)
_REGION_BITS = {
    "nav": REGION_NAV, "aside": REGION_ASIDE, "header": REGION_HEADER, "footer": REGION_FOOTER,
    "main": REGION_MAIN, "article": REGION_ARTICLE,
}


@dataclass
class Line:
    """One line of visible text: ``start`` is its code point offset in the joined text,
    ``heading`` the level (1-6) of the innermost enclosing headline or 0, ``regions``
    the REGION_* bits of enclosing nav/aside/header/footer/main/article elements.
    ``main`` is filled in later by the main content decision."""

    text: str
    start: int
    heading: int
    in_pre: bool
    in_blockquote: bool
    regions: int
    main: bool = False


@dataclass
class RawLink:
    """A link-bearing element as found: target not yet resolved."""

    element: etree._Element
    tag: str
    target: str
    location: frozenset[str]
    contains_headline: bool = False
    text: str | None = None
    fallback_text: str | None = None  # img alt / title / aria-label
    parent_media: str | None = None  # "audio"/"video"/"picture" for source/track


@dataclass
class Headline:
    """An h1 with where it stands."""

    text: str
    in_main_or_article: bool
    in_header_or_nav: bool


@dataclass
class WalkResult:
    """What one walk over the tree collects (see module docstring)."""

    lines: list[Line] = field(default_factory=list)
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (kind, start, end)
    code_items: list[str] = field(default_factory=list)  # inline code outside pre, in order
    quote_items: list[str] = field(default_factory=list)  # inline q outside blockquote
    code_line_order: list[tuple[int, int]] = field(default_factory=list)
    links: list[RawLink] = field(default_factory=list)
    h1s: list[Headline] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)  # see textpile.summarize.scrape.sections

    @property
    def text(self) -> str:
        """All lines joined by a newline: the Gen2 text."""
        return "\n".join(line.text for line in self.lines)


def collapse(text: str | None) -> str:
    """Whitespace runs to one space, stripped; '' for None."""
    return " ".join(text.split()) if text else ""


def _hidden(el: etree._Element) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden", "").strip().lower() == "true":
        return True
    style = el.get("style")
    if style and "display" in style:
        compact = "".join(style.lower().split())
        return "display:none" in compact
    return False


class _Capture:
    """Collects the raw text under one element (link text, inline code, h1 ...)."""

    __slots__ = ("parts", "saw_headline", "img_alt")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.saw_headline = False
        self.img_alt: str | None = None

    def text(self) -> str:
        return collapse("".join(self.parts))


class _Walker:
    def __init__(self) -> None:
        self.result = WalkResult()
        self.buf: list[str] = []
        self.cur_len = 0
        self.pending_space = False
        self.total_len = 0  # length of the joined flushed lines
        self.flags = [0] * len(LOCATION_FLAGS)
        self.regions = {bit: 0 for bit in _REGION_BITS.values()}
        self.headings: list[int] = []
        self.pre = 0
        self.blockquote = 0
        self.code = 0
        self.q = 0
        self.suppressed = 0
        self.captures: list[_Capture] = []
        # per open element: (tag, capture-or-None, span-start-or-None, raw-link-or-None,
        # section-start-or-None as (anchor, level, start))
        self.stack: list[tuple] = []
        # Elements are kept as keys (not id()): a live lxml proxy is reused, a freed one is not.
        self.claimed: set[etree._Element] = set()  # enclosing elements whose id a heading took
        self.open_definitions: dict[etree._Element, int] = {}  # a dl -> index of its open dt section

    # --- positions and lines -------------------------------------------------
    def _base(self) -> int:
        return self.total_len + 1 if self.total_len else 0

    def start_pos(self) -> int:
        if self.cur_len == 0:
            return self._base()
        return self._base() + self.cur_len

    def end_pos(self) -> int:
        if self.cur_len == 0:
            return self.total_len
        return self._base() + self.cur_len

    def flush(self) -> None:
        self.pending_space = False
        if not self.cur_len:
            return
        text = "".join(self.buf)
        start = self._base()
        regions = 0
        for bit, count in self.regions.items():
            if count:
                regions |= bit
        self.result.lines.append(
            Line(text, start, self.headings[-1] if self.headings else 0, self.pre > 0,
                 self.blockquote > 0, regions)
        )
        self.total_len = start + len(text)
        self.buf = []
        self.cur_len = 0

    def add_text(self, s: str | None) -> None:
        if not s or self.suppressed:
            return
        for cap in self.captures:
            cap.parts.append(s)
        if self.pre:
            pieces = s.split("\n")
            for i, piece in enumerate(pieces):
                if i:
                    self.flush()
                self._add_collapsed(piece)
        else:
            self._add_collapsed(s)

    def _add_collapsed(self, s: str) -> None:
        if not s:
            return
        words = s.split()
        if not words:
            if self.cur_len:
                self.pending_space = True
            return
        joined = " ".join(words)
        if self.cur_len and (self.pending_space or s[0].isspace()):
            self.buf.append(" ")
            self.cur_len += 1
        self.buf.append(joined)
        self.cur_len += len(joined)
        self.pending_space = s[-1].isspace()

    # --- events ---------------------------------------------------------------
    def location(self) -> frozenset[str]:
        return frozenset(name for name, count in zip(LOCATION_FLAGS, self.flags) if count)

    def start(self, el: etree._Element, tag: str) -> None:
        if tag in BLOCK_TAGS or tag == "br":
            self.flush()
        capture = None
        raw_link = None
        section = None
        if tag in HEADING_LEVELS:
            self.headings.append(HEADING_LEVELS[tag])
            for cap in self.captures:
                cap.saw_headline = True
            capture = _Capture()
            if len(self.result.sections) < MAX_SECTIONS:
                section = (heading_anchor(el, self.claimed), HEADING_LEVELS[tag], self.start_pos())
        elif tag == "dt":
            anchor = own_anchor(el)
            if anchor is not None:
                self._close_definition(el.getparent(), self.start_pos())
                if len(self.result.sections) < MAX_SECTIONS:
                    capture = _Capture()
                    section = (anchor, DEFINITION_LEVEL, self.start_pos())
        elif tag == "pre":
            self.pre += 1
        elif tag == "blockquote":
            self.blockquote += 1
        elif tag in CODE_TAGS:
            if not self.pre and not self.code:
                capture = _Capture()
            self.code += 1
        elif tag == "q":
            if not self.blockquote and not self.q:
                capture = _Capture()
            self.q += 1
        elif tag == "head":
            self.suppressed += 1
        elif tag == "img":
            alt = collapse(el.get("alt"))
            if alt:
                for cap in self.captures:
                    if cap.img_alt is None:
                        cap.img_alt = alt
        attr = LINK_ATTRIBUTE.get(tag)
        if attr is not None:
            target = el.get(attr)
            if target is not None and target.strip():
                parent = el.getparent()
                raw_link = RawLink(
                    el, tag, target, self.location(),
                    parent_media=parent.tag if parent is not None and isinstance(parent.tag, str) else None,
                )
                self.result.links.append(raw_link)
                if tag in ("a", "area"):
                    capture = _Capture()
        flag = LOCATION_TAGS.get(tag)
        if flag is not None:
            self.flags[_FLAG_INDEX[flag]] += 1
        region = _REGION_BITS.get(tag)
        if region is not None:
            self.regions[region] += 1
        kind = MARKER_TAGS.get(tag)
        span_start = self.start_pos() if kind is not None else None
        if capture is not None:
            self.captures.append(capture)
        self.stack.append((tag, capture, span_start, raw_link, section))
        self.add_text(el.text)

    def _close_definition(self, dl: etree._Element | None, end: int) -> None:
        index = self.open_definitions.pop(dl, None) if dl is not None else None
        if index is not None:
            s = self.result.sections[index]
            self.result.sections[index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, end))

    def end(self, el: etree._Element) -> None:
        tag, capture, span_start, raw_link, section = self.stack.pop()
        if tag in BLOCK_TAGS:
            self.flush()
        if el in self.open_definitions:
            self._close_definition(el, self.end_pos())
        if section is not None and capture is not None:
            title = clean_title(capture.text())
            if title:
                anchor, level, start = section
                self.result.sections.append(Section(anchor, title, level, start, start))
                if level == DEFINITION_LEVEL and el.getparent() is not None:
                    self.open_definitions[el.getparent()] = len(self.result.sections) - 1
        if span_start is not None:
            self.result.spans.append((int(MARKER_TAGS[tag]), span_start, self.end_pos()))
        if capture is not None:
            self.captures.remove(capture)
            text = capture.text()
            if raw_link is not None:
                raw_link.text = text or None
                raw_link.contains_headline = capture.saw_headline
                raw_link.fallback_text = capture.img_alt
            if tag == "h1" and text:
                self.result.h1s.append(
                    Headline(
                        text,
                        bool(self.regions[REGION_MAIN] or self.regions[REGION_ARTICLE]),
                        bool(self.regions[REGION_HEADER] or self.regions[REGION_NAV]),
                    )
                )
            elif tag in CODE_TAGS and text:
                self.result.code_items.append(text)
            elif tag == "q" and text:
                self.result.quote_items.append(text)
        if tag in HEADING_LEVELS:
            self.headings.pop()
        elif tag == "pre":
            self.pre -= 1
        elif tag == "blockquote":
            self.blockquote -= 1
        elif tag in CODE_TAGS:
            self.code -= 1
        elif tag == "q":
            self.q -= 1
        elif tag == "head":
            self.suppressed -= 1
        flag = LOCATION_TAGS.get(tag)
        if flag is not None:
            self.flags[_FLAG_INDEX[flag]] -= 1
        region = _REGION_BITS.get(tag)
        if region is not None:
            self.regions[region] -= 1
        self.add_text(el.tail)


def walk_document(root: etree._Element) -> WalkResult:
    """Walk ``root`` (an lxml.html document element) once; see the module docstring.

    Never raises for odd markup: unknown tags are inline, comments are skipped.
    """
    walker = _Walker()
    events = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    skipping = False  # the next "end" event closes a skipped element
    for event, el in events:
        tag = el.tag
        if not isinstance(tag, str):  # comment, processing instruction, entity
            if event in ("comment", "pi"):
                walker.add_text(el.tail)
            continue
        tag = tag.lower()
        if event == "start":
            if tag in SKIP_TAGS or _hidden(el):
                if tag == "script" and el.get("src"):
                    target = el.get("src")
                    if target.strip():
                        walker.result.links.append(RawLink(el, "script", target, walker.location()))
                if tag in BLOCK_TAGS:
                    walker.flush()
                events.skip_subtree()
                skipping = True
                continue
            walker.start(el, tag)
        elif skipping:
            skipping = False
            if tag in BLOCK_TAGS:
                walker.flush()
            walker.add_text(el.tail)
        else:
            walker.end(el)
    walker.flush()
    result = walker.result
    text = result.text
    for dl_index in list(walker.open_definitions.values()):
        s = result.sections[dl_index]
        result.sections[dl_index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, len(text)))
    result.sections = close_heading_spans(result.sections, len(text))
    spans = []
    for kind, start, end in result.spans:
        while start < end and text[start] in " \n":
            start += 1
        while end > start and text[end - 1] in " \n":
            end -= 1
        if end > start:
            spans.append((kind, start, end))
    result.spans = spans
    return result
