"""The extractors the summarize benchmark compares, and main-text F1.

Each extractor maps ``(html, url)`` to the main text of the page: textpile's
``scrape_document`` (its Gen1 ``text``: the main content lines; the whole scrape runs:
text piles, description, links), trafilatura's ``extract`` in its default and fast
modes, and resiliparse's ``extract_plain_text`` with ``main_content=True``.

F1 is the bag-of-words F1 of the extracted text against the expected text: words are
``\\w+`` runs, lower-cased, counted with multiplicity; the figure of a set of pages is
the mean of the pages' F1 (the measure the issue's figures were made with: 0.939 for
textpile, 0.922 trafilatura, 0.932 trafilatura fast, 0.845 resiliparse).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

WORD = re.compile(r"\w+")


def words(text: str) -> Counter:
    """The lower-cased ``\\w+`` words of ``text`` with their counts."""
    return Counter(WORD.findall(text.lower()))


def f1(extracted: str, expected: str) -> float:
    """Bag-of-words F1 of ``extracted`` against ``expected`` (0 when they share no word)."""
    got, want = words(extracted), words(expected)
    common = sum((got & want).values())
    if not common:
        return 0.0
    precision, recall = common / sum(got.values()), common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def textpile(html: str, url: str) -> str:
    from textpile.summarize.scrape.document import scrape_document

    return scrape_document(html, url).text_pile.text


def trafilatura_default(html: str, url: str) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url) or ""


def trafilatura_fast(html: str, url: str) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url, fast=True) or ""


def resiliparse(html: str, url: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return extract_plain_text(HTMLTree.parse(html), main_content=True)


EXTRACTORS: dict[str, Callable[[str, str], str]] = {
    "textpile": textpile,
    "trafilatura": trafilatura_default,
    "trafilatura-fast": trafilatura_fast,
    "resiliparse": resiliparse,
}
