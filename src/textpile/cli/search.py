"""``textpile serve`` (the search frontend, like unobtanium-viewer) and ``textpile search``.

Options follow unobtanium-viewer (unobtanium-documentation.txt, "unobtanium-viewer"):
``-s/--summary-db`` (default summary.db), ``-t/--template-location``,
``-l/--listen-on`` (default 127.0.0.1:3000), ``--request-workers`` (server
processes: :mod:`textpile.web.workers`; unobtanium's are threads, default 3; textpile's
default is 1 process). ``-s`` more than once and ``--shard URL`` search shards as one
index (:mod:`textpile.search.fanout`).

``textpile search`` reads its own arguments (:func:`parse_search_argv`) instead of
argparse's option parsing, because the query language has tokens that look like
options (``-site:example.org``, ``-"phrase"``, a pasted ``-word``): every token that
is not one of the command's own options is part of the query, wherever it appears,
except a token of two dashes and a letter (a misspelled option is refused, not searched).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

from textpile.cli.setting_files import read_extra_config, read_ranking_rules, read_synonyms
from textpile.errors import ConfigError, DatabaseError

# argv never holds NUL, so with this as the only prefix character argparse sees no
# option at all in ``textpile search ...`` and hands every token to the REMAINDER.
_NO_OPTIONS = "\x00"


def _listen_on(value: str) -> tuple[str, int]:
    from textpile.web.app import parse_listen_on

    try:
        return parse_listen_on(value)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--listen-on: ")) from exc


def _whole_number(value: str, low: int, high: int) -> int:
    """Return ``value`` as an int in ``low..high``; ArgumentTypeError (without the option
    name, which the caller adds) for anything else, huge numbers included."""
    if not (value.isascii() and value.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value!r}")
    if len(value.lstrip("0")) > len(str(high)) or not low <= int(value) <= high:
        shown = value if len(value) <= 30 else value[:30] + "..."
        raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {shown!r}")
    return int(value)


def _positive(value: str) -> int:
    """A whole number from 1 (--request-workers, --sql-time-limit-ms, the search time limits)."""
    return _whole_number(value, 1, 10**9)


def _page(value: str) -> int:
    from textpile.search.results import MAX_PAGE

    return _whole_number(value, 0, MAX_PAGE)


def _per_page(value: str) -> int:
    from textpile.search.results import MAX_PER_PAGE

    return _whole_number(value, 1, MAX_PER_PAGE)


def _one_of(value: str, choices) -> str:
    """``value`` when it is one of ``choices``; else the option's error naming them."""
    if value not in choices:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(choices)}, got {value!r}")
    return value


def _mode(value: str) -> str:
    from textpile.search.service import MODES

    return _one_of(value, MODES)


def _per_site(value: str) -> int:
    from textpile.search.results import MAX_PER_PAGE

    return _whole_number(value, 0, MAX_PER_PAGE)


def _sort(value: str) -> str:
    from textpile.search.query import SORTS

    return _one_of(value, SORTS)


def _given(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError(f"expected a value, got {value!r}")
    return value


def _shard_url(value: str) -> str:
    from textpile.search.shards import shard_url_problem

    problem = shard_url_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}, got {value!r}")
    return value


def _format(value: str) -> str:
    if value not in ("text", "json"):
        raise argparse.ArgumentTypeError(f"expected text or json, got {value!r}")
    return value


