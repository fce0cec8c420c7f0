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

import re
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


@dataclass(slots=True)
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


@dataclass(slots=True)
class Container:
    """A block element that holds other blocks (div, section, td, ul ...), for the main
    content decision: its tag, the index of the container it stands in (-1: none) and
    what its class and id say (:func:`textpile.summarize.scrape.signals.class_weight`)."""

    tag: str
    parent: int
    weight: int


@dataclass(slots=True)
class RawLink:
    """A link-bearing element as found: target not yet resolved."""

    element: etree._Element
    tag: str
    target: str
    location: frozenset[str]
    contains_headline: bool = False
    text: str | None = None
    fallback_text: str | None = None  # img alt / title / aria-label
    parent_media: str | None = None  # the parent's tag for source/track ("audio", "video", "picture" ...)


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
    #: the joined text as walk_document left it (its lines are final then), or None
    joined: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """All lines joined by a newline: the Gen2 text (``joined`` once walk_document
        has set it: change no line's text after the walk)."""
        if self.joined is not None:
            return self.joined
        return "\n".join([line.text for line in self.lines])


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


#: The attributes that can hide an element (then checked by _hidden on their element): one
#: XPath search over the attribute axis, about half the CPU of ``//*[@hidden or ...]``.
_HIDING_ATTRIBUTES = etree.XPath("//@hidden | //@aria-hidden | //@style")
_HIDDEN_ATTRIBUTES = etree.XPath("//@hidden | //@aria-hidden")
_STYLE_ATTRIBUTES = etree.XPath("//@style")
#: Bytes before and after an attribute name in HTML source: a name starts after
#: whitespace, ``/`` or the quote closing the previous value, and ends at whitespace,
#: ``/``, ``>``, ``=`` (or the end). Vertical tab is included: a wider set only costs time.
_NAME_BEFORE = frozenset(b" \t\n\r\x0b\x0c/\"'")
_NAME_AFTER = frozenset(b" \t\n\r\x0b\x0c/>=")
#: A numeric character reference to one of the letters of "display" (lower-cased source;
#: leading zeros allowed, the ``;`` optional): a style value can spell ``display`` with them.
_DISPLAY_LETTER_REFERENCE = re.compile(rb"&#(?:0*(?:100|105|115|112|108|97|121)|x0*(?:64|69|73|70|6c|61|79))(?![0-9])")


def _may_name_hidden(lowered: bytes) -> bool:
    """Whether lower-cased HTML source can hold a ``hidden`` or ``aria-hidden`` attribute."""
    end = len(lowered)
    at = lowered.find(b"hidden")
    while at >= 0:
        after = at + 6
        start = at - 5 if lowered[at - 5:at] == b"aria-" else at
        if start > 0 and lowered[start - 1] in _NAME_BEFORE and (after == end or lowered[after] in _NAME_AFTER):
            return True
        at = lowered.find(b"hidden", after)
    return False


def _hidden_elements(root: etree._Element, lowered: bytes | None) -> set[etree._Element]:
    """The elements that hide their subtree (:func:`_hidden`).

    ``lowered`` is the UTF-8 source ``root`` was parsed from, ASCII-lower-cased
    (``bytes.lower``), or None. Attribute names are ASCII-lower-cased by the parser and
    cannot hold character references; a ``style`` can only hide with ``display`` in its
    value, spelt out or with numeric references (no named reference expands to one of its
    letters). So when the source rules out ``hidden``/``aria-hidden`` attributes or such
    a style, that search over the whole tree is skipped: the same answer, at a third of
    the cost on most documentation pages.
    """
    if lowered is None:
        search = _HIDING_ATTRIBUTES
    else:
        hidden_names = _may_name_hidden(lowered)
        display = b"display" in lowered or _DISPLAY_LETTER_REFERENCE.search(lowered) is not None
        if hidden_names and display:
            search = _HIDING_ATTRIBUTES
        elif hidden_names:
            search = _HIDDEN_ATTRIBUTES
        elif display:
            search = _STYLE_ATTRIBUTES
        else:
            return set()
    return {el for el in {value.getparent() for value in search(root)} if _hidden(el)}


# A capture collects the raw text under one element (link text, inline code, h1 ...): a
# list [parts, saw_headline, img_alt] (the text pieces, whether a headline started inside,
# the alt of the first img inside), not an object: a page opens about 500 of them.
_PARTS, _SAW_HEADLINE, _IMG_ALT = 0, 1, 2


