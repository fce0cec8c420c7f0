"""The link counts' changes: a page whose new generation keeps its URL and its link list cancels out."""

from __future__ import annotations

import sqlite3

from textpile.index.inlinks import _without_same_links


def test_a_leaving_and_an_entering_generation_with_one_url_and_the_same_links_are_left_out():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE entity_generation (entity_generation_id INTEGER PRIMARY KEY, url_id INTEGER)")
    conn.execute("CREATE TABLE link_list (entity_generation_id INTEGER PRIMARY KEY, links_size INTEGER, "
                 "links_packed BLOB)")
    # generation: (url, links); 1-4 leave, 5-9 enter
    rows = {1: (10, b"[[1,1]]"), 2: (20, b"[[2,1]]"), 3: (30, b"[[3,1]]"), 4: (40, b"[[4,1]]"),
            5: (10, b"[[1,1]]"),  # 1's URL and links: both go
            6: (21, b"[[2,1]]"),  # 2's links on another URL (its own link would not count): both stay
            7: (30, b"[[3,2]]"),  # 3's URL with another link: both stay
            8: (40, b"[[4,1]]"), 9: (40, b"[[4,1]]")}  # two for the one 4: one pair goes
    conn.executemany("INSERT INTO entity_generation VALUES (?, ?)", [(eg, url) for eg, (url, _) in rows.items()])
    conn.executemany("INSERT INTO link_list VALUES (?, ?, ?)",
                     [(eg, len(links), links) for eg, (_, links) in rows.items()])
    conn.execute("INSERT INTO entity_generation VALUES (11, 50)")  # entering without a link list
    leaving, entering = _without_same_links(conn, [1, 2, 3, 4], [5, 6, 7, 8, 9, 11])
    assert leaving == [2, 3]
    assert entering == [6, 7, 9, 11]
    assert _without_same_links(conn, [], [5]) == ([], [5])