def search_help_parser() -> argparse.ArgumentParser:
    """Return the parser that documents ``textpile search`` (help text and usage errors only).

    It is never used to parse: see :func:`parse_search_argv`.
    """
    parser = argparse.ArgumentParser(
        prog="textpile search",
        description="Search a summary database with textpile's query language and print the results. "
                    "Every argument that is not one of the options below is part of the query, "
                    "wherever it stands, so -site:example.org, -\"phrase\" and a pasted -word need "
                    "no quoting; after -- everything is query. A word starting with two dashes and a "
                    "letter is taken for an option: one that is none of these stops the command "
                    "(write it after -- to search for it).",
        allow_abbrev=False,
    )
    parser.add_argument("-s", "--summary-db", default="summary.db", metavar="FILE", action="append",
                        help="the summary database (default: summary.db); given more than once, the shards "
                             "searched as one index")
    parser.add_argument("--shard", metavar="URL", action="append",
                        help="a shard served by another textpile (textpile serve's URL), searched with the "
                             "summary databases as one index; may be given more than once")
    parser.add_argument("--page", default=0, metavar="N", help="result page, from 0 to 1000 (default: 0)")
    parser.add_argument("--per-page", default=20, metavar="N", help="results per page, from 1 to 100 (default: 20)")
    parser.add_argument("--format", default="text", metavar="{text,json}", help="output format (default: text)")
    parser.add_argument("--time-limit-ms", default=1000, metavar="MS",
                        help="time budget of the search: past it the results found so far are shown (default: 1000)")
    parser.add_argument("--mode", default=None, metavar="{keyword,semantic,hybrid}",
                        help="keyword: the words' matches ranked; semantic: pages nearest in meaning (page "
                             "vectors); hybrid: the keyword candidates and the pages nearest in meaning, scored "
                             "together by their keyword and semantic features (default: hybrid; keyword on an "
                             "index without vectors)")
    parser.add_argument("--sort", default=None, metavar="{relevance,date}",
                        help="the order: relevance, or date (newest first by the page's own date, undated "
                             "pages last; as sort:date in the query) (default: the query's, else relevance)")
    parser.add_argument("--facets", action="store_true",
                        help="also print how many matching pages are on each site, under each path prefix "
                             "(a version or section), in each language and of each year")
    parser.add_argument("--explain", action="store_true",
                        help="also print each result's score and the rerank features behind it (their "
                             "values; in JSON \"explained\"); one summary database only")
    parser.add_argument("--results-per-site", default=0, metavar="N",
                        help="at most N results of one site on a result page when more than one site "
                             "matches, the rest on later pages, from 0 to 100 (default: 0, rank order)")
    parser.add_argument("--ranking-rules", default=None, metavar="FILE",
                        help="TOML file of [[ranking_rules]] boosting or demoting pages by URL, as "
                             "textpile serve's --ranking-rules")
    parser.add_argument("--synonyms", default=None, metavar="FILE",
                        help="TOML file of the synonym table: synonyms = [[\"k8s\", \"kubernetes\"], ...], a query "
                             "word of a group finds the group's other words (as textpile serve's --synonyms)")
    parser.add_argument("--like", default=None, metavar="PAGE",
                        help="more like this: the pages nearest in meaning to PAGE (a result's URL or entity "
                             "generation UUID); no QUERY then")
    parser.add_argument("query", nargs="*", metavar="QUERY", help="the query (words are joined with spaces)")
    return parser


@dataclass
class SearchArgs:
    """The parsed arguments of ``textpile search``; ``query`` is the tokens joined with spaces."""

    summary_dbs: list[str] = field(default_factory=list)
    shards: list[str] = field(default_factory=list)
    page: int = 0
    per_page: int = 20
    format: str = "text"
    time_limit_ms: int = 1000
    query: str = ""
    help: bool = False
    mode: str | None = None
    like: str | None = None
    sort: str | None = None
    facets: bool = False
    explain: bool = False
    results_per_site: int = 0
    ranking_rules: str | None = None
    synonyms: str | None = None

    @property
    def summary_db(self) -> str:
        """The first summary database (default: summary.db)."""
        return self.summary_dbs[0] if self.summary_dbs else "summary.db"

    @property
    def sharded(self) -> bool:
        """True when more than one shard is searched (or a served one)."""
        return len(self.summary_dbs) > 1 or bool(self.shards)


#: Options that may be given more than once: each value is appended to the field.
_REPEATED = ("summary_dbs", "shards")

# option string -> (field, display name, converter)
_SEARCH_OPTIONS = {
    "-s": ("summary_dbs", "-s/--summary-db", _given),
    "--summary-db": ("summary_dbs", "-s/--summary-db", _given),
    "--shard": ("shards", "--shard", _shard_url),
    "--page": ("page", "--page", _page),
    "--per-page": ("per_page", "--per-page", _per_page),
    "--format": ("format", "--format", _format),
    "--time-limit-ms": ("time_limit_ms", "--time-limit-ms", _positive),
    "--mode": ("mode", "--mode", _mode),
    "--like": ("like", "--like", _given),
    "--sort": ("sort", "--sort", _sort),
    "--results-per-site": ("results_per_site", "--results-per-site", _per_site),
    "--ranking-rules": ("ranking_rules", "--ranking-rules", _given),
    "--synonyms": ("synonyms", "--synonyms", _given),
}
#: The flags (options without a value) and their fields.
_FLAGS = {"--facets": "facets", "--explain": "explain"}
_LONG_WITH_EQUALS = ("--summary-db", "--shard", "--page", "--per-page", "--format", "--time-limit-ms", "--mode", "--like",
                     "--sort", "--results-per-site", "--ranking-rules", "--synonyms")


