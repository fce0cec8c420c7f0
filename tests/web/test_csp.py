"""A strict Content-Security-Policy on every page type (issue 31): no 'unsafe-inline' or
'unsafe-eval' script source anywhere; Datasette's pages run their inline scripts and
style elements by a nonce that is new for every response and that only the template's
own tags carry (tests/web/test_browser.py checks that Chromium blocks nothing there)."""

from __future__ import annotations

import asyncio
import re
from urllib.parse import quote

import pytest

from textpile.web.csp import add_nonces
from web.client import get

#: (one script of the same origin and its requests: search as you type, textpile.web.suggest)
SEARCH_POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; "
                 "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
#: (path, status, kind) of every page type: the search pages, their static files, and
#: each kind of Datasette page and error.
PAGES = [
    ("/", 200, "search"), ("/search?search=cats", 200, "search"), ("/search?search=cats&format=json", 200, "search"),
    ("/search?search=cats&page=x", 400, "search"), ("/opensearch.xml", 200, "search"),
    ("/suggest?q=cat", 200, "search"), ("/analytics", 200, "search"), ("/cached?page=nowhere", 404, "search"),
    ("/-/textpile/static/textpile.css", 200, "search"), ("/robots.txt", 200, "datasette"),
    ("/summary", 200, "datasette"), ("/summary.json", 200, "datasette"), ("/summary/url", 200, "datasette"),
    ("/summary/url.json", 200, "datasette"), ("/summary/url.csv", 200, "datasette"),
    ("/summary/url/1", 200, "datasette"), ("/summary/entity_generation?_facet=marked_duplicate", 200, "datasette"),
    ("/summary?sql=select+1", 200, "datasette"), ("/summary/count_active_entity_generations", 200, "datasette"),
    ("/summary?sql=" + quote("select fts3_tokenizer('porter')"), 400, "datasette"),
    ("/summary/no_such_table", 404, "datasette"), ("/-/versions", 404, "datasette"),
    ("/summary/url?_sort=nope", 400, "datasette"),
]
_INLINE = re.compile(r"<(script|style)\b([^>]*)>", re.IGNORECASE)


def _nonce(policy: str) -> str:
    [nonce] = set(re.findall(r"'nonce-([A-Za-z0-9_-]+)'", policy))
    return nonce


@pytest.mark.parametrize(("path", "status", "kind"), PAGES)
def test_every_page_type_has_a_strict_policy(ds, path, status, kind):
    r = get(ds, path)
    assert r.status_code == status, r.text[:300]
    policy = r.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy.split("style-src-attr")[0] and "'unsafe-eval'" not in policy
    assert "frame-ancestors 'none'" in policy and "base-uri 'none'" in policy
    if kind == "search":
        assert policy == SEARCH_POLICY
        return
    nonce = _nonce(policy)
    assert re.search(r"script-src 'self' 'nonce-[\w-]+' 'unsafe-hashes' 'sha256-[\w+/=]+';", policy)
    if r.headers["content-type"].startswith("text/html"):
        tags = _INLINE.findall(r.text)
        assert tags, path
        assert [t for t in tags if f'nonce="{nonce}"' not in t[1]] == [], path


def test_the_nonce_is_new_for_every_response(ds):
    nonces = {_nonce(get(ds, "/summary/url").headers["content-security-policy"]) for _ in range(3)}
    assert len(nonces) == 3 and all(len(n) >= 22 for n in nonces)


def test_a_script_that_comes_from_data_gets_no_nonce(ds):
    sql = "select '<script>alert(1)</script>' as x, '<style>*{}</style>' as y"
    r = get(ds, "/summary?sql=" + quote(sql))
    nonce = _nonce(r.headers["content-security-policy"])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert all(f'nonce="{nonce}"' in attrs for _tag, attrs in _INLINE.findall(r.text))


def test_the_read_only_guards_405_carries_the_policy_too(ds):
    """Answered by textpile's middleware before Datasette sees the request."""
    r = asyncio.run(ds.client.post("/summary/url"))
    assert r.status_code == 405
    policy = r.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy.split("style-src-attr")[0] and _nonce(policy)


def test_template_tags_get_the_nonce_expression():
    source = ('<script>a()</script><script src="x.js" defer></script><script{% if m %} type="module"{% endif %}>'
              "<style>b{}</style><style type=\"text/css\"></style><scripted></scripted>")
    assert add_nonces(source) == (
        '<script nonce="{{ textpile_csp_nonce() }}">a()</script>'
        '<script nonce="{{ textpile_csp_nonce() }}" src="x.js" defer></script>'
        '<script nonce="{{ textpile_csp_nonce() }}"{% if m %} type="module"{% endif %}>'
        '<style nonce="{{ textpile_csp_nonce() }}">b{}</style>'
        '<style nonce="{{ textpile_csp_nonce() }}" type="text/css"></style><scripted></scripted>')
