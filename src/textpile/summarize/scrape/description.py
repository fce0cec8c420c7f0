"""Document description fields taken from the markup: title, primary headline,
description, language, robots noindex, ``<base href>``.

Source: unobtanium-documentation.txt, page "Summary Database" (document_description);
dead-simple-search-how-it-works.txt, "Deciding what not to index" (meta robots).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from textpile.summarize.scrape.walk import Headline, collapse


@dataclass(frozen=True)
class MarkupElements:
    """A document's ``title``, ``meta``, ``script`` and ``base`` elements, each list in
    document order: what the readers of this module and of the dates look at, found in
    one pass over the tree (a search of the tree per reader was ~10% of the scrape)."""

    titles: list[etree._Element]
    metas: list[etree._Element]
    scripts: list[etree._Element]
    bases: list[etree._Element]


def markup_elements(root: etree._Element) -> MarkupElements:
    """The :class:`MarkupElements` of the document ``root`` (``root.iter`` order)."""
    titles: list[etree._Element] = []
    metas: list[etree._Element] = []
    scripts: list[etree._Element] = []
    bases: list[etree._Element] = []
    by_tag = {"title": titles.append, "meta": metas.append, "script": scripts.append, "base": bases.append}
    for el in root.iter("title", "meta", "script", "base"):
        by_tag[el.tag](el)
    return MarkupElements(titles, metas, scripts, bases)


def _meta_content(metas: list[etree._Element], *names: str) -> str | None:
    """Collapsed content of the first non-empty ``<meta name|property=...>`` among
    ``names`` (case-insensitive), trying the names in the order given."""
    found: dict[str, str] = {}
    for el in metas:
        for key in ("name", "property"):
            name = (el.get(key) or "").strip().lower()
            if name in names and name not in found:
                content = collapse(el.get("content"))
                if content:
                    found[name] = content
    for name in names:
        if name in found:
            return found[name]
    return None


def title(elements: MarkupElements) -> str | None:
    """The first ``<title>`` outside ``svg``, whitespace collapsed; None when empty."""
    for el in elements.titles:
        if any(isinstance(a.tag, str) and a.tag.lower() == "svg" for a in el.iterancestors()):
            continue
        text = collapse("".join(el.itertext()))
        if text:
            return text
    return None


def description(elements: MarkupElements) -> str | None:
    """``<meta name="description">``, else ``og:description``; None when both are empty."""
    return _meta_content(elements.metas, "description") or _meta_content(elements.metas, "og:description")


def site_name(elements: MarkupElements) -> str | None:
    """``og:site_name`` or ``application-name``, if given."""
    return _meta_content(elements.metas, "og:site_name", "application-name")


def primary_headline(h1s: list[Headline], site: str | None) -> str | None:
    """The main h1, not the site name.

    An h1 "looks like the site name" when it equals ``site`` (case-insensitively) or
    stands in a header/nav without being inside main/article. Among the others the first
    inside main/article wins, else the first other; if every h1 looks like the site name,
    the first h1 is still better than nothing. None without h1.
    """
    if not h1s:
        return None
    site_key = site.casefold() if site else None

    def site_like(h: Headline) -> bool:
        return (site_key is not None and h.text.casefold() == site_key) or (
            h.in_header_or_nav and not h.in_main_or_article)

    good = [h for h in h1s if not site_like(h)]
    preferred = [h for h in good if h.in_main_or_article]
    return (preferred or good or h1s)[0].text


def html_lang(root: etree._Element, elements: MarkupElements) -> str | None:
    """The raw ``lang`` (or ``xml:lang``) of ``<html>``, else a ``Content-Language`` meta."""
    for key in ("lang", "{http://www.w3.org/XML/1998/namespace}lang", "xml:lang"):
        value = root.get(key)
        if value and value.strip():
            return value
    for el in elements.metas:
        if (el.get("http-equiv") or "").strip().lower() == "content-language":
            value = (el.get("content") or "").split(",", 1)[0]
            if value.strip():
                return value
    return None


def robots_noindex(elements: MarkupElements) -> bool:
    """True when a ``<meta name="robots">`` (or ``googlebot``) says ``noindex`` or ``none``."""
    for el in elements.metas:
        if (el.get("name") or "").strip().lower() in ("robots", "googlebot"):
            tokens = {t.strip() for t in (el.get("content") or "").lower().replace(";", ",").split(",")}
            if tokens & {"noindex", "none"}:
                return True
    return False


def base_href(elements: MarkupElements) -> str | None:
    """The first ``<base href>`` value, unresolved; None when absent."""
    for el in elements.bases:
        href = el.get("href")
        if href and href.strip():
            return href.strip()
    return None
