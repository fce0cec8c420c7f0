"""Text analysis for the search index: words to index terms, the same way for pages and queries.

The search index (:mod:`textpile.index`) stores *analyzed* text: space-separated
terms that FTS5's ``unicode61`` tokenizer reads back unchanged. Pages and queries go
through the same :class:`Analyzer`, so a query term matches exactly the page terms made
from the same word:

* **words** are runs of letters and digits; every other character (``.``, ``_``, ``-``,
  ``::``) separates them, so an identifier is its parts in order: ``json.dumps`` ->
  ``json dump``, ``pg_dump`` -> ``pg dump``. A query identifier becomes a phrase of its
  parts, so it is found whole (the parts in a row) and a single part is found alone;
* **case and diacritics** are folded (NFKD, combining marks removed, lower case), as
  ``unicode61 remove_diacritics 2`` does;
* **stemming**: Snowball (PyStemmer) for the page's language when Snowball has one
  (:data:`SNOWBALL_LANGUAGES`); words of other languages are kept as they are. A query is
  stemmed in every language of the index, each stem an alternative;
* **compound words** written in CamelCase (``HttpResponsePermanentRedirect``,
  ``PostgreSQL``) are one term in the text columns and also give their parts
  (``http response permanent redirect``) to the separate ``parts`` column
  (:meth:`Analyzer.camel_parts`), so ``permanent redirect`` finds it too;
* **CJK**: runs of Han, Hiragana, Katakana and Hangul are indexed as overlapping
  character bigrams (a single character stays a unigram), so ``運用`` is found inside
  ``朝の運用フローを試した`` and a longer query word becomes a phrase of bigrams.

Sources: Snowball stemmers (snowballstem.org, via PyStemmer); the bigram treatment of CJK
is the one of Lucene's CJKAnalyzer and Elasticsearch's ``cjk_bigram`` filter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

import regex
import Stemmer

#: ISO 639-1 code -> Snowball algorithm name in PyStemmer.
SNOWBALL_LANGUAGES = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff"  # Bopomofo, Hangul compat., Katakana ext.
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"  # Hangul
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002fa1f"  # CJK extensions B-F, compatibility supplement
)
_CJK = re.compile(f"[{_CJK_RANGES}]+")
#: A word: a run of letters, digits and marks (underscore and punctuation separate). The
#: search index's FTS5 tokenizer is told the same categories (``L* N* M*``), so it keeps
#: every term whole. (``regex``, not ``re``: ``re``'s ``\w`` splits words at vowel signs.)
_WORD = regex.compile(r"[\p{L}\p{N}\p{M}]+")
#: The same words in a text without combining marks, found twice as fast by ``re``: its
#: word characters less the underscore are the letters and digits (str.isalnum).
_ALNUM = re.compile(r"[^\W_]+")
_MARK = regex.compile(r"\p{M}")
#: Boundaries inside a CamelCase word: lower->Upper, and Upper->Upper+lower (XMLHttp -> XML|Http).
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Words longer than this are cut (FTS5 and people have no use for longer ones).
MAX_WORD = 64


#: Combining diacritical marks (the blocks of U+0300, U+1AB0, U+1DC0, U+20D0, U+FE20): what
#: diacritic folding removes. Other marks (Devanagari vowel signs and viramas ...) are
#: part of their letters and stay.
_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(word: str) -> str:
    """``word`` lower case, compatibility-decomposed (NFKD), without combining diacritics,
    then recomposed (NFC)."""
    if word.isascii():
        return word.lower()
    decomposed = _DIACRITICS.sub("", unicodedata.normalize("NFKD", word))
    return unicodedata.normalize("NFC", decomposed).lower()


def _plain_words(text: str) -> list[str]:
    """The words (:data:`_WORD`) of ``text``, a text without CJK runs."""
    if text.isascii() or _MARK.search(text) is None:
        return _ALNUM.findall(text)
    return _WORD.findall(text)


def cjk_grams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run; the run itself when one character."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


class Analyzer:
    """Turns text into index terms (see the module docstring). Not thread-safe: it keeps
    a cache of analyzed words; make one per thread or task."""

    def __init__(self) -> None:
        self._stemmers: dict[str, Stemmer.Stemmer] = {}
        self._cache: dict[str | None, dict[str, str]] = {}  # stemmer code -> {word: term}
        self._cached = 0

    def stemmer_language(self, language: str | None) -> str | None:
        """The two-letter code whose stemmer applies to ``language`` (a tag such as
        ``en-GB``), or None when Snowball has none for it."""
        if not language:
            return None
        code = language.split("-", 1)[0].lower()
        return code if code in SNOWBALL_LANGUAGES else None

    def _stem(self, folded: str, code: str | None) -> str:
        if code is None or any(c.isdigit() for c in folded):
            return folded
        stemmer = self._stemmers.get(code)
        if stemmer is None:
            stemmer = self._stemmers[code] = Stemmer.Stemmer(SNOWBALL_LANGUAGES[code])
        return stemmer.stemWord(folded)

    def term(self, word: str, code: str | None) -> str:
        """The index term of one non-CJK word (folded, cut, stemmed for ``code``)."""
        got = self._terms_of(code).get(word)
        return got if got is not None else self._new_term(word, code)

    def _terms_of(self, code: str | None) -> dict[str, str]:
        """The cache of analyzed words for ``code``: word -> term."""
        cache = self._cache.get(code)
        if cache is None:
            cache = self._cache[code] = {}
        return cache

    def _new_term(self, word: str, code: str | None) -> str:
        if self._cached > 500_000:
            self._cache.clear()
            self._cached = 0
        got = self._terms_of(code)[word] = self._stem(fold(word[:MAX_WORD]), code)
        self._cached += 1
        return got

    def words(self, text: str) -> Iterator[str]:
        """The words of ``text`` as written (CJK runs and other words apart), in order."""
        if _CJK.search(text) is None:  # most texts: every word is a word of its own
            return iter(_plain_words(text))
        return self._words_with_cjk(text)

    def _words_with_cjk(self, text: str) -> Iterator[str]:
        for match in _WORD.finditer(text):
            word = match.group()
            if _CJK.search(word) is None:
                yield word
                continue
            last = 0
            for cjk in _CJK.finditer(word):
                if cjk.start() > last:
                    yield word[last:cjk.start()]
                yield cjk.group()
                last = cjk.end()
            if last < len(word):
                yield word[last:]

    def terms(self, text: str | None, language: str | None = None) -> list[str]:
        """The index terms of ``text`` in order (CJK runs as bigrams)."""
        if not text:
            return []
        code = self.stemmer_language(language)
        known = self._terms_of(code).get
        if _CJK.search(text) is None:  # no CJK run: a term per word, most of them known
            return [known(w) or self._new_term(w, code) for w in _plain_words(text)]
        out: list[str] = []
        for word in self._words_with_cjk(text):
            if _CJK.fullmatch(word):
                out.extend(cjk_grams(word))
            else:
                out.append(known(word) or self._new_term(word, code))
        return out

    def analyze(self, text: str | None, language: str | None = None) -> str:
        """``text`` as the space-separated index terms FTS5 stores (see :meth:`terms`)."""
        return " ".join(self.terms(text, language))

    def camel_parts(self, text: str | None, language: str | None = None) -> str:
        """The parts of every CamelCase word of ``text`` (``HttpResponse`` -> ``http
        response``), analyzed; words that are not compound give nothing."""
        if not text:
            return ""
        return " ".join(self._camel_parts(self.words(text), self.stemmer_language(language)))

    def analyze_with_parts(self, text: str | None, language: str | None = None) -> tuple[str, str]:
        """``(self.analyze(text, language), self.camel_parts(text, language))``, the text
        cut into words once (a page's main text: most of a page's analysis)."""
        if not text:
            return "", ""
        if _CJK.search(text) is not None:
            return self.analyze(text, language), self.camel_parts(text, language)
        code = self.stemmer_language(language)
        known = self._terms_of(code).get
        words = _plain_words(text)
        terms = [known(w) or self._new_term(w, code) for w in words]
        return " ".join(terms), " ".join(self._camel_parts(words, code))

    def split_terms(self, text: str | None, language: str | None = None) -> list[str]:
        """The index terms of ``text`` with every CamelCase word given as its parts in its
        place (``ThreadPoolExecutor Class`` -> ``thread pool executor class``): how a title
        reads to a query of the parts. Not used to index (a page's ``parts`` column holds
        the parts apart); CJK runs as in :meth:`terms`."""
        if not text:
            return []
        if _CJK.search(text) is not None:
            return self.terms(text, language)
        code = self.stemmer_language(language)
        out: list[str] = []
        for word in _plain_words(text):
            parts = self._camel_parts([word], code)
            out.extend(parts if parts else [self.term(word, code)])
        return out

    def _camel_parts(self, words: Iterable[str], code: str | None) -> list[str]:
        out: list[str] = []
        for word in words:
            if word.islower() or word.isupper() or not any(c.isupper() for c in word[1:]):
                continue
            parts = [p for p in _CAMEL.split(word) if p]
            if len(parts) > 1:
                out.extend(self.term(p, code) for p in parts)
        return out

    def query_alternatives(self, word: str, codes: Iterable[str | None]) -> list[tuple[str, ...]]:
        """The term sequences a query word can match: one per distinct analysis over the
        stemmer languages ``codes`` (None = unstemmed). A one-term sequence is a term; a
        longer one (an identifier, a CJK word) is a phrase."""
        seen: dict[tuple[str, ...], None] = {}
        for code in codes:
            terms: list[str] = []
            for w in self.words(word):
                if _CJK.fullmatch(w):
                    terms.extend(cjk_grams(w))
                else:
                    terms.append(self.term(w, code))
            if terms:
                seen.setdefault(tuple(terms), None)
        return list(seen)
