"""search() over a small summary database with known pages."""

import random
import sqlite3

import pytest

from search.builder import SummaryBuilder, sample_site
from textpile.search.engine import search


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("summary") / "summary.db"
    ids = sample_site(path, stale_fts=True)  # closed/duplicate rows are in the FTS table too
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    yield conn, ids
    conn.close()


def urls(results):
    return [r.url for r in results.results]


def test_phrase_query_right_page_first(db):
    conn, _ = db
    r = search(conn, '"virtual table module"')
    assert urls(r) == ["https://docs.example.org/fts5.html"]
    r = search(conn, '"full-text search"')
    assert urls(r)[0] == "https://docs.example.org/fts5.html" and r.total == 2


def test_site_host_and_negated_filters(db):
    conn, _ = db
    assert urls(search(conn, "cats site:example.org")) == ["https://blog.example.org/2024/cats"]
    assert urls(search(conn, "cats -site:example.org")) == ["https://de.example.net/katzen"]
    assert urls(search(conn, "sqlite host:docs.example.org")) == [
        "https://docs.example.org/fts5.html", "https://docs.example.org/json1.html"]
    assert urls(search(conn, "sqlite host:example.org")) == []
    assert search(conn, "cats site:xample.org").total == 0  # a suffix, not a domain


def test_excluded_phrase(db):
    conn, _ = db
    assert urls(search(conn, 'sqlite -"virtual table"')) == ["https://docs.example.org/json1.html"]
    # a bare -word is not an exclusion: the word stays required; the page holding every
    # word comes first, the one holding only "sqlite" follows as a partial match
    r = search(conn, "sqlite -json_extract")
    assert urls(r) == ["https://docs.example.org/json1.html", "https://docs.example.org/fts5.html"]
    assert r.partial_matches and r.total == 2


def test_lang_filter(db):
    conn, _ = db
    assert urls(search(conn, "cats lang:de")) == ["https://de.example.net/katzen"]
    assert urls(search(conn, "cats -lang:de")) == ["https://blog.example.org/2024/cats"]


def test_or_query(db):
    conn, _ = db
    r = search(conn, "quokka OR marmalade")
    assert sorted(urls(r)) == ["https://evil.example.com/page#section-2", "https://notitle.example.com/x"]
    assert not r.fallback_any_term


def test_only_negative_query_uses_any_column(db):
    conn, _ = db
    r = search(conn, '-"cats"')
    assert r.total == 6 and "https://blog.example.org/2024/cats" not in urls(r)


def test_closed_and_duplicate_generations_never_returned(db):
    conn, ids = db
    # Their stale FTS rows exist, but the SQL joins entity_generation and filters them out.
    assert conn.execute("SELECT count(*) FROM full_text_entity_index WHERE rowid IN (?, ?)",
                        (ids["dogs_closed"], ids["dup"])).fetchone()[0] == 2
    r = search(conn, "zebrafinch")
    assert r.total == 0 and r.results == []
    assert "https://blog.example.org/2024/cats?utm=1" not in urls(search(conn, "cats", per_page=100))


def test_title_match_outranks_body_only(tmp_path):
    b = SummaryBuilder(tmp_path / "s.db")
    b.add_page("https://a.example/body", title="Gardening notes",
                      text="Some words about tomatoes and also about the axolotl in a pond.")
    b.add_page("https://a.example/title", title="Axolotl", text="Some words about a pond animal.")
    b.build_fts()
    r = search(b.conn, "axolotl")
    assert urls(r) == ["https://a.example/title", "https://a.example/body"]


def test_leaf_beats_index_page(tmp_path):
    b = SummaryBuilder(tmp_path / "s.db")
    # The navigation page lists the words twice: by bm25 alone it would win.
    nav = b.add_page("https://a.example/", title="Articles",
                     text="Narwhal tusks\nPenguin feet\nNarwhal tusks again\nOwl eyes", indexiness=60)
    b.add_page("https://a.example/narwhal", title="Articles",
               text="Narwhal tusks grow long\nPenguin feet\nOwl eyes\nSea ice", indexiness=-60)
    b.build_fts()
    # indexiness counts for navigation pages only (link density 0.4 or more): every line
    # of this one is a link (the builder writes no links, so the index is told)
    b.conn.execute("UPDATE search_page SET link_density = 0.9 WHERE entity_generation_id = ?", (nav,))
    b.conn.commit()
    raw = dict(b.conn.execute(
        "SELECT rowid, bm25(full_text_entity_index) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?",
        ('"narwhal" AND "tusks"',)))
    assert raw[1] < raw[2]  # bm25 prefers the index page
    assert urls(search(b.conn, "narwhal tusks")) == ["https://a.example/narwhal", "https://a.example/"]


def test_partial_matches_when_no_page_holds_every_word(db):
    conn, _ = db
    r = search(conn, "quokka unicornword")
    assert r.fallback_any_term and r.partial_matches and urls(r) == ["https://notitle.example.com/x"]
    assert r.message == "Few pages hold all the words; pages holding most of them follow."
    r = search(conn, "unicornword")
    assert not r.fallback_any_term and r.total == 0 and r.message == "No results."
    # The partial retry finds nothing either: no sentence about showing other pages.
    r = search(conn, '"exact unicornphrase" unicornword site:example.org')
    assert not r.fallback_any_term and r.total == 0 and r.message == "No results."


