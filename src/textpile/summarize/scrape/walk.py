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
from textpile.summarize.scrape.signals import class_weight
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
#: Block elements that hold other blocks: the main content decision scores them.
CONTAINER_TAGS = frozenset(
    "article aside blockquote body center details dialog div dl fieldset figure footer form "
    "header main menu nav ol section table td th ul".split()
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
    #: index into WalkResult.containers of the innermost enclosing container (-1: none)
    container: int = -1
    #: code points of the line inside links (a, area)
    link_chars: int = 0
    #: the innermost block element the line's text stands in ("p", "li", "td", "div" ...)
    block: str = ""


@dataclass
class Container:
    """A block element that holds other blocks (div, section, td, ul ...), for the main
    content decision: its tag, the index of the container it stands in (-1: none) and
    what its class and id say (:func:`textpile.summarize.scrape.signals.class_weight`)."""

    tag: str
    parent: int
    weight: int


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
    containers: list[Container] = field(default_factory=list)

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


#: Elements that may be hidden, found by one XPath search (then checked by _hidden).
_MAYBE_HIDDEN = etree.XPath("//*[@hidden or @aria-hidden or contains(@style, 'isplay')]")


class _Capture:
    """Collects the raw text under one element (link text, inline code, h1 ...)."""

    __slots__ = ("parts", "saw_headline", "img_alt")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.saw_headline = False
        self.img_alt: str | None = None

    def text(self) -> str:
        return collapse("".join(self.parts))


# What the walk does for each tag, looked up once per element: a tuple of
# (block, container, heading level, marker kind, location flag index, region bit,
#  link attribute, special) where special names the counters a tag moves.
_PRE, _BLOCKQUOTE, _CODE, _Q, _HEAD, _IMG, _DT = range(1, 8)
_SPECIAL = {"pre": _PRE, "blockquote": _BLOCKQUOTE, "code": _CODE, "kbd": _CODE, "samp": _CODE, "tt": _CODE,
            "q": _Q, "head": _HEAD, "img": _IMG, "dt": _DT}


def _action(tag: str) -> tuple:
    flag = LOCATION_TAGS.get(tag)
    kind = MARKER_TAGS.get(tag)
    return (tag in BLOCK_TAGS, tag in CONTAINER_TAGS, HEADING_LEVELS.get(tag, 0),
            int(kind) if kind is not None else 0, _FLAG_INDEX[flag] if flag is not None else -1,
            _REGION_BITS.get(tag, 0), LINK_ATTRIBUTE.get(tag), _SPECIAL.get(tag, 0))


_ACTIONS = {tag: _action(tag) for tag in
            set(BLOCK_TAGS) | set(CONTAINER_TAGS) | set(HEADING_LEVELS) | set(LOCATION_TAGS) | set(MARKER_TAGS)
            | set(LINK_ATTRIBUTE) | set(_SPECIAL) | {"br"}}
_LINK_TAGS = ("a", "area")
#: ``pre`` elements holding nothing but spans (syntax highlighting): their text is taken
#: in one piece, not element by element.
_PLAIN_PRE = etree.XPath("//pre[not(.//*[not(self::span)])]")


class _Walker:
    def __init__(self) -> None:
        self.result = WalkResult()
        self.buf: list[str] = []
        self.cur_len = 0
        self.pending_space = False
        self.total_len = 0  # length of the joined flushed lines
        self.flag_counts = [0] * len(LOCATION_FLAGS)
        self.flag_mask = 0
        self.region_counts = {bit: 0 for bit in _REGION_BITS.values()}
        self.region_mask = 0
        self.headings: list[int] = []
        self.pre = 0
        self.blockquote = 0
        self.code = 0
        self.q = 0
        self.suppressed = 0
        self.in_link = 0
        self.cur_link = 0
        self.containers: list[int] = [-1]
        self.blocks: list[str] = [""]
        self.captures: list[_Capture] = []
        self.locations: dict[int, frozenset[str]] = {}
        # per open element: (tag, action, capture-or-None, span-start-or-None, raw-link-or-None,
        # section-start-or-None as (anchor, level, start)); None for an element that
        # changes nothing but its text (most inline elements)
        self.stack: list[tuple | None] = []
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
        self.result.lines.append(
            Line(text, start, self.headings[-1] if self.headings else 0, self.pre > 0,
                 self.blockquote > 0, self.region_mask, False, self.containers[-1], self.cur_link, self.blocks[-1])
        )
        self.total_len = start + len(text)
        self.buf = []
        self.cur_len = 0
        self.cur_link = 0

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
        if self.in_link:
            self.cur_link += len(joined)
        self.pending_space = s[-1].isspace()

    # --- events ---------------------------------------------------------------
    def location(self) -> frozenset[str]:
        mask = self.flag_mask
        found = self.locations.get(mask)
        if found is None:
            found = self.locations[mask] = frozenset(
                name for i, name in enumerate(LOCATION_FLAGS) if mask & (1 << i))
        return found

    def start(self, el: etree._Element, tag: str, action: tuple) -> None:
        """An element with an action (see _ACTIONS) starts."""
        block, container, heading, kind, flag, region, link_attribute, special = action
        if block or tag == "br":
            self.flush()
            if block:
                self.blocks.append(tag)
                if container:
                    self.containers.append(len(self.result.containers))
                    # A section's id is mostly its heading's slug ("what-gui-toolkits-exist"):
                    # it says nothing about the content.
                    identifier = None if tag in ("section", "article") else el.get("id")
                    self.result.containers.append(
                        Container(tag, self.containers[-2], class_weight(el.get("class"), identifier)))
        capture = None
        raw_link = None
        section = None
        if heading:
            self.headings.append(heading)
            for cap in self.captures:
                cap.saw_headline = True
            capture = _Capture()
            if len(self.result.sections) < MAX_SECTIONS:
                section = (heading_anchor(el, self.claimed), heading, self.start_pos())
        elif special:
            if special == _DT:
                anchor = own_anchor(el)
                if anchor is not None:
                    self._close_definition(el.getparent(), self.start_pos())
                    if len(self.result.sections) < MAX_SECTIONS:
                        capture = _Capture()
                        section = (anchor, DEFINITION_LEVEL, self.start_pos())
            elif special == _PRE:
                self.pre += 1
            elif special == _BLOCKQUOTE:
                self.blockquote += 1
            elif special == _CODE:
                if not self.pre and not self.code:
                    capture = _Capture()
                self.code += 1
            elif special == _Q:
                if not self.blockquote and not self.q:
                    capture = _Capture()
                self.q += 1
            elif special == _HEAD:
                self.suppressed += 1
            elif special == _IMG and self.captures:
                alt = collapse(el.get("alt"))
                if alt:
                    for cap in self.captures:
                        if cap.img_alt is None:
                            cap.img_alt = alt
        if link_attribute is not None:
            target = el.get(link_attribute)
            if target is not None and target.strip():
                parent = el.getparent()
                raw_link = RawLink(
                    el, tag, target, self.location(),
                    parent_media=parent.tag if parent is not None and isinstance(parent.tag, str) else None,
                )
                self.result.links.append(raw_link)
                if tag in _LINK_TAGS:
                    capture = _Capture()
                    self.in_link += 1
        if flag >= 0:
            self.flag_counts[flag] += 1
            self.flag_mask |= 1 << flag
        if region:
            self.region_counts[region] += 1
            self.region_mask |= region
        span_start = self.start_pos() if kind else None
        if capture is not None:
            self.captures.append(capture)
        self.stack.append((tag, action, capture, span_start, raw_link, section))
        text = el.text
        if text:
            self.add_text(text)

    def _close_definition(self, dl: etree._Element | None, end: int) -> None:
        index = self.open_definitions.pop(dl, None) if dl is not None else None
        if index is not None:
            s = self.result.sections[index]
            self.result.sections[index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, end))

    def end(self, el: etree._Element, entry: tuple) -> None:
        """An element with an action ends; ``entry`` is what its start pushed."""
        tag, action, capture, span_start, raw_link, section = entry
        block, container, heading, kind, flag, region, _link_attribute, special = action
        if block:
            self.flush()
            self.blocks.pop()
            if container:
                self.containers.pop()
        if self.open_definitions and el in self.open_definitions:
            self._close_definition(el, self.end_pos())
        if section is not None and capture is not None:
            title = clean_title(capture.text())
            if title:
                anchor, level, start = section
                self.result.sections.append(Section(anchor, title, level, start, start))
                if level == DEFINITION_LEVEL and el.getparent() is not None:
                    self.open_definitions[el.getparent()] = len(self.result.sections) - 1
        if span_start is not None:
            self.result.spans.append((kind, span_start, self.end_pos()))
        if capture is not None:
            self.captures.remove(capture)
            text = capture.text()
            if raw_link is not None:
                if tag in _LINK_TAGS:
                    self.in_link -= 1
                raw_link.text = text or None
                raw_link.contains_headline = capture.saw_headline
                raw_link.fallback_text = capture.img_alt
            if tag == "h1" and text:
                self.result.h1s.append(
                    Headline(
                        text,
                        bool(self.region_mask & (REGION_MAIN | REGION_ARTICLE)),
                        bool(self.region_mask & (REGION_HEADER | REGION_NAV)),
                    )
                )
            elif special == _CODE and text:
                self.result.code_items.append(text)
            elif special == _Q and text:
                self.result.quote_items.append(text)
        if heading:
            self.headings.pop()
        elif special:
            if special == _PRE:
                self.pre -= 1
            elif special == _BLOCKQUOTE:
                self.blockquote -= 1
            elif special == _CODE:
                self.code -= 1
            elif special == _Q:
                self.q -= 1
            elif special == _HEAD:
                self.suppressed -= 1
        if flag >= 0:
            self.flag_counts[flag] -= 1
            if not self.flag_counts[flag]:
                self.flag_mask &= ~(1 << flag)
        if region:
            self.region_counts[region] -= 1
            if not self.region_counts[region]:
                self.region_mask &= ~region
        tail = el.tail
        if tail:
            self.add_text(tail)


