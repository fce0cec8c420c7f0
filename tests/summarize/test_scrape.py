"""Scraping one file: text piles Gen1, description, dates, indexiness, robustness."""

from __future__ import annotations

import hashlib
import json

import pytest

from textpile.summarize.scrape.document import scrape_document
from textpile.summarize.scrape.piles import gen1_digest, make_gen1

NOW = 1_800_000_000  # 2027-01-15
DAY = 86400
URL = "https://site.example/blog/post.html"


def scrape(html: str, url: str = URL, **kwargs):
    kwargs.setdefault("now_unix_utc", NOW)
    return scrape_document(html, url, **kwargs)


# --- Gen1 digest, computed here from the seed's words --------------------------------

def test_gen1_digest_matches_spec_bytes():
    fields = ("Main text\nsecond line", "Menu", "Big", "", "print(1)", "Quoted")
    expected = hashlib.blake2b(
        b"Main text\nsecond line" + b"\n\n\n" + b"Menu" + b"\n\n\n" + b"Big" + b"\n\n\n"
        + b"" + b"\n\n\n" + b"print(1)" + b"\n\n\n" + b"Quoted",
        digest_size=64,
    ).digest()
    assert len(expected) == 64
    assert gen1_digest(*fields) == expected
    assert make_gen1(*fields).blake2b512_digest == expected


def test_gen1_digest_of_empty_pile_is_five_separators():
    expected = hashlib.blake2b(b"\n\n\n" * 5, digest_size=64).digest()
    assert make_gen1().blake2b512_digest == expected


def test_gen1_digest_non_ascii_is_utf8():
    expected = hashlib.blake2b("Grüße ✓".encode("utf-8") + b"\n\n\n" * 5, digest_size=64).digest()
    assert gen1_digest("Grüße ✓", "", "", "", "", "") == expected


# --- exact Gen1 fields of a small page ------------------------------------------------

SMALL_PAGE = """<!doctype html><html lang="en-US"><head><title> My  Post | Site </title>
<meta name="description" content="A post.">
<script type="application/ld+json">{"@graph":[{"@type":"Article","datePublished":"2023-05-01T10:00:00Z"}]}</script>
<style>p { color: red }</style>
</head><body><header><h1>Site</h1><nav><ul><li><a href="/">Home</a></li><li><a href="/blog/">Blog</a></li></ul></nav></header>
<main><article><h1>My Post</h1><p>This is the first paragraph of the post, which is long enough to be content for sure.</p>
<h2 id="a"><a href="#a">Section A</a></h2><p>Second paragraph with <code>inline code</code> and <q>a short quote</q> and <em>emphasis</em>.</p>
<h3>Detail</h3>
<pre><code>def f():
    return 1
</code></pre><blockquote><p>Quoted paragraph here.</p></blockquote>
<p>See <a href="https://other.example/x">elsewhere</a>.</p></article></main>
<!-- a comment nobody sees --><script>var secret = 1;</script><template><p>template text</p></template>
<noscript><p>noscript text</p></noscript>
<footer><p>Copyright 2024</p></footer></body></html>"""


def test_gen1_fields_of_small_page():
    pile = scrape(SMALL_PAGE).text_pile
    assert pile.text == (
        "My Post\n"
        "This is the first paragraph of the post, which is long enough to be content for sure.\n"
        "Section A\n"
        "Second paragraph with inline code and a short quote and emphasis.\n"
        "Detail\n"
        "def f():\n"
        "return 1\n"
        "Quoted paragraph here.\n"
        "See elsewhere."
    )
    assert pile.secondary_text == "Site\nHome\nBlog\nCopyright 2024"
    assert pile.big_headlines == "Site\nMy Post\nSection A"
    assert pile.small_headlines == "Detail"
    assert pile.code_text == "def f():\nreturn 1\ninline code"
    assert pile.quote_text == "Quoted paragraph here.\na short quote"
    expected = hashlib.blake2b("\n\n\n".join((
        pile.text, pile.secondary_text, pile.big_headlines, pile.small_headlines,
        pile.code_text, pile.quote_text)).encode("utf-8"), digest_size=64).digest()
    assert pile.blake2b512_digest == expected


