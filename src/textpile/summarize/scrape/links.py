"""Links of a document: resolution, destination type and link locality.

Sources: unobtanium-documentation.txt, pages "Link Locality", "Link destination type",
"Location Signature" (flags come from the walk), "Summary Database" (link_summary).
"""

from __future__ import annotations

import re

from textpile.enums import LinkDestinationType as Dest
from textpile.enums import LinkLocality
from textpile.store.urls import DEFAULT_PORTS, ParsedUrl, UrlError, UrlResolver
from textpile.summarize.scrape.result import Link
from textpile.summarize.scrape.walk import RawLink, collapse

_NO_REL: frozenset[str] = frozenset()
#: Schemes that never name a fetchable destination; such links are not recorded.
SKIPPED_SCHEMES = frozenset(("javascript", "data", "about", "blob"))
COMMUNICATION_SCHEMES = frozenset(("mailto", "tel", "sms", "callto", "xmpp", "matrix", "irc", "ircs"))
FEED_TYPES = frozenset((
    "application/rss+xml", "application/atom+xml", "application/feed+json",
    "application/json+feed", "application/rdf+xml", "text/xml", "application/xml",
))
_EXTENSIONS = {
    Dest.media_image: "png jpg jpeg gif webp avif svg ico bmp tif tiff jxl heic",
    Dest.media_audio: "mp3 ogg oga opus flac wav m4a aac weba",
    Dest.media_video: "mp4 webm ogv mkv mov avi m4v",
    Dest.media: "vtt srt m3u m3u8 pls",
    Dest.feed: "rss atom",
    Dest.stylesheet: "css",
    Dest.script: "js mjs",
    Dest.file: "zip gz tgz bz2 xz zst 7z rar tar exe msi dmg deb rpm apk iso bin jar whl",
}
EXTENSION_TYPES = {ext: dest for dest, names in _EXTENSIONS.items() for ext in names.split()}
_TAG_TYPES = {"img": Dest.media_image, "audio": Dest.media_audio, "video": Dest.media_video,
              "script": Dest.script, "track": Dest.media}
_PRELOAD_AS = {"style": Dest.stylesheet, "script": Dest.script, "image": Dest.media_image,
               "audio": Dest.media_audio, "video": Dest.media_video, "document": Dest.document,
               "track": Dest.media, "fetch": Dest.file, "font": Dest.file}
#: A fragment the WHATWG URL parser keeps as it is: printable ASCII but the fragment
#: percent-encode set (space, ``"``, ``<``, ``>``, a backtick; controls and non-ASCII).
_PLAIN_FRAGMENT = re.compile(r"[!#-;=?-_a-~]*").fullmatch
_MEDIA_PARENTS = {"audio": Dest.media_audio, "video": Dest.media_video, "picture": Dest.media_image}


def _extension(url: ParsedUrl) -> str:
    name = (url.path or "").rpartition("/")[2]  # posixpath.basename
    dot = name.rfind(".")
    return name[dot + 1:].lower() if dot >= 0 else ""


def _type_from_mime(value: str | None) -> Dest | None:
    mime = (value or "").split(";", 1)[0].strip().lower()
    if not mime:
        return None
    if mime in FEED_TYPES:
        return Dest.feed
    if mime == "text/css":
        return Dest.stylesheet
    if mime in ("text/javascript", "application/javascript", "module"):
        return Dest.script
    major = mime.split("/", 1)[0]
    return {"image": Dest.media_image, "audio": Dest.media_audio, "video": Dest.media_video}.get(major)


