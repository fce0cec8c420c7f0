"""The search page and JSON API in the semantic modes (mode=, like=), through Datasette's client."""

from __future__ import annotations

import shutil
from contextlib import closing
from pathlib import Path

import pytest

from textpile.search.service import NO_VECTORS
from textpile.web.app import build_datasette

from semantic.corpus import BASE, PAGES, build
from web.client import get


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    from textpile.semantic.embed import embed_summary

    path = tmp_path_factory.mktemp("web-semantic") / "summary.db"
    build(path)
    embed_summary(path)
    # the modes, not the time budget, are under test: a loaded machine must not end a search early
    return build_datasette(path, search_time_limit_ms=120_000)


def _urls(body) -> list[str]:
    return [item["url"].removeprefix(BASE + "/") for item in body["list"]]


def test_json_modes(ds):
    query = "search=send+mail+from+my+web+app&format=json"
    keyword = get(ds, f"/search?{query}&mode=keyword").json()
    default = get(ds, f"/search?{query}").json()
    semantic = get(ds, f"/search?{query}&mode=semantic").json()
    hybrid = get(ds, f"/search?{query}&mode=hybrid").json()
    assert keyword["mode"] == "keyword" and _urls(keyword)[:1] != ["smtp.html"]
    assert semantic["mode"] == "semantic" and _urls(semantic)[0] == "smtp.html"
    assert semantic["total"] == len(PAGES)
    assert hybrid["mode"] == "hybrid" and "smtp.html" in _urls(hybrid)[:2]
    assert [body["mode_note"] for body in (keyword, semantic, hybrid)] == [None, None, None]
    assert default == hybrid  # the default mode


def test_bad_mode_is_400(ds):
    r = get(ds, "/search?search=cats&mode=vector&format=json")
    assert r.status_code == 400
    assert r.json()["message"] == "unknown search mode 'vector' (expected one of: keyword, semantic, hybrid)"
    page = get(ds, "/search?search=cats&mode=vector")
    assert page.status_code == 400 and "unknown search mode" in page.text


def test_more_like_this_link_and_page(ds):
    page = get(ds, "/search?search=sourdough&mode=semantic")
    assert page.status_code == 200
    assert ('Search mode:\n  <a href="/search?search=sourdough&amp;mode=keyword">keyword</a> · '
            '<strong>semantic</strong> · <a href="/search?search=sourdough">hybrid</a>') in page.text
    assert '<input type="hidden" name="mode" value="semantic">' in page.text
    uuid = get(ds, "/search?search=sourdough&format=json").json()["list"][0]["entity_generation_uuid"]
    assert f'href="/search?like={uuid}">more like this</a>' in page.text
    like = get(ds, f"/search?like={uuid}&format=json")
    assert like.status_code == 200 and like.json()["mode"] == "semantic"
    assert len(like.json()["list"]) == len(PAGES) - 1 and "bread.html" not in _urls(like.json())
    missing = get(ds, "/search?like=00000000-0000-0000-0000-000000000000&format=json")
    assert missing.status_code == 400 and "no searchable page" in missing.json()["message"]


