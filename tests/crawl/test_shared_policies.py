"""examples/shared-policies.toml: each policy blocks what it names and lets ordinary
documentation and blog URLs through (no "/share" blocking "/sharedcache.html")."""

from __future__ import annotations

from pathlib import Path

import pytest

from textpile.crawl.policy.config import config_from_options
from textpile.store.urls import parse_url

POLICIES = Path(__file__).resolve().parents[2] / "examples" / "shared-policies.toml"

# URL -> index of the do_not_crawl policy that must block it
BLOCKED = {
    "https://x.org/login": 0,
    "https://x.org/accounts/login/?next=/docs/": 0,
    "https://x.org/login/oauth/callback": 0,
    "https://x.org/logout": 0,
    "https://x.org/users/sign_in": 0,
    "https://x.org/sign-in/": 0,
    "https://x.org/signin": 0,
    "https://x.org/signup": 0,
    "https://x.org/users/sign-up": 0,
    "https://x.org/register": 0,
    "https://x.org/forum/register/": 0,
    "https://x.org/login.php": 0,
    "https://x.org/blog/wp-login.php": 0,
    "https://x.org/user/password": 0,
    "https://x.org/search": 1,
    "https://x.org/search/?q=a": 1,
    "https://x.org/search/results/2": 1,
    "https://x.org/blog/search": 1,
    "https://x.org/forum/search/": 1,
    "https://x.org/cgi-bin/search.pl": 1,
    "https://x.org/comments/feed/": 2,
    "https://x.org/post/1/comments/feed": 2,
    "https://x.org/post/1/comments/all.rss": 2,
    "https://x.org/2024/05/post/?replytocom=17": 2,
    "https://x.org/wiki/Page/edit": 3,
    "https://x.org/wiki/Page/history": 3,
    "https://x.org/owner/repo/wiki/Page/_history": 3,
    "https://x.org/owner/repo/commit/0123abcd": 3,
    "https://x.org/owner/repo/blame/main/README.md": 3,
    "https://x.org/Special:RecentChanges": 3,
    "https://x.org/wiki/Special:Random": 3,
    "https://x.org/calendar/2024-05/": 4,
    "https://x.org/events/list/?month=3": 4,
    "https://x.org/cart": 5,
    "https://x.org/cart/add/12": 5,
    "https://x.org/checkout": 5,
    "https://x.org/checkout/payment": 5,
    "https://x.org/account/": 5,
    "https://x.org/my-account/orders": 5,
    "https://x.org/wp-admin": 6,
    "https://x.org/wp-admin/options.php": 6,
    "https://x.org/admin": 6,
    "https://x.org/admin/users": 6,
    "https://x.org/" + "a/" * 250: 7,
    "https://x.org/share": 8,
    "https://x.org/share/twitter": 8,
    "https://x.org/post/12/share/": 8,
    "https://x.org/sharer.php": 8,
}

# Ordinary documentation and blog URLs no policy may block (each was a false positive of
# a prefix or contains pattern, or is close to one).
PASSED = [
    "https://x.org/sharedcache.html",
    "https://x.org/shareholders",
    "https://x.org/sharepoint-integration/",
    "https://x.org/docs/shared/notes.html",
    "https://x.org/usr/share/doc/sqlite3/index.html",
    "https://x.org/docs/sharing.html",
    "https://x.org/docs/registers.html",
    "https://x.org/guide/registering-callbacks/",
    "https://x.org/git/signing-commits/",
    "https://x.org/docs/login-shell.html",
    "https://x.org/man/man1/login.1.html",
    "https://x.org/blog/logins-considered-harmful/",
    "https://x.org/signups-are-open.html",
    "https://x.org/user/passwords-and-keys.html",
    "https://x.org/searching.html",
    "https://x.org/search-engine-optimization/",
    "https://x.org/searchindex.js",
    "https://x.org/docs/research/",
    "https://x.org/comments-policy.html",
    "https://x.org/post/comments.rss.html",
    "https://x.org/editor/",
    "https://x.org/docs/editing.html",
    "https://x.org/about/history",
    "https://x.org/history",
    "https://x.org/docs/history.html",
    "https://x.org/docs/commits-and-branches.html",
    "https://x.org/library/calendar.html",
    "https://x.org/calendars-explained/",
    "https://x.org/cartography/",
    "https://x.org/cartesian-coordinates.html",
    "https://x.org/checkout-a-branch.html",
    "https://x.org/accounting/",
    "https://x.org/accountability.html",
    "https://x.org/docs/account/setup.html",
    "https://x.org/administration/",
    "https://x.org/admin-guide.html",
    "https://x.org/docs/admin/",
    "https://x.org/wp-admin-tips/",
    "https://x.org/blog/",
    "https://x.org/blog/2024/05/a-post/",
    "https://x.org/blog/?page=2",
    "https://x.org/blog/?p=2",
    "https://x.org/w/index.php?title=Main_Page",
    "https://x.org/events/",
    "https://x.org/calendars-explained/?page=2",
]


@pytest.fixture(scope="module")
def config():
    return config_from_options(None, policy_files=[POLICIES], seeds=["https://x.org/"], max_commands=1,
                               default_delay_ms=0, force_recrawl=True)


def test_the_tables_cover_every_policy(config):
    assert len(config.do_not_crawl) == 9
    assert set(BLOCKED.values()) == set(range(9))


@pytest.mark.parametrize("url, index", BLOCKED.items(), ids=[u[:60] for u in BLOCKED])
def test_blocked(config, url, index):
    reason = config.do_not_crawl[index].reason
    assert config.policy_verdict(parse_url(url)) == f"blocked by do_not_crawl[{index}]: {reason}"


@pytest.mark.parametrize("url", PASSED)
def test_passed(config, url):
    assert config.policy_verdict(parse_url(url)) is None


@pytest.mark.parametrize("url, verdict", [
    ("https://x.org/blog/?page=99999999999", "query parameters page not allowed: no url_query_paramters"),
    ("https://x.org/events/calendar?page=2", "query parameters page not allowed: no url_query_paramters"),
    ("https://x.org/docs/?utm_source=x", "query parameters utm_source not allowed by any single policy"),
])
def test_query_parameters_refused(config, url, verdict):
    assert config.policy_verdict(parse_url(url)).startswith(verdict)