def destination_type(tag: str, url: ParsedUrl, rel: frozenset[str], type_attr: str | None,
                     parent_media: str | None = None, as_attr: str | None = None) -> Dest:
    """The link destination type (seed page "Link destination type").

    ``mailto:``/``tel:``-like schemes are communication (1000). Otherwise by element:
    ``a``/``area`` are documents (1) unless their ``type`` attribute or file extension says
    feed, media, stylesheet, script or a known non-document file; ``link`` by rel
    (stylesheet 3, alternate with a feed type 2, icons 101, preload by its ``as`` attribute,
    modulepreload 4, then by type/extension, document-like rels such as alternate,
    canonical, next, prev 1, else 0); ``script`` 4; ``img`` 101;
    ``audio`` 102; ``video`` 103; ``source`` by its parent (audio/video/picture);
    ``track`` 100. Unknown cases are 0 (file).
    """
    if url.scheme in COMMUNICATION_SCHEMES:
        return Dest.communication
    by_mime = _type_from_mime(type_attr)
    by_ext = EXTENSION_TYPES.get(_extension(url))
    known = by_mime if by_mime is not None else by_ext  # Dest.file is 0: test for None
    if tag in ("a", "area"):
        return known if known is not None else Dest.document
    if tag == "link":
        if "stylesheet" in rel:
            return Dest.stylesheet
        if "alternate" in rel and by_mime is Dest.feed:
            return Dest.feed
        if rel & {"icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "shortcut"}:
            return Dest.media_image
        if "modulepreload" in rel:
            return Dest.script
        if "preload" in rel:
            preloaded = _PRELOAD_AS.get((as_attr or "").strip().lower())
            return preloaded if preloaded is not None else (known if known is not None else Dest.file)
        if known is not None:
            return known
        if rel & {"alternate", "canonical", "next", "prev", "prefetch", "help", "license",
                  "author", "search", "home", "index", "up", "first", "last", "me"}:
            return Dest.document
        return Dest.file
    if tag == "source":
        parent = _MEDIA_PARENTS.get(parent_media or "")
        return parent if parent is not None else (known if known is not None else Dest.media)
    return _TAG_TYPES.get(tag, Dest.file)


def _anchor_type(url: ParsedUrl) -> int:
    """``destination_type("a", url, no rel, no type)`` as an int: the type of most links."""
    if url.scheme in COMMUNICATION_SCHEMES:
        return int(Dest.communication)
    by_ext = EXTENSION_TYPES.get(_extension(url))
    return int(by_ext) if by_ext is not None else int(Dest.document)


def _explicit_port(url: ParsedUrl) -> int | None:
    """The port as the ``url`` crate's ``port()`` gives it: None when it is the default."""
    return None if url.port == DEFAULT_PORTS.get(url.scheme) else url.port


def link_locality(page: ParsedUrl, target: ParsedUrl) -> LinkLocality:
    """Self (0), in (1) or out (2) link (seed page "Link Locality").

    Self: the same URL apart from the fragment. In: same host and port, scheme equal or
    differing only by an ``s`` suffix (http/https, ws/wss, ...); ports compare as the url
    crate reports them (None for a scheme's default), so http://h/ and https://h/ are in
    each other's site. Out: everything else, including links without a host.
    """
    if target.str_url == page.str_url:
        return LinkLocality.self_link
    if target.host is None or page.host is None or target.host != page.host:
        return LinkLocality.out_link
    a, b = page.scheme, target.scheme
    if not (a == b or a == b + "s" or b == a + "s"):
        return LinkLocality.out_link
    if _explicit_port(page) != _explicit_port(target):
        return LinkLocality.out_link
    return LinkLocality.in_link


def resolve_links(raw_links: list[RawLink], page: ParsedUrl, base: str) -> list[Link]:
    """Turn walked link elements into :class:`Link` rows.

    ``base`` is the ``<base href>`` resolved against the page URL, or the page URL.
    Targets that cannot be parsed (the WHATWG parser or textpile's host checks refuse
    them, see :func:`textpile.store.urls.parse_url`) and targets with a scheme in
    ``SKIPPED_SCHEMES`` are left out. Text: the link's collapsed text content, else an
    ``img`` alt inside it, else its ``title``, ``aria-label`` or (for ``img``) ``alt``
    attribute; None when all are empty.
    """
    links = []
    # Pages repeat their targets a lot, and most targets differ only by fragment
    # ("os.html#os.getcwd", "os.html#os.chdir": 246 targets a documentation page, 63 without
    # their fragments): each target is looked up once, each reference without its fragment is
    # resolved once (against a base parsed once), and a fragment of characters the WHATWG
    # parser keeps as they are (:data:`_PLAIN_FRAGMENT`) is put beside it as it stands.
    by_target: dict[str, tuple[ParsedUrl, str | None, int, int] | None] = {}
    by_reference: dict[str, tuple[ParsedUrl, int, int] | None] = {}
    try:
        resolver = UrlResolver(base)
    except UrlError:
        return links

    def resolved(reference: str) -> tuple[ParsedUrl, int, int] | None:
        """The target, its link locality and the destination type of an a/area without a
        type attribute (most links); None for a target left out."""
        try:
            target = resolver.resolve(reference)
        except UrlError:
            return None
        if target.scheme in SKIPPED_SCHEMES:
            return None
        return target, int(link_locality(page, target)), _anchor_type(target)

    for raw in raw_links:
        key = raw.target
        found = by_target.get(key, False)
        if found is False:
            stripped = key.strip()
            reference, hashed, fragment = stripped.partition("#")
            # without a fragment, the reference is the whole target: unless it ends with a C0
            # control (which the parser strips at the end of the input, not before a "#")
            if (_PLAIN_FRAGMENT(fragment) is not None) if hashed else (stripped and stripped[-1] > " "):
                common = by_reference.get(reference, False)
                if common is False:
                    # with an empty fragment: "" and "#" differ against a base with an opaque path
                    common = by_reference[reference] = resolved(reference + "#")
                found = None if common is None else (common[0], fragment if hashed else None, common[1], common[2])
            else:
                whole = resolved(stripped)
                found = None if whole is None else (whole[0], whole[0].fragment, whole[1], whole[2])
            by_target[key] = found
        if found is None:
            continue
        target, fragment, locality, anchor_type = found
        el = raw.element
        tag = raw.tag
        rel_value = el.get("rel")
        rel = frozenset(rel_value.lower().split()) if rel_value else _NO_REL
        type_attr = el.get("type")
        text = raw.text or raw.fallback_text
        if not text:
            for attr in ("title", "aria-label", "alt"):
                text = collapse(el.get(attr))
                if text:
                    break
        # positional, fields in Link's order: keyword arguments cost more for each of a
        # page's hundreds of links
        links.append(Link(
            target.str_url,  # to_url
            fragment,
            "nofollow" in rel,  # rel_nofollow
            "me" in rel,  # rel_me
            "tag" in rel,  # rel_tag
            raw.location,
            raw.contains_headline,
            anchor_type if (tag == "a" or tag == "area") and type_attr is None else
            int(destination_type(tag, target, rel, type_attr, raw.parent_media, el.get("as"))),  # destination_type
            locality,  # link_locality
            tag,  # html_tag_name
            text or None,
        ))
    return links
