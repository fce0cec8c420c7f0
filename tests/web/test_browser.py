"""The search page in headless Chromium (Debian's chromium, driven by Playwright): search
from the form, click a result, page through the results, and no header link is a 404.

scripts/test installs Debian's chromium (apt-get, as root) and Playwright (the test
extras); the test skips, saying why, only where Chromium is not installed.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from dagster_sites import ChangingSite, write_config
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.summarize.pipeline import summarize
from textpile.web.app import bind_listen_socket, build_datasette

CHROMIUM = Path("/usr/bin/chromium")
#: The flags this machine needs (no sandbox as root, no GPU, no background connections).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"{CHROMIUM} is missing: Debian's chromium package is not installed (scripts/test installs it "
    "with apt-get when run as root)")


class Served:
    """``textpile serve`` of a summary database in a thread, on a free port."""

    def __init__(self, summary_db: Path) -> None:
        import uvicorn

        self.sock = bind_listen_socket(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(build_datasette(summary_db).app(), log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "Served":
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


@pytest.fixture(scope="module")
def site_and_server(tmp_path_factory):
    """The four-page test site, crawled and summarized, and its search page served."""
    tmp = tmp_path_factory.mktemp("browser")
    site = ChangingSite()
    with site.server:
        config = load_config(write_config(tmp / "crawl.toml", [site.base_url + "/"]))
        run_crawl(config, tmp / "crawler.db", progress=False)
        summarize(tmp / "crawler.db", tmp / "summary.db", progress=False)
        with Served(tmp / "summary.db") as served:
            yield site, served


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def test_search_click_page_and_header_links(site_and_server, browser, tmp_path):
    site, served = site_and_server
    page = browser.new_page()
    page.goto(served.base_url + "/")
    page.fill("#tp-q", "page")
    page.click("button.tp-button")
    page.wait_for_url("**/search?search=page")
    titles = page.locator(".tp-title a").all_inner_texts()
    # The three pages titled "... page" (the index, whose text says "pages", may match too).
    assert {"Alpha page", "Bravo page", "Charlie page"} <= set(titles) <= {
        "Alpha page", "Bravo page", "Charlie page", "Gazetteer index"}
    total = len(titles)
    assert page.locator(".tp-summary").inner_text().startswith(f"{total} results")
    page.screenshot(path=str(tmp_path / "results.png"), full_page=True)

    # No link of the header (brand, "Explore with SQL", Datasette's own) answers 404.
    hrefs = page.eval_on_selector_all("header a[href]", "els => els.map(e => e.href)")
    assert served.base_url + "/summary" in hrefs and served.base_url + "/" in hrefs
    statuses = {href: page.request.get(href).status for href in hrefs}
    assert [h for h, status in statuses.items() if status != 200] == [], statuses

    # Clicking a result opens the crawled page.
    first = page.locator(".tp-title a").first
    title, href = first.inner_text(), first.get_attribute("href")
    assert href.startswith(site.base_url + "/")
    first.click()
    page.wait_for_url(href)
    assert page.title() == title

    # Paging, one result per page: "Next" leads to page 2 with another result, "Previous" back.
    page.goto(served.base_url + "/search?search=page&per_page=1")
    assert f"Page 1 of {total}" in page.locator("nav.tp-pages").inner_text()
    on_first = page.locator(".tp-title a").all_inner_texts()
    page.click("a[rel=next]")
    page.wait_for_url("**page=1**")
    assert f"Page 2 of {total}" in page.locator("nav.tp-pages").inner_text()
    on_second = page.locator(".tp-title a").all_inner_texts()
    assert len(on_first) == len(on_second) == 1 and on_first != on_second
    page.click("a[rel=prev]")
    assert page.locator(".tp-title a").all_inner_texts() == on_first
    assert os.path.getsize(tmp_path / "results.png") > 10_000
    page.close()


#: Collects the Content-Security-Policy violations of a page (in window.__csp).
CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(
    [e.violatedDirective, e.blockedURI, (e.sample || '').slice(0, 80), e.sourceFile, e.lineNumber]));
"""