#: A token read as a long option: two dashes and a letter (``--per-page``, ``--amend``).
_LONG_OPTION_LIKE = re.compile(r"--[^\W\d_]")


def _unknown_option(name: str, token: str) -> str:
    """The message refusing ``token`` (whose part before ``=`` is ``name``: two dashes that
    are no option of ``textpile search``, which takes no shortened options): the option it
    begins or is closest to (whatever its case), when there is one, and how to search for
    the token itself."""
    import difflib

    options = [o for o in (*_SEARCH_OPTIONS, *_FLAGS, "--help") if o.startswith("--")]
    folded = name.lower()
    meant = [o for o in options if o.startswith(folded)] or difflib.get_close_matches(folded, options, n=1, cutoff=0.75)
    hint = f" (did you mean {' or '.join(meant)}?)" if meant else ""
    return f"unrecognized option {name}{hint}; to search for it, write it after --: textpile search -- {token}"


def parse_search_argv(tokens: list[str]) -> SearchArgs:
    """Split ``tokens`` (what follows ``textpile search``) into options and query.

    Own options, recognised anywhere before ``--`` and only in these exact forms:
    ``-s FILE``, ``--summary-db FILE``, ``--summary-db=FILE`` (more than once: shards),
    ``--shard URL``, ``--shard=URL`` (more than once), ``--page N``,
    ``--page=N``, ``--per-page N``, ``--per-page=N``, ``--format text|json``,
    ``--format=text|json``, ``--time-limit-ms MS``, ``--time-limit-ms=MS``, ``--mode M``,
    ``--mode=M``, ``--like PAGE``, ``--like=PAGE``, ``--sort relevance|date``,
    ``--sort=...``, ``--results-per-site N``, ``--results-per-site=N``, ``--ranking-rules
    FILE``, ``--ranking-rules=FILE``, ``--synonyms FILE``, ``--synonyms=FILE``, and the
    flags ``--facets``, ``--explain``, ``-h``, ``--help``. No
    abbreviations, no ``-sFILE``.
    Every other token (``-site:x``, ``-json``, ``-"a b"``) is part of the query, in
    order, except one that starts with two dashes and a letter (``--per-pgae``, ``--per``:
    a misspelled or shortened option, refused naming the option meant); after ``--``
    every token is (``-- --amend`` searches for ``--amend``).

    Raises:
        ConfigError: an option is given twice, lacks its value or has a bad value, a
        token looks like an option but is none of these, no query is left (unless help
        or ``--like`` was asked for), or ``--like`` comes with a query or a mode. The
        message names the option.
    """
    out = SearchArgs()
    seen: set[str] = set()
    query: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            query.extend(tokens[i:])
            break
        if token in ("-h", "--help"):
            out.help = True
            continue
        if token in _FLAGS:
            if getattr(out, _FLAGS[token]):
                raise ConfigError(f"argument {token}: given twice")
            setattr(out, _FLAGS[token], True)
            continue
        name, eq, inline = token.partition("=")
        if token in _SEARCH_OPTIONS:
            if i >= len(tokens):
                raise ConfigError(f"argument {_SEARCH_OPTIONS[token][1]}: expected one argument")
            value = tokens[i]
            i += 1
        elif eq and name in _LONG_WITH_EQUALS:
            token, value = name, inline
        elif eq and (name in _FLAGS or name == "--help"):
            raise ConfigError(f"argument {name}: takes no value, got {token!r}")
        elif _LONG_OPTION_LIKE.match(token):
            raise ConfigError(_unknown_option(name, token))
        else:
            query.append(token)
            continue
        attr, display, convert = _SEARCH_OPTIONS[token]
        if attr not in _REPEATED:
            if attr in seen:
                raise ConfigError(f"argument {display}: given twice")
            seen.add(attr)
        try:
            value = convert(value)
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"argument {display}: {exc}") from exc
        if attr not in _REPEATED:
            setattr(out, attr, value)
        elif value in getattr(out, attr):
            raise ConfigError(f"argument {display}: {value!r} given twice")
        else:
            getattr(out, attr).append(value)
    out.query = " ".join(query)
    if out.like is not None and (query or out.mode is not None):
        raise ConfigError("argument --like: ranks pages like one page; give it no QUERY and no --mode")
    if out.explain and out.sharded:
        raise ConfigError("argument --explain: explains a search of one summary database, not over shards")
    if not query and not out.help and out.like is None:
        raise ConfigError("the following arguments are required: QUERY")
    return out


