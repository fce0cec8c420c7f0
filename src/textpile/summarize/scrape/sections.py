"""Sections of a page: headings and definition terms with their anchors and text spans.

A section is what a documentation search result can link to: a heading (``h1``-``h6``)
or a definition term that carries an id (``<dt id="json.dumps">``, as Sphinx, pdoc and
many API generators write them). Its ``anchor`` is the fragment that scrolls to it,
found the way browsers and doc generators place it:

1. the element's own ``id`` (or ``name``);
2. inside a heading: a descendant's ``id``/``name``, else a self-link ``href="#x"``
   (Sphinx's and MkDocs' "headerlink" ``¶``);
3. the ``id`` of an enclosing element (``<section id>``, ``<div class="sect1" id>``) of
   which this heading is the first, up to three levels up;
4. an empty ``<a name="x">``/``<a id="x">`` right before the heading.

A section without any anchor is still a section (its title still matches a query;
its result links to the page). Spans are code point offsets into the Gen2 text: a
heading's section runs to the next heading of the same or a higher level, a
definition's to the next definition term of its list or the end of the list.

Level: 1-6 for headings, :data:`DEFINITION_LEVEL` (7) for definition terms.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

DEFINITION_LEVEL = 7
#: At most this many sections are kept per page (the first ones).
MAX_SECTIONS = 5000
#: Titles are cut to this many code points.
MAX_TITLE = 300
#: Anchors longer than this are dropped (they are not links anyone writes).
MAX_ANCHOR = 500
#: Characters doc generators put into a heading as its self-link, stripped from titles.
HEADERLINK_CHARACTERS = "¶#§🔗¤ \u00a0"


@dataclass(frozen=True)
class Section:
    """One section: ``anchor`` (fragment without ``#``, or None), ``title`` (its visible
    text, whitespace collapsed, self-link marks removed), ``level`` (1-7), and the span
    ``start``..``end`` (code points in the Gen2 text, end exclusive)."""

    anchor: str | None
    title: str
    level: int
    start: int
    end: int


def _usable(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    # stripped and not empty: it holds whitespace when it splits (str.split and str.isspace
    # agree on what whitespace is)
    if not value or len(value) > MAX_ANCHOR or len(value.split()) > 1:
        return None
    return value


def own_anchor(el: etree._Element) -> str | None:
    """The element's own ``id``, else ``name``."""
    return _usable(el.get("id")) or _usable(el.get("name"))


def heading_anchor(el: etree._Element, claimed: set[etree._Element]) -> str | None:
    """The anchor of heading ``el`` (rules 1-4 of the module docstring).

    ``claimed`` holds the enclosing elements whose id an earlier heading took; an
    enclosing element used here is added to it.
    """
    anchor = own_anchor(el)
    if anchor:
        return anchor
    self_link = None
    for child in el.iterdescendants():
        if not isinstance(child.tag, str):
            continue
        anchor = own_anchor(child)
        if anchor:
            return anchor
        href = child.get("href") if child.tag.lower() == "a" else None
        if self_link is None and href and href.startswith("#"):
            self_link = _usable(href[1:])
    if self_link:
        return self_link
    parent = el.getparent()
    for _ in range(3):
        if parent is None or not isinstance(parent.tag, str) or parent.tag.lower() in ("body", "html"):
            break
        anchor = own_anchor(parent)
        if anchor:
            if parent in claimed:
                break
            claimed.add(parent)
            return anchor
        parent = parent.getparent()
    previous = el.getprevious()
    if (previous is not None and isinstance(previous.tag, str) and previous.tag.lower() == "a"
            and not (previous.text or "").strip() and len(previous) == 0):
        return own_anchor(previous)
    return None


def clean_title(text: str) -> str:
    """Collapse whitespace, drop self-link marks at the end, cut to :data:`MAX_TITLE`."""
    title = " ".join(text.split()).rstrip(HEADERLINK_CHARACTERS).strip()
    return title[:MAX_TITLE]


def close_heading_spans(sections: list[Section], text_length: int) -> list[Section]:
    """Give every heading section (level 1-6) its end: the start of the next heading of the
    same or a higher level (a smaller number), else ``text_length``. Definition
    sections keep the end they were given."""
    out = []
    for i, s in enumerate(sections):
        if s.level == DEFINITION_LEVEL:
            out.append(s)
            continue
        end = text_length
        for later in sections[i + 1:]:
            if later.level <= s.level:
                end = later.start
                break
        out.append(Section(s.anchor, s.title, s.level, s.start, max(s.start, end)))
    return out