def test_small_page_description():
    result = scrape(SMALL_PAGE)
    d = result.description
    assert d.title == "My Post | Site"
    assert d.primary_headline == "My Post"
    assert d.description == "A post."
    assert d.primary_language == "en"
    assert d.time_created_unix_utc == 1682935200  # 2023-05-01T10:00:00Z
    assert d.time_updated_unix_utc is None
    # relevant: selflink in h2 (-20), outlink (-1); nav links ignored; date -25; -10
    assert d.indexiness == -56
    assert result.noindex is False


@pytest.mark.parametrize("hidden", ["a comment nobody sees", "secret", "template text", "noscript text", "color"])
def test_invisible_text_never_in_text(hidden):
    pile = scrape(SMALL_PAGE).text_pile
    everything = "\n".join((pile.text, pile.secondary_text, pile.big_headlines, pile.small_headlines,
                            pile.code_text, pile.quote_text))
    assert hidden not in everything
    assert hidden not in scrape(SMALL_PAGE).text_pile_v0_2.text


# --- indexiness -------------------------------------------------------------------------

def test_indexiness_leaf_page_two_header_selflinks_and_a_date():
    html = """<html><head><meta property="article:published_time" content="2024-02-03T04:05:06Z"></head>
    <body><nav><ul><li><a href="/">Home</a></li><li><a href="/a/">A</a></li></ul></nav>
    <aside><ul><li><a href="/related">Related</a></li></ul></aside>
    <main><h2 id="one"><a href="#one">One</a></h2><p>Text one.</p>
    <h2 id="two"><a href="#two">Two</a></h2><p>Text two.</p></main></body></html>"""
    result = scrape(html)
    from textpile.summarize.scrape.indexiness import indexiness_breakdown
    breakdown = indexiness_breakdown(result.links, result.description.time_created_unix_utc is not None)
    assert breakdown == {
        "has_publishing_date": True, "selflinks_in_headers": 2, "selflinks_in_lists": 0,
        "inlinks_in_headers": 0, "inlinks_in_lists": 0, "number_of_outlinks": 0,
        "relevant_links": 2, "score": -75,
    }
    assert result.description.indexiness == -20 * 2 - 25 - 10


def test_indexiness_index_page_list_and_headline_inlinks():
    html = """<html><body><header><a href="/">Site</a><ul><li><a href="/x">X</a></li></ul></header>
    <nav><a href="/n1">N1</a><a href="/n2">N2</a></nav>
    <h2><a href="/posts/latest">Latest post</a></h2>
    <ul><li><a href="/posts/1">One</a></li><li><a href="/posts/2">Two</a></li>
        <li><a href="https://site.example/posts/3">Three</a></li></ul>
    <aside><a href="https://elsewhere.example/">Out in aside</a></aside>
    <footer><a href="https://elsewhere.example/footer">Out in footer</a></footer></body></html>"""
    result = scrape(html, "http://site.example/posts/")
    assert result.description.indexiness == 5 * 3 + 11 - 10 == 16


def test_indexiness_link_containing_headline_counts_as_header_and_beats_list():
    html = """<html><body><ul><li><a href="/a"><h3>A</h3></a></li><li><a href="/b">B</a></li></ul>
    <p><a href="https://out.example/">out</a></p></body></html>"""
    result = scrape(html, "https://site.example/")
    # /a: contains headline and in list -> header only (11); /b: list (5); one outlink (-1)
    assert result.description.indexiness == 11 + 5 - 1 - 10


def test_indexiness_header_inside_main_counts():
    html = """<html><body><main><header><h1><a href="/self">Title</a></h1></header></main></body></html>"""
    result = scrape(html, "https://site.example/self")
    assert result.description.indexiness == -20 - 10


# --- dates ---------------------------------------------------------------------------------

def _dated(published: str | None = None, modified: str | None = None, head: str = "") -> str:
    data = {"@context": "https://schema.org", "@type": "BlogPosting"}
    if published:
        data["datePublished"] = published
    if modified:
        data["dateModified"] = modified
    return (f'<html><head><script type="application/ld+json">{json.dumps(data)}</script>{head}'
            "</head><body><p>Hello.</p></body></html>")


def test_date_before_1990_discarded():
    d = scrape(_dated("1989-12-31T23:59:59Z")).description
    assert d.time_created_unix_utc is None
    assert d.indexiness == -10  # no publishing date


def test_date_two_days_ahead_discarded_one_hour_ahead_kept():
    two_days = NOW + 2 * DAY
    from datetime import datetime, timezone
    iso = datetime.fromtimestamp(two_days, timezone.utc).isoformat()
    assert scrape(_dated(iso)).description.time_created_unix_utc is None
    soon = datetime.fromtimestamp(NOW + 3600, timezone.utc).isoformat()
    assert scrape(_dated(soon)).description.time_created_unix_utc == NOW + 3600