def register(subparsers) -> None:
    """Add the ``serve`` and ``search`` subcommands to ``subparsers``."""
    serve = subparsers.add_parser(
        "serve",
        help="serve the search page, JSON API and SQL exploration of a summary database",
        description="Serve a summary database with Datasette and the textpile search plugin, read-only.",
    )
    serve.add_argument("-s", "--summary-db", action="append", metavar="FILE",
                       help="the summary database (default: summary.db); given more than once, the shards "
                            "searched as one index, each its own database in SQL exploration")
    serve.add_argument("--shard", action="append", metavar="URL", type=_shard_url,
                       help="a shard served by another textpile (its URL), searched with the summary "
                            "databases as one index; may be given more than once")
    serve.add_argument("-l", "--listen-on", default="127.0.0.1:3000", type=_listen_on, metavar="IP:PORT",
                       help="address to listen on (default: 127.0.0.1:3000, local machine only)")
    serve.add_argument("-t", "--template-location", default=None, metavar="DIR",
                       help="folder of templates overriding the built-in ones by file name "
                            "(and static/ files served under /-/textpile/static/)")
    serve.add_argument("-e", "--extra-config", default=None, metavar="FILE",
                       help="the template configuration, a TOML file whose content depends on the template "
                            "(default: extra.toml in the template location, when there is one)")
    serve.add_argument("--request-workers", default=1, type=_positive, metavar="N",
                       help="server processes answering requests, one per core to use (default: 1)")
    serve.add_argument("--sql-time-limit-ms", default=3000, type=_positive, metavar="MS",
                       help="time limit of SQL queries in the exploration views (default: 3000)")
    serve.add_argument("--search-time-limit-ms", default=1000, type=_positive, metavar="MS",
                       help="time budget of one search: past it a search shows what it found (default: 1000)")
    serve.add_argument("--synonyms", default=None, metavar="FILE",
                       help="TOML file of the served index's synonym table: synonyms = [[\"k8s\", \"kubernetes\"], "
                            "...] (the plugin setting synonyms)")
    serve.add_argument("--ranking-rules", default=None, metavar="FILE",
                       help="TOML file of [[ranking_rules]]: boosts and demotions of pages by URL "
                            "(if.url.path.has_prefix = \"/blog/\", boost = -1)")
    serve.add_argument("--no-query-analytics", dest="query_analytics", action="store_false",
                       help="do not count queries per day in <summary>-analytics.db beside the index")
    serve.set_defaults(func=run_serve)

    search = subparsers.add_parser(
        "search",
        help="search a summary database from the terminal",
        description=search_help_parser().description,
        prefix_chars=_NO_OPTIONS,
        add_help=False,
    )
    search.add_argument("search_argv", nargs=argparse.REMAINDER, metavar="ARGS")
    search.set_defaults(func=run_search)


