"""Integration rules: generations, self-duplicates, exact duplicates, closes, placeholders.

Crawler rows are written directly (summary_fixtures.CrawlerRows); the real scraper runs.
Sources: unobtanium-documentation.txt, pages "Summarizing", "Entity Generation",
"Duplicate Types", "Crawl Summary", "Database Batching", "Useful database queries".
"""

from __future__ import annotations

import sqlite3

import pytest
from .summary_fixtures import CrawlerRows, dump_db, generations, page

from textpile.summarize.pipeline import summarize
from textpile.index.fulltext import ROWIDS_SQL
from textpile.store.gen2_piles import register_functions

BASE = "http://site.test"
BODY_A = "<p>The xylophone plays a long melody for everyone in the hall today.</p>"
BODY_B = "<p>A completely different text about gardening and tomatoes in summer.</p>"


@pytest.fixture()
def dbs(tmp_path):
    """(crawler rows writer, agent id, summary db path)."""
    rows = CrawlerRows(tmp_path / "crawler.db")
    agent = rows.agent()
    yield rows, agent, tmp_path / "summary.db"
    rows.close()


def run(rows, summary, **kw):
    rows.conn.commit()
    return summarize(rows.path, summary, progress=False, **kw)


def q(summary, sql, params=()):
    conn = register_functions(sqlite3.connect(str(summary)))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def gen_ids(summary):
    return {url: gid for gid, url in q(summary, "SELECT eg.entity_generation_id, u.str_url FROM entity_generation eg "
                                                "JOIN url u USING (url_id) WHERE eg.confirmed_end_unix_utc IS NULL")}


def test_two_urls_same_content_shorter_url_is_original(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/docs/page-copy.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/page.html", 105, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/other.html", 106, html=page("Beta", BODY_B))
    report = run(rows, summary)
    ids = gen_ids(summary)
    assert report.integration.exact_duplicates == 1
    assert q(summary, "SELECT * FROM duplicate_summary") == [
        (ids[f"{BASE}/docs/page-copy.html"], ids[f"{BASE}/page.html"], 105, None)]
    assert generations(summary) == [
        (f"{BASE}/docs/page-copy.html", 100, 100, None, 1, 1),
        (f"{BASE}/other.html", 106, 106, None, 0, 1),
        (f"{BASE}/page.html", 105, 105, None, 0, 1),
    ]
    # the duplicate is not searchable
    assert sorted(r[0] for r in q(summary, ROWIDS_SQL)) == sorted(
        [ids[f"{BASE}/page.html"], ids[f"{BASE}/other.html"]])


