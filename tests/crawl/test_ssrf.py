"""The SSRF-filtering transport (seed: Dead Simple Search, SSRF at the resolver)."""

from __future__ import annotations

import asyncio
import ssl

import httpcore
import httpx
import pytest

from sites import Response, SiteServer
from textpile.crawl.fetcher.ssrf import (ALLOW_HINT, READ_CHUNK_BYTES, BlockedAddressError, CrawlStream,
                                         describe_refusal, make_transport, refusal_reason)


async def fetch(url: str, **transport_kwargs) -> httpx.Response:
    async with httpx.AsyncClient(transport=make_transport(**transport_kwargs), timeout=5) as client:
        return await client.get(url)


@pytest.fixture
def site():
    with SiteServer({"/": Response(200, "hello"), "/redirect": Response(301, "", {"Location": "/"})}) as server:
        yield server


def test_loopback_refused_and_nothing_sent(site):
    with pytest.raises(BlockedAddressError) as err:
        asyncio.run(fetch(site.base_url + "/", allow_private_addresses=False))
    assert err.value.host == "127.0.0.1"
    assert err.value.refused == [("127.0.0.1", "loopback")]
    assert err.value.port == site.port
    assert str(err.value) == (f"refused to connect to 127.0.0.1:{site.port}: 127.0.0.1 is a loopback address; "
                              "crawling loopback, private, link-local or reserved addresses needs "
                              "allow_private_addresses = true in the configuration or --allow-private-addresses")
    assert isinstance(err.value, httpx.ConnectError)
    assert err.value.request.url == site.base_url + "/"
    assert site.log == []


def test_hostname_resolving_to_loopback_refused(site):
    with pytest.raises(BlockedAddressError) as err:
        asyncio.run(fetch(f"http://localhost:{site.port}/", allow_private_addresses=False))
    assert err.value.host == "localhost"
    assert all(why == "loopback" for _, why in err.value.refused)
    assert site.log == []


def test_allowed_when_private_addresses_allowed(site):
    response = asyncio.run(fetch(site.base_url + "/", allow_private_addresses=True))
    assert (response.status_code, response.text) == (200, "hello")
    response = asyncio.run(fetch(f"http://localhost:{site.port}/redirect", allow_private_addresses=True))
    assert (response.status_code, response.headers["location"]) == (301, "/")
    assert [r.path for r in site.log] == ["/", "/redirect"]


