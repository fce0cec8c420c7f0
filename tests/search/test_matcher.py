"""QueryMatcher.best_anchor: the best line of anchor texts, found by the lines holding a query word."""

from textpile.index.analysis import Analyzer
from textpile.search.features import QueryMatcher
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