def walk_document(root: etree._Element) -> WalkResult:
    """Walk ``root`` (an lxml document element) once; see the module docstring.

    Never raises for odd markup: unknown tags are inline, comments are skipped.
    """
    walker = _Walker()
    hidden = {el for el in _MAYBE_HIDDEN(root) if _hidden(el)}
    plain_pres = set(_PLAIN_PRE(root))
    events = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    skipping = False  # the next "end" event closes a skipped element
    start, end, add_text, stack = walker.start, walker.end, walker.add_text, walker.stack
    actions = _ACTIONS
    for event, el in events:
        tag = el.tag
        if tag.__class__ is not str:  # comment, processing instruction, entity
            if event == "comment" or event == "pi":
                add_text(el.tail)
            continue
        if event == "start":
            if tag in SKIP_TAGS or (hidden and el in hidden):
                if tag == "script" and el.get("src"):
                    target = el.get("src")
                    if target.strip():
                        walker.result.links.append(RawLink(el, "script", target, walker.location()))
                if tag in BLOCK_TAGS:
                    walker.flush()
                events.skip_subtree()
                skipping = True
                continue
            action = actions.get(tag)
            if action is None:  # an inline element without semantics (span, font ...): its text
                stack.append(None)
                text = el.text
                if text:
                    add_text(text)
                continue
            start(el, tag, action)
            if plain_pres and el in plain_pres:
                # start() took el.text; the rest of its text in one piece
                add_text("".join(el.itertext())[len(el.text or ""):])
                events.skip_subtree()  # its own end event follows: an ordinary end below
        elif skipping:
            skipping = False
            if tag in BLOCK_TAGS:
                walker.flush()
            add_text(el.tail)
        else:
            entry = stack.pop()
            if entry is None:
                tail = el.tail
                if tail:
                    add_text(tail)
            else:
                end(el, entry)
    walker.flush()
    result = walker.result
    text = result.text
    for dl_index in list(walker.open_definitions.values()):
        s = result.sections[dl_index]
        result.sections[dl_index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, len(text)))
    result.sections = close_heading_spans(result.sections, len(text))
    spans = []
    for kind, start_, end_ in result.spans:
        while start_ < end_ and text[start_] in " \n":
            start_ += 1
        while end_ > start_ and text[end_ - 1] in " \n":
            end_ -= 1
        if end_ > start_:
            spans.append((kind, start_, end_))
    result.spans = spans
    return result
