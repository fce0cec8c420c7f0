"""Main content vs. boilerplate: trafilatura's decision mapped back onto our lines.

trafilatura is given the already parsed lxml tree (``bare_extraction`` accepts an
``HtmlElement`` and copies it before cleaning, so our tree is not modified). Its output
is a new tree of its own tags, so the decision is mapped back by text: a line of ours is
main content when its (whitespace-collapsed) text equals the text of an element or an
output line of trafilatura's result, or, for lines of at least ``MIN_SUBSTRING_MATCH``
code points, occurs inside trafilatura's text (trafilatura joins some blocks, e.g. table
rows, that we keep as separate lines). Short lines must match exactly so that a "Home"
link in a menu is not taken for main content because the word appears in an article.

Lines inside nav/aside/header/footer and not inside main/article are boilerplate
whatever trafilatura says (on short pages its baseline rescue keeps the whole page,
menus included).

When trafilatura finds no content at all (it returns None, e.g. for pages with hardly any
text), the fallback is structural: lines outside nav/aside/header/footer, or inside
main/article, are main content.
"""

from __future__ import annotations

import trafilatura
from lxml import etree

from textpile.summarize.scrape.walk import (
    REGION_ARTICLE, REGION_ASIDE, REGION_FOOTER, REGION_HEADER, REGION_MAIN, REGION_NAV, Line,
    collapse,
)

#: Measured with bench/bench_scrape.py: fast mode is about twice as fast on the sqlite docs
#: and the texts differ little on documentation pages.
DEFAULT_FAST = True
MIN_SUBSTRING_MATCH = 25

_BOILERPLATE = REGION_NAV | REGION_ASIDE | REGION_HEADER | REGION_FOOTER
_CONTENT = REGION_MAIN | REGION_ARTICLE


def trafilatura_texts(root: etree._Element, url: str | None, fast: bool) -> tuple[set[str], str] | None:
    """Run trafilatura on ``root``; return (exact-match texts, whole text) or None when it
    found nothing. ``root`` is not modified (trafilatura works on a copy)."""
    document = trafilatura.bare_extraction(
        root, url=url, fast=fast, include_comments=False, include_tables=True,
        include_formatting=False, with_metadata=False,
    )
    if document is None or document.body is None:
        return None
    exact: set[str] = set()
    for el in document.body.iter():
        if isinstance(el.tag, str):
            text = collapse("".join(el.itertext()))
            if text:
                exact.add(text)
    whole = document.text or ""
    for line in whole.split("\n"):
        text = collapse(line)
        if text:
            exact.add(text)
            if text.startswith("- "):  # list items as trafilatura renders them
                exact.add(text[2:])
    return exact, collapse(whole)


def mark_main_content(lines: list[Line], root: etree._Element, url: str | None, fast: bool = DEFAULT_FAST) -> bool:
    """Set ``line.main`` on every line. Returns True when trafilatura decided, False when
    the structural fallback was used (see the module docstring)."""
    found = trafilatura_texts(root, url, fast) if lines else None
    if found is None:
        for line in lines:
            line.main = bool(line.regions & _CONTENT) or not line.regions & _BOILERPLATE
        return False
    exact, whole = found
    for line in lines:
        if line.regions & _BOILERPLATE and not line.regions & _CONTENT:
            line.main = False
            continue
        text = line.text
        line.main = text in exact or (len(text) >= MIN_SUBSTRING_MATCH and text in whole)
    return True
