"""Site discovery (atextcrawler): links to origins outside the seeds counted while
crawling, listed by ``textpile discovered``, start pages judged with ``--check`` (robots
first, nothing logged or indexed), allow_sites admitting a site as a seed and deny_sites
keeping one out. Three sites on 127.0.0.1; exact rows."""

from __future__ import annotations

import sqlite3

from sites import Response, SiteServer
from textpile.cli import main
from textpile.crawl.discovery.sites import judge_start_page
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config

from .crawlsite import Rows, write_config

HTML = {"Content-Type": "text/html; charset=utf-8"}
ZEBRA = ("<html lang='en-GB'><head><title>Zebra society</title><script>var x = 'ignored words';</script></head>"
         "<body><p>The zebra society keeps records of every zebra born in the reserve since 1990.</p></body></html>")


def test_judge_start_page_by_the_configured_criteria(tmp_path):
    cfg = load_config(write_config(tmp_path, ["http://h/"], extra='relevance_min_words = 10\n'
                                   'relevance_languages = ["en"]\nrelevance_words = ["Zebra", "quagga"]'))
    assert judge_start_page(ZEBRA, cfg) == (
        True, "relevant: 14 words (at least 10); language en-GB (one of en); mentions Zebra")
    assert judge_start_page("<html lang=fr><body><p>Bonjour</p></body></html>", cfg) == (
        False, "not relevant: only 1 words (at least 10 wanted); language fr (not one of en); "
               "mentions none of Zebra, quagga")


def test_discovered_sites_listed_checked_and_admitted(tmp_path, capsys):
    zebra = SiteServer({"/robots.txt": Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
                        "/": Response(200, ZEBRA, HTML)})
    tiny = SiteServer({"/robots.txt": Response(404, "", {}), "/": Response(200, "<p>hi</p>", HTML)})
    walled = SiteServer({"/robots.txt": Response(200, "User-agent: *\nDisallow: /\n", {"Content-Type": "text/plain"}),
                         "/": Response(200, ZEBRA, HTML)})
    with zebra, tiny, walled:
        z, t, w = zebra.base_url, tiny.base_url, walled.base_url
        seed = SiteServer({
            "/robots.txt": Response(404, "", {}),
            "/": Response(200, f'<a href="{z}/">z</a> <a href="{z}/about">z2</a> <a href="{t}/">t</a>'
                               f' <a href="{w}/x">w</a> <a href="/a">a</a>', HTML),
            "/a": Response(200, f'<a href="{z}/">z</a> <a href="{t}/">t</a>', HTML),
        })
        with seed:
            s = seed.base_url
            extra = ("discover_sites = true\nrelevance_min_words = 10\nrelevance_words = [\"zebra\"]\n"
                     f'deny_sites = ["{w}/"]\n')
            cfg_path = write_config(tmp_path, [s + "/"], extra=extra)
            db = tmp_path / "c.db"
            run_crawl(load_config(cfg_path), db, progress=False)
            conn = sqlite3.connect(db)
            zo, to, wo = (f"http://127.0.0.1:{srv.port}" for srv in (zebra, tiny, walled))
            assert sorted(conn.execute(
                "SELECT u.str_url, o.str_origin, l.links FROM textpile_site_link l JOIN url u ON u.url_id = l.from_url_id"
                " JOIN origin o ON o.origin_id = l.to_origin_id").fetchall()) == sorted([
                (s + "/", zo, 2), (s + "/", to, 1), (s + "/", wo, 1), (s + "/a", zo, 1), (s + "/a", to, 1)])
            # nothing of the other sites was requested by the crawl
            assert zebra.log == [] and tiny.log == [] and walled.log == []

            capsys.readouterr()
            assert main(["discovered", "-c", str(db), "--config", str(cfg_path)]) == 0
            assert capsys.readouterr().out == (
                "origin\tpages\tlinks\tannotation\trelevant\tverdict\n"
                f"{zo}\t2\t3\t-\t-\tnot checked\n"
                f"{to}\t2\t2\t-\t-\tnot checked\n"
                f"{wo}\t1\t1\tdenied\t-\tnot checked\n")
            assert main(["discovered", "-c", str(db), "--config", str(cfg_path), "--check"]) == 0
            assert capsys.readouterr().out == (
                "origin\tpages\tlinks\tannotation\trelevant\tverdict\n"
                f"{zo}\t2\t3\t-\tyes\trelevant: 14 words (at least 10); mentions zebra\n"
                f"{to}\t2\t2\t-\tno\tnot relevant: only 1 words (at least 10 wanted); mentions none of zebra\n"
                f"{wo}\t1\t1\tdenied\t-\tnot checked\n")
            assert [r.path for r in zebra.log] == ["/robots.txt", "/"]
            assert [r.path for r in tiny.log] == ["/robots.txt", "/"]
            assert walled.log == []  # denied: never fetched
            # the checks are no crawl log entries: nothing of them is summarized
            assert conn.execute("SELECT count(*) FROM crawl_log l JOIN url u USING(url_id) JOIN origin o USING(origin_id)"
                                " WHERE o.str_origin IN (?, ?)", (zo, to)).fetchone() == (0,)
            assert conn.execute("SELECT exit_code, relevant FROM textpile_site_check ORDER BY origin_id").fetchall() == [
                (20, 1), (20, 0)]
            # admitted: the next crawl crawls the zebra site from its start page
            cfg_path = write_config(tmp_path, [s + "/"], extra=extra + f'allow_sites = ["{z}/"]\n')
            run_crawl(load_config(cfg_path), db, progress=False)
    log = Rows(db, {z: "Z", s: "S"}).log()
    assert [row for row in log if row[0].startswith("Z")] == [
        ("Z/robots.txt", 1, 20, None), ("Z/", 0, 20, None)]


def test_discovered_needs_an_existing_database_and_says_when_discovery_is_off(tmp_path, capsys, monkeypatch):
    from textpile.store import database
    from textpile.store.database import open_crawler_db

    cfg_path = write_config(tmp_path, ["http://h/"])  # discover_sites left at false
    missing = tmp_path / "crawl.db"
    assert main(["discovered", "-c", str(missing), "--config", str(cfg_path)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "Traceback" not in err
    assert not missing.exists()  # a misspelled path is not made a new, empty database
    open_crawler_db(missing).close()
    opened = []  # listing only reads: a crawler database in a read-only folder can be listed
    monkeypatch.setattr(database, "open_crawler_db", lambda path, **kw: opened.append(kw) or open_crawler_db(path, **kw))
    assert main(["discovered", "-c", str(missing), "--config", str(cfg_path)]) == 0
    assert opened == [{"create": False, "read_only": True}]
    out, err = capsys.readouterr()
    assert out == "origin\tpages\tlinks\tannotation\trelevant\tverdict\n"
    assert err == (f"No sites listed: discover_sites is off in {cfg_path} (with discover_sites = true, "
                   "the next crawls count the links to sites outside the seeds).\n")