def test_duplicate_found_across_runs_and_tie_goes_to_lower_url(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/b.html", 100, html=page("Alpha", BODY_A))
    run(rows, summary)
    rows.crawl(agent, f"{BASE}/a.html", 200, html=page("Alpha", BODY_A))
    run(rows, summary)
    ids = gen_ids(summary)
    # same length: the lower str_url (a.html) is the original
    assert q(summary, "SELECT * FROM duplicate_summary") == [(ids[f"{BASE}/b.html"], ids[f"{BASE}/a.html"], 200, None)]
    assert q(summary, "SELECT u.str_url, marked_duplicate FROM entity_generation JOIN url u USING (url_id) "
                      "ORDER BY 1") == [(f"{BASE}/a.html", 0), (f"{BASE}/b.html", 1)]


def test_other_origin_is_not_a_duplicate(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, "http://other.test/a.html", 101, html=page("Alpha", BODY_A))
    run(rows, summary)
    assert q(summary, "SELECT count(*) FROM duplicate_summary") == [(0,)]
    assert q(summary, "SELECT count(*) FROM text_pile") == [(1,)]  # stored once by digest


def test_duplicate_ends_when_original_closes(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/long-name.html", 101, html=page("Alpha", BODY_A))
    run(rows, summary)
    first = gen_ids(summary)
    rows.crawl(agent, f"{BASE}/a.html", 300, 44)
    report = run(rows, summary)
    assert report.integration.duplicates_ended == 1
    assert q(summary, "SELECT * FROM duplicate_summary") == [
        (first[f"{BASE}/long-name.html"], first[f"{BASE}/a.html"], 101, 300)]
    assert generations(summary) == [
        (f"{BASE}/a.html", 100, 100, 300, 0, 1),
        (f"{BASE}/long-name.html", 101, 101, None, 0, 1),
    ]
    assert [r[0] for r in q(summary, ROWIDS_SQL)] == [first[f"{BASE}/long-name.html"]]


def test_duplicate_ends_when_its_content_changes(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/long-name.html", 101, html=page("Alpha", BODY_A))
    run(rows, summary)
    first = gen_ids(summary)
    rows.crawl(agent, f"{BASE}/long-name.html", 400, html=page("Beta", BODY_B))
    run(rows, summary)
    assert q(summary, "SELECT * FROM duplicate_summary") == [
        (first[f"{BASE}/long-name.html"], first[f"{BASE}/a.html"], 101, 400)]
    assert generations(summary) == [
        (f"{BASE}/a.html", 100, 100, None, 0, 1),
        (f"{BASE}/long-name.html", 101, 101, 400, 0, 1),
        (f"{BASE}/long-name.html", 400, 400, None, 0, 1),
    ]


def test_recrawl_unchanged_is_self_duplicate(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    run(rows, summary)
    (gen_uuid_before,) = q(summary, "SELECT entity_generation_uuid FROM entity_generation")[0]
    agent2 = rows.agent(started=1_800_000_000)
    rows.crawl(agent2, f"{BASE}/a.html", 500, html=page("Alpha", BODY_A), etag='"v2"')
    report = run(rows, summary)
    assert report.integration.self_duplicates == 1
    assert report.integration.generations_opened == 0
    assert report.integration.exact_duplicates == 0
    assert generations(summary) == [(f"{BASE}/a.html", 100, 500, None, 0, 1)]
    assert q(summary, "SELECT entity_generation_uuid FROM entity_generation") == [(gen_uuid_before,)]
    assert q(summary, "SELECT cs.time_started_unix_utc, cs.exit_code, cs.agent_uuid, hs.status_code, hs.etag "
                      "FROM crawl_summary cs JOIN http_summary hs USING (crawl_summary_id) ORDER BY 1") == [
        (100, 20, rows.agent_uuid(agent), 200, None), (500, 20, rows.agent_uuid(agent2), 200, '"v2"')]
    assert q(summary, "SELECT count(*) FROM duplicate_summary") == [(0,)]


def test_self_duplicate_inside_one_batch(dbs):
    """The seed's batching edge case: two crawls of an unchanged URL in one batch."""
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/b.html", 150, html=page("Beta", BODY_B))
    rows.crawl(agent, f"{BASE}/a.html", 200, html=page("Alpha", BODY_A))
    report = run(rows, summary)
    assert report.batches == 1
    assert report.integration.self_duplicates == 1
    assert report.integration.exact_duplicates == 0
    assert generations(summary) == [(f"{BASE}/a.html", 100, 200, None, 0, 1), (f"{BASE}/b.html", 150, 150, None, 0, 1)]
    assert q(summary, "SELECT count(DISTINCT entity_generation_id), count(*) FROM crawl_summary cs "
                      "JOIN entity_generation USING (entity_generation_id) JOIN url u USING (url_id) "
                      "WHERE u.str_url = ?", (f"{BASE}/a.html",)) == [(1, 2)]


def test_batch_size_does_not_change_the_outcome(tmp_path):
    """Changes, self-duplicates and closes inside one batch equal those across batches."""
    def build(name, batch_size):
        with CrawlerRows(tmp_path / f"{name}.db") as rows:
            agent = rows.agent()
            rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
            rows.crawl(agent, f"{BASE}/a.html", 110, html=page("Alpha", BODY_A))
            rows.crawl(agent, f"{BASE}/a.html", 120, html=page("Beta", BODY_B))
            rows.crawl(agent, f"{BASE}/a.html", 125, 34)
            rows.crawl(agent, f"{BASE}/a.html", 130, 44)
            rows.crawl(agent, f"{BASE}/a.html", 140, html=page("Beta", BODY_B))
            rows.crawl(agent, f"{BASE}/a.html", 150, 100, status=None)
        summarize(tmp_path / f"{name}.db", tmp_path / f"{name}-summary.db", batch_size=batch_size, progress=False)
        return generations(tmp_path / f"{name}-summary.db")

    expected = [
        (f"{BASE}/a.html", 100, 110, 120, 0, 1),
        (f"{BASE}/a.html", 120, 125, 130, 0, 1),
        (f"{BASE}/a.html", 140, 140, None, 0, 1),
    ]
    assert build("one", 1000) == expected
    assert build("single", 1) == expected
    assert build("pairs", 2) == expected


def test_changed_page_closes_old_generation(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    run(rows, summary)
    old = gen_ids(summary)[f"{BASE}/a.html"]
    rows.crawl(agent, f"{BASE}/a.html", 300, html=page("Alpha", BODY_B))
    report = run(rows, summary)
    assert report.integration.generations_opened == 1
    assert report.integration.generations_closed == 1
    new = gen_ids(summary)[f"{BASE}/a.html"]
    assert q(summary, "SELECT entity_generation_id, first_seen_unix_utc, last_seen_unix_utc, confirmed_end_unix_utc "
                      "FROM entity_generation ORDER BY 1") == [(old, 100, 100, 300), (new, 300, 300, None)]
    assert [r[0] for r in q(summary, ROWIDS_SQL)] == [new]


def test_404_after_200_closes_generation(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/a.html", 200, 44)
    run(rows, summary)
    assert generations(summary) == [(f"{BASE}/a.html", 100, 100, 200, 0, 1)]
    assert q(summary, "SELECT cs.exit_code, hs.status_code FROM crawl_summary cs "
                      "JOIN http_summary hs USING (crawl_summary_id) ORDER BY cs.time_started_unix_utc") == [
        (20, 200), (44, 404)]
    assert q(summary, "SELECT count(DISTINCT entity_generation_id) FROM crawl_summary") == [(1,)]
    assert q(summary, f"SELECT count(*) FROM ({ROWIDS_SQL})") == [(0,)]


def test_410_of_unknown_url_gets_closed_placeholder(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/gone.html", 100, 41)
    rows.crawl(agent, f"{BASE}/gone.html", 200, 41)
    report = run(rows, summary)
    assert report.integration.placeholder_generations == 1
    assert generations(summary) == [(f"{BASE}/gone.html", 100, 100, 100, 0, 0)]
    assert q(summary, "SELECT count(*) FROM crawl_summary") == [(2,)]


def test_robots_fetch_and_errors_get_crawl_summaries(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/robots.txt", 90, 20, crawl_type=1)
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/a.html", 200, 100, status=None)  # connection_failed: no response
    rows.crawl(agent, f"{BASE}/private.html", 210, 170)  # blocked by robots.txt: no request
    run(rows, summary)
    assert generations(summary) == [
        (f"{BASE}/a.html", 100, 100, None, 0, 1),
        (f"{BASE}/private.html", 210, 210, 210, 0, 0),
        (f"{BASE}/robots.txt", 90, 90, 90, 0, 0),
    ]
    assert q(summary, "SELECT u.str_url, cs.crawl_type, cs.exit_code, cs.was_robotstxt_approved, hs.status_code "
                      "FROM crawl_summary cs JOIN entity_generation eg USING (entity_generation_id) "
                      "JOIN url u USING (url_id) LEFT JOIN http_summary hs USING (crawl_summary_id) "
                      "ORDER BY cs.time_started_unix_utc") == [
        (f"{BASE}/robots.txt", 1, 20, 1, 200),
        (f"{BASE}/a.html", 0, 20, 1, 200),
        (f"{BASE}/a.html", 0, 100, 1, None),
        (f"{BASE}/private.html", 0, 170, 0, None),
    ]


def test_redirects_and_unknown_types(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/old", 100, 31, redirect_to=f"{BASE}/new#top")
    rows.crawl(agent, f"{BASE}/old", 150, 31, redirect_to=f"{BASE}/new")
    rows.crawl(agent, f"{BASE}/file.pdf", 160, 29, mimetype="application/pdf", file_size=1234)
    rows.crawl(agent, f"{BASE}/file.pdf", 170, 29, mimetype="application/pdf", file_size=1234)
    rows.crawl(agent, f"{BASE}/file.pdf", 180, 29, mimetype="application/pdf", file_size=999)
    run(rows, summary)
    rows.crawl(agent, f"{BASE}/old", 200, html=page("Alpha", BODY_A))
    report = run(rows, summary)
    assert report.integration.generations_closed == 1
    assert generations(summary) == [
        (f"{BASE}/file.pdf", 160, 170, 180, 0, 0),
        (f"{BASE}/file.pdf", 180, 180, None, 0, 0),
        (f"{BASE}/old", 100, 150, 200, 0, 0),
        (f"{BASE}/old", 200, 200, None, 0, 1),
    ]
    assert q(summary, "SELECT u.str_url, rs.information_source, rs.by_security_policy, rs.to_url_fragment "
                      "FROM redirect_summary rs JOIN url u ON u.url_id = rs.to_url_id") == [(f"{BASE}/new", 1, 0, None)]
    assert q(summary, "SELECT fs.file_size, m.str_mimetype FROM file_summary fs JOIN mimetype m USING (mimetype_id) "
                      "WHERE m.mime_subtype = 'pdf' ORDER BY 1") == [(999, "application/pdf"), (1234, "application/pdf")]


def test_file_did_not_change_extends_last_seen(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A), etag='"1"')
    run(rows, summary)
    rows.crawl(agent, f"{BASE}/a.html", 700, 34, etag='"1"')
    report = run(rows, summary)
    assert report.integration.self_duplicates == 0
    assert generations(summary) == [(f"{BASE}/a.html", 100, 700, None, 0, 1)]


def test_noindex_pages_are_never_searchable(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))
    rows.crawl(agent, f"{BASE}/b.html", 100, html=page("Beta", BODY_B))
    run(rows, summary)
    assert q(summary, f"SELECT count(*) FROM ({ROWIDS_SQL})") == [(2,)]
    # the crawler's way: 171 and no file row; the scraper's way: meta robots noindex in a 20
    rows.crawl(agent, f"{BASE}/a.html", 200, 171)
    rows.crawl(agent, f"{BASE}/b.html", 200, html=page("Beta", BODY_B, head='<meta name="robots" content="noindex">'))
    rows.crawl(agent, f"{BASE}/c.html", 200, html=page("Gamma", BODY_A + BODY_B,
                                                       head='<meta name="robots" content="noindex">'))
    report = run(rows, summary)
    assert report.scrape.noindex == 2
    assert q(summary, f"SELECT count(*) FROM ({ROWIDS_SQL})") == [(0,)]
    assert q(summary, "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH 'gardening'") == []
    assert generations(summary) == [
        (f"{BASE}/a.html", 100, 100, 200, 0, 1),
        (f"{BASE}/b.html", 100, 100, 200, 0, 1),
        (f"{BASE}/c.html", 200, 200, 200, 0, 0),
    ]


def test_count_active_entity_generations_query(dbs):
    """The seed's "Count Active entity generations in summary database" query, verbatim."""
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A))          # active
    rows.crawl(agent, f"{BASE}/copy-of-a.html", 100, html=page("Alpha", BODY_A))  # duplicate
    rows.crawl(agent, f"{BASE}/b.html", 100, html=page("Beta", BODY_B))           # active
    rows.crawl(agent, f"{BASE}/c.html", 100, html=page("Gamma", "<p>Soon gone.</p>"))
    rows.crawl(agent, f"{BASE}/c.html", 200, 44)                                    # closed
    rows.crawl(agent, f"{BASE}/d.html", 100, html="<html><body><p>No title here but text.</p></body></html>")
    rows.crawl(agent, f"{BASE}/e", 100, 32, redirect_to=f"{BASE}/a.html")          # no text pile
    run(rows, summary)
    count_active = """
select count(*)
from entity_generation
inner join document_description
on entity_generation.entity_generation_id = document_description.entity_generation_id
inner join text_pile
on entity_generation.text_pile_id = text_pile.text_pile_id
where (
(NOT entity_generation.marked_duplicate) AND
entity_generation.confirmed_end_unix_utc is NULL AND
(document_description.title != '') AND
(text_pile.text != '' OR text_pile.secondary_text != '')
);"""
    assert q(summary, count_active) == [(2,)]


def test_summarize_twice_changes_nothing(dbs):
    rows, agent, summary = dbs
    rows.crawl(agent, f"{BASE}/robots.txt", 90, 44, crawl_type=1)
    rows.crawl(agent, f"{BASE}/a.html", 100, html=page("Alpha", BODY_A + '<a href="/b.html">b</a>'))
    rows.crawl(agent, f"{BASE}/aa.html", 101, html=page("Alpha", BODY_A + '<a href="/b.html">b</a>'))
    rows.crawl(agent, f"{BASE}/b.html", 102, html=page("Beta", BODY_B))
    rows.crawl(agent, f"{BASE}/b.html", 103, 44)
    rows.crawl(agent, f"{BASE}/r", 104, 32, redirect_to=f"{BASE}/a.html")
    first = run(rows, summary)
    assert first.pages_processed == 6
    before = dump_db(summary)
    second = run(rows, summary)
    assert second.pages_processed == 0
    assert second.batches == 0
    assert dump_db(summary) == before
    assert len(before["link_summary"]) == 2
