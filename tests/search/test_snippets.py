"""SnippetMaker: the window with the most query words; its fast word search finds exactly
the matches of the regular expression it stands for."""

import random

from textpile.search.snippets import (CLOSE, OPEN, SNIPPET_CHARS, SNIPPET_FIRST, SNIPPET_SCAN, SnippetMaker,
                                      _paired_to_html, leading_text, marked_to_html)


def marked(text: str | None) -> str | None:
    return None if text is None else text.replace(OPEN, "[").replace(CLOSE, "]")


def test_the_window_with_most_words_is_shown():
    maker = SnippetMaker([["heron"], ["egret"]])
    assert marked(maker.snippet("A heron. " + "x " * 200 + "The egret and the herons.")) == (
        "…" + "x " * 27 + "The [egret] and the [herons].")
    # a word form matches as a word prefix only, case aside
    assert marked(maker.snippet("Reheron; EGRETS_two, heron")) == "Reheron; [EGRETS_two], [heron]"
    assert maker.snippet("w " * SNIPPET_SCAN + "an egret") is None  # beyond the scanned part


def test_a_word_of_one_or_two_letters_marks_only_itself():
    maker = SnippetMaker([["a"], ["io"], ["heron"]])
    assert marked(maker.snippet("A heron and an ioctl: all access to a io port; herons.")) == (
        "[A heron] and an ioctl: all access to [a io] port; [herons].")


class Reader:
    """A text read from its start, recording how far it was asked to read."""

    def __init__(self, text: str) -> None:
        self.text, self.asked = text, []

    def __call__(self, n: int) -> str:
        self.asked.append(n)
        return self.text[:n]


def test_a_snippet_reads_the_rest_of_a_text_only_when_its_first_part_lacks_a_word():
    maker = SnippetMaker([["heron"], ["egret"]])
    both_early = "A heron and an egret. " + "x " * 10_000
    reader = Reader(both_early)
    assert marked(maker.snippet(reader)) == marked(maker.snippet(both_early))
    assert max(reader.asked) == SNIPPET_FIRST + SNIPPET_CHARS + 1
    both_late = "A heron. " + "x " * 3_000 + "an egret, a heron " + "y " * 5_000
    reader = Reader(both_late)
    assert marked(maker.snippet(reader)) == marked(maker.snippet(both_late)) == (
        "…" + "x " * 28 + "an [egret], a [heron] " + "y " * 82 + "y…")
    assert reader.asked == [SNIPPET_FIRST + SNIPPET_CHARS + 1, SNIPPET_SCAN]
    # the start of a text without a match: read as far as 240 characters need
    spaced = "word " * 30 + " " * 2_000 + "more " * 100
    reader = Reader(spaced)
    assert leading_text(reader) == leading_text(spaced) == ("word " * 30 + "more " * 18).strip() + "…"
    assert reader.asked == [496, 1984, 7936]


def test_fast_word_search_gives_the_regular_expression_result():
    rng = random.Random(5)
    pieces = ["index", "indexes", "reindex", "the", "create", "Création", "über", "straße", "a_b", "ﬁle",
              "İstanbul", "naïve", "12", "__init__", "-", ".", " ", "\n", "Σ"]
    forms = ["index", "the", "creat", "über", "a", "straß", "ﬁ", "i", "12", "init", "_init"]
    for _ in range(1500):
        text = "".join(rng.choice(pieces) + rng.choice([" ", "", ".", "_", "-"]) for _ in range(rng.randint(0, 300)))
        maker = SnippetMaker([[rng.choice(forms)] for _ in range(rng.randint(1, 3))])
        fast = maker.snippet(text)
        maker._by_places = False  # the plain regular expression scan
        assert fast == maker.snippet(text), text


def test_snippet_texts_are_the_text_pile_view_text_in_both_layouts(tmp_path):
    import sqlite3

    from search.fixture_site import html_page, summarized_site
    from textpile.search.render import _main_texts

    conn = summarized_site(tmp_path, {
        "https://a.example/one": html_page("One", "<p>First paragraph.</p><p>Second one, é and 漢字.</p>"),
        "https://a.example/two": html_page("Two", "<p>Only this.</p>"),
    })
    view = dict(conn.execute("SELECT text_pile_id, text FROM text_pile"))
    assert len(view) == 2 and all(view.values())
    assert dict(_main_texts(conn, list(view))) == view
    old = sqlite3.connect(":memory:")  # the older layout: text_pile is a table
    old.execute("CREATE TABLE text_pile (text_pile_id INTEGER PRIMARY KEY, text TEXT, secondary_text TEXT)")
    old.executemany("INSERT INTO text_pile VALUES (?, ?, ?)", [(1, "main text", ""), (2, "", "side text")])
    assert dict(_main_texts(old, [1, 2])) == {1: "main text", 2: "side text"}


def test_marked_html_is_escaped_and_balanced_whatever_the_markers():
    assert marked_to_html(f"a <b> & {OPEN}c\"{CLOSE} d") == "a &lt;b&gt; &amp; <mark>c&quot;</mark> d"
    assert marked_to_html(f"{CLOSE}x{OPEN}{OPEN}y") == "x<mark>y</mark>"  # strays ignored, closed at the end
    rng = random.Random(3)
    for _ in range(2000):
        text = "".join(rng.choice(["a", " ", "<", "&", "'", OPEN, CLOSE]) for _ in range(rng.randint(0, 12)))
        assert marked_to_html(text) == _paired_to_html(text), repr(text)


def test_the_first_part_scanned_first_gives_the_whole_text_scan(monkeypatch):
    from textpile.search import snippets

    rng = random.Random(11)
    words = ["heron", "egret", "Heron", "stork", "x", "İ", "water", "herons"]
    cases = []
    for _ in range(300):
        text = " ".join(rng.choices(words, weights=[3, 2, 1, 1, 300, 1, 2, 1], k=rng.randint(500, 6000)))
        cases.append((text, [[rng.choice(["heron", "egret", "stork", "wat"])] for _ in range(rng.randint(1, 3))]))
    two_part = [SnippetMaker(w).snippet(t) for t, w in cases]
    monkeypatch.setattr(snippets, "SNIPPET_FIRST", 10 ** 9)  # one scan of the whole text
    assert [SnippetMaker(w).snippet(t) for t, w in cases] == two_part
    assert sum(s is not None and "[" in marked(s) for s in two_part) > 250


def test_a_phrase_is_looked_for_whole_and_marked_as_one():
    from textpile.search.snippets import SnippetMaker, marked_to_html

    # review-6: for "temporary directory" the snippet showed "Temporary files ... directories"
    text = "Temporary files are kept here. " * 20 + "Set the temporary\ndirectories first; a temporary directory."
    assert marked_to_html(SnippetMaker([["temporar director", "temporary", "directory"]]).snippet(text)) == (
        "…are kept here. Temporary files are kept here. Set the <mark>temporary directories</mark> first; "
        "a <mark>temporary directory</mark>.")
    # anything but word characters between its words, as FTS5 reads a phrase
    assert marked_to_html(SnippetMaker([["write ahead log"]]).snippet("The Write-Ahead Log file.")) == (
        "The <mark>Write-Ahead Log</mark> file.")
    # one- and two-letter words of a phrase are whole words
    assert marked_to_html(SnippetMaker([["of the"]]).snippet("often thermal; top of the list")) == (
        "often thermal; top <mark>of the</mark> list")
    # a text without the phrase gets the words' snippet
    assert marked_to_html(SnippetMaker([["temporar director", "temporary", "directory"]]).snippet(
        "Temporary files only.")) == "<mark>Temporary</mark> files only."
