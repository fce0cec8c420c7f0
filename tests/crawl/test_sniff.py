"""Content checked against its label: WHATWG MIME sniffing of bodies labelled as text,
truncated compressed bodies, plain bodies behind a false Content-Encoding (issue 12)."""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest

from textpile.crawl.fetcher.sniff import (BINARY_DATA_BYTES, OCTET_STREAM, has_binary_data_bytes, is_coded,
                                          mislabeled_text_type, pattern_type)

from sites import Response, SiteServer
from textpile.crawl.loop.run import run_crawl

from .crawlsite import Rows, config

HTML = {"Content-Type": "text/html; charset=utf-8"}

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
PAGE = ("<!doctype html><html><head><title>Quokkas</title></head><body><p>"
        + "The quokka lives on Rottnest Island. " * 50 + "</p></body></html>").encode()


def test_binary_data_bytes_are_the_standards():
    assert sorted(BINARY_DATA_BYTES) == [*range(0, 9), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)]
    assert not has_binary_data_bytes(b"tab\tnewline\n cr\r ff\x0c esc-free \x1b text \xe9\xff")
    assert has_binary_data_bytes(b"<p>\x00</p>")


@pytest.mark.parametrize("body, expected", [
    (PNG, "image/png"),
    (gzip.compress(PAGE), "application/x-gzip"),
    (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "application/zip"),
    (b"GIF89a\x01\x00\x01\x00\x80\x00\x00", "image/gif"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<\x00>>", "application/pdf"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00", "image/webp"),
    (b"wOF2\x00\x01\x00\x00", "font/woff2"),
    (struct.pack(">I", 24) + b"ftypisom\x00\x00\x02\x00mp41isom\x00\x00", "video/mp4"),
    (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm\x42\x87", "video/webm"),
    (b"\x00\x01\x02\x03 no signature", OCTET_STREAM),
])
def test_binary_bodies_labelled_as_text_get_their_real_type(body, expected):
    assert mislabeled_text_type(body) == expected


@pytest.mark.parametrize("body", [
    PAGE,
    "<p>Grüße aus Köln, naïve café</p>".encode("cp1252"),
    "<p>日本語のページ</p>".encode("shift_jis"),
    b"\xef\xbb\xbf<p>utf-8 with a BOM</p>",
    "\ufeff<p>utf-16 with a BOM</p>".encode("utf-16-le"),
    b"BM is how this plain text begins, not a bitmap",
    b"",
])
def test_text_bodies_stay_text(body):
    assert mislabeled_text_type(body) is None


def test_declared_utf16_without_bom_is_text_unless_a_signature_says_otherwise():
    page = "<p>utf-16 without a BOM</p>".encode("utf-16-le")
    assert mislabeled_text_type(page) == OCTET_STREAM  # the standard's rule alone
    assert mislabeled_text_type(page, utf16_declared=True) is None
    assert mislabeled_text_type(gzip.compress(PAGE), utf16_declared=True) == "application/x-gzip"


def test_only_the_resource_header_is_sniffed():
    assert mislabeled_text_type(PAGE * 10 + b"\x00 late NUL byte") is None
    assert pattern_type(b"x" + PNG) is None


def test_is_coded():
    assert is_coded(gzip.compress(b"x"), "gzip") and is_coded(gzip.compress(b"x"), "x-gzip")
    assert not is_coded(b"<p>plain</p>", "gzip")
    assert is_coded(zlib.compress(b"x"), "deflate")
    assert not is_coded(b"<p>plain</p>", "deflate")
    assert is_coded(zlib.compress(PAGE)[2:], "deflate")  # raw deflate: binary bytes


# ---- through the crawler: exact crawl log entries and files -----------------------------------

def site_routes(bodies: dict[str, tuple[dict, bytes]]) -> dict[str, Response]:
    """Routes of a real server on 127.0.0.1 (so every byte goes over the wire as is): an
    index linking each path of ``bodies``, and each body with its headers."""
    links = "".join(f'<a href="{path}">{path}</a>' for path in bodies)
    routes = {"/robots.txt": Response(404), "/": Response(200, f"<p>index</p>{links}")}
    for path, (headers, body) in bodies.items():
        routes[path] = Response(200, body, headers)
    return routes


def test_crawler_sniffs_and_recovers(tmp_path):
    gz = gzip.compress(PAGE)
    bodies = {
        "/png": (HTML, PNG),
        "/gzip-unlabelled": (HTML, gz),
        "/gzip-labelled": ({**HTML, "Content-Encoding": "gzip"}, gz),
        "/gzip-truncated": ({**HTML, "Content-Encoding": "gzip"}, gz[: len(gz) // 2]),
        "/false-encoding": ({**HTML, "Content-Encoding": "gzip"}, PAGE),
        "/gzip-gzip": ({**HTML, "Content-Encoding": "gzip"}, gzip.compress(gz)),
        "/text-plain-binary": ({"Content-Type": "text/plain"}, b"\x00\x00\x00\x00binary log"),
    }
    with SiteServer(site_routes(bodies)) as site:
        cfg = config(tmp_path, [site.base_url + "/"])
        report = run_crawl(cfg, tmp_path / "crawl.db", progress=False)
    rows = Rows(tmp_path / "crawl.db", {site.base_url: "S"})
    by_url = rows.log_by_url()
    assert {url: entries for url, entries in by_url.items() if url != "S/" and url != "S/robots.txt"} == {
        "S/png": [(0, 29, "labelled text/html, but the content is image/png (binary bytes; WHATWG MIME sniffing)")],
        "S/gzip-unlabelled": [(0, 29, "labelled text/html, but the content is application/x-gzip "
                                      "(binary bytes; WHATWG MIME sniffing)")],
        "S/gzip-labelled": [(0, 20, None)],
        # cut off twice (a fluke is retried once): 102 error_reading_response
        "S/gzip-truncated": [(0, 102, f"TruncatedBody: the gzip stream ends early: {len(gz) // 2} bytes "
                                      f"received, {len(zlib.decompressobj(31).decompress(gz[:len(gz) // 2]))} "
                                      "decoded, no end of stream")] * 3,
        "S/false-encoding": [(0, 20, "Content-Encoding says gzip, but the body is plain text: read as it is")],
        # decoded once, the inner gzip is still binary: its real type
        "S/gzip-gzip": [(0, 29, "labelled text/html, but the content is application/x-gzip "
                                "(binary bytes; WHATWG MIME sniffing)")],
        "S/text-plain-binary": [(0, 29, "labelled text/plain, but the content is application/octet-stream "
                                        "(binary bytes; WHATWG MIME sniffing)")],
    }
    files = rows.files()
    assert files["S/png"][:3] == ("image/png", len(PNG), None)
    assert files["S/gzip-unlabelled"][:3] == ("application/x-gzip", len(gz), None)
    assert files["S/gzip-gzip"][:3] == ("application/x-gzip", len(gz), None)
    assert files["S/gzip-labelled"][0] == "text/html; charset=utf-8"
    assert files["S/gzip-labelled"][2].startswith("<!doctype html><html><head><title>Quokkas</title>")
    assert files["S/false-encoding"][2] == PAGE.decode()
    assert "S/gzip-truncated" not in files
    assert report.ingested_files == 3  # the index, /gzip-labelled, /false-encoding
