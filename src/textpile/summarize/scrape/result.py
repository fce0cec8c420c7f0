"""The result of scraping one file: what the summarizer stores for one entity generation.

Sources: unobtanium-documentation.txt, pages "Text Pile Gen1", "Text Pile Gen2",
"Summary Database" (document_description, link_summary), "Location Signature",
"Link Locality", "Link destination type", "Calculating Indexiness".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textpile.summarize.scrape.sections import Section

LOCATION_FLAGS = (
    "in_header", "in_footer", "in_aside", "in_nav", "in_form", "in_main", "in_article",
    "in_section", "in_table", "in_figure", "in_address", "in_code", "in_headline",
    "in_list", "in_paragraph",
)


@dataclass(frozen=True)
class TextPileGen1:
    """Text Pile Gen1: six newline-separated fields, empty strings when absent."""

    text: str
    secondary_text: str
    big_headlines: str
    small_headlines: str
    code_text: str
    quote_text: str
    blake2b512_digest: bytes


@dataclass(frozen=True)
class TextPileGen2:
    """Text Pile Gen2: text in reading order, encoded metadata and segmentation cache.

    Encodings: schemas/summary/text_pile_v0_2.md. The digest covers text and metadata.
    """

    text: str
    metadata: bytes
    segmentation_cache: bytes
    blake2b512_digest: bytes


@dataclass(frozen=True)
class DocumentDescription:
    """The document_description row of a generation (timestamps in unix seconds)."""

    title: str | None
    primary_headline: str | None
    description: str | None
    primary_language: str | None
    time_created_unix_utc: int | None
    time_updated_unix_utc: int | None
    indexiness: int
    #: where time_updated came from: "markup", "sitemap" or "last-modified" (None without it)
    time_updated_source: str | None = None


@dataclass(slots=True)
class Link:
    """One link_summary row before URL ids exist: ``to_url`` has no fragment.

    Not frozen, unlike the other parts of a result: a page has hundreds of links, and a
    frozen dataclass's ``__init__`` (``object.__setattr__`` per field) cost 6 times a
    slotted one's, 2% of the scrape. Treat it as read-only all the same."""

    to_url: str
    fragment: str | None
    rel_nofollow: bool
    rel_me: bool
    rel_tag: bool
    location: frozenset[str]  # the LOCATION_FLAGS that are set
    contains_headline: bool
    destination_type: int | None
    link_locality: int
    html_tag_name: str | None
    text: str | None


@dataclass(frozen=True)
class ScrapeResult:
    """Everything scraped from one file. ``noindex`` pages still scrape but are not searchable.
    ``fingerprint`` is the SimHash of the main text (:mod:`textpile.summarize.scrape.fingerprint`),
    None when it is too short for one."""

    text_pile: TextPileGen1
    text_pile_v0_2: TextPileGen2
    description: DocumentDescription
    links: list[Link] = field(default_factory=list)
    noindex: bool = False
    sections: list[Section] = field(default_factory=list)
    fingerprint: int | None = None