def test_last_modified_before_date_published_discarded():
    published = 1_700_000_000
    d = scrape(_dated("2023-11-14T22:13:20Z"), last_modified_unix_utc=published - 10).description
    assert d.time_created_unix_utc == published
    assert d.time_updated_unix_utc is None
    d = scrape(_dated("2023-11-14T22:13:20Z"), last_modified_unix_utc=published + 10).description
    assert d.time_updated_unix_utc == published + 10


def test_last_modified_used_without_markup_and_bounded():
    assert scrape("<p>x</p>", last_modified_unix_utc=1_600_000_000).description.time_updated_unix_utc == 1_600_000_000
    assert scrape("<p>x</p>", last_modified_unix_utc=600_000_000).description.time_updated_unix_utc is None
    assert scrape("<p>x</p>", last_modified_unix_utc=NOW + 2 * DAY).description.time_updated_unix_utc is None


def test_date_modified_beats_last_modified_and_is_not_reconciled():
    d = scrape(_dated("2024-01-10", "2024-01-05"), last_modified_unix_utc=1_750_000_000).description
    assert d.time_created_unix_utc == 1704844800  # 2024-01-10T00:00:00Z
    assert d.time_updated_unix_utc == 1704412800  # 2024-01-05, reported as the page says


def test_date_sources_in_order():
    microdata = '<html><body><time itemprop="datePublished" datetime="2021-03-04T05:06:07+02:00">x</time>' \
                '<meta property="article:published_time" content="2020-01-01T00:00:00Z"></body></html>'
    assert scrape(microdata).description.time_created_unix_utc == 1614827167
    og = '<html><head><meta property="article:published_time" content="2020-01-01T00:00:00Z">' \
         '<meta name="DC.date.issued" content="2019-01-01"></head><body>x</body></html>'
    assert scrape(og).description.time_created_unix_utc == 1577836800
    dc = '<html><head><meta name="dcterms.created" content="2019-01-01"></head><body>x</body></html>'
    assert scrape(dc).description.time_created_unix_utc == 1546300800
    # an implausible first candidate does not hide a good later one
    both = _dated("1970-01-01", head='<meta property="article:published_time" content="2020-01-01T00:00:00Z">')
    assert scrape(both).description.time_created_unix_utc == 1577836800
    # modified from meta tags
    mod = '<html><head><meta property="article:modified_time" content="2022-02-02T00:00:00Z"></head><body>x</body></html>'
    assert scrape(mod, last_modified_unix_utc=1_700_000_000).description.time_updated_unix_utc == 1643760000


def test_no_date_from_body_text_or_broken_json():
    html = ('<html><head><script type="application/ld+json">{"datePublished": </script></head>'
            '<body><p>Published 2020-01-01</p></body></html>')
    d = scrape(html).description
    assert d.time_created_unix_utc is None


# --- description ------------------------------------------------------------------------

def test_description_falls_back_to_og_description():
    html = '<html><head><meta property="og:description" content=" OG  text "></head><body>x</body></html>'
    assert scrape(html).description.description == "OG text"
    html = ('<html><head><meta name="description" content="  "><meta property="og:description" content="OG">'
            '</head><body>x</body></html>')
    assert scrape(html).description.description == "OG"
    html = ('<html><head><meta name="description" content="Meta"><meta property="og:description" content="OG">'
            '</head><body>x</body></html>')
    assert scrape(html).description.description == "Meta"
    assert scrape("<html><body>x</body></html>").description.description is None


def test_primary_headline_skips_site_name():
    html = ('<html><head><meta property="og:site_name" content="Example Site"></head><body>'
            '<h1>Example Site</h1><div><h1>Real Headline</h1></div></body></html>')
    assert scrape(html).description.primary_headline == "Real Headline"
    html = '<html><body><header><h1>Brand</h1></header><h1>The Article</h1></body></html>'
    assert scrape(html).description.primary_headline == "The Article"
    html = '<html><body><h1>First</h1><article><h1>In Article</h1></article></body></html>'
    assert scrape(html).description.primary_headline == "In Article"
    html = '<html><body><header><h1>Only Brand</h1></header></body></html>'
    assert scrape(html).description.primary_headline == "Only Brand"
    assert scrape("<html><body><h2>x</h2></body></html>").description.primary_headline is None