def test_swapped_file_gets_its_own_vectors(tmp_path):
    from textpile.semantic.embed import embed_summary

    path = tmp_path / "summary.db"
    build(path)
    ds = build_datasette(path)
    no_vectors = get(ds, "/search?search=sourdough&mode=semantic&format=json").json()
    assert no_vectors["message"] == NO_VECTORS
    assert (no_vectors["mode"], no_vectors["mode_note"]) == ("keyword", NO_VECTORS)  # what ran, and why
    default = get(ds, "/search?search=sourdough&format=json").json()  # hybrid asked: keyword ran
    assert default["message"] is None and _urls(default) == ["bread.html"]
    assert (default["mode"], default["mode_note"]) == ("keyword", NO_VECTORS)
    page = get(ds, "/search?search=sourdough")
    assert ('Search mode:\n  <strong>keyword</strong> · <a href="/search?search=sourdough&amp;mode=semantic">'
            'semantic</a> · <a href="/search?search=sourdough">hybrid</a></p>\n'
            f'<p class="tp-mode-note">{NO_VECTORS}</p>') in page.text
    assert 'name="mode"' not in page.text  # the form keeps the mode asked for: the default
    named = get(ds, "/search?search=sourdough&mode=semantic")
    assert '<input type="hidden" name="mode" value="semantic">' in named.text
    assert "tp-mode-note" not in named.text and named.text.count(NO_VECTORS) == 1  # said once, in the message
    fresh = tmp_path / "fresh.db"
    build(fresh)
    embed_summary(fresh)
    shutil.copy(fresh, tmp_path / "next.db")
    (tmp_path / "next.db").replace(path)  # publish swaps the file in
    body = get(ds, "/search?search=send+mail+from+my+web+app&mode=semantic&format=json").json()
    assert body["message"] is None and _urls(body)[0] == "smtp.html"


def test_a_publish_in_place_brings_the_new_vectors(tmp_path):
    from textpile.publish import publish
    from textpile.semantic.embed import embed_summary

    work, served = tmp_path / "summary.db", tmp_path / "published" / "summary.db"
    build(work)
    assert publish(work, served).whole
    ds = build_datasette(served)
    assert get(ds, "/search?search=sourdough&mode=semantic&format=json").json()["message"] == NO_VECTORS
    embed_summary(work)
    assert not publish(work, served).whole  # written in place: the server keeps its database object
    body = get(ds, "/search?search=send+mail+from+my+web+app&mode=semantic&format=json").json()
    assert body["message"] is None and _urls(body)[0] == "smtp.html"


def test_publishes_load_the_vectors_again_and_keep_the_model(tmp_path, monkeypatch):
    """A publish in place and one that replaces the file both bring their vectors, and the
    model is loaded once (issue 31: loading it at every publish kept about 40 MB each
    time, and held up every vector search while it loaded)."""
    import textpile.semantic.loaded as loaded
    from textpile.index.update import update_index
    from textpile.publish import publish
    from textpile.semantic.embed import embed_summary
    from textpile.store.database import open_summary_db

    real, loads = loaded.load_embedder, []

    def counted():
        loads.append(real())
        return loads[-1]

    monkeypatch.setattr(loaded, "load_embedder", counted)
    work, served = tmp_path / "summary.db", tmp_path / "published" / "summary.db"
    ids = build(work)
    embed_summary(work)
    assert publish(work, served).whole
    ds = build_datasette(served, search_time_limit_ms=120_000)
    query = "/search?search=send+mail+from+my+web+app&mode=semantic&format=json"
    body = get(ds, query).json()
    assert (body["total"], _urls(body)[0], len(loads)) == (len(PAGES), "smtp.html", 1)
    with closing(open_summary_db(work)) as conn:
        with conn:
            conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = last_seen_unix_utc "
                         "WHERE entity_generation_id = ?", (ids["smtp"],))
        update_index(conn)
    assert not publish(work, served).whole
    body = get(ds, query).json()
    assert body["total"] == len(PAGES) - 1 and "smtp.html" not in _urls(body)
    for suffix in ("", "-wal", "-shm", "-pages"):
        Path(f"{served}{suffix}").unlink(missing_ok=True)
    shutil.copy(work, tmp_path / "next.db")
    with closing(open_summary_db(tmp_path / "next.db")) as conn:
        with conn:
            conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = NULL WHERE entity_generation_id = ?",
                         (ids["smtp"],))
        update_index(conn)
    assert publish(tmp_path / "next.db", served).whole  # a new file: the server swaps to it
    body = get(ds, query).json()
    assert (body["total"], _urls(body)[0]) == (len(PAGES), "smtp.html")
    assert len(loads) == 1
