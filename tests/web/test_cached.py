"""The cached text of a result (issue 32): the stored text as crawled, with its crawl
dates, escaped; JSON with format=json; 404 for an unknown page; linked from each result."""

import json

from search.fixture_site import html_page, summarized_site
from textpile.web.app import build_datasette
from web.client import get


def _uuid(ds, query):
    return json.loads(get(ds, f"/search?format=json&mode=keyword&search={query}").text)["list"][0]["entity_generation_uuid"]


def test_cached_text_is_escaped_with_crawl_dates(ds):
    uuid = _uuid(ds, "marmalade")
    page = get(ds, f"/cached?page={uuid}")
    assert page.status_code == 200
    assert "<img src=x" not in page.text and "<b>bold</b>" not in page.text
    assert ('<pre class="tp-cached-text">Orange marmalade &lt;b&gt;bold&lt;/b&gt; &amp; &lt;img src=x '
            "onerror=alert(1)&gt; tasty marmalade.</pre>") in page.text
    assert "first seen <time>2023-11-14</time>, last seen <time>2023-11-14</time>" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    body = json.loads(get(ds, f"/cached?page={uuid}&format=json").text)
    assert body == {"url": "https://evil.example.com/page#section-2",
                    "title": "<script>alert('xss')</script> Marmalade recipe",
                    "first_seen": "2023-11-14T22:13:20Z", "last_seen": "2023-11-14T22:13:30Z",
                    "text": "Orange marmalade <b>bold</b> & <img src=x onerror=alert(1)> tasty marmalade.",
                    "truncated": False}
    # by URL too; unknown pages are a 404
    by_url = json.loads(get(ds, "/cached?format=json&page=https%3A%2F%2Fdocs.example.org%2Fjson1.html").text)
    assert by_url["title"] == "JSON Functions"
    assert get(ds, "/cached?page=https%3A%2F%2Fnowhere.example%2F").status_code == 404
    assert get(ds, "/cached?page=https%3A%2F%2Fnowhere.example%2F&format=json").status_code == 404


def test_each_result_links_its_cached_text(ds):
    uuid = _uuid(ds, "marmalade")
    page = get(ds, "/search?mode=keyword&search=marmalade").text
    assert f'<a class="tp-cached" href="/cached?page={uuid}">cached text</a>' in page


def test_the_gen2_text_of_a_summarized_page(tmp_path):
    summarized_site(tmp_path, {"https://docs.example/a.html": html_page(
        "Heron facts", "<h1>Heron facts</h1><p>Herons wade in <em>shallow</em> water.</p><script>x()</script>")}).close()
    ds = build_datasette(tmp_path / "summary.db")
    body = json.loads(get(ds, "/cached?format=json&page=https%3A%2F%2Fdocs.example%2Fa.html").text)
    assert body["text"] == "Heron facts\nHerons wade in shallow water."
    assert body["first_seen"] == "2023-11-14T22:13:20Z"
