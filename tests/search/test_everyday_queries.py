"""Everyday queries (issue 29): the right page first when users describe what they want.

One small site per cause of the misses the issue lists, each with the exact order
expected: stop words and words on every page earn no credit, a class reference is no
index page, a title match outranks pages that only hold every word in their text,
titles are read by their identifier parts, hyphenated and joined forms meet, and a
question finds the section that answers it.
"""

from __future__ import annotations


from search.builder import SummaryBuilder
from search.fixture_site import html_page, summarized_site
from textpile.search.engine import search
from textpile.search.rank import HYBRID_RANKING
from textpile.search.service import search_pages

FILLER = "Other words fill this paragraph so that the page is of an ordinary length for a page. " * 3


def urls(results):
    return [r.url for r in results.results]


def test_a_stop_word_gives_no_title_credit(tmp_path):
    conn = summarized_site(tmp_path, {
        # "to" and "the" are all this title shares with the query
        "https://a.example/howto": html_page("How to use the help viewer", f"""
            <p>Open the viewer from the menu. You can write notes about your changes; they are kept on
            disk. {FILLER}</p>"""),
        "https://a.example/saving": html_page("Saving your work", f"""
            <p>Write changes to the disk with the save command. Changes stay in memory until you write
            them to the disk. {FILLER}</p>"""),
        "https://a.example/other": html_page("Other topics", f"<p>Nothing about saving. {FILLER}</p>"),
    })
    got = search(conn, "write changes to the disk", explain=True)
    assert urls(got) == ["https://a.example/saving", "https://a.example/howto"]
    howto = next(e for e in got.explained if e["url"] == "https://a.example/howto")
    assert howto["features"]["title_cover"] == 0.0 and howto["features"]["exact_form"] == 0.0


def test_a_word_on_every_page_gives_no_credit(tmp_path):
    # a man-page site: the product's name is in every title, URL and text
    conn = summarized_site(tmp_path, {
        "https://m.example/frob-commit.html": html_page("frob-commit(1)", f"""
            <p>frob commit records changes to the repository. A commit that is wrong can be made
            again; see the guide to undo one. {FILLER}</p>"""),
        "https://m.example/frob-log.html": html_page("frob-log(1)", f"<p>frob log shows the history. {FILLER}</p>"),
        "https://m.example/frob-tag.html": html_page("frob-tag(1)", f"<p>frob tag names a commit. {FILLER}</p>"),
        "https://m.example/undo.html": html_page("Undo a commit", f"""
            <p>To undo the last commit with frob, reset the branch to the commit before it. {FILLER}</p>"""),
    })
    got = search(conn, "frob undo commit", explain=True)
    # the two pages holding every word, then those holding some (frob-tag: frob, commit)
    assert urls(got) == ["https://m.example/undo.html", "https://m.example/frob-commit.html",
                         "https://m.example/frob-tag.html", "https://m.example/frob-log.html"]
    features = {e["url"].rsplit("/", 1)[1]: e["features"] for e in got.explained}
    assert features["frob-log.html"]["url_cover"] < 0.01 and features["frob-log.html"]["title_cover"] < 0.01
    assert features["frob-commit.html"]["title_cover"] < features["undo.html"]["title_cover"]


def test_a_class_reference_is_not_an_index_page(tmp_path):
    # a class reference: many in-page anchors give it a high indexiness, but little of its text is links
    builder = SummaryBuilder(tmp_path / "summary.db")
    builder.add_page("https://c.example/classQueue.html", title="Queue Class Reference", indexiness=95,
                     text="Queue holds tasks in the order they were added and hands them to worker threads. "
                          "Members: push, pop, size, empty, clear, swap. " + FILLER)
    builder.add_page("https://c.example/example-queue.html", title="Examples", indexiness=-10,
                     text="An example that adds tasks to a queue for worker threads and waits for them. " + FILLER)
    builder.build_fts()
    conn = builder.conn
    assert urls(search(conn, "queue of tasks for worker threads")) == [
        "https://c.example/classQueue.html", "https://c.example/example-queue.html"]