def _captured(capture: list) -> str:
    """The collapsed text of a capture."""
    return collapse("".join(capture[_PARTS]))


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
#: What the walk's stack holds for a node that is not an element (an entity of an XML tree).
_NOT_AN_ELEMENT = ("not an element",)


def _plain_pres(root: etree._Element, lowered: bytes | None) -> set[etree._Element]:
    """``pre`` elements holding no element but spans (syntax highlighting): their text is
    taken in one piece, not element by element. A tag name cannot hold character
    references: without ``<pre`` in the lower-cased source (``lowered``), there is none.
    ``root.iter("pre")`` and a look at their descendants cost half the XPath
    ``descendant-or-self::pre[not(descendant::*[not(self::span)])]``."""
    if lowered is not None and b"<pre" not in lowered:
        return set()
    return {pre for pre in root.iter("pre") if all(el.tag == "span" for el in pre.iterdescendants("*"))}


def walk_document(root: etree._Element, lowered: bytes | None = None) -> WalkResult:
    """Walk ``root`` (an lxml document element) once; see the module docstring.

    ``lowered``: the UTF-8 source ``root`` was parsed from, ASCII-lower-cased, when known;
    it lets the walk skip attribute searches the source rules out (same result either way).

    Never raises for odd markup: unknown tags are inline, comments are skipped.

    One function with the walk's state in local variables: this loop runs for every
    element of every page (about 2,000 per documentation page), and method calls and
    attribute look-ups were most of its time.
    """
    result = WalkResult()
    lines, spans, raw_links, sections = result.lines, result.spans, result.links, result.sections
    out_containers, h1s = result.containers, result.h1s
    # the current line: its pieces, their length, whether a space is due before the next word
    buf: list[str] = []
    cur_len = 0
    pending_space = False
    total_len = 0  # length of the joined flushed lines
    cur_link = 0  # code points of the current line inside links
    in_link = 0
    flag_counts = [0] * len(LOCATION_FLAGS)
    flag_mask = 0
    region_counts = dict.fromkeys(_REGION_BITS.values(), 0)
    region_mask = 0
    headings: list[int] = []
    pre = blockquote = code = q = suppressed = 0
    container_stack: list[int] = [-1]
    block_stack: list[str] = [""]
    captures: list[list] = []  # the open captures, innermost last
    locations: dict[int, frozenset[str]] = {}
    weights: dict[str, int] = {}  # class_weight of a class or id value: pages repeat them
    # per open element: (action, capture-or-None, span-start-or-None, raw-link-or-None,
    # section-start-or-None as (anchor, level, start)); None for an element that changes
    # nothing but its text (most inline elements)
    stack: list[tuple | None] = []
    # Elements are kept as keys (not id()): a live lxml proxy is reused, a freed one is not.
    claimed: set[etree._Element] = set()  # enclosing elements whose id a heading took
    open_definitions: dict[etree._Element, int] = {}  # a dl -> index of its open dt section

    def flush() -> None:
        nonlocal pending_space, cur_len, total_len, cur_link
        pending_space = False
        if not cur_len:
            return
        text = "".join(buf)
        start = total_len + 1 if total_len else 0
        lines.append(Line(text, start, headings[-1] if headings else 0, pre > 0, blockquote > 0, region_mask,
                          False, container_stack[-1], cur_link, block_stack[-1]))
        total_len = start + len(text)
        buf.clear()
        cur_len = 0
        cur_link = 0

    def add_collapsed(s: str) -> None:
        # s is not empty
        nonlocal cur_len, pending_space, cur_link
        words = s.split()
        if not words:
            if cur_len:
                pending_space = True
            return
        joined = words[0] if len(words) == 1 else " ".join(words)
        if cur_len and (pending_space or s[0].isspace()):
            buf.append(" ")
            cur_len += 1
        buf.append(joined)
        cur_len += len(joined)
        if in_link:
            cur_link += len(joined)
        pending_space = s[-1].isspace()

    def add_text(s: str) -> None:
        # s is not empty
        if suppressed:
            return
        if captures:
            for cap in captures:
                cap[0].append(s)
        if pre:
            for i, piece in enumerate(s.split("\n")):
                if i:
                    flush()
                if piece:
                    add_collapsed(piece)
        else:
            add_collapsed(s)

    def location() -> frozenset[str]:
        found = locations.get(flag_mask)
        if found is None:
            found = locations[flag_mask] = frozenset(
                name for i, name in enumerate(LOCATION_FLAGS) if flag_mask & (1 << i))
        return found

    def close_definition(dl: etree._Element | None, end: int) -> None:
        index = open_definitions.pop(dl, None) if dl is not None else None
        if index is not None:
            s = sections[index]
            sections[index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, end))

    hidden = _hidden_elements(root, lowered)
    plain_pres = _plain_pres(root, lowered)
    events = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    skipping = False  # the next "end" event closes a skipped element
    skipped_block = False  # that element is a block
    actions = _ACTIONS
    push, pop = stack.append, stack.pop
    for event, el in events:
        if event == "end":
            # an end event needs no tag: what it does comes from what its start pushed
            if skipping:
                skipping = False
                if skipped_block:
                    flush()
                text = el.tail
            else:
                entry = pop()
                if entry is _NOT_AN_ELEMENT:
                    continue
                if entry is not None:
                    # --- an element with an action ends; ``entry`` is what its start pushed
                    action, capture, span_start, raw_link, section = entry
                    block, container, heading, kind, flag, region, _link_attribute, special = action
                    if block:
                        if cur_len:
                            flush()
                        else:
                            pending_space = False
                        block_stack.pop()
                        if container:
                            container_stack.pop()
                    if open_definitions and el in open_definitions:
                        close_definition(el, (total_len + 1 if total_len else 0) + cur_len if cur_len else total_len)
                    if section is not None and capture is not None:
                        title = clean_title(_captured(capture))
                        if title:
                            anchor, level, start = section
                            sections.append(Section(anchor, title, level, start, start))
                            if level == DEFINITION_LEVEL and el.getparent() is not None:
                                open_definitions[el.getparent()] = len(sections) - 1
                    if span_start is not None:
                        spans.append((kind, span_start, (total_len + 1 if total_len else 0) + cur_len if cur_len
                                      else total_len))
                    if capture is not None:
                        # captures nest with their elements: this one is the last but in odd trees
                        if captures[-1] is capture:
                            captures.pop()
                        else:
                            captures.remove(capture)
                        text = _captured(capture)
                        if raw_link is not None:
                            if raw_link.tag == "a" or raw_link.tag == "area":
                                in_link -= 1
                            raw_link.text = text or None
                            raw_link.contains_headline = capture[_SAW_HEADLINE]
                            raw_link.fallback_text = capture[_IMG_ALT]
                        if heading == 1 and text:  # an h1
                            h1s.append(Headline(
                                text,
                                bool(region_mask & (REGION_MAIN | REGION_ARTICLE)),
                                bool(region_mask & (REGION_HEADER | REGION_NAV)),
                            ))
                        elif special == _CODE and text:
                            result.code_items.append(text)
                        elif special == _Q and text:
                            result.quote_items.append(text)
                    if heading:
                        headings.pop()
                    elif special:
                        if special == _CODE:
                            code -= 1
                        elif special == _PRE:
                            pre -= 1
                        elif special == _BLOCKQUOTE:
                            blockquote -= 1
                        elif special == _Q:
                            q -= 1
                        elif special == _HEAD:
                            suppressed -= 1
                    if flag >= 0:
                        flag_counts[flag] -= 1
                        if not flag_counts[flag]:
                            flag_mask &= ~(1 << flag)
                    if region:
                        region_counts[region] -= 1
                        if not region_counts[region]:
                            region_mask &= ~region
                text = el.tail
        elif event == "start":
            tag = el.tag
            if tag.__class__ is not str:  # an entity (in a tree an XML parser made): no text of its own
                push(_NOT_AN_ELEMENT)
                continue
            if tag in SKIP_TAGS or (hidden and el in hidden):
                if tag == "script" and el.get("src"):
                    target = el.get("src")
                    if target.strip():
                        raw_links.append(RawLink(el, "script", target, location()))
                skipped_block = tag in BLOCK_TAGS
                if skipped_block:
                    flush()
                events.skip_subtree()
                skipping = True
                continue
            action = actions.get(tag)
            if action is None:  # an inline element without semantics (span, font ...): its text
                push(None)
                text = el.text
            else:
                # --- an element with an action (see _ACTIONS) starts
                block, container, heading, kind, flag, region, link_attribute, special = action
                if block or tag == "br":
                    if cur_len:  # flush() of an empty line only clears pending_space
                        flush()
                    else:
                        pending_space = False
                    if block:
                        block_stack.append(tag)
                        if container:
                            container_stack.append(len(out_containers))
                            # A section's id is mostly its heading's slug ("what-gui-toolkits-exist"):
                            # it says nothing about the content.
                            # class_weight(class, id) adds what each of the two says: each value's
                            # weight is looked up once a page (ids are mostly unique, classes not)
                            weight = 0
                            value = el.get("class")
                            if value:
                                found = weights.get(value)
                                if found is None:
                                    found = weights[value] = class_weight(value, None)
                                weight = found
                            value = None if tag == "section" or tag == "article" else el.get("id")
                            if value:
                                found = weights.get(value)
                                if found is None:
                                    found = weights[value] = class_weight(value, None)
                                weight += found
                            out_containers.append(Container(tag, container_stack[-2], weight))
                capture = raw_link = section = None
                if heading:
                    headings.append(heading)
                    for cap in captures:
                        cap[_SAW_HEADLINE] = True
                    capture = [[], False, None]
                    if len(sections) < MAX_SECTIONS:
                        section = (heading_anchor(el, claimed), heading, (total_len + 1 if total_len else 0) + cur_len)
                elif special:
                    if special == _CODE:
                        if not pre and not code:
                            capture = [[], False, None]
                        code += 1
                    elif special == _PRE:
                        pre += 1
                    elif special == _DT:
                        anchor = own_anchor(el)
                        if anchor is not None:
                            close_definition(el.getparent(), (total_len + 1 if total_len else 0) + cur_len)
                            if len(sections) < MAX_SECTIONS:
                                capture = [[], False, None]
                                section = (anchor, DEFINITION_LEVEL, (total_len + 1 if total_len else 0) + cur_len)
                    elif special == _BLOCKQUOTE:
                        blockquote += 1
                    elif special == _Q:
                        if not blockquote and not q:
                            capture = [[], False, None]
                        q += 1
                    elif special == _HEAD:
                        suppressed += 1
                    elif special == _IMG and captures:
                        alt = collapse(el.get("alt"))
                        if alt:
                            for cap in captures:
                                if cap[_IMG_ALT] is None:
                                    cap[_IMG_ALT] = alt
                if link_attribute is not None:
                    target = el.get(link_attribute)
                    if target is not None and target.strip():
                        media = None  # the parent's tag: of a source or track only, as only they use it
                        if tag == "source" or tag == "track":
                            parent = el.getparent()
                            media = parent.tag if parent is not None and isinstance(parent.tag, str) else None
                        raw_link = RawLink(el, tag, target, locations.get(flag_mask) or location(), False, None, None,
                                           media)
                        raw_links.append(raw_link)
                        if tag == "a" or tag == "area":
                            capture = [[], False, None]
                            in_link += 1
                if flag >= 0:
                    flag_counts[flag] += 1
                    flag_mask |= 1 << flag
                if region:
                    region_counts[region] += 1
                    region_mask |= region
                if capture is not None:
                    captures.append(capture)
                push((action, capture, (total_len + 1 if total_len else 0) + cur_len if kind else None,
                      raw_link, section))
                text = el.text
                if plain_pres and el in plain_pres:
                    # el.text goes first; the rest of its text in one piece
                    # (libxml2's text serialization: a third of the CPU of joining itertext())
                    rest = etree.tostring(el, method="text", encoding=str, with_tail=False)[len(text or ""):]
                    if text:
                        add_text(text)
                    text = rest
                    events.skip_subtree()  # its own end event follows: an ordinary end below
        else:  # a comment or processing instruction: its tail
            text = el.tail
        # the text after the event (el.text after a start, el.tail after an end) as add_text
        # adds it, inline: this runs for most of a page's 2,000 or so events
        if not text or suppressed:
            continue
        if pre:
            add_text(text)
            continue
        if captures:
            for cap in captures:
                cap[0].append(text)
        words = text.split()
        if not words:
            if cur_len:
                pending_space = True
            continue
        joined = words[0] if len(words) == 1 else " ".join(words)
        if cur_len and (pending_space or text[0].isspace()):
            buf.append(" ")
            cur_len += 1
        buf.append(joined)
        length = len(joined)
        cur_len += length
        if in_link:
            cur_link += length
        pending_space = text[-1].isspace()
    flush()
    text = result.joined = result.text
    for dl_index in list(open_definitions.values()):
        s = sections[dl_index]
        sections[dl_index] = Section(s.anchor, s.title, s.level, s.start, max(s.start, len(text)))
    result.sections = close_heading_spans(sections, len(text))
    trimmed = []
    for kind, start_, end_ in spans:
        while start_ < end_ and text[start_] in " \n":
            start_ += 1
        while end_ > start_ and text[end_ - 1] in " \n":
            end_ -= 1
        if end_ > start_:
            trimmed.append((kind, start_, end_))
    result.spans = trimmed
    return result
