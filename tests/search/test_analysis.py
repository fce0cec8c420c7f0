"""Analyzer: the terms of a text, on its fast path (no CJK run) and its general one."""

import random

from textpile.index.analysis import Analyzer


def test_terms_without_cjk_are_the_words_terms_one_by_one():
    analyzer = Analyzer()
    text = "The Indexes of pg_dump's JSON-Dumps, café NAÏVE 3D2Y x²; HttpResponsePermanentRedirect."
    assert analyzer.terms(text, "en") == [
        "the", "index", "of", "pg", "dump", "s", "json", "dump", "cafe", "naiv", "3d2y", "x2",
        "httpresponsepermanentredirect"]
    assert list(analyzer.words("a-b c")) == ["a", "b", "c"]
    assert analyzer.terms("", "en") == [] and analyzer.terms(None) == []


def test_the_fast_path_gives_what_the_general_path_gives():
    # texts drawn from letters, digits, marks, CJK, punctuation and spaces: with a CJK run
    # the general path runs, without one the fast path; both must agree word by word
    alphabet = list("abcXYZ019_-.,;' \n\t") + ["é", "ß", "\u0301", "İ", "ǅ", "中", "文", "の", "한"]
    rng = random.Random(5)
    fast, reference = Analyzer(), Analyzer()
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        for language in ("en", "de", None):
            expected = []
            for word in reference._words_with_cjk(text):
                if "中" in word or "文" in word or "の" in word or "한" in word:
                    expected.extend([word] if len(word) == 1 else [word[i:i + 2] for i in range(len(word) - 1)])
                else:
                    expected.append(reference.term(word, reference.stemmer_language(language)))
            assert fast.terms(text, language) == expected, (text, language)
            assert list(fast.words(text)) == list(reference._words_with_cjk(text)), text