def test_title_and_language():
    html = '<html lang="de-AT"><head><title>\n  Ein   Titel \n</title></head><body>x</body></html>'
    d = scrape(html).description
    assert d.title == "Ein Titel"
    assert d.primary_language == "de"
    assert scrape("<html><body>x</body></html>").description.title is None


def test_language_guessed_without_lang_attribute():
    german = ("<html><body><p>Das ist ein Text, der nicht in einer anderen Sprache ist. Die Katze und "
              "der Hund sind auf dem Sofa, und es wird auch Zeit für den Abend.</p></body></html>")
    assert scrape(german).description.primary_language == "de"
    english = ("<html><body><p>This is the text of a page that was written in English, and it is "
               "about the way that things are done with the tools we have.</p></body></html>")
    assert scrape(english).description.primary_language == "en"
    assert scrape("<html><body><p>12345</p></body></html>").description.primary_language is None


# --- noindex, plain text, robustness ---------------------------------------------------------

@pytest.mark.parametrize("content,expected", [
    ("noindex", True), ("NOINDEX, follow", True), ("none", True), ("index, follow", False), ("nofollow", False),
])
def test_noindex(content, expected):
    html = f'<html><head><meta name="robots" content="{content}"></head><body>x</body></html>'
    assert scrape(html).noindex is expected


def test_plain_text_file():
    result = scrape("  Hello there.  \n\n  This is   a text file.\n", "https://site.example/a.txt",
                    mime_type="text/plain; charset=utf-8", last_modified_unix_utc=1_600_000_000)
    pile = result.text_pile
    assert pile.text == "Hello there.\nThis is a text file."
    assert (pile.secondary_text, pile.big_headlines, pile.small_headlines, pile.code_text, pile.quote_text) == \
        ("", "", "", "", "")
    assert result.links == []
    assert result.description.title is None
    assert result.description.time_updated_unix_utc == 1_600_000_000
    assert result.description.indexiness == -10
    assert result.text_pile_v0_2.text == pile.text


def test_unsupported_media_type_is_refused():
    with pytest.raises(ValueError, match="image/png"):
        scrape("x", mime_type="image/png")


ODD_BODIES = [
    "", "   \n\t ", "<", "<<<>>>", "<html>", "<!-- only a comment -->", "\x00\x00<p>\x00</p>",
    "x" * 1_000_000, "<div>" * 20000 + "deep" + "</div>" * 20000, "lone \ud800 surrogate <p>\udfff</p>",
    "<?xml version='1.0' encoding='iso-8859-1'?><html><body><p>x</p></body></html>",
    "<table><tr><td>a<td>b</table><a href='http://[::1'>bad</a><a href='javascript:x()'>j</a><base href='::::'>",
    "<p>unclosed <b>bold <i>italic <a href='/x'>link", "</p></div></body>stray end tags",
    "<script>never closed", "<svg><title>t</title><a href='/x'>y</a></svg>",
    '<script type="application/ld+json">' + "[" * 5000 + "</script>",
]


@pytest.mark.parametrize("body", ODD_BODIES, ids=range(len(ODD_BODIES)))
def test_odd_bodies_do_not_raise(body):
    result = scrape(body)
    assert result.text_pile.blake2b512_digest and len(result.text_pile.blake2b512_digest) == 64
    assert "\ud800" not in result.text_pile_v0_2.text
    assert "never closed" not in result.text_pile.text + result.text_pile.secondary_text


def test_empty_body_gives_empty_pile():
    result = scrape("")
    assert result.text_pile == make_gen1()
    assert result.text_pile_v0_2.text == ""
    assert result.links == []


def test_bytes_body_is_decoded():
    assert scrape("<p>Grüße</p>".encode("utf-8")).text_pile_v0_2.text == "Grüße"


# --- a real page -------------------------------------------------------------------------------

def test_real_documentation_page(real_docs_site):
    base_url, root = real_docs_site
    pages = sorted(p for p in root.glob("*.html") if p.name != "index.html")
    page = pages[len(pages) // 2]
    body = page.read_bytes().decode("utf-8", "replace")
    result = scrape(body, base_url.rstrip("/") + "/" + page.name)
    assert result.description.title
    assert len(result.text_pile.text) > 100
    assert result.text_pile.text.split("\n")[0] in result.text_pile_v0_2.text
    assert result.links