def test_result_fields_and_fallbacks(db):
    conn, _ = db
    [fts] = [x for x in search(conn, '"virtual table module"').results]
    assert fts.title == "SQLite FTS5 Extension"
    assert fts.description == "Full-text search in SQLite with the FTS5 virtual table."
    assert fts.snippet_html == ("FTS5 is an SQLite <mark>virtual table module</mark> that provides full-text search. "
                                "The bm25 function ranks results by relevance.")
    assert fts.language == "en" and fts.time_updated_unix_utc == 1_700_000_000
    [q] = search(conn, "marsupial").results
    assert q.title == "Quokka facts"  # primary_headline when there is no title
    assert q.description == "The quokka is a small marsupial."  # the snippet as text
    assert q.snippet_html == "The quokka is a small <mark>marsupial</mark>."


def test_a_snippet_shows_and_marks_the_query_words_that_are_no_stop_words(tmp_path):
    b = SummaryBuilder(tmp_path / "s.db")
    start = "To the shop and to the park: how the day went for the two of us, as it was to the end of it. "
    later = "At last the kettle was cleaned with vinegar, and the kettle shone."
    b.add_page("https://a.example/kettle", title="A day out", text=start * 3 + later)
    b.build_fts()
    [r] = search(b.conn, "how to clean the kettle").results
    # the window of the content words, not of "to the ... how the ... to the" at the start,
    # and only they are marked
    assert r.snippet_html == ("…for the two of us, as it was to the end of it. At last the <mark>kettle</mark> was "
                              "<mark>cleaned</mark> with vinegar, and the <mark>kettle</mark> shone.")
    [r] = search(b.conn, "to the").results  # a query of stop words only: they are its words
    assert r.snippet_html.startswith("<mark>To the</mark> shop and <mark>to the</mark> park: how <mark>the</mark> day")


def test_markup_in_pages_is_escaped(db):
    conn, _ = db
    [x] = search(conn, "marmalade").results
    assert x.url == "https://evil.example.com/page#section-2"
    assert x.title == "<script>alert('xss')</script> Marmalade recipe"  # plain text; escaped when rendered
    assert x.snippet_html == ("Orange <mark>marmalade</mark> &lt;b&gt;bold&lt;/b&gt; &amp; "
                              "&lt;img src=x onerror=alert(1)&gt; tasty <mark>marmalade</mark>.")
    assert "<script" not in search(conn, "script alert").results[0].snippet_html


def test_paging(tmp_path):
    b = SummaryBuilder(tmp_path / "s.db")
    for i in range(130):
        b.add_page(f"https://p.example/{i:03d}", title=f"Page {i}", text=f"common word number{i}")
    b.build_fts()
    r = search(b.conn, "common")
    assert r.total == 130 and len(r.results) == 20 and r.page == 0 and r.per_page == 20
    r2 = search(b.conn, "common", page=1)
    assert not set(urls(r)) & set(urls(r2))
    assert len(search(b.conn, "common", per_page=500).results) == 100
    assert len(search(b.conn, "common", page=6, per_page=20).results) == 10
    past = search(b.conn, "common", page=7)
    assert past.results == [] and past.total == 130 and past.past_last_page
    assert past.message == "No results on page 8; there are 130 results on 7 pages."
    huge = search(b.conn, "common", page=99999999999999999999)
    assert huge.page == 1000 and huge.message == "No results on page 1001; there are 130 results on 7 pages."
    one = search(b.conn, "number7", page=1)
    assert one.message == "No results on page 2; there are 1 result on 1 page."
    # one page holds both words, the other 129 follow as partial matches
    both = search(b.conn, "number7 common")
    assert urls(both)[0] == "https://p.example/007" and both.total == 130 and both.partial_matches
    assert search(b.conn, "common", page=-3).page == 0


ADVERSARIAL = [
    "C++", "hello-world", "AND", "NOT", "OR", "NEAR", '"unbalanced', "*", "site:", "host:", "lang:", "-", "--",
    '""', '"', "«", "»", "»«", "\\", '"\\', '"a\\"', "NEAR(a b)", "a:b", "title:x", "any:any", "{title}: x",
    "^x", "x*", "(", ")", "()", "a AND (b", "\x00", "a\x00b", "\ud800", "x\udfff", "-site:", "site:*",
    "site:..", "host:[::1]", "lang:%", "site:%_", "' OR 1=1 --", "'; DROP TABLE url; --", "\u202e", "🙂",
    "a" * 5000, "x " * 2000, "OR OR OR", "- - -", '-"', '-"a"', "-site:example.org",
    '"' * 100, "NOT NOT a", "a OR", "OR a", "site:ex\u00e4mple.org", "host:xn--", "\t\n\r",
]


def test_adversarial_queries_never_fail(db):
    conn, _ = db
    rng = random.Random(4)
    queries = list(ADVERSARIAL)
    alphabet = list('"»«\\-:*()^{}+ ORANDNOT') + ["site:", "lang:", "host:", " OR ", "-\""]
    while len(queries) < 140:
        queries.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))))
    while len(queries) < 220:
        queries.append("".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(1, 40))))
    for q in queries:
        r = search(conn, q)
        assert isinstance(r.total, int) and len(r.results) <= 20
        if r.total == 0:
            assert r.message, q
