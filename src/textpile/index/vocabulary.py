"""The vocabularies of the search index: terms and words with the pages holding them.

``search_term`` (every term of ``search_index`` with its page count: which query words
are rare) and ``search_word`` (the words of ``full_text_entity_index`` of three or more
characters with theirs: the "did you mean" vocabulary), and ``search_language`` (pages
per stemmer language). A lookup in FTS5's own vocabulary (``fts5vocab``) walks a term's
whole document list, so the counts are kept in tables: read from fts5vocab by a rebuild
(:func:`fill`), and changed by an update by the counts of the rows it deletes and
inserts (:class:`VocabularyChanges`), which FTS5 itself counts: the rows go through
temporary FTS5 tables with the same tokenizers, so a term is counted exactly as the
index would count it.
"""

from __future__ import annotations

import sqlite3

from textpile.index.fulltext import WORD_COLUMNS  # the columns of full_text_entity_index that hold words
from textpile.index.schema import SEARCH_COLUMNS

#: Words shorter than this are not in search_word.
MIN_WORD_LENGTH = 3
#: The tokenizers of search_index and full_text_entity_index (schemas/summary/*.sql).
_TERM_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* M*'"
_WORD_TOKENIZER = "unicode61 remove_diacritics 2"
#: The options of the temporary FTS5 tables that count an update's rows: no content, and
#: neither positions nor row sizes (``detail=none``, ``columnsize=0``), which fts5vocab's
#: page counts per term do not need (it tokenizes as the index does, and writes less).
_COUNTING = "content='', detail=none, columnsize=0"


def fill(conn: sqlite3.Connection, languages: dict[str, int]) -> None:
    """Fill the (empty) search_term and search_word from the FTS5 tables as they are, and
    search_language from ``languages`` (stemmer language code -> pages)."""
    for table in ("index_terms_vocab", "index_words_vocab"):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
    conn.execute("CREATE VIRTUAL TABLE temp.index_terms_vocab USING fts5vocab(main, search_index, 'row')")
    conn.execute("INSERT INTO search_term(term, docs) SELECT term, doc FROM temp.index_terms_vocab")
    conn.execute("CREATE VIRTUAL TABLE temp.index_words_vocab USING fts5vocab(main, full_text_entity_index, 'row')")
    conn.execute("INSERT INTO search_word(word, docs) SELECT term, doc FROM temp.index_words_vocab "
                 "WHERE length(term) >= ?", (MIN_WORD_LENGTH,))
    for table in ("index_terms_vocab", "index_words_vocab"):
        conn.execute(f"DROP TABLE temp.{table}")
    conn.executemany("INSERT INTO search_language(language, pages) VALUES (?, ?)",
                     [(code, n) for code, n in languages.items() if n])


