"""The search page shows a result's section, its other sections and "did you mean"."""

from search.fixture_site import html_page, summarized_site
from search.test_relevance_features import API_PAGE
from textpile.web.app import build_datasette
from web.client import get


def test_search_page_shows_sections_and_suggestion(tmp_path):
    summarized_site(tmp_path, {
        "https://docs.example/api/module.html": API_PAGE,
        **{f"https://docs.example/guide{i}.html": html_page(f"Guide {i}", f"<p>Readers and replication {i}.</p>")
           for i in range(3)},
    }).close()
    ds = build_datasette(tmp_path / "summary.db")
    page = get(ds, "/search?search=pkg.module.Reader").text
    assert '<a href="https://docs.example/api/module.html#pkg.module.Reader" rel="noopener">pkg.module reference</a>' in page
    assert '<p class="tp-section">§ class pkg.module.Reader(path)</p>' in page
    assert 'href="https://docs.example/api/module.html#pkg.module.Reader.close"' in page  # another matching section
    page = get(ds, "/search?search=replicaton").text
    assert '<p class="tp-suggestion">Did you mean <a href="/search?search=replication">replication</a>?</p>' in page
