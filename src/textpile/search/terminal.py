"""Making crawled text safe to print on a terminal.

Page titles, URLs and snippets come from arbitrary web sites. Printed raw, an escape
sequence in a title (``\\x1b]0;title\\x07`` sets the window title, ``\\x1b[2J`` clears
the screen, OSC 52 writes the clipboard) would be run by the reader's terminal.
"""

from __future__ import annotations

import re

# ECMA-48: CSI (ESC [ or U+009B) parameters, intermediates, final byte; OSC/DCS/SOS/PM/APC
# strings (ESC ] P X ^ _ or U+009D U+0090 U+0098 U+009E U+009F) up to BEL or ST
# (ESC \\ or U+009C) or the end of the text; any other ESC plus one character.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?",
)
# C0 controls, DEL, C1 controls, and the bidirectional overrides/isolates that reorder
# what is shown (U+202A..U+202E, U+2066..U+2069).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str | None) -> str:
    """Return ``text`` as one printable line: escape sequences removed, then every other
    control character (C0 including newline and tab, DEL, C1, bidi overrides) made a
    space, and runs of whitespace collapsed to one space. None gives ``""``.
    """
    if not text:
        return ""
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _CONTROL.sub(" ", text)
    return " ".join(text.split())


def json_terminal_safe(document: str) -> str:
    """Return the JSON text ``document`` with DEL and C1 controls written as ``\\u`` escapes.

    ``json.dumps(..., ensure_ascii=False)`` already escapes C0 controls but writes DEL
    and U+0080..U+009F as they are; a terminal may act on U+009B (CSI). These characters
    can only occur inside JSON strings, where the escape means the same character.
    """
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", document)