class VocabularyChanges:
    """The rows an update deletes and inserts, counted by term (search_index rows) and by
    word (full_text_entity_index rows), and the pages per language; :meth:`apply` adds
    the counts to the tables. One per update, inside its transaction."""

    _TABLES = ("index_terms_minus", "index_terms_plus", "index_words_minus", "index_words_plus")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.languages: dict[str | None, int] = {}
        for table in self._TABLES:
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
        for table in self._TABLES[:2]:
            conn.execute(f"CREATE VIRTUAL TABLE temp.{table} USING fts5({', '.join(SEARCH_COLUMNS)}, "
                         f"{_COUNTING}, tokenize=\"{_TERM_TOKENIZER}\")")
        for table in self._TABLES[2:]:
            conn.execute(f"CREATE VIRTUAL TABLE temp.{table} USING fts5({', '.join(WORD_COLUMNS)}, "
                         f"{_COUNTING}, tokenize=\"{_WORD_TOKENIZER}\")")
        self._insert = {table: f"INSERT INTO temp.{table}(rowid, {', '.join(SEARCH_COLUMNS)}) "
                               f"VALUES (?{', ?' * len(SEARCH_COLUMNS)})" for table in self._TABLES[:2]}
        self._insert.update({table: f"INSERT INTO temp.{table}(rowid, {', '.join(WORD_COLUMNS)}) "
                                    f"VALUES (?{', ?' * len(WORD_COLUMNS)})" for table in self._TABLES[2:]})

    def page_rows(self, search_rows: list[tuple], languages: list[str | None], sign: int) -> None:
        """Count the search_index rows ``search_rows`` (docid first) of pages analyzed in
        ``languages`` as deleted (``sign`` -1) or inserted (+1)."""
        table = "index_terms_minus" if sign < 0 else "index_terms_plus"
        self.conn.executemany(self._insert[table], search_rows)
        for language in languages:
            self.languages[language] = self.languages.get(language, 0) + sign

    def full_text_rows(self, rows: list[tuple], sign: int) -> None:
        """Count the full_text_entity_index rows ``rows`` (entity_generation_id, then the
        values of :data:`textpile.index.fulltext.COLUMNS`: :func:`textpile.index.fulltext.source_rows`)
        as deleted (``sign`` -1) or inserted (+1)."""
        table = "index_words_minus" if sign < 0 else "index_words_plus"
        self.conn.executemany(self._insert[table], [(r[0], *r[2:]) for r in rows])  # the id, then WORD_COLUMNS

    def _counts(self, table: str) -> dict[str, int]:
        self.conn.execute("DROP TABLE IF EXISTS temp.index_changes_vocab")
        self.conn.execute(f"CREATE VIRTUAL TABLE temp.index_changes_vocab USING fts5vocab(temp, {table}, 'row')")
        counts = dict(self.conn.execute("SELECT term, doc FROM temp.index_changes_vocab").fetchall())
        self.conn.execute("DROP TABLE temp.index_changes_vocab")
        return counts

    def apply(self) -> None:
        """Add the counted changes to search_term, search_word and search_language; rows
        counting no page go; the temporary tables are dropped.

        Raises:
            sqlite3.IntegrityError: a count would fall below 0 (the tables do not match
                the index: it must be rebuilt).
        """
        for target, key, minus, plus, shortest in (
                ("search_term", "term", "index_terms_minus", "index_terms_plus", 1),
                ("search_word", "word", "index_words_minus", "index_words_plus", MIN_WORD_LENGTH)):
            change = self._counts(plus)
            for term, docs in self._counts(minus).items():
                change[term] = change.get(term, 0) - docs
            rows = [(t, d) for t, d in change.items() if d and len(t) >= shortest]
            self._add(target, key, rows)
        self._add("search_language", "language", [(c, d) for c, d in self.languages.items() if c and d])
        for table in self._TABLES:
            self.conn.execute(f"DROP TABLE temp.{table}")

    def _add(self, table: str, key: str, rows: list[tuple[str, int]]) -> None:
        """Add the counts of ``rows`` ((key, change) pairs, each key once) to ``table`` in
        one statement, through a temporary table of the changes (an upsert per pair from
        Python took about twice as long for the 42,514 changes of the growth benchmark's
        1% at 100K), then check that none fell below 0 and drop those at 0."""
        count = "docs" if table != "search_language" else "pages"
        self.conn.execute("DROP TABLE IF EXISTS temp.vocabulary_change")
        self.conn.execute("CREATE TEMP TABLE vocabulary_change (key TEXT PRIMARY KEY, change INTEGER NOT NULL) "
                          "WITHOUT ROWID")
        self.conn.executemany("INSERT INTO temp.vocabulary_change(key, change) VALUES (?, ?)", rows)
        # the names are the schema's (table, key and count column), not input; "WHERE true"
        # tells SQLite's parser that ON CONFLICT belongs to the INSERT, not to a join
        self.conn.execute(f"INSERT INTO {table}({key}, {count}) SELECT key, change FROM temp.vocabulary_change "
                          f"WHERE true ON CONFLICT({key}) DO UPDATE SET {count} = {count} + excluded.{count}")
        if self.conn.execute(f"SELECT count(*) FROM temp.vocabulary_change JOIN {table} ON {key} = key "
                             f"WHERE {count} < 0").fetchone()[0]:
            raise sqlite3.IntegrityError(f"the counts of {table} do not match the search index")
        self.conn.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT key FROM temp.vocabulary_change) "
                          f"AND {count} = 0")
        self.conn.execute("DROP TABLE temp.vocabulary_change")
