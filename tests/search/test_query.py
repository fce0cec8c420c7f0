"""The query language parser and the FTS5 compiler."""

from textpile.search.query_compiler import compile_query, fts_string, token_counts
from textpile.search.query import MAX_QUERY_CHARS, MAX_TERMS, Filter, Term, parse_query


def test_words_phrases_and_bare_minus():
    p = parse_query('foo "bar baz" -qux -"not this" »guillemets« «other way»')
    assert p.groups == [[Term("foo")], [Term("bar baz", True)], [Term("-qux")],
                        [Term("guillemets", True)], [Term("other way", True)]]
    assert p.excluded == [Term("not this", True)]


def test_backslash_escapes_inside_quotes():
    p = parse_query(r'"say \"hi\" \\ now"')
    assert p.groups == [[Term('say "hi" \\ now', True)]]


def test_quote_mid_word_and_unbalanced_are_literal():
    assert parse_query('foo"bar"').groups == [[Term('foo"bar"')]]
    assert parse_query('"unbalanced').groups == [[Term('"unbalanced')]]
    # a closing quote followed by a letter does not close
    assert parse_query('"don"t stop"').groups == [[Term('don"t stop', True)]]


def test_filters_and_negated_filters():
    p = parse_query("cats site:Example.ORG -host:www.example.org lang:DE -lang:en site:https://b.example.net/path")
    assert p.filters == [
        Filter("site", "example.org"), Filter("host", "www.example.org", True),
        Filter("lang", "de"), Filter("lang", "en", True), Filter("site", "b.example.net", path="/path"),
    ]
    assert p.groups == [[Term("cats")]]
    assert "no value" in parse_query("site:").messages[0]


def test_or_groups_and_literal_or():
    p = parse_query('a OR "b c" d OR e OR f')
    assert p.groups == [[Term("a"), Term("b c", True)], [Term("d"), Term("e"), Term("f")]]
    assert parse_query("OR a").groups == [[Term("OR")], [Term("a")]]
    assert parse_query("a or b").groups == [[Term("a")], [Term("or")], [Term("b")]]


def test_limits_and_cleaning():
    p = parse_query("x" * (MAX_QUERY_CHARS + 50))
    assert len(p.groups[0][0].text) == MAX_QUERY_CHARS and "cut" in p.messages[0]
    p = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert len(p.groups) == MAX_TERMS and "64" in p.messages[0]
    # a stray control character or lone surrogate inside a word leaves it whole (review-6 #10);
    # line breaks, tabs and the other whitespace controls separate words
    assert parse_query("a\x00b\ud800c").groups == [[Term("abc")]]
    assert parse_query("vac\x01uum").groups == [[Term("vacuum")]]
    assert parse_query("a\tb\nc\x1fd\x85e\u2028f").groups == [[Term(w)] for w in "abcdef"]


def test_compile_quotes_everything_and_drops_tokenless_terms():
    assert fts_string('a"b') == '"a""b"'
    assert token_counts(["*", "C++", "hello-world", "ünïcödé", ""]) == [0, 1, 2, 1, 0]
    c = compile_query(parse_query(r'C++ * "x\" y" NOT'))
    assert c.match == '{title description text secondary_text big_headlines small_headlines code_text quote_text} : ' \
                      '("C++" AND "x"" y" AND "NOT")'
    assert c.positive_count == 3 and "'*'" in c.messages[0]
    only_neg = compile_query(parse_query('-"foo bar"'))
    assert only_neg.match.startswith('(any : "any") NOT (')
    assert compile_query(parse_query("*")).match is None
