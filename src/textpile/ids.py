"""UUID v7 (RFC 9562) as 16-byte values, the identifiers of agents, crawls and generations.

The seed ("Database Data Types", UUID) stores UUIDs as BLOB(16) and prefers v7.
"""

from __future__ import annotations

import os
import time
import uuid


def uuid7(unix_ms: int | None = None) -> uuid.UUID:
    """Return a new UUID version 7: 48-bit unix milliseconds, then 74 random bits.

    Args:
        unix_ms: the timestamp to embed, in milliseconds since 1970 UTC; now when None.
    """
    ms = int(time.time() * 1000) if unix_ms is None else int(unix_ms)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return uuid.UUID(int=value)


def uuid7_bytes() -> bytes:
    """Return a new UUID v7 as its 16 bytes, ready to bind to a BLOB column."""
    return uuid7().bytes


def parse_uuid(text: str | bytes | uuid.UUID) -> uuid.UUID:
    """Parse a UUID given as text (with or without dashes), 16 bytes or a UUID.

    Raises:
        ValueError: ``text`` is not a UUID; the message quotes it.
    """
    if isinstance(text, uuid.UUID):
        return text
    if isinstance(text, (bytes, bytearray)):
        if len(text) != 16:
            raise ValueError(f"not a 16-byte UUID: {bytes(text)!r}")
        return uuid.UUID(bytes=bytes(text))
    try:
        return uuid.UUID(text.strip())
    except (ValueError, AttributeError):
        raise ValueError(f"not a UUID: {text!r} (expected 32 hex digits, dashes optional)") from None
