"""The similarity fingerprint of a page's main text: a 64-bit SimHash over word shingles.

Source: Charikar, "Similarity estimation techniques from rounding algorithms" (STOC 2002:
SimHash), as Manku, Jain and Das Sarma use it for near-duplicate web pages ("Detecting
near-duplicates for web crawling", WWW 2007: 64-bit fingerprints, near-duplicates within
a few bits, found through blocks of the fingerprint that must match exactly).

The main text (Text Pile Gen1 ``text``) is lower-cased and cut into words at white
space; every run of :data:`SHINGLE_WORDS` consecutive words (a shingle) gets a 64-bit
hash: the exclusive or of its words' XXH3-64 of their UTF-8, each rotated left by 21 bits
per place in the shingle (0, 21, 42). Bit *i* of the
fingerprint is set when more than half of the shingles' hashes have it set (a shingle
that recurs votes each time, as term frequencies weigh SimHash's features). Two texts that share most of
their shingles get fingerprints that differ in few bits (the Hamming distance grows
with the share of shingles that differ), so pages that differ only in a footer's
timestamp are a few bits apart, and two API pages of sibling classes, whose names recur
in every sentence, are many bits apart (bench/neardup measures both on real pages).

A text of fewer than :data:`MIN_WORDS` words has no fingerprint: short texts are alike
by chance. Plain Python (the scraping workers import no numpy: memory in every worker),
its loops in C (``map``, ``struct``, big integers' shifts, masks and ``bit_count`` over
every shingle at once).
"""

from __future__ import annotations

import struct

from xxhash import xxh3_64_intdigest

#: Words per shingle.
SHINGLE_WORDS = 3
#: The fewest words a text needs for a fingerprint.
MIN_WORDS = 40
#: Bits of a fingerprint.
FINGERPRINT_BITS = 64
_MASK = (1 << FINGERPRINT_BITS) - 1



def simhash(text: str) -> int | None:
    """The SimHash of ``text`` (see the module doc) as a signed 64-bit integer (as SQLite
    and Parquet store it; :func:`hamming` takes it as it is), or None when ``text`` has
    fewer than :data:`MIN_WORDS` words. Deterministic: the same text gives the same
    value in every process and on every platform."""
    words = text.lower().split()
    if len(words) < MIN_WORDS:
        return None
    distinct = list(set(words))
    hashed = dict(zip(distinct, map(xxh3_64_intdigest, [word.encode("utf-8", "surrogatepass") for word in distinct])))
    # The words' hashes laid out as one integer, 64 bits a word, the first word lowest.
    # Each 64-bit lane rotated left by 21 bits per place in the shingle and shifted down
    # that many words lines every position up with its next words: one exclusive or
    # gives every shingle's hash (each bit the parity of three independent bits).
    length = len(words)
    laid = int.from_bytes(struct.pack(f"<{length}Q", *map(hashed.__getitem__, words)), "little")
    combined = laid
    for place in range(1, SHINGLE_WORDS):
        turn = (_ROTATION * place) % FINGERPRINT_BITS
        high, low = _lane_masks(length, turn)
        rotated = ((laid << turn) & high) | ((laid >> (FINGERPRINT_BITS - turn)) & low)
        combined ^= rotated >> (FINGERPRINT_BITS * place)
    count = length - SHINGLE_WORDS + 1
    packed = combined.to_bytes(8 * length, "little")[:8 * count]
    # count each bit over the shingles' hashes: byte j of every hash is every 8th byte
    # from j, and bit b of those bytes is picked by a mask with bit b of every byte set
    masks = [int.from_bytes(bytes((1 << bit,)) * count, "little") for bit in range(8)]
    value = 0
    for byte in range(8):
        column = int.from_bytes(packed[byte::8], "little")
        for bit in range(8):
            if (column & masks[bit]).bit_count() * 2 > count:
                value |= 1 << (byte * 8 + bit)
    return to_signed(value)


#: Bits each later word of a shingle is rotated by, per place.
_ROTATION = 21


def _lane_masks(lanes: int, turn: int) -> tuple[int, int]:
    """Masks over ``lanes`` 64-bit lanes: bits ``turn`` to 63 of each lane, and bits 0 to
    ``turn - 1`` of each (a lane-wise rotation by ``turn`` keeps the first of a left shift
    and the second of a right shift)."""
    low_lane = (1 << turn) - 1
    high_lane = _MASK ^ low_lane
    return (int.from_bytes(high_lane.to_bytes(8, "little") * lanes, "little"),
            int.from_bytes(low_lane.to_bytes(8, "little") * lanes, "little"))


def title_key(title: str | None) -> int:
    """The key of a page's title among its near-duplicates' (they share their title): the
    signed XXH3-64 of its UTF-8, 0 for no title."""
    if title is None:
        return 0
    return to_signed(xxh3_64_intdigest(title.encode("utf-8", "surrogatepass")))


def to_signed(value: int) -> int:
    """An unsigned 64-bit fingerprint as the signed 64-bit integer that stores it."""
    value &= _MASK
    return value - (1 << FINGERPRINT_BITS) if value >> (FINGERPRINT_BITS - 1) else value


def hamming(a: int, b: int) -> int:
    """The number of bits in which the fingerprints ``a`` and ``b`` (signed or unsigned
    64-bit) differ, 0 to 64."""
    return ((a ^ b) & _MASK).bit_count()


def bands(value: int, count: int) -> list[int]:
    """The ``count`` blocks of the fingerprint ``value`` as keys: block *j* holds bits
    ``j * 64 // count`` up to ``(j + 1) * 64 // count`` (exclusive), and its key is
    ``j << 32 | block``. Two fingerprints at most ``count - 1`` bits apart have at least
    one equal key (pigeonhole: the differing bits fall in at most ``count - 1`` blocks),
    so looking up a fingerprint's keys finds every such neighbour.

    Raises:
        ValueError: ``count`` is not between 1 and 64.
    """
    if not 1 <= count <= FINGERPRINT_BITS:
        raise ValueError(f"bands: count {count!r} must be between 1 and {FINGERPRINT_BITS}")
    value &= _MASK
    keys = []
    for j in range(count):
        start, end = j * FINGERPRINT_BITS // count, (j + 1) * FINGERPRINT_BITS // count
        keys.append(j << 32 | (value >> start) & ((1 << (end - start)) - 1))
    return keys