def damage_warning(conn: sqlite3.Connection, path) -> str | None:
    """The warning to print when the summary database ``path`` (open as ``conn``) fails
    ``PRAGMA quick_check`` (:func:`textpile.store.database.quick_check_problem`: every page
    read once, about 1 s per GB), else None. A damaged index is still searched: its
    results may miss pages or show wrong ones, so the warning says so and names the file.
    A file version that passed once is not checked again (:mod:`textpile.store.checked`:
    a search of a large index pays the check after each summarize or publish, not on
    every search).

    Raises:
        sqlite3.OperationalError: the check could not run (a lock, an interrupt).
    """
    from textpile.store.checked import file_version, passed_before, remember_passed
    from textpile.store.database import quick_check_problem

    try:
        key = file_version(path)
    except OSError:  # cannot be looked at: checked, never remembered
        key = None
    if key is not None and passed_before(key):
        return None
    try:
        problem = quick_check_problem(conn)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:  # so damaged that SQLite calls the file malformed
        problem = str(exc)
    if problem is None:
        if key is not None:
            remember_passed(key)
        return None
    return (f"textpile: warning: {path}: the database is damaged ({problem}); results may be missing or "
            f"wrong: summarize or publish it again, or try: sqlite3 {path} .recover")


def run_serve(args) -> int:
    """Run Datasette with the textpile plugin on ``args.listen_on`` until interrupted.

    The address is bound before anything is announced, and the bound socket is handed
    to uvicorn (no window for another program to take the port).

    Raises:
        TextpileError: the address cannot be bound (in use, not local, no permission).
        DatabaseError, ConfigError: from :func:`textpile.web.app.build_datasette`.
    """
    import uvicorn

    from textpile.web.app import bind_listen_socket, build_datasette

    from textpile.store.database import connect, sqlite_errors

    from textpile.web.workers import serve_workers

    summary_dbs = args.summary_db or ["summary.db"]  # (a bad --shard URL was refused by the parser)
    rules = read_ranking_rules(args.ranking_rules) if args.ranking_rules else None
    synonyms = [list(group) for group in read_synonyms(args.synonyms).groups] if args.synonyms else None
    extra = read_extra_config(args.extra_config, args.template_location)
    build = dict(summary_db=list(summary_dbs), template_dir=args.template_location,
                 sql_time_limit_ms=args.sql_time_limit_ms, search_time_limit_ms=args.search_time_limit_ms,
                 shards=list(args.shard or []), ranking_rules=rules, synonyms=synonyms, extra_config=extra,
                 query_analytics=args.query_analytics)
    datasette = build_datasette(**build)  # checked here, before the workers build their own
    for path in summary_dbs:
        conn = connect(path, read_only=True)
        try:
            with sqlite_errors(path):
                warning = damage_warning(conn, path)
        finally:
            conn.close()
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)
    sock = bind_listen_socket(args.listen_on)
    try:
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        served = ", ".join([*summary_dbs, *(args.shard or [])])
        workers = f" with {args.request_workers} worker processes" if args.request_workers > 1 else ""
        print(f"textpile: serving {served} on http://{shown}:{port}/{workers}", file=sys.stderr, flush=True)
        if args.request_workers > 1:
            serve_workers(build, sock, args.request_workers)
        else:
            config = uvicorn.Config(datasette.app(), log_level="warning")
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0


