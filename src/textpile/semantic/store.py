"""What is embedded and how vectors are stored (``schemas/summary/textpile_embeddings.sql``).

A page is embedded as its title, description, headings (section titles, up to
:data:`MAX_HEADINGS_CHARS`) and its text (Gen2, else Gen1 main text); a section as the
page title, the section title and the first :data:`SECTION_TEXT_CHARS` characters of its
span of the Gen2 text. A page's whole text counts (up to the model's
:data:`~textpile.semantic.model.MAX_TOKENS`): a mean of token vectors costs its length.

A vector is stored as int8: the unit vector scaled so that its largest component is
±127, rounded (one byte per dimension). The scale is not kept: cosine similarity only
needs the direction, so readers normalize again (:func:`decode_vectors`).
"""

from __future__ import annotations

import numpy as np

#: Characters of the joined section titles that go into a page's text.
MAX_HEADINGS_CHARS = 2000
#: Characters of a section's own text that go into its vector.
SECTION_TEXT_CHARS = 1000


def page_text(title: str | None, description: str | None, headings: list[str], text: str | None) -> str:
    """The text a page's vector is made of (lines: title, description, headings, text)."""
    joined = "\n".join(headings)[:MAX_HEADINGS_CHARS]
    return "\n".join(part for part in (title or "", description or "", joined, text or "") if part)


def section_text(page_title: str | None, title: str, body: str) -> str:
    """The text a section's vector is made of: ``page title: section title`` and its text."""
    head = f"{page_title}: {title}" if page_title else title
    return head + "\n" + body[:SECTION_TEXT_CHARS]


def encode_vectors(vectors: np.ndarray) -> list[bytes]:
    """int8 blobs of the rows of ``vectors`` (n, d): each row scaled to ±127 at its
    largest component and rounded. A zero row gives d zero bytes."""
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1, keepdims=True)
    scaled = np.divide(v * 127.0, peak, out=np.zeros_like(v), where=peak > 0)
    q = np.clip(np.rint(scaled), -127, 127).astype(np.int8)
    return [row.tobytes() for row in q]


def decode_int8(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The (n, dimensions) int8 matrix of ``blobs``.

    Raises:
        ValueError: a blob is not ``dimensions`` bytes long.
    """
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.int8)
    joined = b"".join(blobs)
    if len(joined) != len(blobs) * dimensions or any(len(b) != dimensions for b in blobs):
        raise ValueError(f"a stored vector is not {dimensions} bytes long")
    return np.frombuffer(joined, dtype=np.int8).reshape(len(blobs), dimensions)


def decode_vectors(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The (n, dimensions) float32 matrix of ``blobs`` with unit rows (zero rows stay 0)."""
    m = decode_int8(blobs, dimensions).astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    np.divide(m, norms, out=m, where=norms > 0)
    return m
