"""One archived HTTP exchange, whatever archive it came from, and the problems met
reading an archive (reported per record; the rest is imported)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Exchange:
    """An HTTP response as an archive holds it.

    ``url`` is the request URL as archived; ``time_unix`` when it was fetched (unix
    seconds, float). ``status`` and ``headers`` (``[(name, value)]`` in received order)
    are the response's; ``body`` is the payload after transfer and content decoding
    (None for a revisit, whose payload is stored elsewhere). ``payload_digest`` as the
    archive gives it (``sha1:...`` or ``sha256:...``; None when absent). A revisit has
    ``revisit`` set to ``"not-modified"`` or ``"identical-payload"`` and names the
    record storing its payload by ``refers_to_url`` (None when unknown).
    ``truncated``: the archive cut the body. ``where`` locates the record for people
    (``offset 1234``, ``resources.id 7``).
    """

    url: str
    time_unix: float
    status: int | None
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | None = None
    payload_digest: str | None = None
    revisit: str | None = None
    refers_to_url: str | None = None
    truncated: bool = False
    where: str = ""


@dataclass
class Problem:
    """A record that could not be read: ``where`` it is and ``message`` why. ``fatal``
    when nothing after it could be read (a truncated or corrupt file)."""

    where: str
    message: str
    fatal: bool = False