def format_text(results, explain: bool = False) -> str:
    """Return the terminal rendering of ``results``: a header, then numbered results.

    Header: ``N result(s), showing A-B``; past the last page ``No results on page P
    (--page counts from 0); there are N results on K pages.``; ``Did you mean: Q?`` when
    there is a suggestion; the header says ``newest first`` in the date order; with facets,
    their lines (:func:`_facet_lines`). Each result: ``N. title`` (``› section title`` when
    it links to a section), then indented URL, snippet (tags removed), a line of date and
    language when known, ``More from SITE: QUERY`` when grouping moved more of its
    site's results to later pages, and with ``explain`` (:func:`shown_explained`) a line
    ``score S · held H · feature value, ...`` (its features that are not 0).
    Every text taken from the database or the query goes through
    :func:`textpile.search.terminal.terminal_text` (no escape sequences or control
    characters reach the terminal).
    """
    from textpile.search.results import iso_date
    from textpile.search.terminal import terminal_text as safe

    lines = []
    explained = {e["url"]: e for e in shown_explained(results)} if explain else {}
    first = results.page * results.per_page + 1
    message = results.message
    if results.total and results.results:
        last = first + len(results.results) - 1
        noun = "result" if results.total == 1 and not results.total_is_lower_bound else "results"
        order = ", newest first" if results.sort == "date" else ""
        lines.append(f"{results.total_label} {noun}, showing {first}-{last}{order}")
    elif results.past_last_page:
        message = " ".join([*results.notes, results.past_last_page_sentence(results.page, " (--page counts from 0)")])
    if message:
        lines.append(safe(message))
    if results.suggestion:
        lines.append(f"Did you mean: {safe(results.suggestion)}?")
    lines.extend(_facet_lines(results.facets))
    for n, r in enumerate(results.results, start=first):
        lines.append("")
        lines.append(f"{n}. {safe(r.title)}" + (f" › {safe(r.section_title)}" if r.section_title else ""))
        lines.append(f"   {safe(r.url)}")
        if safe(r.snippet_text):
            lines.append(f"   {safe(r.snippet_text)}")
        meta = []
        if r.time_updated_unix_utc is not None:
            meta.append(f"updated {(iso_date(r.time_updated_unix_utc) or '')[:10]}")
        elif r.time_created_unix_utc is not None:
            meta.append(f"published {(iso_date(r.time_created_unix_utc) or '')[:10]}")
        if r.language:
            meta.append(f"language {safe(r.language)}")
        if meta:
            lines.append("   " + " · ".join(meta))
        if r.more_from_site:
            lines.append(f"   More from {safe(r.site)}: {safe(r.more_from_site)}")
        if explain and explained.get(r.page_url) is not None:
            e = explained[r.page_url]
            features = ", ".join(f"{name} {value:.3g}" for name, value in e["features"].items() if value)
            lines.append(f"   score {e['score']:.3f} · held {e['held']:.2f} · {features}")
    return "\n".join(lines)


def shown_explained(results) -> list[dict]:
    """The explained candidates (``search(explain=True)``: ``{"url", "held", "score",
    "features", "raw"}``) of the results shown, in their order: what ``--explain`` prints
    (the features are those of :mod:`textpile.search.rank`, ``ranking_rules`` a rule's
    boost). Empty when the search was not explained."""
    by_url = {e["url"]: e for e in results.explained or []}
    return [by_url[r.page_url] for r in results.results if r.page_url in by_url]


#: The facets ``--facets`` prints, with their labels (as the search page's headings).
_FACET_LABELS = (("site", "site"), ("path", "section"), ("language", "language"), ("year", "year"))


def _facet_lines(facets) -> list[str]:
    """The lines of ``facets`` (:class:`textpile.search.facets.Facets`, or None: none):
    ``Facets of N pages:`` (``N+`` and a note when the counts are lower bounds), then one
    line per facet with values, ``  label  value count · value count``, and the query
    filters that narrow to a value."""
    from textpile.search.terminal import terminal_text as safe

    if facets is None:
        return []
    plus = "+" if facets.lower_bound else ""
    lines = [f"Facets of {facets.pages:,}{plus} matching pages"
             + (" (more match than were counted)" if facets.lower_bound else "")
             + "; narrow with site:, lang:, after:/before:"]
    for name, label in _FACET_LABELS:
        values = getattr(facets, name)
        if values:
            lines.append(f"  {label:<9} " + " · ".join(f"{safe(v.value)} {v.count:,}{plus}" for v in values))
    return lines


def run_search(args) -> int:
    """Print the results of the query in ``args.search_argv``; exit 0 (also when nothing
    is found), 1 on a bad database, a missing embedding model or a ``--like`` page that
    is not in the index, 2 on bad arguments (argparse's usage error) or a bad
    ``--ranking-rules`` or ``--synonyms`` file.

    Output is flushed before returning, so that a reader that went away
    (``| head``) raises BrokenPipeError here, inside ``textpile.cli.main``.
    """
    from textpile.search.results import results_json
    from textpile.search.terminal import json_terminal_safe

    helper = search_help_parser()
    tokens = list(args.search_argv)
    options = tokens[:tokens.index("--")] if "--" in tokens else tokens
    if "-h" in options or "--help" in options:  # help, whatever else the line holds
        helper.print_help()
        return 0
    try:
        opts = parse_search_argv(tokens)
    except ConfigError as exc:
        helper.error(str(exc))  # exits 2 with the usage line
    if opts.help:
        helper.print_help()
        return 0
    rules, synonyms = _rules(opts), _synonyms(opts)  # bad files stop the command before any search
    if opts.sharded:
        results = _search_shards(opts, rules, synonyms)
    else:
        results = _search_one(opts, rules, synonyms)
    if opts.format == "json":
        doc = results_json(results)
        if opts.explain:
            doc["explained"] = shown_explained(results)
        print(json_terminal_safe(json.dumps(doc, ensure_ascii=False, indent=2)))
    else:
        print(format_text(results, explain=opts.explain))
    sys.stdout.flush()
    return 0