def test_datasette_pages_run_their_scripts_under_the_strict_policy(site_and_server, browser):
    """Every page type of SQL exploration in Chromium: the policy has no 'unsafe-inline'
    script source, nothing is blocked, and the pages' scripts ran (the SQL editor is made)."""
    _site, served = site_and_server
    page = browser.new_page()
    page.add_init_script(CSP_LISTENER)
    for path, made_by_script in [
        ("/summary", ".CodeMirror, .cm-editor"),
        ("/summary?sql=select+1", ".CodeMirror, .cm-editor"),
        ("/summary/url", None),
        ("/summary/entity_generation?_facet=marked_duplicate", None),
        ("/summary/url/1", None),
        ("/summary/count_active_entity_generations", None),
        ("/summary?sql=select+fts3_tokenizer('porter')", None),
        ("/summary/no_such_table", None),
        ("/search?search=page", None),
    ]:
        response = page.goto(served.base_url + path)
        policy = response.headers["content-security-policy"]
        script_src = next(d for d in policy.split("; ") if d.startswith(("script-src", "default-src 'none'")))
        assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src, (path, policy)
        page.wait_for_load_state("load")
        if made_by_script:
            page.wait_for_selector(made_by_script, timeout=30_000)
        violations = page.evaluate("window.__csp")
        if path.startswith("/search"):
            # The search page runs no script at all (the seed's policy): the scripts of
            # Datasette's base template are blocked there, nothing else is.
            assert violations and {v[0] for v in violations} == {"script-src-elem"}, violations
            assert not any("textpile" in v[1] for v in violations), violations
        else:
            assert violations == [], (path, violations)


@pytest.fixture(scope="module")
def versions_server(tmp_path_factory):
    """The three asyncio sites of search.versions_site, served."""
    from search.versions_site import versions_site

    path = tmp_path_factory.mktemp("browser_facets") / "summary.db"
    versions_site(path)
    with Served(path) as served:
        yield served


@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_facets_usable_without_horizontal_scrolling(versions_server, browser, width, height, tmp_path):
    for javascript in (True, False):
        context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=javascript)
        page = context.new_page()
        page.goto(versions_server.base_url + "/")
        page.fill("#tp-q", "asyncio")
        page.press("#tp-q", "Enter")
        page.wait_for_url("**/search?search=asyncio")
        assert page.locator("nav.tp-facets").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        page.screenshot(path=str(tmp_path / f"facets-{width}-{javascript}.png"), full_page=True)
        page.click("nav.tp-facets a:text-is('docs.pytest.test/docs/3.12/')")
        page.wait_for_url("**site%3Adocs.pytest.test%2Fdocs%2F3.12%2F**")
        urls = page.locator(".tp-url").all_inner_texts()
        assert sorted(urls) == ["https://docs.pytest.test/docs/3.12/library/asyncio-task.html",
                                "https://docs.pytest.test/docs/3.12/library/asyncio.html",
                                "https://docs.pytest.test/docs/3.12/whatsnew/3.12.html"]
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        context.close()


def test_suggestions_appear_while_typing(versions_server, browser):
    page = browser.new_page()
    page.goto(versions_server.base_url + "/")
    page.type("#tp-q", "corout", delay=30)
    page.wait_for_selector("#tp-suggest li a")
    assert page.locator("#tp-suggest li a").all_inner_texts() == ["Coroutines and Tasks", "Coroutines and Tasks"]
    assert page.locator("#tp-suggest li a").first.get_attribute("href") == (
        "https://docs.pytest.test/docs/3.11/library/asyncio-task.html")
    page.close()


#: How far the page and the search help box reach to the right, against the window's width.
WIDTHS = """() => ({window: window.innerWidth, page: document.documentElement.scrollWidth,
    help: Math.ceil(document.querySelector('details.tp-help').getBoundingClientRect().right),
    widest: Math.max(...[...document.querySelectorAll('body *')].map(e => Math.ceil(e.getBoundingClientRect().right))),
    open: document.querySelector('details.tp-help').open})"""


@pytest.mark.parametrize("path", ["/", "/search?search=page"])
def test_search_page_and_its_help_box_fit_a_phone_window_of_390_px(site_and_server, browser, path):
    _site, served = site_and_server
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(served.base_url + path)
    page.evaluate("() => { document.querySelector('details.tp-help').open = true; }")
    widths = page.evaluate(WIDTHS)
    page.close()
    assert widths["open"] is True and widths["window"] == 390
    assert widths["page"] == 390, widths  # nothing scrolls horizontally
    assert widths["help"] <= 390 and widths["widest"] <= 390, widths
