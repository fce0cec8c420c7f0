"""parse_url on hostile hosts and ports (issue #2 adversarial findings): every invalid
host is a UrlError naming the input, never an idna / Unicode error."""

from __future__ import annotations

import pytest

from textpile.store.urls import UrlError, parse_url


@pytest.mark.parametrize("url, message", [
    ("http://xn--zz.example/", "invalid host name 'xn--zz.example': 'xn--zz' is not a valid punycode label"),
    ("http://" + "a" * 64 + ".example/",
     "invalid host name '" + "a" * 64 + ".example': a label is empty or longer than 63"),
    ("http://" + ("a" * 60 + ".") * 5 + "com/",
     "invalid host name '" + ("a" * 60 + ".") * 5 + "com': longer than 253 characters"),
    ("http://a..example/", "invalid host name 'a..example': a label is empty or longer than 63"),
    ("http://exa mple.com/", "invalid host name 'exa mple.com': it contains ' '"),
    ("http://a<b>.com/", "invalid host name 'a<b>.com': it contains '<>'"),
    ('http://a"b.com/', "invalid host name 'a\"b.com': it contains '\"'"),
    ("http://a{b}.com/", "invalid host name 'a{b}.com': it contains '{}'"),
    ("http://a|b.com/", "invalid host name 'a|b.com': it contains '|'"),
    ("http://a^b.com/", "invalid host name 'a^b.com': it contains '^'"),
    ("http://127.0.0.1:0/", "invalid port 0 in URL 'http://127.0.0.1:0/'"),
    ("https://example.com:0/", "invalid port 0 in URL 'https://example.com:0/'"),
    ("http://[::1", "invalid IPv6 address in URL 'http://[::1'"),
    ("http://\u00e4" * 1 + "x" * 70 + ".com/", None),
])
def test_invalid_hosts_raise_url_error(url, message):
    with pytest.raises(UrlError) as err:
        parse_url(url)
    if message is not None:
        assert str(err.value) == message


def test_relative_reference_to_an_invalid_host_raises_url_error():
    with pytest.raises(UrlError):
        parse_url("//xn--zz.example/robots.txt", "http://127.0.0.1:8000/robots.txt")


@pytest.mark.parametrize("url, str_url, host", [
    ("http://xn--strae-oqa.de/", "http://xn--strae-oqa.de/", "xn--strae-oqa.de"),
    ("http://caf\u00e9.fr/x", "http://xn--caf-dma.fr/x", "xn--caf-dma.fr"),
    ("http://EXA%4dPLE.com./a", "http://example.com/a", "example.com"),
    ("http://[::1]:8080/x", "http://[::1]:8080/x", "::1"),
    ("http://" + "a" * 63 + ".example/", "http://" + "a" * 63 + ".example/", "a" * 63 + ".example"),
    ("http://my_host.example/", "http://my_host.example/", "my_host.example"),
    # WHATWG: a backslash ends the host of a special URL (browsers go to host "a").
    ("http://a\\b.com/", "http://a/b.com/", "a"),
])
def test_valid_hosts_still_parse(url, str_url, host):
    parsed = parse_url(url)
    assert (parsed.str_url, parsed.host) == (str_url, host)