def _search_shards(opts: SearchArgs, rules: tuple, synonyms):
    """The results of ``opts`` over its summary databases and served shards as one index
    (:class:`textpile.search.fanout.ShardedSearch`), with the ranking ``rules`` and the
    ``synonyms`` table.

    Raises:
        DatabaseError: a summary database is not one (named); a shard that fails while
            searching makes the results partial instead.
    """
    from textpile.search.fanout import ShardedSearch
    from textpile.search.shards import LocalShard, RemoteShard

    shards = []
    for path in opts.summary_dbs:
        shards.append(LocalShard.open(path))
    shards += [RemoteShard(url) for url in opts.shards]
    with ShardedSearch(shards) as router:
        if opts.like is not None:
            return router.more_like_this(opts.like, page=opts.page, per_page=opts.per_page,
                                         budget_ms=opts.time_limit_ms, sort=opts.sort, facets=opts.facets,
                                         per_site=opts.results_per_site, rules=rules)
        return router.search(opts.query, mode=opts.mode, page=opts.page, per_page=opts.per_page,
                             budget_ms=opts.time_limit_ms, sort=opts.sort, facets=opts.facets,
                             per_site=opts.results_per_site, rules=rules, synonyms=synonyms)


def _rules(opts: SearchArgs) -> tuple:
    """The compiled ``--ranking-rules`` of ``opts`` (none without it).

    Raises:
        ConfigError: the file cannot be read or holds a bad rule (named).
    """
    if opts.ranking_rules is None:
        return ()
    from textpile.web.settings import compile_ranking_rules

    return compile_ranking_rules(read_ranking_rules(opts.ranking_rules))


def _synonyms(opts: SearchArgs):
    """The ``--synonyms`` table of ``opts`` (:data:`~textpile.search.synonyms.NO_SYNONYMS`
    without it).

    Raises:
        ConfigError: the file cannot be read or holds a bad table (named).
    """
    from textpile.search.synonyms import NO_SYNONYMS

    return NO_SYNONYMS if opts.synonyms is None else read_synonyms(opts.synonyms)


def _search_one(opts: SearchArgs, rules: tuple, synonyms):
    """The results of ``opts`` on its one summary database, with the ranking ``rules`` and
    the ``synonyms`` table.

    Raises:
        DatabaseError: the database is not a summary database or cannot be searched; when
            no ``-s`` was given and the default summary.db is missing, the message names it
            and points at ``-s/--summary-db``.
    """
    from textpile.search.limits import limit_search_connection
    from textpile.search.service import more_like_this, search_pages
    from textpile.store.database import check_summary_db, open_summary_db

    if not opts.summary_dbs and not Path(opts.summary_db).exists():
        raise DatabaseError(f"{opts.summary_db}: no such summary database (the default, in the current "
                            f"folder {Path.cwd()}); give the summary database with -s/--summary-db FILE")
    check_summary_db(opts.summary_db)
    conn = limit_search_connection(open_summary_db(opts.summary_db, create=False, read_only=True))
    try:
        try:
            warning = damage_warning(conn, opts.summary_db)
            if warning is not None:
                print(warning, file=sys.stderr, flush=True)
            options = dict(page=opts.page, per_page=opts.per_page, budget_ms=opts.time_limit_ms, sort=opts.sort,
                           facets=opts.facets, per_site=opts.results_per_site, rules=rules, explain=opts.explain)
            if opts.like is not None:
                results = more_like_this(conn, opts.like, **options)
            else:
                results = search_pages(conn, opts.query, mode=opts.mode, synonyms=synonyms, **options)
        except sqlite3.Error as exc:
            raise DatabaseError(f"{opts.summary_db}: search failed: {exc}") from exc
        except DatabaseError as exc:
            raise DatabaseError(f"{opts.summary_db}: {exc}") from exc
    finally:
        conn.close()
    return results
