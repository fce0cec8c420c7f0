"""Entry point of scraping: one HTML (or text) file to a :class:`ScrapeResult`."""

from __future__ import annotations

from textpile.summarize.scrape.result import ScrapeResult


def scrape_document(
    body: str,
    url: str,
    *,
    mime_type: str = "text/html",
    last_modified_unix_utc: int | None = None,
    now_unix_utc: int | None = None,
) -> ScrapeResult:
    """Scrape ``body`` (UTF-8 text as stored in file_text) fetched from ``url``.

    ``last_modified_unix_utc`` is file.last_modified_unix_utc (already cleaned of a
    Last-Modified equal to Date by the crawler); ``now_unix_utc`` bounds future dates
    (dates more than a day ahead are discarded); now when None.
    """
    raise NotImplementedError("scraping: issue 3")
