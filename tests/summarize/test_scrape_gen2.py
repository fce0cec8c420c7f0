"""Text Pile Gen2: the encodings of schemas/summary/text_pile_v0_2.md, round trips, digest."""

from __future__ import annotations

import hashlib

import pytest

from textpile.summarize.scrape.document import scrape_document
from textpile.summarize.scrape.gen2_codec import (
    Gen2FormatError, Marker, MarkerKind, Segment, decode_metadata, decode_segmentation_cache,
    encode_metadata, encode_ordered_metadata, encode_segmentation_cache, encode_varint, gen2_digest,
)
from textpile.summarize.scrape.result import TextPileGen2


def test_varints_are_leb128():
    assert encode_varint(0) == b"\x00"
    assert encode_varint(127) == b"\x7f"
    assert encode_varint(128) == b"\x80\x01"
    assert encode_varint(300) == b"\xac\x02"
    with pytest.raises(ValueError):
        encode_varint(-1)


def test_metadata_bytes_as_documented():
    blob = encode_metadata("en", [Marker(4, 9, MarkerKind.paragraph), Marker(0, 3, MarkerKind.heading_1)])
    # version 1, "en", 2 markers, (kind 1, start +0, len 3), (kind 10, start +4, len 5)
    assert blob == b"\x01" + b"\x02en" + b"\x02" + b"\x01\x00\x03" + b"\x0a\x04\x05"


def test_metadata_round_trip():
    markers = (Marker(0, 300, MarkerKind.main_content), Marker(0, 5, MarkerKind.heading_2),
               Marker(6, 200, MarkerKind.paragraph), Marker(10, 15, MarkerKind.link))
    decoded = decode_metadata(encode_metadata("sv-SE", list(markers)))
    assert decoded.language == "sv-SE"
    assert decoded.markers == markers


def test_ordered_metadata_equals_metadata():
    # the scrape's form: (start, -end, kind) tuples, sorted; long values take varints
    markers = [Marker(0, 300, MarkerKind.main_content), Marker(6, 200, MarkerKind.paragraph),
               Marker(0, 5, MarkerKind.heading_2), Marker(400, 400, MarkerKind.link)]
    ordered = sorted((m.start, -m.end, int(m.kind)) for m in markers)
    blob = encode_ordered_metadata("en", ordered)
    assert blob == encode_metadata("en", markers)
    # (kind 30, +0, len 300), (kind 2, +0, 5), (kind 10, +6, 194), (kind 22, +394, 0)
    assert blob == b"\x01\x02en\x04" + b"\x1e\x00\xac\x02" + b"\x02\x00\x05" + b"\x0a\x06\xc2\x01" \
        + b"\x16\x8a\x03\x00"
    with pytest.raises(ValueError):
        encode_ordered_metadata("en", [(5, -4, 1)])


def test_segmentation_cache_bytes_and_round_trip():
    segments = (Segment(5, 0, (5,)), Segment(200, 1, (100, 100)), Segment(0, 1, ()))
    blob = encode_segmentation_cache("de", segments)
    assert blob[:6] == b"\x01\x02de\x03\x05"
    assert blob[6:9] == b"\x00\x01\x05"
    decoded = decode_segmentation_cache(blob)
    assert decoded.language == "de" and decoded.segments == segments


@pytest.mark.parametrize("blob", [b"", b"\x02\x00\x00", b"\x01\x05en", b"\x01\x00\x01\x01\x00", b"\x01\x00\x00\x00",
                                  b"\x01\x00\x01\x80\x00\x00\x00"])
def test_malformed_metadata_is_refused(blob):
    with pytest.raises(Gen2FormatError):
        decode_metadata(blob)


def test_malformed_cache_is_refused():
    with pytest.raises(Gen2FormatError, match="relevance"):
        decode_segmentation_cache(b"\x01\x00\x01\x03\x07\x00")


def test_digest_is_over_encoded_text_and_metadata_only():
    text = "Hello\nWorld"
    metadata = encode_metadata("", [Marker(0, 5, MarkerKind.heading_1)])
    expected = hashlib.blake2b(b"\x0b" + text.encode("utf-8") + metadata, digest_size=64).digest()
    assert gen2_digest(text, metadata) == expected


PAGE = """<html lang="en"><head><title>T</title></head><body><nav><a href="/">Home</a></nav>
<main><h1>Heading</h1><p>First sentence here. Second sentence follows! And a third?</p>
<ul><li>Item <strong>one</strong></li><li>Item two</li></ul></main></body></html>"""


def test_scraped_gen2_is_consistent():
    pile = scrape_document(PAGE, "https://site.example/", now_unix_utc=1_800_000_000).text_pile_v0_2
    assert pile.text == "Home\nHeading\nFirst sentence here. Second sentence follows! And a third?\nItem one\nItem two"
    metadata = decode_metadata(pile.metadata)
    assert metadata.language == "en"
    spans = {(MarkerKind(m.kind).name, pile.text[m.start:m.end]) for m in metadata.markers}
    assert ("heading_1", "Heading") in spans
    assert ("nav", "Home") in spans and ("link", "Home") in spans
    assert ("list_item", "Item one") in spans and ("strong", "one") in spans
    assert ("paragraph", "First sentence here. Second sentence follows! And a third?") in spans
    assert ("main", pile.text[5:]) in spans
    cache = decode_segmentation_cache(pile.segmentation_cache)
    assert cache.language == ""  # guessed from the text alone: too few stopwords to tell
    assert [s.length for s in cache.segments] == [len(line) for line in pile.text.split("\n")]
    assert cache.segments[2].sentence_lengths == (21, 25, 12)
    assert cache.segments[0].relevance == 0 and cache.segments[2].relevance == 1
    assert pile.blake2b512_digest == hashlib.blake2b(
        encode_varint(len(pile.text.encode())) + pile.text.encode() + pile.metadata, digest_size=64).digest()


def test_digest_independent_of_segmentation_cache():
    pile = scrape_document(PAGE, "https://site.example/", now_unix_utc=1_800_000_000).text_pile_v0_2
    other_cache = encode_segmentation_cache("fr", [Segment(len(pile.text), 0, (len(pile.text),))])
    other = TextPileGen2(pile.text, pile.metadata, other_cache, gen2_digest(pile.text, pile.metadata))
    assert other.blake2b512_digest == pile.blake2b512_digest
    changed = encode_metadata("de", list(decode_metadata(pile.metadata).markers))
    assert gen2_digest(pile.text, changed) != pile.blake2b512_digest


def test_same_content_same_digest_across_urls():
    a = scrape_document(PAGE, "https://site.example/", now_unix_utc=1_800_000_000)
    b = scrape_document(PAGE, "https://site.example/index.html?x=1", now_unix_utc=1_800_000_000)
    assert a.text_pile_v0_2.blake2b512_digest == b.text_pile_v0_2.blake2b512_digest
    assert a.text_pile.blake2b512_digest == b.text_pile.blake2b512_digest
