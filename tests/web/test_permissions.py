"""The search page and its JSON honour Datasette's permissions (view-instance, view-database),
like the database page does; the header links only to pages that exist and that the actor
may see; the footer names Datasette's version."""

import pytest
from datasette.app import Datasette
from datasette.version import __version__ as DATASETTE_VERSION

from textpile.web.app import build_datasette
from textpile.web.datasette_versions import DATASETTE_1
from textpile.web.state import SummaryDatabase, find_target
from web.client import get as get_page


def _with_rules(summary_path, rules: dict) -> Datasette:
    """Datasette serving ``summary_path`` with the permission ``rules`` (``allow`` blocks:
    in its metadata on 0.65, in its configuration on 1.0)."""
    return Datasette(files=[], immutables=[str(summary_path)], **{"config" if DATASETTE_1 else "metadata": rules})


@pytest.fixture(scope="module")
def root_only_database(summary_path):
    """The summary database visible to the actor {"id": "root"} only."""
    return _with_rules(summary_path, {"databases": {"summary": {"allow": {"id": "root"}}}})


@pytest.fixture(scope="module")
def root_only_instance(summary_path):
    """The whole instance visible to the actor {"id": "root"} only."""
    return _with_rules(summary_path, {"allow": {"id": "root"}})


def _get_as(ds, path, actor=None):
    cookies = {"ds_actor": ds.sign({"a": actor}, "actor")} if actor else {}
    return get_page(ds, path, cookies=cookies)


@pytest.mark.parametrize("fixture", ["root_only_database", "root_only_instance"])
def test_denied_actors_get_403_from_search_like_from_the_database(request, fixture):
    ds = request.getfixturevalue(fixture)
    for actor in (None, {"id": "alice"}):
        assert _get_as(ds, "/summary", actor).status_code == 403
        assert _get_as(ds, "/summary/url.json", actor).status_code == 403
        r = _get_as(ds, "/search?format=json&search=cats", actor)
        assert (r.status_code, r.json()) == (403, {"ok": False, "status": 403, "title": "Forbidden",
                                                   "error": "Permission denied: you may not view this search index"})
        r = _get_as(ds, "/search?search=cats", actor)
        assert r.status_code == 403
        assert "Why cats sleep all day" not in r.text
        assert "Permission denied: you may not view this search index" in r.text
        assert _get_as(ds, "/", actor).status_code == 403
        r = _get_as(ds, "/suggest?q=cat", actor)  # search as you type too
        assert r.status_code == 403 and "Why cats" not in r.text
    assert isinstance(find_target(ds), SummaryDatabase)  # (Datasette 1.0 starts its plugins on the first request)


@pytest.mark.parametrize("fixture", ["root_only_database", "root_only_instance"])
def test_allowed_actor_searches(request, fixture):
    ds = request.getfixturevalue(fixture)
    root = {"id": "root"}
    assert _get_as(ds, "/summary", root).status_code == 200
    r = _get_as(ds, "/search?format=json&search=cats", root)
    assert r.status_code == 200
    assert [x["title"] for x in r.json()["list"]] == ["Why cats sleep all day", "Warum Katzen schlafen"]
    r = _get_as(ds, "/search?search=cats", root)
    assert r.status_code == 200 and "Why cats sleep all day" in r.text
    r = _get_as(ds, "/suggest?q=why+ca", root)
    assert r.status_code == 200 and [p["title"] for p in r.json()["pages"]] == ["Why cats sleep all day"]


def test_database_allowed_though_the_instance_is_not(summary_path):
    """Datasette's cascade: view-database allowed wins over view-instance denied, for search too."""
    ds = _with_rules(summary_path, {"allow": {"id": "root"}, "databases": {"summary": {"allow": True}}})
    assert _get_as(ds, "/summary").status_code == 200
    r = _get_as(ds, "/search?format=json&search=cats")
    assert r.status_code == 200 and r.json()["total"] == 2


def test_menu_links_only_for_allowed_actors(root_only_database):
    r = _get_as(root_only_database, "/summary/url", {"id": "root"})
    assert '<li><a href="/search">Search</a></li>' in r.text
    assert '<li><a href="/summary">Explore the index with SQL</a></li>' in r.text
    # The pages of a denied actor do not link to what it may not see.
    for path in ("/summary/url", "/search", "/"):
        r = _get_as(root_only_database, path, {"id": "alice"})
        assert r.status_code == 403
        assert "Explore the index with SQL" not in r.text and 'href="/search">Search<' not in r.text


def test_header_links_exist_and_footer_names_the_version(summary_path):
    ds = build_datasette(summary_path)
    r = _get_as(ds, "/search?search=cats")
    assert r.status_code == 200
    assert "/-/databases" not in r.text and ">Databases<" not in r.text
    assert f'title="Datasette v{DATASETTE_VERSION}"' in r.text
    assert 'href="/summary">Explore with SQL</a>' in r.text
    assert _get_as(ds, "/summary").status_code == 200
    r = _get_as(ds, "/no-such-page")
    assert r.status_code == 404
    assert f'title="Datasette v{DATASETTE_VERSION}"' in r.text


def test_installed_datasette_is_within_the_declared_range():
    import tomllib
    from pathlib import Path

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    [spec] = [d for d in pyproject["project"]["dependencies"] if d.startswith("datasette")]
    allowed = Requirement(spec).specifier
    assert allowed.contains(DATASETTE_VERSION, prereleases=True)
    assert allowed.contains("0.65.5") and allowed.contains("1.0a41", prereleases=True)
