"""Properties of the query language (hypothesis): any string is a valid query whose FTS5
expressions are valid, and queries written in the language parse back to what was written."""

import json
import sqlite3
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.builder import sample_site
from textpile.index.analysis import Analyzer
from textpile.index.schema import SEARCH_COLUMNS
from textpile.search.plan import plan_query
from textpile.search.query import FILTER_KINDS, MAX_QUERY_CHARS, MAX_TERMS, QUOTE_PAIRS, Filter, Term, parse_query
from textpile.search.query_compiler import CONTENT_COLUMNS, TOKENIZE, compile_query
from textpile.search.results import results_json
from textpile.search.service import search_pages

#: Characters that carry the syntax, drawn often so that generated text is not mostly letters.
SYNTAX = ['"', "»", "«", "\\", "-", ":", " ", "OR", "site:", "host:", "lang:", "-site:", "/", ".", "*", "(", ")",
          "NOT", "AND", "NEAR", "^", "+", "\t", "\n", "\x00", "\u2028"]
#: Any text: any code point (lone surrogates and control characters too), and syntax.
any_text = st.lists(st.one_of(st.characters(), st.characters(categories=["Cs", "Cc"]), st.sampled_from(SYNTAX)),
                    max_size=40).map("".join)


def _fts_tables() -> sqlite3.Connection:
    """In-memory FTS5 tables with the columns and tokenizers of the documented
    full_text_entity_index and of textpile's search_index, one row each."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE full_text_entity_index USING fts5(text_pile_id UNINDEXED, any, "
                 f"{', '.join(CONTENT_COLUMNS)}, tokenize = '{TOKENIZE}')")
    conn.execute(f"CREATE VIRTUAL TABLE search_index USING fts5({', '.join(SEARCH_COLUMNS)}, "
                 "tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* M*''')")
    conn.execute(f"INSERT INTO full_text_entity_index VALUES (1, 'any', {', '.join('?' * len(CONTENT_COLUMNS))})",
                 ["cats sleep all day"] * len(CONTENT_COLUMNS))
    conn.execute(f"INSERT INTO search_index VALUES ({', '.join('?' * len(SEARCH_COLUMNS))})",
                 ["cat sleep all day"] * len(SEARCH_COLUMNS))
    return conn


FTS = _fts_tables()
ANALYZER = Analyzer()


@given(any_text)
def test_any_string_is_a_valid_query(raw):
    parsed = parse_query(raw)
    items = parsed.positive_terms + parsed.excluded
    assert len(parsed.groups) + len(parsed.excluded) + len(parsed.filters) <= MAX_TERMS
    for term in items:
        assert len(term.text) <= MAX_QUERY_CHARS
        assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in term.text), term
        if not term.phrase:
            assert term.text and not any(c.isspace() for c in term.text), term
    assert all(len(group) == 1 or all(t.text != "OR" or t.phrase for t in group) for group in parsed.groups)
    for f in parsed.filters:
        assert f.kind in FILTER_KINDS and f.value and f.value == f.value.lower()
        assert f.path is None or (f.kind != "lang" and f.path.startswith("/") and len(f.path) > 1)
    compiled = compile_query(parsed)
    if compiled.match is not None:  # always valid FTS5 (an invalid expression raises here)
        FTS.execute("SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ?",
                    [compiled.match]).fetchall()
    plan = plan_query(parsed, ANALYZER, ["en", None])
    for expr in (plan.all_terms, plan.relaxed().all_terms, plan.subset(any_of=True)):
        if expr is not None:
            FTS.execute("SELECT rowid FROM search_index WHERE search_index MATCH ?", [expr]).fetchall()


@pytest.fixture(scope="module")
def summary_conn(tmp_path_factory):
    path = tmp_path_factory.mktemp("query-properties") / "summary.db"
    sample_site(path)
    conn = sqlite3.connect(path)
    yield conn
    conn.close()


@settings(max_examples=60)
@given(raw=any_text)
def test_any_string_searches_and_answers_json(summary_conn, raw):
    results = search_pages(summary_conn, raw, mode="keyword", budget_ms=60_000)
    assert len(results.results) <= results.per_page and results.total >= len(results.results)
    document = json.dumps(results_json(results), ensure_ascii=False)
    document.encode("utf-8")  # no lone surrogate reaches the answer
    assert json.loads(document)["query"] == raw.encode("utf-8", "replace").decode("utf-8")


# --- queries written in the language ------------------------------------------------


def _plain(c: str) -> bool:
    """A character the parser keeps as it is inside a word or phrase."""
    return unicodedata.category(c) not in ("Cc", "Cs", "Zl", "Zp")


def _is_word(text: str) -> bool:
    """Whether ``text`` reads back as one plain word: no space, no opening quote (after a
    ``-`` either), not the operator OR, no ``site:``/``host:``/``lang:`` prefix (with or
    without ``-``)."""
    if not text or any(c.isspace() for c in text) or text.lstrip("-")[:1] in QUOTE_PAIRS or text == "OR":
        return False
    key, sep, _ = (text[1:] if text.startswith("-") and ":" in text else text).partition(":")
    return not (sep and key.lower() in FILTER_KINDS)


words = st.text(st.characters().filter(_plain), min_size=1, max_size=12).filter(_is_word).map(Term)
phrases = st.text(st.characters().filter(_plain), max_size=20).map(lambda text: Term(text, phrase=True))
terms = st.one_of(words, phrases)
labels = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8)
hosts = st.lists(labels, min_size=1, max_size=4).map(".".join)
#: A path prefix: no space, query or fragment, and no ``://`` (read as a URL's scheme separator).
paths = st.one_of(st.none(), st.text(st.characters(exclude_characters="?#").filter(lambda c: _plain(c) and not c.isspace()),
                                     min_size=1, max_size=10).map(lambda p: "/" + p).filter(lambda p: "://" not in p))
filters = st.one_of(
    st.builds(Filter, st.sampled_from(["site", "host"]), hosts, st.booleans(), paths),
    st.builds(Filter, st.just("lang"), st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=6), st.booleans()),
)
#: One written item: ("group", [terms]) (alternatives joined with OR), ("exclude", phrase) or ("filter", Filter).
items = st.one_of(
    st.tuples(st.just("group"), st.lists(terms, min_size=1, max_size=3)),
    st.tuples(st.just("exclude"), phrases),
    st.tuples(st.just("filter"), filters),
)


def _write_term(term: Term, opening: str) -> str:
    if not term.phrase:
        return term.text
    escaped = "".join("\\" + c if c == "\\" or c in QUOTE_PAIRS else c for c in term.text)
    return opening + escaped + QUOTE_PAIRS[opening]


def _write_filter(f: Filter, case: str) -> str:
    kind = f.kind.upper() if case == "upper" else f.kind
    return ("-" if f.negated else "") + f"{kind}:{f.value}{f.path or ''}"


@given(st.lists(items, max_size=12), st.data())
def test_queries_written_in_the_language_parse_back(written, data):
    parts, groups, excluded, found_filters = [], [], [], []
    for kind, value in written:
        if kind == "group":
            parts.append(" OR ".join(_write_term(t, data.draw(st.sampled_from(list(QUOTE_PAIRS)))) for t in value))
            groups.append(value)
        elif kind == "exclude":
            parts.append("-" + _write_term(value, data.draw(st.sampled_from(list(QUOTE_PAIRS)))))
            excluded.append(value)
        else:
            parts.append(_write_filter(value, data.draw(st.sampled_from(["lower", "upper"]))))
            found_filters.append(value)
    query = " ".join(parts)
    if len(query) > MAX_QUERY_CHARS or sum(2 * len(v) - 1 if k == "group" else 1 for k, v in written) > MAX_TERMS:
        return  # cut: the limits have their own test
    parsed = parse_query(query)
    assert (parsed.groups, parsed.excluded, parsed.filters, parsed.messages) == (groups, excluded, found_filters, [])
