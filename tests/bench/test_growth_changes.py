"""The growth benchmark's changed pages (bench/growth/changes.py): their words change, their
links do not, and their links point into their copy of the corpus, as the corpus's do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

GROWTH = Path(__file__).resolve().parents[2] / "bench" / "growth"


@pytest.fixture(scope="module")
def changes():
    sys.path.insert(0, str(GROWTH))
    try:
        import changes as module
        yield module
    finally:
        sys.path.remove(str(GROWTH))


def test_link_texts_stay_also_inside_other_elements(changes):
    html = ("<p>first words here</p><a href=x><code>some.name</code> more</a><p>second words here</p>"
            "<a href=y>plain link text</a>")
    changed = {changes._changed_html(html, seed) for seed in range(16)}
    # some seed swaps each paragraph; no seed touches a link's text
    assert any("first words here" not in h for h in changed)
    assert any("second words here" not in h for h in changed)
    for h in changed:
        assert "<a href=x><code>some.name</code> more</a>" in h
        assert "<a href=y>plain link text</a>" in h
        assert len(h) == len(html)


def test_link_hosts_go_to_the_copy_and_texts_stay(changes):
    html = ('<a href="https://www.oasis-open.org/docbook/">https://www.oasis-open.org/</a>'
            "<a HREF='//Docs.Python.org:443/x'>y</a><img src=http://127.0.0.20:8080/a.png>"
            '<a href="/relative">r</a> http://other.org/')
    assert changes._in_copy(html, 3) == (
        '<a href="https://c3-www-oasis-open-org.example/docbook/">https://www.oasis-open.org/</a>'
        "<a HREF='//c3-docs-python-org.example:443/x'>y</a><img src=http://c3-127-0-0-20.example:8080/a.png>"
        '<a href="/relative">r</a> http://other.org/')
