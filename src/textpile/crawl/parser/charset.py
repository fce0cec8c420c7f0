"""Turning a fetched text body into a Python string (stored as UTF-8).

Order (issue 2, after the HTML standard's encoding sniffing): a byte order mark, then
the Content-Type charset, then ``<meta charset>`` / ``<meta http-equiv=Content-Type>``
in the first 4096 bytes (HTML only), then UTF-8 (strict, or with replacement when only
a few bytes are broken), then detection with charset_normalizer restricted to common
web encodings, then windows-1252 (the HTML standard's fallback for unlabelled Western
pages).

Labels are read with the WHATWG Encoding standard's label table (section 4.2, "Names
and labels"), the table browsers use: ``iso-8859-1``, ``latin1`` and ``us-ascii`` mean
windows-1252 (bytes 0x80-0x9F are its printable characters, not C1 controls), and a
label outside the table (``undefined``, ``base64``, ``rot13``, ``idna``, ``utf-7`` ...)
is ignored, so the next source decides. Only Python codecs that are text encodings are
ever used, so a hostile label can never pick a bytes-to-bytes codec.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# WHATWG Encoding standard, section 4.2: Python codec -> the labels of that encoding.
# Left out on purpose: "replacement" (iso-2022-kr, iso-2022-cn, hz-gb-2312: decoding them
# is a known attack) and x-user-defined; such labels are ignored like unknown ones.
_WHATWG_LABELS: dict[str, tuple[str, ...]] = {
    "utf-8": ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"),
    "cp866": ("866", "cp866", "csibm866", "ibm866"),
    "iso8859-2": ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2",
                  "iso_8859-2:1987", "l2", "latin2"),
    "iso8859-3": ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3",
                  "iso_8859-3:1988", "l3", "latin3"),
    "iso8859-4": ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4",
                  "iso_8859-4:1988", "l4", "latin4"),
    "iso8859-5": ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595",
                  "iso_8859-5", "iso_8859-5:1988"),
    "iso8859-6": ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114",
                  "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596",
                  "iso_8859-6", "iso_8859-6:1987"),
    "iso8859-7": ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126",
                  "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek"),
    "iso8859-8": ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138",
                  "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988", "visual",
                  "csiso88598i", "iso-8859-8-i", "logical"),
    "iso8859-10": ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6"),
    "iso8859-13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "iso8859-14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "iso8859-15": ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9"),
    "iso8859-16": ("iso-8859-16",),
    "koi8-r": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "koi8-u": ("koi8-ru", "koi8-u"),
    "mac-roman": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "cp874": ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
    "cp1250": ("cp1250", "windows-1250", "x-cp1250"),
    "cp1251": ("cp1251", "windows-1251", "x-cp1251"),
    "cp1252": ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1",
               "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1",
               "us-ascii", "windows-1252", "x-cp1252",
               "latin-1"),  # not a WHATWG label, but common and unambiguous
    "cp1253": ("cp1253", "windows-1253", "x-cp1253"),
    "cp1254": ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9",
               "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254"),
    "cp1255": ("cp1255", "windows-1255", "x-cp1255"),
    "cp1256": ("cp1256", "windows-1256", "x-cp1256"),
    "cp1257": ("cp1257", "windows-1257", "x-cp1257"),
    "cp1258": ("cp1258", "windows-1258", "x-cp1258"),
    "mac-cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    "gb18030": ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk",
                "iso-ir-58", "x-gbk", "gb18030"),
    "big5hkscs": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "euc_jp": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "iso2022_jp": ("csiso2022jp", "iso-2022-jp"),
    "cp932": ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"),
    "cp949": ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987",
              "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
    "utf-16-be": ("unicodefffe", "utf-16be"),
    "utf-16-le": ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"),
}

#: label (lower case) -> Python codec name
LABELS: dict[str, str] = {label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels}

#: The encodings detection may choose from (charset_normalizer's names): common web
#: encodings only, so that a page is never guessed as hp-roman8, cp037 or the like.
DETECTION_CANDIDATES = (
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
    "iso8859_2", "iso8859_5", "iso8859_7", "iso8859_8", "iso8859_9", "iso8859_13", "iso8859_15",
    "koi8_r", "koi8_u", "shift_jis", "cp932", "euc_jp", "gb18030", "big5", "euc_kr", "cp949",
)

#: With no declared charset, a body that is UTF-8 except for at most this share of its
#: bytes (at least one byte; and with no fewer valid non-ASCII characters than broken
#: sequences) is decoded as UTF-8 with replacement.
MAX_BROKEN_UTF8_SHARE = 0.01

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.()+-]+)""", re.IGNORECASE
)

