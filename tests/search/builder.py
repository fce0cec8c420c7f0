"""Build small summary databases for search tests, the way the summarizer writes them.

Rows follow the shared decisions: FTS rowid = entity_generation_id, and only searchable
generations (open, not duplicate, with a text pile) get FTS rows. ``build_fts(stale=True)``
also indexes the unsearchable ones, to prove the search SQL filters them out itself.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from textpile.ids import uuid7_bytes
from textpile.index.analysis import Analyzer
from textpile.index.update import update_index
from textpile.store.database import open_summary_db
from textpile.store.text_piles import store_gen1
from textpile.store.urls import intern_url, parse_url

PILE_FIELDS = ("text", "secondary_text", "big_headlines", "small_headlines", "code_text", "quote_text")


class SummaryBuilder:
    """A summary database under construction at ``path`` (created if missing)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = open_summary_db(self.path)

    def add_page(
        self,
        url: str,
        *,
        title: str | None = None,
        description: str | None = None,
        text: str = "",
        secondary_text: str = "",
        big_headlines: str = "",
        small_headlines: str = "",
        code_text: str = "",
        quote_text: str = "",
        primary_headline: str | None = None,
        lang: str | None = None,
        time_created: int | None = None,
        time_updated: int | None = None,
        indexiness: int = -10,
        closed: bool = False,
        duplicate: bool = False,
        first_seen: int = 1_700_000_000,
    ) -> int:
        """Add one generation of ``url`` (its fragment kept); return its entity_generation_id."""
        parsed = parse_url(url)
        conn = self.conn
        url_id = intern_url(conn, parsed)
        values = dict(text=text, secondary_text=secondary_text, big_headlines=big_headlines,
                      small_headlines=small_headlines, code_text=code_text, quote_text=quote_text)
        digest = hashlib.blake2b("\n\n\n".join(values[f] for f in PILE_FIELDS).encode("utf-8"), digest_size=64).digest()
        pile_id = store_gen1(conn, digest, [values[f] for f in PILE_FIELDS], None, None)
        eg_id = conn.execute(
            "INSERT INTO entity_generation(entity_generation_uuid, url_id, url_fragment, first_seen_unix_utc,"
            " last_seen_unix_utc, confirmed_end_unix_utc, marked_duplicate, text_pile_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (uuid7_bytes(), url_id, parsed.fragment, first_seen, first_seen + 10,
             first_seen + 20 if closed else None, 1 if duplicate else 0, pile_id),
        ).lastrowid
        conn.execute(
            "INSERT INTO document_description(entity_generation_id, time_created_unix_utc, time_updated_unix_utc,"
            " primary_language, title, primary_headline, description, indexiness) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (eg_id, time_created, time_updated, lang, title, primary_headline, description, indexiness),
        )
        conn.commit()
        return eg_id

    def build_fts(self, *, stale: bool = False) -> int:
        """(Re)build the FTS rows; with ``stale`` index closed/duplicate generations too. Return the row count."""
        conn = self.conn
        rows = update_index(conn, rebuild=True).pages
        if stale:
            # The unsearchable generations get index rows too, as an index lagging behind
            # its database would have: the search must filter them out itself.
            analyzer = Analyzer()
            docid = conn.execute("SELECT coalesce(max(docid), 0) FROM search_page").fetchone()[0]
            stale_rows = conn.execute(
                "SELECT eg.entity_generation_id, dd.title, tp.text, u.origin_id FROM entity_generation eg"
                " JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id JOIN url u ON u.url_id = eg.url_id"
                " LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id"
                " WHERE eg.confirmed_end_unix_utc IS NOT NULL OR eg.marked_duplicate").fetchall()
            for eg_id, title, text, origin_id in stale_rows:
                docid += 1
                conn.execute("INSERT INTO search_page(entity_generation_id, docid, origin_id, language, term_count,"
                             " text_length, in_links, content_in_links, link_density, title_terms, title_words,"
                             " url_terms, url_last_terms, anchor_terms) VALUES (?, ?, ?, 'en', 1, 1, 0, 0, 0,"
                             " '', '', '', '', '')", (eg_id, docid, origin_id))
                conn.execute("INSERT INTO search_index(rowid, title, text) VALUES (?, ?, ?)",
                             (docid, analyzer.analyze(title, "en"), analyzer.analyze(text, "en")))
            conn.execute(
                "INSERT INTO full_text_entity_index(rowid, text_pile_id, any, title, description, text, secondary_text,"
                " big_headlines, small_headlines, code_text, quote_text)"
                " SELECT entity_generation_id, text_pile_id, any, title, description, text, secondary_text,"
                " big_headlines, small_headlines, code_text, quote_text FROM full_text_entity_source"
                " WHERE entity_generation_id IN (SELECT value FROM json_each(?))",
                (json.dumps([r[0] for r in stale_rows]),))
            rows += len(stale_rows)
            conn.commit()
        return rows

    def close(self) -> None:
        """Commit and close the connection."""
        self.conn.commit()
        self.conn.close()