def test_a_title_match_lacking_one_word_outranks_pages_with_every_word_in_the_body(tmp_path):
    pages = {
        "https://l.example/rotation.html": html_page("Log file rotation", f"""
            <p>Rotation renames the current log file and starts a new one, on a schedule you choose
            (every hour, day or week). {FILLER}</p>"""),
    }
    for i, topic in enumerate(["Backups", "Disk quotas", "Cron jobs"]):
        pages[f"https://l.example/page{i}.html"] = html_page(topic, f"""
            <p>{topic} are checked daily. Old files are moved away; a log records each run and the
            tool can rotate its output. {FILLER}</p>""")
    for topic in ["Colours", "Fonts", "Keyboard", "Mouse", "Sound", "Network"]:  # the rest of the manual
        pages[f"https://l.example/{topic.lower()}.html"] = html_page(topic, f"<p>{topic} settings. {FILLER}</p>")
    conn = summarized_site(tmp_path, pages)
    got = urls(search(conn, "rotate log files daily"))
    assert got[0] == "https://l.example/rotation.html"
    assert sorted(got[1:]) == [f"https://l.example/page{i}.html" for i in range(3)]


def test_thread_pool_finds_a_threadpoolexecutor_title(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://j.example/ThreadPoolExecutor.html": html_page("ThreadPoolExecutor Class", f"""
            <p>An executor that runs each submitted task on one of several pooled threads. {FILLER}</p>"""),
        "https://j.example/Overview.html": html_page("Concurrency overview", f"""
            <p>A thread can take work from a pool; a pool keeps its thread count bounded. {FILLER}</p>"""),
        "https://j.example/Object.html": html_page("Object Class", f"<p>The root of the hierarchy. {FILLER}</p>"),
    })
    got = search(conn, "thread pool", explain=True)
    assert urls(got) == ["https://j.example/ThreadPoolExecutor.html", "https://j.example/Overview.html"]
    assert got.explained[0]["features"]["title_cover"] == 1.0


def test_backend_finds_back_end_and_back_end_finds_backend(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://b.example/storage.html": html_page("Storage", f"<p>Choose a back-end for storage. {FILLER}</p>"),
        "https://b.example/cache.html": html_page("Cache", f"<p>The cache backend keeps entries in memory. {FILLER}</p>"),
        "https://b.example/front.html": html_page("Front", f"<p>The front end talks to users. {FILLER}</p>"),
    })
    assert sorted(urls(search(conn, "backend"))) == ["https://b.example/cache.html", "https://b.example/storage.html"]
    # both forms first; "front end" holds a part of "back-end" and follows
    got = urls(search(conn, "back-end"))
    assert sorted(got[:2]) == ["https://b.example/cache.html", "https://b.example/storage.html"]
    assert got[2:] == ["https://b.example/front.html"]


def test_a_split_form_is_marked_as_its_parts_in_a_row(tmp_path):
    """"backend" finds "back-end" (its split form, back end): the snippet marks "back-end",
    and neither "back" nor "end" where they stand apart."""
    conn = summarized_site(tmp_path, {
        "https://b.example/storage.html": html_page(
            "Storage", "<p>Choose a back-end for storage; at the end of the day, go back to it.</p>"),
        "https://b.example/cache.html": html_page("Cache", "<p>The cache backend keeps entries in memory.</p>"),
    })
    got = {r.url: r.snippet_html for r in search(conn, "backend").results}
    assert got == {
        "https://b.example/storage.html":
            "Choose a <mark>back-end</mark> for storage; at the end of the day, go back to it.",
        "https://b.example/cache.html": "The cache <mark>backend</mark> keeps entries in memory."}


def test_a_question_finds_the_section_that_answers_it(tmp_path):
    sections = {
        "installing": ("Installing", "Download the package and run the installer; it asks where to put the files."),
        "mail": ("Sending email", "The mailer delivers messages to recipients through an SMTP server; give it the "
                                  "sender, the recipients and the message body."),
        "printing": ("Printing reports", "Reports go to the default printer; choose paper size and margins first."),
    }
    body = "".join(f'<h2 id="{anchor}">{title}</h2><p>{text} {FILLER}</p>' for anchor, (title, text) in sections.items())
    conn = summarized_site(tmp_path, {
        "https://q.example/manual.html": html_page("User manual", "<h1>User manual</h1>" + body),
        "https://q.example/about.html": html_page("About", f"<p>Who made this program and why. {FILLER}</p>"),
    })
    got = search_pages(conn, "how do I send mail to someone", mode="hybrid")
    assert urls(got)[0] == "https://q.example/manual.html#mail"
    assert got.results[0].section_title == "Sending email"
    assert got.mode == "hybrid"


def test_a_page_far_in_meaning_holding_no_word_is_no_hybrid_result(tmp_path):
    conn = summarized_site(tmp_path, {
        "https://r.example/": html_page("t", '<a href="/dash">d</a> <a href="/reload">r</a>'),
        "https://r.example/dash": html_page("t", "<p>dashboardword figures</p>"),
        "https://r.example/reload": html_page("t", "<p>reloadword every five seconds</p>"),
        "https://r.example/real": html_page("t", "<p>realword content</p>"),
        "https://r.example/real-two": html_page("t", "<p>second real page</p>"),
    })
    # the 30 nearest pages by vector join the keyword candidates, but these hold no
    # query word and are far from the query: the one page holding it is all there is
    got = search_pages(conn, "realword", mode="hybrid", explain=True)
    assert got.mode == "hybrid" and urls(got) == ["https://r.example/real"]
    assert [e["url"] for e in got.explained] == ["https://r.example/real"]


def test_words_close_together_outrank_the_same_words_apart(tmp_path):
    # the types page holds "date" and "formatting" more often and in its title, but apart;
    # the functions page writes them together
    pages = {
        "https://d.example/types.html": html_page("Date and time types", f"""
            <p>A date is stored in four bytes; a date can hold years far in the past. {FILLER}</p><p>{FILLER}</p>
            <p>Numbers and text need formatting too; formatting rules are in the manual. {FILLER}</p>"""),
        "https://d.example/functions.html": html_page("Output functions", f"""
            <p>The to_char function does date formatting with a template. {FILLER}</p><p>{FILLER}</p>"""),
        "https://d.example/other.html": html_page("Other topics", f"<p>Nothing here. {FILLER}</p>"),
    }
    conn = summarized_site(tmp_path, pages)
    got = search_pages(conn, "date formatting", mode="hybrid", explain=True)
    # other.html (no word of the query) comes in as one of the nearest pages by vector
    assert urls(got) == ["https://d.example/functions.html", "https://d.example/types.html",
                         "https://d.example/other.html"]
    first, second = got.explained[0], got.explained[1]
    assert first["features"]["proximity"] == 1.0 and second["features"]["proximity"] == 0.0
    # without the proximity feature the order would be the other way round
    assert first["score"] - HYBRID_RANKING.features["proximity"] < second["score"]
    keyword = {e["url"]: e["features"]["proximity"] for e in search(conn, "date formatting", explain=True).explained}
    assert keyword == {"https://d.example/functions.html": 1.0, "https://d.example/types.html": 0.0}
    off = search(conn, "date formatting", explain=True, disable=frozenset({"proximity"}))
    assert [e["features"]["proximity"] for e in off.explained] == [0.0, 0.0]  # turned off: not looked up


def test_only_a_word_s_split_form_is_marked_as_its_parts_in_a_row():
    """The parts of a one-word item's two-term split form are one form; a CJK word's
    character pairs (an alternative of many terms) and the parts of words written
    together stay forms of their own."""
    from textpile.search.engine import _split_form
    from textpile.search.plan import Item

    assert _split_form(Item("backend", False, (("backend",), ("back", "end"))), ["backend"], ("back", "end"))
    cjk = "東京都庁舎の運用方針を確認する手順書です東京都庁"
    pairs = tuple(cjk[i:i + 2] for i in range(len(cjk) - 1))
    assert not _split_form(Item(cjk, False, (pairs,)), [cjk], pairs)
    assert not _split_form(Item("orm.Session", False, (("orm", "session"),)), ["orm", "Session"], ("orm", "session"))
    assert not _split_form(Item("back end", True, (("back", "end"),)), ["back", "end"], ("back", "end"))