def test_each_resolution_is_checked(site, monkeypatch):
    """A host whose second resolution gives another address (DNS rebinding) is checked
    again. Stand-ins, so that nothing leaves 127.0.0.1: the injected resolver is DNS, and
    the filter treats 127.0.0.1 as if it were a public address."""
    import textpile.crawl.fetcher.ssrf as ssrf

    real = ssrf.refusal_reason
    monkeypatch.setattr(ssrf, "refusal_reason", lambda a: None if a == "127.0.0.1" else real(a))
    answers = iter([["127.0.0.1"], ["127.0.0.2"]])
    calls = []

    async def resolver(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return next(answers)

    async def run() -> None:
        transport = make_transport(allow_private_addresses=False, resolver=resolver,
                                   limits=httpx.Limits(max_keepalive_connections=0))
        async with httpx.AsyncClient(transport=transport, timeout=5) as client:
            first = await client.get(f"http://rebind.test:{site.port}/")
            assert (first.status_code, first.text) == (200, "hello")
            with pytest.raises(BlockedAddressError) as second:
                await client.get(f"http://rebind.test:{site.port}/")
            assert second.value.refused == [("127.0.0.2", "loopback")]

    asyncio.run(run())
    assert calls == [("rebind.test", site.port), ("rebind.test", site.port)]
    assert [(r.path, r.headers["Host"]) for r in site.log] == [("/", f"rebind.test:{site.port}")]


def test_mixed_answer_uses_only_allowed_addresses(site):
    async def resolver(host: str, port: int) -> list[str]:
        return ["10.0.0.1", "127.0.0.1"]

    with pytest.raises(BlockedAddressError) as err:
        asyncio.run(fetch(f"http://mixed.test:{site.port}/", allow_private_addresses=False, resolver=resolver))
    assert err.value.refused == [("10.0.0.1", "private"), ("127.0.0.1", "loopback")]
    assert str(err.value) == (f"refused to connect to mixed.test:{site.port}: mixed.test resolves only to refused "
                              "addresses: 10.0.0.1 is a private address, 127.0.0.1 is a loopback address; " + ALLOW_HINT)
    assert site.log == []

    async def loopbacks(host: str, port: int) -> list[str]:
        return ["127.0.0.2", "127.0.0.1"]  # nothing listens on 127.0.0.2: the next one is tried

    response = asyncio.run(fetch(f"http://mixed.test:{site.port}/", allow_private_addresses=True, resolver=loopbacks))
    assert response.status_code == 200
    assert [r.headers["Host"] for r in site.log] == [f"mixed.test:{site.port}"]


def test_unresolvable_host_is_a_plain_connect_error():
    async def resolver(host: str, port: int) -> list[str]:
        raise OSError(-2, "Name or service not known")

    with pytest.raises(httpx.ConnectError) as err:
        asyncio.run(fetch("http://nowhere.test/", allow_private_addresses=False, resolver=resolver))
    assert not isinstance(err.value, BlockedAddressError)
    assert "cannot resolve nowhere.test" in str(err.value)


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1", "loopback"),
    ("127.1.2.3", "loopback"),
    ("::1", "loopback"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fd00::1", "private"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("100.64.0.1", "shared address space"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "private"),  # Python files 240/4 under private as well as reserved
    ("192.0.2.1", "private"),  # documentation range (TEST-NET-1)
    ("::ffff:127.0.0.1", "loopback (embedded in ::ffff:7f00:1)"),
    ("::ffff:10.0.0.1", "private (embedded in ::ffff:a00:1)"),
    ("2002:7f00:1::", "loopback (embedded in 2002:7f00:1::)"),
    ("64:ff9b::a9fe:a9fe", "link-local (embedded in 64:ff9b::a9fe:a9fe)"),
    ("fec0::1", "site-local"),
    ("93.184.215.14", None),
    ("2606:4700:4700::1111", None),
    ("::ffff:93.184.215.14", None),
    ("8.8.8.8", None),
])
def test_refusal_reason(address, reason):
    assert refusal_reason(address) == reason


def test_refusal_reason_rejects_non_addresses():
    with pytest.raises(ValueError):
        refusal_reason("example.org")


@pytest.mark.parametrize("address, text", [
    ("127.0.0.1", "127.0.0.1 is a loopback address"),
    ("10.1.2.3", "10.1.2.3 is a private address"),
    ("169.254.169.254", "169.254.169.254 is a link-local address"),
    ("0.0.0.0", "0.0.0.0 is an unspecified address"),
    ("100.64.0.1", "100.64.0.1 is in the shared address space (100.64.0.0/10)"),
    ("::ffff:127.0.0.1", "::ffff:127.0.0.1 is a loopback address (an IPv4 address embedded in IPv6)"),
])
def test_describe_refusal(address, text):
    assert describe_refusal(address, refusal_reason(address)) == text


class _RecordingStream(httpcore.AsyncNetworkStream):
    """A stream that records what was asked of it."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.tls: list[str | None] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.asked.append(max_bytes)
        return b"data"

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.AsyncNetworkStream:
        self.tls.append(server_hostname)
        return _RecordingStream()

    def get_extra_info(self, info: str):
        return f"info {info}"


def test_connections_read_what_arrived_up_to_the_chunk_size_also_after_tls():
    async def run():
        inner = _RecordingStream()
        stream = CrawlStream(inner)
        assert await stream.read(65536) == b"data"
        assert await stream.read(2 * READ_CHUNK_BYTES) == b"data"
        secure = await stream.start_tls(ssl.create_default_context(), "h.example")
        await secure.read(65536)
        return inner, stream, secure

    inner, stream, secure = asyncio.run(run())
    assert inner.asked == [READ_CHUNK_BYTES, 2 * READ_CHUNK_BYTES]
    assert inner.tls == ["h.example"]
    assert isinstance(secure, CrawlStream) and secure.stream.asked == [READ_CHUNK_BYTES]
    assert stream.get_extra_info("socket") == "info socket"


def test_a_big_body_arrives_whole_through_the_transport():
    body = bytes(range(256)) * 12_000  # 3 MB
    with SiteServer({"/big": Response(200, body, {"Content-Type": "application/octet-stream"})}) as server:
        response = asyncio.run(fetch(server.base_url + "/big", allow_private_addresses=True))
    assert response.status_code == 200 and response.content == body
