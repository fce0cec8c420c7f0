"""The checks on a page's source that let the scrape skip whole-tree searches (hidden
elements, microdata dates) and read only a prefix for the language guess: they must
never change a result."""

from __future__ import annotations

import random
from collections import Counter
from itertools import islice

import pytest

from textpile.summarize.scrape import language
from textpile.summarize.scrape.dates import PageDateSources
from textpile.summarize.scrape.document import parse_html, scrape_document
from textpile.summarize.scrape.walk import _hidden_elements, _may_name_hidden, walk_document

NOW = 1_800_000_000


def _tree(html: str):
    data = html.encode("utf-8")
    return parse_html(html, data), data.lower()


@pytest.mark.parametrize("markup", [
    '<p hidden>gone</p>',
    '<P HIDDEN>gone</P>',
    '<p class="x"hidden>gone</p>',
    "<p class='x'hidden=''>gone</p>",
    '<p/hidden>gone</p>',
    '<p\thidden\n>gone</p>',
    '<p\x0chidden>gone</p>',
    '<div aria-hidden="true">gone</div>',
    '<div ARIA-Hidden=TRUE>gone</div>',
    '<div style="display: none">gone</div>',
    '<div style="&#100;isplay:none">gone</div>',
    '<div style="d&#x69;splay:none">gone</div>',
    '<div style="di&#0115;play:none">gone</div>',
    '<div style="dis&#X70;lay : NONE">gone</div>',
])
def test_hiding_attributes_are_found_however_they_are_written(markup):
    html = f"<html><body><p>kept</p>{markup}<p>also kept</p></body></html>"
    root, lowered = _tree(html)
    assert len(_hidden_elements(root, lowered)) == 1
    assert _hidden_elements(root, lowered) == _hidden_elements(root, None)
    walk = walk_document(root, lowered)
    assert walk.text == "kept\nalso kept"
    assert scrape_document(html, "https://site.example/", now_unix_utc=NOW).text_pile_v0_2.text == "kept\nalso kept"


@pytest.mark.parametrize("html", [
    '<p>hidden text, <input type="hidden" name="q"> data-hidden and class="hidden"</p>',
    '<p data-hidden="1" class=hiddenness title="is hidden">shown</p>',
    '<p style="color: red">display is a word here</p>',
    '<p style="&#100;ecoration">&#100;</p>',
])
def test_source_checks_rule_out_only_what_cannot_hide(html):
    root, lowered = _tree(f"<html><body>{html}</body></html>")
    assert _hidden_elements(root, lowered) == set() == _hidden_elements(root, None)
    assert walk_document(root, lowered).text == walk_document(root, None).text != ""


def test_hidden_name_check_on_source_bytes():
    assert _may_name_hidden(b'<p hidden>') and _may_name_hidden(b'<p\nhidden') and _may_name_hidden(b"<p x=''hidden>")
    assert _may_name_hidden(b'<p aria-hidden="true">') and _may_name_hidden(b'<p/aria-hidden=true>')
    assert not _may_name_hidden(b'<input type="hidden">') and not _may_name_hidden(b'<p data-hidden="x">')
    assert not _may_name_hidden(b'hidden at the start') and not _may_name_hidden(b'<p class="hiddenx">')


FRAGMENTS = ['<div', '<p', '<span', '</div>', '</p>', ' ', '\t', '\n', '/', '"', "'", '=', '>', 'x',
             'hidden', 'HiDdEn', 'aria-', 'ARIA-', 'true', 'style', 'STYLE', 'display', 'DISPLAY', ':none',
             'none', '&#100;', '&#x64;', 'isplay', '&amp;', 'itemprop', 'ITEMPROP', 'datePublished',
             ' content="2020-01-02"', 'text ']


def test_source_checks_agree_with_full_searches_on_random_markup():
    rng = random.Random(20261201)
    checked = 0
    for _ in range(3000):
        html = "<html><body>" + "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))) + "</body></html>"
        root, lowered = _tree(html)
        if root is None:
            continue
        checked += 1
        assert _hidden_elements(root, lowered) == _hidden_elements(root, None), html
        with_source, without = PageDateSources(root, lowered), PageDateSources(root, None)
        assert with_source.itemprops == without.itemprops, html
    assert checked > 2900


def test_microdata_dates_are_read_in_any_case():
    html = ('<html><body><time ITEMPROP="datePublished" datetime="2020-01-02">x</time>'
            '<span itemprop="dateModified" content="2021-03-04"></span></body></html>')
    root, lowered = _tree(html)
    sources = PageDateSources(root, lowered)
    assert sources.itemprops == {"datepublished": ["2020-01-02"], "datemodified": ["2021-03-04"]}
    result = scrape_document(html, "https://site.example/", now_unix_utc=NOW)
    assert result.description.time_created_unix_utc == 1577923200
    assert result.description.time_updated_unix_utc == 1614816000


def _words_of_whole_text(text: str) -> list[str]:
    return [m.group() for m in islice(language._WORDS.finditer(text.lower()), language.MAX_WORDS)]


@pytest.mark.parametrize("text", [
    "short text of a few words",
    "word " * 5000,
    ("ΟΔΟΣ " * 3000) + "ΣΑΣ",  # final sigma at every word end
    "x" * 20000 + " tail words here",  # the prefix holds one word
    ("a" * 16383) + "Σ" + " Β" * 3000,  # a sigma right at the prefix's end
    "日本語のテキスト" * 5000,  # no space to cut at
    "word\n" * 5000,
])
def test_language_guess_reads_the_same_first_words(text):
    assert list(language._first_words(text)) == _words_of_whole_text(text)
    assert Counter(language._first_words(text)) == Counter(_words_of_whole_text(text))


@pytest.mark.parametrize("markup", ['<PRE>a <span>b</span>\nc</PRE>', '<pre class="x">a <span>b</span>\nc</pre>'])
def test_plain_pre_is_found_in_any_case(markup):
    root, lowered = _tree(f"<html><body><p>x</p>{markup}</body></html>")
    assert walk_document(root, lowered).text == "x\na b\nc" == walk_document(root, None).text


def test_markup_elements_are_found_in_one_pass_in_document_order():
    from textpile.summarize.scrape.description import markup_elements

    html = ('<html><head><title>T</title><meta name="a"><script src="x.js"></script></head><body>'
            '<svg><title>icon</title></svg><noscript><meta name="b"></noscript><base href="/d/">'
            '<script type="application/ld+json">{}</script><meta name="c"></body></html>')
    root, _ = _tree(html)
    found = markup_elements(root)
    assert [el.text for el in found.titles] == ["T", "icon"]
    assert [el.get("name") for el in found.metas] == ["a", "b", "c"]
    assert [el.get("src") or el.get("type") for el in found.scripts] == ["x.js", "application/ld+json"]
    assert [el.get("href") for el in found.bases] == ["/d/"]
    result = scrape_document(html, "https://site.example/", now_unix_utc=NOW)
    assert result.description.title == "T"
