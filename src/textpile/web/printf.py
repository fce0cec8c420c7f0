"""``printf()``/``format()`` that end at once for any width or precision (SQL exploration).

SQLite's ``printf('%.*c', 2000000000, 'x')`` repeats the character two billion times
inside one call, where neither the SQL time limit (a progress handler, which runs between
virtual machine instructions) nor ``sqlite3_interrupt`` can stop it: 56 s alone, and while
it runs it holds one of Datasette's SQL threads. Its result is NULL anyway (longer than
the length limit). :func:`install_bounded_printf` replaces both functions on a connection
with one that reads the format first: when a width or precision (written out or taken
from an argument by ``*``) exceeds the connection's length limit, it returns NULL at once,
exactly what SQLite returns; otherwise SQLite's own printf computes the result on a
private in-memory connection with the same length limit, so every other result is
SQLite's own. Source: sqlite.org, "printf()" ("The format string").
"""

from __future__ import annotations

import re
import sqlite3

# % [flags] [width] [.precision] [l|ll] conversion  (sqlite.org printf: flags "-+ 0#!,")
_SPEC = re.compile(r"%([-+ 0#!,]*)(\*|[0-9]+)?(?:\.(\*|[0-9]*))?(?:ll|l)?(.?)", re.DOTALL)
_LEADING_INT = re.compile(r"\s*([-+]?[0-9]+)")
_MAX_ARGS = 127  # SQLITE_MAX_FUNCTION_ARG's default; more cannot reach a function anyway
_CALLS = {n: "SELECT printf(" + ", ".join(["?"] * n) + ")" for n in range(1, _MAX_ARGS + 1)}


def _as_int(value) -> int:
    """A printf ``*`` argument as SQLite reads it (sqlite3_value_int64-like)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and abs(value) < 2**63 else 0
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        match = _LEADING_INT.match(value)
        return int(match.group(1)) if match else 0
    return 0


def largest_field(fmt: str, args: tuple) -> int:
    """The largest width or precision the format ``fmt`` asks for with ``args`` (the
    arguments after it), in characters; 0 when it asks for none."""
    largest = 0
    arg = 0
    for match in _SPEC.finditer(fmt):
        _flags, width, precision, conversion = match.groups()
        if conversion == "%" and width is None and precision is None:
            continue
        for field in (width, precision):
            if field == "*":
                value = abs(_as_int(args[arg])) if arg < len(args) else 0
                arg += 1
            elif field:
                value = int(field)
            else:
                continue
            largest = max(largest, value)
        if conversion not in ("", "%"):
            arg += 1
    return largest


def install_bounded_printf(conn: sqlite3.Connection, length_limit: int) -> sqlite3.Connection:
    """Replace ``printf`` and ``format`` on ``conn`` (see the module docstring); widths
    and precisions above ``length_limit`` (the connection's SQLITE_LIMIT_LENGTH) give
    NULL at once. Returns ``conn``."""
    own = sqlite3.connect(":memory:", check_same_thread=False)
    own.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length_limit)

    def bounded(*values):
        if not values or values[0] is None:
            return None
        fmt = values[0] if isinstance(values[0], str) else str(values[0])
        if largest_field(fmt, values[1:]) > length_limit:
            return None
        return own.execute(_CALLS[len(values)], values).fetchone()[0]

    for name in ("printf", "format"):
        conn.create_function(name, -1, bounded, deterministic=True)
    return conn
