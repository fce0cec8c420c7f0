"""QueryMatcher.best_anchor (the best line of anchor texts, found by the lines holding a query word) and parts_title."""

from textpile.index.analysis import Analyzer
from textpile.search.features import NO_MATCH, QueryMatcher
from textpile.search.plan import plan_query
from textpile.search.query import parse_query


def matcher(query: str) -> QueryMatcher:
    analyzer = Analyzer()
    return QueryMatcher(plan_query(parse_query(query), analyzer, ["en", None]), analyzer, ["en", None])


def test_best_anchor_is_the_best_line():
    lines = "\n".join(["tabl of content", "creat index", "index", "the creat index command", "next"])
    m = matcher("create index")
    assert m.best_anchor(lines) == 1.0  # the line "creat index" is the query
    assert m.best_anchor("index\nthe creat index command") == 0.5  # 2 of 2 words, 2 of 4 terms
    assert m.best_anchor("tabl of content\nnext") == 0.0
    assert m.best_anchor("") == 0.0
    # every line equals matching each line on its own
    for text in [lines, "index\nindex", "creat\nindex\ncreat index", "reindex\ncreatindex"]:
        per_line = max(m.match(line).cover * m.match(line).precision for line in text.split("\n"))
        assert m.best_anchor(text) == per_line


def test_parts_title_reads_a_variant_by_its_parts_only_when_a_part_is_a_query_word():
    title = "ThreadPoolExecutor Class"
    held = matcher("thread pool").parts_title(title, None, "en")
    assert (held.cover, held.precision, held.complete) == (1.0, 0.5, True)  # thread pool executor class
    # "class" is no part: read by parts the title holds it as its own line does (cover 1.0
    # there), so the parts reading is left out
    m = matcher("class")
    assert m.parts_title(title, None, "en") == NO_MATCH
    assert m.best_line(Analyzer().analyze(title, "en"), Analyzer().analyze(title, None))[0].cover == 1.0
    # a part and a plain word: read by parts
    both = matcher("pool class").parts_title(title, None, "en")
    assert (both.cover, both.precision) == (1.0, 0.5)


def test_a_split_form_is_looked_for_by_its_longest_part():
    """A line holding only a split form's short parts (``ing`` of ``com pare ing``) matches
    nothing and is not matched; the best line is the one matching every line gives."""
    from textpile.search.plan import Item, QueryPlan

    plan = QueryPlan([[Item("comparing", False, (("compar",), ("com", "pare", "ing")))],
                      [Item("values", False, (("valu",), ("val", "ue")))]])

    def fresh() -> QueryMatcher:
        return QueryMatcher(plan, Analyzer(), ["en", None])

    m = fresh()
    assert set(m._stemmed.terms) == {"comparingvalues", "comparingvalu", "compar", "valu", "pare", "com", "val", "ing",
                                     "ue"}
    assert set(m._stemmed.triggers) == {"comparingvalues", "comparingvalu", "compar", "valu", "pare", "val"}
    lines = "\n".join(["ing thing", "continu ue", "com pare ing the val ue", "compar valu", "work ing"])
    assert m.best_anchor(lines) == 1.0
    assert set(m._seen) == {("com pare ing the val ue", False), ("compar valu", False)}  # no line of ing or ue alone
    every = fresh()
    assert max(every.match(line).cover * every.match(line).precision for line in lines.split("\n")) == 1.0
    assert [every.match(line) for line in ("ing thing", "continu ue", "work ing")] == [NO_MATCH] * 3