def sample_site(path: str | Path, *, stale_fts: bool = True) -> dict[str, int]:
    """Write the standard test corpus to ``path``; return {name: entity_generation_id}."""
    b = SummaryBuilder(path)
    ids = {}
    ids["sqlite_fts"] = b.add_page(
        "https://docs.example.org/fts5.html",
        title="SQLite FTS5 Extension",
        description="Full-text search in SQLite with the FTS5 virtual table.",
        text="FTS5 is an SQLite virtual table module that provides full-text search.\n"
             "The bm25 function ranks results by relevance.",
        big_headlines="SQLite FTS5 Extension",
        lang="en", time_updated=1_700_000_000, indexiness=-40,
    )
    ids["sqlite_json"] = b.add_page(
        "https://docs.example.org/json1.html",
        title="JSON Functions",
        text="SQLite JSON functions let you store and query JSON documents in text columns.\n"
             "Use json_extract to read a value; full-text search is a different module.",
        lang="en", indexiness=-30,
    )
    ids["blog_cats"] = b.add_page(
        "https://blog.example.org/2024/cats",
        title="Why cats sleep all day",
        text="Cats sleep for sixteen hours a day. A sleeping cat saves energy for hunting.",
        lang="en", time_created=1_690_000_000, indexiness=-50,
    )
    ids["german"] = b.add_page(
        "https://de.example.net/katzen",
        title="Warum Katzen schlafen",
        text="Katzen schlafen sechzehn Stunden am Tag. Cats sleep too, sagt man.",
        lang="de", indexiness=-50,
    )
    ids["rust_error"] = b.add_page(
        "https://forum.example.com/t/borrow",
        title="error[E0502]: cannot borrow as mutable",
        text="error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable.\n"
             "The fix is to end the immutable borrow first.",
        code_text="let first = &v[0]; v.push(6);",
        lang="en", indexiness=-20,
    )
    ids["cpp"] = b.add_page(
        "https://forum.example.com/t/cpp",
        title="C++ templates explained",
        text="Templates in C++ allow generic programming with compile-time polymorphism.",
        lang="en", indexiness=-20,
    )
    ids["dogs_closed"] = b.add_page(
        "https://blog.example.org/2023/dogs",
        title="Dogs and zebrafinch friendship",
        text="An old page about zebrafinch birds that was removed.",
        lang="en", closed=True,
    )
    ids["dup"] = b.add_page(
        "https://blog.example.org/2024/cats?utm=1",
        title="Why cats sleep all day (zebrafinch copy)",
        text="A duplicate about zebrafinch and cats.",
        lang="en", duplicate=True,
    )
    ids["xss"] = b.add_page(
        "https://evil.example.com/page#section-2",
        title="<script>alert('xss')</script> Marmalade recipe",
        text="Orange marmalade <b>bold</b> & <img src=x onerror=alert(1)> tasty marmalade.",
        lang="en", indexiness=-10,
    )
    ids["no_title"] = b.add_page(
        "https://notitle.example.com/x",
        primary_headline="Quokka facts",
        text="The quokka is a small marsupial.",
        lang="en",
    )
    b.build_fts(stale=stale_fts)
    b.close()
    return ids


#: The sites of :func:`sharded_sites`, one per shard.
SHARD_HOSTS = ("alpha.example.org", "beta.example.org", "gamma.example.net")
_SHARD_WORDS = ("index vacuum table column query planner journal checkpoint lock cursor trigger view schema backup "
                "replica shard token stem rank score snippet crawl robots sitemap feed origin host cache page").split()


def word_site(path: str | Path, pages: int, word: str) -> None:
    """Write ``pages`` pages of one site into the summary database ``path``, each holding
    ``word`` (in its path, title and text) and "page"."""
    b = SummaryBuilder(path)
    for i in range(pages):
        b.add_page(f"https://a.example/{word}/{i}", title=f"{word.title()} page {i}", lang="en",
                   text=f"The {word} of page {i} with ordinary words around it.")
    b.build_fts()
    b.close()


def sharded_sites(base: Path) -> tuple[Path, list[Path]]:
    """Write 60 pages of three sites (:data:`SHARD_HOSTS`, 20 each) into one index
    (``base/one.db``) and, split by site, into three shards (``base/shard0.db`` ..
    ``shard2.db``); return their paths. Texts of 20 to 120 words drawn with
    site-specific word frequencies (a word rare on one site is common on another); a
    page of three under ``/ref/``, the others under ``/doc/``; three pages of four dated
    (some on the same day), the fourth undated."""
    rnd = random.Random(28)
    one = SummaryBuilder(base / "one.db")
    shards = [SummaryBuilder(base / f"shard{i}.db") for i in range(len(SHARD_HOSTS))]
    for h, host in enumerate(SHARD_HOSTS):
        weights = [1 + ((i * (h + 3)) % 7) ** 2 for i in range(len(_SHARD_WORDS))]
        for n in range(20):
            words = rnd.choices(_SHARD_WORDS, weights, k=rnd.randint(20, 120))
            title = " ".join(rnd.sample(_SHARD_WORDS, 2)).title()
            folder = "ref" if n % 3 == 0 else "doc"  # two folders a site (the path facet)
            updated = None if n % 4 == 0 else 1_500_000_000 + (n * 7 + h * 3) % 11 * 200 * 86_400  # equal dates too
            for b in (one, shards[h]):
                b.add_page(f"https://{host}/{folder}/{n}.html", title=title, text=" ".join(words) + ".", lang="en",
                           time_updated=updated)
    for b in (one, *shards):
        b.build_fts()
        b.close()
    return base / "one.db", [base / f"shard{i}.db" for i in range(len(SHARD_HOSTS))]


def like_on_one_index(path, target, **options):
    """More like ``target`` on the one index at ``path`` (its own vectors), with ``options``
    of :func:`textpile.search.service.more_like_this`: what a search over shards must equal."""
    from textpile.search.service import more_like_this
    from textpile.search.shards import LocalShard

    single = LocalShard.open(path)
    try:
        with single._connect() as conn:
            return more_like_this(conn, target, semantic=single._semantic().get(conn, with_model=False),
                                  budget_ms=60_000, **options)
    finally:
        single.close()
