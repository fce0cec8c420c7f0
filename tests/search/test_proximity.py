"""The proximity feature's FTS5 expressions and shares (textpile.search.proximity)."""

from __future__ import annotations

import pytest

from search.fixture_site import html_page, summarized_site
from textpile.search import proximity
from textpile.search.engine import search
from textpile.search.plan import Item, QueryPlan
from textpile.search.proximity import near_expression, proximity_shares, scan_is_cheaper

FILLER = "Other words fill this paragraph so that the page is of an ordinary length for a page. " * 3


def test_near_expression_pairs_every_form_the_index_holds():
    date = [Item("date", False, (("date",), ("dat",)))]
    formatting = [Item("formatting", False, (("format",), ("formatting",)))]
    assert near_expression(date, formatting) == (
        'NEAR("date" "format", 3) OR NEAR("date" "formatting", 3) OR NEAR("dat" "format", 3) '
        'OR NEAR("dat" "formatting", 3)')
    assert near_expression(date, formatting, indexed={"date", "format"}) == 'NEAR("date" "format", 3)'
    assert near_expression(date, formatting, indexed={"format"}) is None
    # a split form (backend -> back end) is no form of the word whose closeness counts
    backend = [Item("backend", False, (("backend",), ("back", "end")))]
    assert near_expression(backend, date) == 'NEAR("backend" "date", 3) OR NEAR("backend" "dat", 3)'
    # but a word analyzed into two terms keeps its one-term form (back-end -> backend)
    back_end = [Item("back-end", False, (("back", "end"), ("backend",)))]
    assert near_expression(back_end, date, indexed={"back", "end", "backend", "date"}) == (
        'NEAR("back end" "date", 3) OR NEAR("backend" "date", 3)')


def test_a_scan_is_chosen_when_the_rarer_words_are_on_few_pages():
    pairs = [(("date",), ("format",)), (("dat",), ("format",))]
    docs = {"date": 6000, "dat": 14000, "format": 90000}
    # 6,000 + 14,000 pages to scan against 1,000 per candidate and form pair
    assert scan_is_cheaper(pairs, docs, 10) is True  # 20,000 <= 20,000
    assert scan_is_cheaper(pairs, docs, 9) is False  # 20,000 > 18,000


def test_shares_weigh_each_pair_by_its_smaller_word(tmp_path, monkeypatch):
    conn = summarized_site(tmp_path, {
        "https://p.example/a.html": html_page("A", f"<p>Rotate log files daily. {FILLER}</p>"),
        "https://p.example/b.html": html_page("B", f"<p>Rotate log entries. {FILLER} Files are kept daily.</p>"),
        "https://p.example/c.html": html_page("C", f"<p>Nothing of it. {FILLER}</p>"),
    })
    ids = dict(conn.execute("SELECT u.str_url, eg.entity_generation_id FROM entity_generation eg "
                            "JOIN url u ON u.url_id = eg.url_id"))
    core = QueryPlan(requirements=[[Item(w, False, ((t,),))] for w, t in
                                   (("rotate", "rotat"), ("log", "log"), ("files", "file"))])
    pages = [ids[f"https://p.example/{p}.html"] for p in "abc"]
    shares = proximity_shares(conn, core, [0.5, 0.2, 0.3], pages)
    # pairs: rotate-log (weight 0.2), log-files (0.2); b holds only the first close together
    assert [shares[p] for p in pages] == [1.0, 0.5, 0.0]
    # the same looked up on the candidates' docids instead of scanned (3 pages: a scan)
    monkeypatch.setattr(proximity, "SCAN_DOCS_PER_LOOKUP", 0)
    assert proximity_shares(conn, core, [0.5, 0.2, 0.3], pages) == shares
    assert proximity_shares(conn, core, [0.5, 0.2, 0.3], pages[1:]) == {pages[1]: 0.5, pages[2]: 0.0}
    with pytest.raises(ValueError, match="2 weights for 3 requirements"):
        proximity_shares(conn, core, [0.5, 0.5], [])


def test_only_the_first_candidates_by_the_score_without_it_are_measured(tmp_path):
    # the types page holds "date" and "formatting" in its title, but apart: first without
    # proximity; the functions page writes them together
    conn = summarized_site(tmp_path, {
        "https://d.example/types.html": html_page("Date and time types", f"""
            <p>A date is stored in four bytes; a date can hold years far in the past. {FILLER}</p><p>{FILLER}</p>
            <p>Numbers and text need formatting too; formatting rules are in the manual. {FILLER}</p>"""),
        "https://d.example/functions.html": html_page("Output functions", f"""
            <p>The to_char function does date formatting with a template. {FILLER}</p><p>{FILLER}</p>"""),
    })
    measured = search(conn, "date formatting", explain=True)
    assert [(e["url"], e["features"]["proximity"]) for e in measured.explained] == [
        ("https://d.example/functions.html", 1.0), ("https://d.example/types.html", 0.0)]
    first_only = search(conn, "date formatting", explain=True, proximity_depth=1)
    assert [(e["url"], e["features"]["proximity"]) for e in first_only.explained] == [
        ("https://d.example/types.html", 0.0), ("https://d.example/functions.html", 0.0)]
    every = search(conn, "date formatting", explain=True, proximity_depth=None)
    assert every.explained == measured.explained


def test_held_shares_count_only_the_pages_asked_for(tmp_path):
    """held_shares scans each requirement over the docid range the pages span: a page in
    that range that was not asked for (b, between a and d, holding every word) gets
    nothing, and each page asked for gets the weights of the requirements it holds."""
    from textpile.search.candidates import held_shares, page_docids

    conn = summarized_site(tmp_path, {
        f"https://p.example/{name}.html": html_page(name.upper(), f"<p>{text} {FILLER}</p>")
        for name, text in (("a", "Rotate the log."), ("b", "Rotate log files."), ("c", "Nothing of it."),
                           ("d", "Files and a log."))})
    ids = dict(conn.execute("SELECT u.str_url, eg.entity_generation_id FROM entity_generation eg "
                            "JOIN url u ON u.url_id = eg.url_id"))
    plan = QueryPlan(requirements=[[Item(w, False, ((t,),))] for w, t in
                                   (("rotate", "rotat"), ("log", "log"), ("files", "file"))])
    a, b, c, d = (ids[f"https://p.example/{p}.html"] for p in "abcd")
    docids = {eg: docid for docid, eg in page_docids(conn, [a, b, c, d]).items()}
    asked = [a, c, d]
    assert min(docids[p] for p in asked) < docids[b] < max(docids[p] for p in asked)
    assert held_shares(conn, plan, [0.5, 0.2, 0.3], asked) == {a: 0.7, c: 0.0, d: 0.5}
    assert held_shares(conn, plan, [0.5, 0.2, 0.3], [b]) == {b: 1.0}
    assert held_shares(conn, plan, [0.5, 0.2, 0.3], []) == {}