#: How many leading bytes are searched for a meta charset (HTML standard: 1024; many real
#: pages put it later, so a little more).
META_PRESCAN_BYTES = 4096


@dataclass(frozen=True)
class DecodedText:
    """A decoded body: the text and the codec name it was decoded with, and where that
    choice came from (``bom``, ``header``, ``meta``, ``detected``, ``default``)."""

    text: str
    encoding: str
    source: str


def _text_codec(name: str) -> str | None:
    """``name``'s canonical Python codec name when it is a text encoding, else None."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    return info.name if getattr(info, "_is_text_encoding", False) else None


def codec_for_label(label: str | None) -> str | None:
    """The Python codec for a charset label as a browser reads it (WHATWG label table,
    case-insensitive, surrounding quotes and spaces removed), or None when the label is
    not a known text encoding label (such labels must be ignored)."""
    if not label:
        return None
    codec = LABELS.get(label.strip().strip("\"'").strip().lower())
    return _text_codec(codec) if codec is not None else None


def meta_charset(body: bytes) -> str | None:
    """The first usable charset label named by a ``<meta charset>`` or ``<meta
    http-equiv>`` tag in the first :data:`META_PRESCAN_BYTES` bytes, or None. Labels
    that are not text encodings are skipped (the next tag may name one)."""
    for match in _META_CHARSET.finditer(body[:META_PRESCAN_BYTES]):
        label = match.group(1).decode("ascii", errors="replace")
        if codec_for_label(label) is not None:
            return label
    return None


def _mostly_utf8(body: bytes) -> str | None:
    """``body`` decoded as UTF-8 when it is valid UTF-8, or when its broken sequences
    (replaced with U+FFFD) are at most :data:`MAX_BROKEN_UTF8_SHARE` of its bytes (at
    least one allowed) and no more than its valid non-ASCII characters (so a legacy
    encoded page, whose high bytes are nearly all broken UTF-8, goes on to detection);
    None otherwise."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = body.decode("utf-8", errors="replace")
    broken = text.count("\ufffd") - body.count("\ufffd".encode("utf-8"))
    valid_non_ascii = sum(1 for c in text if ord(c) > 0x7F) - broken
    if 0 < broken <= valid_non_ascii and broken <= max(1, int(MAX_BROKEN_UTF8_SHARE * len(body))):
        return text
    return None


def _detect(body: bytes) -> str | None:
    """The Python codec charset_normalizer finds for ``body`` among
    :data:`DETECTION_CANDIDATES`, or None."""
    from charset_normalizer import from_bytes

    best = from_bytes(body[:200_000], cp_isolation=list(DETECTION_CANDIDATES)).best()
    if best is None:
        return None
    codec = _text_codec(best.encoding)
    allowed = {_text_codec(name) for name in DETECTION_CANDIDATES}
    return codec if codec in allowed else None


def decode_body(body: bytes, header_charset: str | None, *, is_html: bool) -> DecodedText:
    """Decode ``body`` to text (see the module docstring for the order of sources).

    Bytes not valid in the chosen encoding are replaced with U+FFFD, never dropped
    silently; the BOM itself is not part of the text. Never raises for any body or
    label.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return DecodedText(body[len(bom):].decode(name, errors="replace"), name, "bom")
    codec = codec_for_label(header_charset)
    if codec is not None:
        return DecodedText(body.decode(codec, errors="replace"), codec, "header")
    if is_html:
        codec = codec_for_label(meta_charset(body))
        if codec is not None:
            if codec.startswith("utf-16"):
                codec = "utf-8"  # HTML standard: a meta utf-16 means utf-8
            return DecodedText(body.decode(codec, errors="replace"), codec, "meta")
    text = _mostly_utf8(body)
    if text is not None:
        return DecodedText(text, "utf-8", "detected")
    codec = _detect(body)
    if codec is not None:
        return DecodedText(body.decode(codec, errors="replace"), codec, "detected")
    return DecodedText(body.decode("cp1252", errors="replace"), "cp1252", "default")
