"""Building Text Piles Gen1 and Gen2 from the walked lines.

Sources: unobtanium-documentation.txt, pages "Text Pile Gen1" (fields, digest) and
"Text Pile Gen2" (text, metadata, segmentation cache, digest); encodings in
schemas/summary/text_pile_v0_2.md.
"""

from __future__ import annotations

import hashlib
import re

from textpile.summarize.scrape.gen2_codec import (
    Marker, MarkerKind, Relevance, encode_ordered_metadata, encode_segmentation_cache, gen2_digest,
)
from textpile.summarize.scrape.result import TextPileGen1, TextPileGen2
from textpile.summarize.scrape.walk import Line, WalkResult

GEN1_SEPARATOR = "\n\n\n"

# A sentence ends after . ! ? … (plus closing quotes/brackets) followed by whitespace.
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+(?=\S)")
_SENTENCE_SEARCH = _SENTENCE_END.search


def gen1_digest(text: str, secondary_text: str, big_headlines: str, small_headlines: str,
                code_text: str, quote_text: str) -> bytes:
    """BLAKE2b-512 of the six fields, UTF-8, with ``"\\n\\n\\n"`` between each two fields
    (not after the last), in the order of the arguments (seed page "Text Pile Gen1")."""
    hasher = hashlib.blake2b(digest_size=64)
    fields = (text, secondary_text, big_headlines, small_headlines, code_text, quote_text)
    for i, value in enumerate(fields):
        if i:
            hasher.update(GEN1_SEPARATOR.encode("utf-8"))
        hasher.update(value.encode("utf-8"))
    return hasher.digest()


def make_gen1(text: str = "", secondary_text: str = "", big_headlines: str = "",
              small_headlines: str = "", code_text: str = "", quote_text: str = "") -> TextPileGen1:
    """A Gen1 text pile from its fields (each stripped) with its digest."""
    fields = [f.strip() for f in (text, secondary_text, big_headlines, small_headlines, code_text, quote_text)]
    return TextPileGen1(*fields, blake2b512_digest=gen1_digest(*fields))


def build_gen1(walk: WalkResult) -> TextPileGen1:
    """Gen1 fields from the lines: text = main content lines (headlines, code, quotes
    included), secondary_text = the other lines; big_headlines = h1-h2 lines,
    small_headlines = h3-h6 lines (from the whole page); code_text = lines inside ``pre``
    and the text of ``code``/``kbd``/``samp``/``tt`` outside ``pre``; quote_text = lines
    inside ``blockquote`` and ``q`` outside ``blockquote``. One line per paragraph or
    headline."""
    lines = walk.lines
    return make_gen1(
        "\n".join(line.text for line in lines if line.main),
        "\n".join(line.text for line in lines if not line.main),
        "\n".join(line.text for line in lines if line.heading in (1, 2)),
        "\n".join(line.text for line in lines if line.heading >= 3),
        "\n".join([line.text for line in lines if line.in_pre] + walk.code_items),
        "\n".join([line.text for line in lines if line.in_blockquote] + walk.quote_items),
    )


_SENTENCE_MARKS = frozenset(".!?…")


def sentence_lengths(segment: str) -> tuple[int, ...]:
    """Lengths (code points) of the sentences of ``segment``; they sum to ``len(segment)``.
    A sentence keeps the whitespace after its final punctuation."""
    if not ("." in segment or "!" in segment or "?" in segment or "…" in segment):  # _SENTENCE_MARKS
        return (len(segment),) if segment else ()
    # most lines with a mark are one sentence ("os.path.join()"): one search says so
    first = _SENTENCE_SEARCH(segment)
    if first is None:
        return (len(segment),)
    lengths = []
    previous = 0
    for match in _SENTENCE_END.finditer(segment, first.start()):  # no look-behind: the same matches
        lengths.append(match.end() - previous)
        previous = match.end()
    if previous < len(segment):
        lengths.append(len(segment) - previous)
    return tuple(lengths)


def main_content_markers(lines: list[Line]) -> list[Marker]:
    """One main_content marker per run of consecutive main content lines."""
    markers = []
    run_start = run_end = None
    for line in lines:
        if line.main:
            if run_start is None:
                run_start = line.start
            run_end = line.start + len(line.text)
        elif run_start is not None:
            markers.append(Marker(run_start, run_end, MarkerKind.main_content))
            run_start = None
    if run_start is not None:
        markers.append(Marker(run_start, run_end, MarkerKind.main_content))
    return markers


_MAIN_CONTENT = int(Relevance.main_content)
_BOILERPLATE = int(Relevance.boilerplate)


def build_gen2(lines: list[Line], spans: list[tuple[int, int, int]], language: str,
               guessed_language: str, text: str | None = None) -> TextPileGen2:
    """Gen2 text pile: text = the lines joined by ``"\\n"`` (``text``, when the caller has
    joined them already); metadata = the walk's spans plus main_content markers and the
    document language; segmentation cache = one segment per line with its relevance (main
    content or boilerplate), sentence lengths and the guessed language."""
    if text is None:
        text = "\n".join([line.text for line in lines])
    # the markers as (start, -end, kind) in encode_metadata's order, each once: sorted, then
    # repeats (nested elements of one kind over the same text, as pre and code) dropped as
    # neighbours (a set of the tuples cost twice as much as sorting them)
    markers = [(start, -end, kind) for kind, start, end in spans]
    markers += [(start, -end, kind) for start, end, kind in main_content_markers(lines)]
    markers.sort()
    markers = [marker for marker, previous in zip(markers, [None, *markers]) if marker != previous]
    metadata = encode_ordered_metadata(language, markers)
    # (length, relevance, sentence lengths) as plain tuples: the fields of a Segment, without
    # a named tuple and an enum look-up for each of a page's hundreds of lines
    segments = [
        (len(line_text), _MAIN_CONTENT if line.main else _BOILERPLATE, sentence_lengths(line_text))
        for line in lines
        for line_text in (line.text,)
    ]
    cache = encode_segmentation_cache(guessed_language, segments)
    return TextPileGen2(text, metadata, cache, gen2_digest(text, metadata))
