"""Language tags from markup, and a small stopword-based guess when there is none.

No language detector (py3langid, fasttext, ...) is a dependency of textpile, so the
guess counts very common function words of a few languages (en, de, fr, es, it, nl, sv,
pt) among the first ``MAX_WORDS`` words. It answers only with at least ``MIN_HITS`` hits
and a clear lead (``LEAD`` times the runner-up), else None.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from operator import methodcaller
from types import MappingProxyType

MAX_WORDS = 2000
MIN_HITS = 5
LEAD = 1.5

STOPWORDS = {
    "en": "the and of to in is that it for was on are with as this be by not or have from but which you".split(),
    "de": "der die das und ist nicht ein eine mit sich des auf für dem den im von zu auch wird werden sind".split(),
    "fr": "le la les et est des une un du que pour dans pas sur qui au avec ce sont cette par".split(),
    "es": "el la los las y es que en del una por con para se al lo como más pero sus".split(),
    "it": "il la che di e è un una per non sono della del con gli le nel alla anche".split(),
    "nl": "de het een en van is dat op te in niet zijn voor met die ook aan er maar".split(),
    "sv": "och att det som är en på för av med till den inte har jag om ett de var".split(),
    "pt": "o a os as e de que em do da um uma para com não por se mais são".split(),
}


def _word_languages() -> MappingProxyType:
    table: dict[str, tuple[str, ...]] = {}
    for lang, words in STOPWORDS.items():
        for word in words:
            table[word] = table.get(word, ()) + (lang,)
    return MappingProxyType(table)


_WORD_LANGS = _word_languages()

_TAG = re.compile(r"^[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8})*$")
_WORDS = re.compile(r"\w+")
_GROUP = methodcaller("group")


def language_tag(value: str | None) -> str | None:
    """A syntactically valid BCP 47 / IANA tag from e.g. ``<html lang>``, stripped, ``_``
    turned into ``-``; None when absent, malformed or undetermined (``und``)."""
    text = (value or "").strip().replace("_", "-")
    if not text or not _TAG.match(text) or text.lower() == "und":
        return None
    return text


def primary_subtag(tag: str | None) -> str | None:
    """The primary language subtag, lower case (``"en-US"`` -> ``"en"``), or None."""
    return tag.split("-", 1)[0].lower() if tag else None


#: Code points of text read first for the first MAX_WORDS words (documentation pages
#: average 6-7 code points a word): a long text is not lower-cased and searched to the end.
_PREFIX_CHARS = 16384


def _first_words(text: str) -> list[str] | Iterator[str]:
    """The first MAX_WORDS ``\\w+`` words of ``text.lower()``, in order.

    In a longer text a prefix is tried first, cut at a space: no word runs across that
    cut, and ``str.lower`` (whose final-sigma rule looks ahead over case-ignorable code
    points, which a space is not) lower-cases the prefix as it does in the whole text.
    """
    if len(text) <= _PREFIX_CHARS:
        words = _WORDS.findall(text.lower())
        return words[:MAX_WORDS] if len(words) > MAX_WORDS else words
    cut = text.find(" ", _PREFIX_CHARS)
    if cut > 0:
        words = _WORDS.findall(text[:cut].lower())
        if len(words) >= MAX_WORDS:
            return words[:MAX_WORDS]
    return map(_GROUP, islice(_WORDS.finditer(text.lower()), MAX_WORDS))


def guess_language(text: str) -> str | None:
    """Guess the language of ``text`` by stopwords (see the module docstring); None if unsure."""
    hits = dict.fromkeys(STOPWORDS, 0)
    # the first MAX_WORDS words, counted at C speed; then each distinct word once
    counts = Counter(_first_words(text))
    for word, count in counts.items():
        for lang in _WORD_LANGS.get(word, ()):
            hits[lang] += count
    ranked = sorted(hits.items(), key=lambda item: item[1], reverse=True)
    best, best_hits = ranked[0]
    runner_up = ranked[1][1]
    if best_hits < MIN_HITS or best_hits < LEAD * runner_up:
        return None
    return best
