"""parse_url on the WHATWG URL Standard (issue 10): the origin/url split of the seed's
base schema, and the three bugs of the urllib version (``/a//b`` merged, IDNA 2003
hosts, ``%7e`` kept)."""

from __future__ import annotations

import pytest

from textpile.store.urls import ParsedUrl, UrlError, UrlResolver, parse_url


def test_empty_path_segments_are_kept():
    # posixpath.normpath turned /a//b into /a/b: another page on most servers.
    url = parse_url("https://docs.example/a//b")
    assert (url.path, url.str_url) == ("/a//b", "https://docs.example/a//b")
    assert parse_url("../c//d/./e", "https://docs.example/x//y/z").str_url == "https://docs.example/x//c//d/e"


def test_host_names_are_mapped_with_uts46_non_transitional():
    # IDNA 2003 gave fass.de; UTS 46 (browsers, httpx, the url crate) keeps the sharp s.
    url = parse_url("https://faß.de/straße")
    assert (url.host, url.str_origin, url.str_url) == (
        "xn--fa-hia.de", "https://xn--fa-hia.de:443", "https://xn--fa-hia.de/stra%C3%9Fe")
    assert parse_url("https://FAß.DE/").host == "xn--fa-hia.de"


def test_percent_encoded_unreserved_characters_are_decoded():
    url = parse_url("https://h.example/%7euser/a%2fb%2Dc?q=%7e%2f%41#%7e")
    assert (url.path, url.query, url.fragment) == ("/~user/a%2Fb-c", "q=~%2FA", "%7e")
    assert url.str_url == "https://h.example/~user/a%2Fb-c?q=~%2FA"
    assert parse_url("https://h.example/~user/").str_url == url.str_url.split("a%2F")[0]


def test_origin_and_url_split_as_the_base_schema_stores_them():
    url = parse_url("HTTPS://User:Pw@Example.ORG:443/a/./b/../c?x=1&y#frag")
    assert url == ParsedUrl(scheme="https", username="User", password="Pw", host="example.org", port=443,
                            path="/a/c", query="x=1&y", fragment="frag",
                            str_url="https://User:Pw@example.org/a/c?x=1&y")
    assert url.str_origin == "https://example.org:443"
    assert parse_url("http://example.org:8080").str_url == "http://example.org:8080/"
    assert parse_url("http://[::1]:8080/x").str_origin == "http://[::1]:8080"
    assert parse_url("http://0x7f.1/").host == "127.0.0.1"


def test_empty_query_and_fragment_are_not_absent():
    assert (parse_url("https://h/?").query, parse_url("https://h/?").str_url) == ("", "https://h/?")
    assert parse_url("https://h/").query is None
    assert (parse_url("https://h/#").fragment, parse_url("https://h/").fragment) == ("", None)


def test_non_special_urls_are_kept_as_parsed():
    assert parse_url("mailto:Someone@Example.org") == ParsedUrl(
        "mailto", None, None, None, None, "Someone@Example.org", None, None, "mailto:Someone@Example.org")
    assert parse_url("javascript:void(0)#x").str_url == "javascript:void(0)"


def test_resolver_equals_parse_url_with_base():
    resolver = UrlResolver("https://docs.example/lib/page.html?x#top")
    for href in ("other.html", "#sec", "", "/abs", "../up/%7e", "//cdn.example/a.js", "?q=1"):
        assert resolver.resolve(href) == parse_url(href, "https://docs.example/lib/page.html?x#top")
    assert resolver.resolve("#sec").str_url == "https://docs.example/lib/page.html?x"


def test_errors_name_the_input():
    with pytest.raises(UrlError, match=r"^not an absolute URL: 'page\.html'$"):
        parse_url("page.html")
    with pytest.raises(UrlError, match=r"^invalid base URL: not an absolute URL: 'nobase'$"):
        UrlResolver("nobase")
    with pytest.raises(UrlError, match=r"^invalid port '99999' in URL 'http://h:99999/'$"):
        parse_url("http://h:99999/")
    with pytest.raises(UrlError, match=r"^invalid host name '': a label is empty or longer than 63$"):
        parse_url("https://")
    with pytest.raises(UrlError, match=r"^invalid URL 'http://\[::1\]:x/' \(relative to 'https://h/'\)$"):
        UrlResolver("https://h/").resolve("http://[::1]:x/")
    # WHATWG: extra slashes before a special URL's host are ignored.
    assert parse_url("https:///x").str_url == "https://x/"
