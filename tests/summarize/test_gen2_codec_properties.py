"""Properties of the Text Pile Gen2 encodings (hypothesis): encoding then decoding gives
the values back, decoding any bytes gives values or a Gen2FormatError, and a packed Gen2
text reads back as it was, whole or in any part."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from textpile.store.gen2_piles import BLOCK_BYTES, PackedText, pack, pack_text, unpack
from textpile.summarize.scrape.gen2_codec import (
    Gen2FormatError,
    Gen2Metadata,
    Marker,
    Segment,
    SegmentationCache,
    decode_metadata,
    decode_segmentation_cache,
    encode_metadata,
    encode_ordered_metadata,
    encode_segmentation_cache,
    encode_varint,
)

#: Unsigned 64-bit values, small ones (one byte) often.
counts = st.one_of(st.integers(0, 0x7F), st.integers(0, 2**14), st.integers(0, 2**64 - 1))
#: Languages and other strings: any code point UTF-8 can hold (no lone surrogates).
texts = st.text(max_size=20)
markers = st.builds(lambda start, length, kind: Marker(start, start + length, kind), counts, counts, counts)
segments = st.builds(Segment, counts, st.sampled_from([0, 1]), st.lists(counts, max_size=6).map(tuple))


@given(counts)
def test_varints_read_back_in_their_shortest_form(value):
    data = encode_varint(value)
    assert decode_segmentation_cache(encode_segmentation_cache("", [(value, 1, ())])).segments[0].length == value
    assert len(data) == max(1, -(-value.bit_length() // 7)) and (len(data) == 1 or data[-1] != 0)


@given(texts, st.lists(markers, max_size=30))
def test_metadata_reads_back_with_its_markers_in_order(language, given_markers):
    blob = encode_metadata(language, given_markers)
    ordered = sorted(given_markers, key=lambda m: (m.start, -m.end, m.kind))
    assert decode_metadata(blob) == Gen2Metadata(language, tuple(ordered))
    assert encode_ordered_metadata(language, [(m.start, -m.end, m.kind) for m in ordered]) == blob


@given(texts, st.lists(segments, max_size=30))
def test_segmentation_cache_reads_back(language, given_segments):
    blob = encode_segmentation_cache(language, given_segments)
    assert decode_segmentation_cache(blob) == SegmentationCache(language, tuple(given_segments))
    assert encode_segmentation_cache(language, [tuple(s) for s in given_segments]) == blob


#: Bytes near a valid blob (version 1 first, often) as well as any bytes.
blobs = st.one_of(st.binary(max_size=60), st.binary(max_size=60).map(lambda b: b"\x01" + b))


@given(blobs)
def test_any_bytes_decode_or_are_refused_and_decoded_values_encode_to_the_same_bytes(blob):
    try:
        metadata = decode_metadata(blob)
    except Gen2FormatError:
        pass
    else:
        in_order = list(metadata.markers) == sorted(metadata.markers, key=lambda m: (m.start, -m.end, m.kind))
        assert (encode_metadata(metadata.language, metadata.markers) == blob) == in_order
    try:
        cache = decode_segmentation_cache(blob)
    except Gen2FormatError:
        pass
    else:
        assert encode_segmentation_cache(cache.language, cache.segments) == blob


@given(st.binary(max_size=2000), st.booleans())
def test_a_packed_value_unpacks_to_itself(value, repetitive):
    value = value * 20 if repetitive else value  # compressible, or mostly not
    packed, size = pack(value)
    assert size == len(value) and len(packed) <= len(value)
    assert unpack(packed, size) == value


#: Characters of 1 to 4 UTF-8 bytes, so restart points fall beside multi-byte code points.
ALPHABET = "ab \nßé€漢𝄞"


@settings(max_examples=25)
@given(st.integers(0, 2**32), st.integers(0, 3 * BLOCK_BYTES), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 5000)),
                                                                        min_size=1, max_size=6))
def test_a_packed_text_reads_back_in_any_part(seed, length, reads):
    rng = random.Random(seed)
    words = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(200)]
    text = " ".join(rng.choice(words) for _ in range(length // 7))[:length]
    value = text.encode("utf-8")
    packed, size, points = pack_text(value)
    assert unpack(packed, size) == value
    stored = PackedText(packed, size, points)
    for where, count in reads:  # forwards, backwards, across restart points
        start = int(where * len(text))
        assert stored.text(start, count) == text[start:start + count]
        byte = int(where * len(value))
        assert stored.read(byte, byte + count) == value[byte:byte + count]
