"""Building the Datasette application that ``textpile serve`` runs.

Datasette serves the summary database read-only (opened with ``mode=ro``: a publish
updates the published copy in place, in one transaction of its WAL),
with a SQL time limit, the textpile plugin (search page, JSON API, OpenSearch,
descriptions, canned queries, security headers) and templates that a
``--template-location`` folder can override file by file.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path

from textpile.errors import ConfigError, TextpileError
from textpile.store.database import check_summary_db
from textpile.web.datasette_versions import datasette_arguments
from textpile.web.state import adopt_summary_database

DEFAULT_SQL_TIME_LIMIT_MS = 3000
MAX_RETURNED_ROWS = 1000
MAX_CSV_MB = 16
LISTEN_BACKLOG = 128


def parse_listen_on(value: str) -> tuple[str, int]:
    """Return ``(host, port)`` from ``IP:PORT`` (``[::1]:3000`` for IPv6; a host name is
    accepted too); port 0 asks the system for a free port.

    Raises:
        ConfigError: no port, a port outside 0..65535, no host, or an unbracketed IPv6
        address; the message names ``--listen-on`` and the value.
    """
    def bad(why: str) -> ConfigError:
        return ConfigError(f"--listen-on: {why}; expected IP:PORT such as 127.0.0.1:3000, got {value!r}")

    host, sep, port = value.rpartition(":")
    if not sep:
        raise bad("no port")
    if not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise bad("the port must be a number from 0 to 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad("not an IPv6 address in brackets") from None
    elif ":" in host:
        raise bad("write an IPv6 address in brackets")
    if not host:
        raise bad("no IP address")
    return host, int(port)


def bind_listen_socket(listen_on: str | tuple[str, int]) -> socket.socket:
    """Bind and listen on ``listen_on`` (``"IP:PORT"`` or ``(host, port)``); return the socket.

    The socket has SO_REUSEADDR (a restarted server does not wait for TIME_WAIT), is
    listening, and is meant to be handed to the ASGI server (``uvicorn.Server(config)
    .run(sockets=[sock])``) or closed by the caller to just check the address.

    Raises:
        ConfigError: ``listen_on`` is malformed (see :func:`parse_listen_on`).
        TextpileError: the address cannot be bound, e.g. ``cannot listen on
        127.0.0.1:3000: address already in use; stop what uses it or pass
        --listen-on IP:PORT``.
    """
    host, port = parse_listen_on(listen_on) if isinstance(listen_on, str) else listen_on
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise TextpileError(f"cannot listen on {shown}: unknown address ({exc.strerror})") from exc
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            why = "address already in use; stop what uses it or pass --listen-on IP:PORT"
        elif exc.errno == errno.EADDRNOTAVAIL:
            why = "no such address on this machine; pass --listen-on IP:PORT"
        elif exc.errno == errno.EACCES:
            why = "permission denied (ports below 1024 need privileges); pass --listen-on IP:PORT"
        else:
            why = exc.strerror or str(exc)
        raise TextpileError(f"cannot listen on {shown}: {why}") from exc
    return sock


def build_datasette(
    summary_db: str | Path | list[str | Path],
    *,
    template_dir: str | Path | None = None,
    sql_time_limit_ms: int = DEFAULT_SQL_TIME_LIMIT_MS,
    title: str = "textpile",
    search_time_limit_ms: int | None = None,
    shards: list[str] | None = None,
    ranking_rules: list[dict] | None = None,
    synonyms: list[list[str]] | None = None,
    extra_config: dict | None = None,
    query_analytics: bool = True,
):
    """Return a configured ``Datasette`` serving ``summary_db`` read-only: one summary
    database, or a list of them (shards: each its own database in SQL exploration, and
    searched together as one index, :mod:`textpile.web.shards`).

    ``search_time_limit_ms`` is the time budget of one search (plugin config
    ``search_time_limit_ms``; textpile's default when None); ``shards`` the URLs of other
    textpile servers searched with them (plugin config ``shards``); ``ranking_rules`` the boosts
    and demotions (plugin config ``ranking_rules``, checked when Datasette starts: see
    :func:`textpile.web.settings.compile_ranking_rules`); ``synonyms`` the index's synonym
    table (plugin config ``synonyms``, :mod:`textpile.search.synonyms`); ``extra_config`` the template
    configuration (plugin config ``extra``: :func:`textpile.web.settings.extra_config`);
    ``query_analytics`` false turns the query counts off (:mod:`textpile.web.analytics`).

    Raises:
        DatabaseError: a ``summary_db`` is not a summary database (see :func:`check_summary_db`).
        ConfigError: ``template_dir`` is given but is not a folder; a file is given twice.
    """
    from datasette.app import Datasette

    given = summary_db if isinstance(summary_db, list) else [summary_db]
    paths = [check_summary_db(p).resolve() for p in given]
    if len(set(paths)) < len(paths):
        raise ConfigError("-s/--summary-db: a summary database is given twice")
    if template_dir is not None and not Path(template_dir).is_dir():
        raise ConfigError(f"{template_dir}: template location is not a folder")
    plugin: dict = {}
    if search_time_limit_ms is not None:
        plugin["search_time_limit_ms"] = int(search_time_limit_ms)
    if shards:
        plugin["shards"] = list(shards)
    if ranking_rules:
        plugin["ranking_rules"] = ranking_rules
    if synonyms:
        plugin["synonyms"] = synonyms
    if extra_config:
        plugin["extra"] = extra_config
    if not query_analytics:
        plugin["query_analytics"] = False
    plugin_settings = plugin or None
    datasette = Datasette(
        files=[str(p) for p in paths],  # read-only all the same: textpile.web.state opens them with mode=ro
        **datasette_arguments(title, plugin_settings or None),
        template_dir=str(template_dir) if template_dir is not None else None,
        settings={
            "sql_time_limit_ms": int(sql_time_limit_ms),
            "allow_download": False,
            # Bounded responses (see textpile.web.limits for the per-query byte cap).
            "max_returned_rows": MAX_RETURNED_ROWS,
            "max_csv_mb": MAX_CSV_MB,
            # Suggested facets query every column of a table page: link_summary's 27 view
            # columns took 4.5 s to open on the demo. Facets chosen with ?_facet= still work.
            "suggest_facets": False,
        },
    )
    adopt_summary_database(datasette)  # (the plugin did it already, when Datasette built its routes)
    return datasette
