"""The HTTP fetcher resource: the network (live) or recorded responses (offline).

The crawl library takes an optional ``httpx`` async transport: None means textpile's own
transport, which resolves names itself and refuses loopback, private, link-local and
reserved addresses unless the crawl configuration sets ``allow_private_addresses``.
:class:`RecordedHttpFetcher` replaces the network with a transport over recorded
responses (:class:`RecordedTransport`), for tests and offline demonstrations.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from dagster import Config, ConfigurableResource
from pydantic import Field

from textpile.errors import ConfigError


class HttpFetcher(ConfigurableResource):
    """Interface: what the crawl_run asset asks for. ``transport()`` returns the transport."""

    def transport(self) -> httpx.AsyncBaseTransport | None:
        """The transport for ``run_crawl`` (None: the library's SSRF-safe network transport)."""
        return None


class LiveHttpFetcher(HttpFetcher):
    """The network, through the crawl library's own SSRF-filtering transport."""

    def transport(self) -> httpx.AsyncBaseTransport | None:
        """None: ``run_crawl`` builds its own transport from the crawl configuration."""
        return None


class RecordedTransport(httpx.AsyncBaseTransport):
    """An async transport answering from a table of :class:`RecordedResponse` by URL.

    The body is handed over as an unread stream (unlike ``httpx.MockTransport``, whose
    responses arrive already read), so the crawler's streaming reader, size caps and
    decompression work as on the network. Unknown URLs get a 404.
    """

    def __init__(self, table: dict[str, "RecordedResponse"]) -> None:
        self._table = dict(table)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer ``request`` from the table."""
        recorded = self._table.get(str(request.url.copy_with(fragment=None)))
        if recorded is None:
            status, headers, body = 404, {"content-type": "text/plain"}, b"not recorded"
        else:
            status, headers, body = recorded.status, recorded.headers, recorded.body.encode("utf-8")
        if request.method == "HEAD":
            body = b""
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body), request=request)


class RecordedResponse(Config):
    """One recorded response: ``url`` (without fragment), status, headers, UTF-8 body."""

    url: str
    status: int = 200
    headers: dict[str, str] = Field(default_factory=lambda: {"content-type": "text/html; charset=utf-8"})
    body: str = ""


class RecordedHttpFetcher(HttpFetcher):
    """Serves recorded responses instead of the network; unknown URLs get a 404.

    Responses come from ``responses`` and from ``recordings_path``, a JSON file holding a
    list of objects with the fields of :class:`RecordedResponse`; a URL in both uses the
    inline one. HEAD requests get the headers without the body.
    """

    responses: list[RecordedResponse] = Field(default_factory=list)
    recordings_path: str | None = Field(default=None, description="JSON file of recorded responses.")

    def recordings(self) -> dict[str, RecordedResponse]:
        """All recorded responses by URL.

        Raises:
            ConfigError: the recordings file is missing or is not a list of responses.
        """
        table: dict[str, RecordedResponse] = {}
        if self.recordings_path is not None:
            path = Path(self.recordings_path)
            try:
                items = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{path}: cannot read recorded responses ({exc})") from exc
            if not isinstance(items, list):
                raise ConfigError(f"{path}: expected a JSON list of recorded responses")
            for number, item in enumerate(items):
                if not isinstance(item, dict) or "url" not in item:
                    raise ConfigError(f"{path}: item {number} is not an object with a url")
                table[item["url"]] = RecordedResponse(**item)
        for response in self.responses:
            table[response.url] = response
        return table

    def transport(self) -> httpx.AsyncBaseTransport:
        """A :class:`RecordedTransport` answering from :meth:`recordings`."""
        return RecordedTransport(self.recordings())
