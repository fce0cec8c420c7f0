"""textpile's Datasette plugin: hooks only; the work is done by the modules beside it.

Registered by the ``[project.entry-points.datasette] textpile`` entry point. When the
Datasette instance serves a summary database (see :mod:`textpile.web.state`; a plain ``datasette summary.db`` gets
its summary file adopted at startup) it adds
the search page at ``/`` and ``/search`` (HTML, or JSON with ``format=json``),
``/opensearch.xml``, ``/robots.txt``, static files under ``/-/textpile/static/``,
table and column descriptions from the schema comments, the seed's useful queries as
canned queries, security headers on every response, SQL exploration admitted up to
its threads and read-only methods (:mod:`textpile.web.guard`), quiet error handling (see
:mod:`textpile.web.errors`), size limits on every SQLite connection (see
:mod:`textpile.web.limits`), and 404 for Datasette's debug pages and its list of
database files (:data:`~textpile.web.views.HIDDEN_PATHS_REGEX`). The search page and its
JSON honour Datasette's permissions like the database page does (see
:mod:`textpile.web.access`). Instances without a summary database are left alone.
"""

from __future__ import annotations

from datasette import hookimpl
from jinja2 import ChoiceLoader, FileSystemLoader

from textpile.store.gen2_piles import register_functions
from textpile.web.cells import view_blob_cell
from textpile.web.errors import error_response, is_datasette_default_handler
from textpile.web.guard import read_only_methods, sql_admission
from textpile.web.headers import security_headers
from textpile.web.limits import limit_explorer_connection
from textpile.web.metadata import CANNED_QUERIES, database_metadata
from textpile.web.settings import (extra_config, query_analytics, ranking_rules, remote_shards, results_per_site,
                                   search_synonyms, search_time_limit_ms)
from textpile.web.shards import shard_view
from textpile.web.access import may_view_summary
from textpile.web.csp import STYLE_NONCE_SCRIPT, NonceLoader, current_nonce
from textpile.web.datasette_versions import store_canned_queries, store_descriptions
from textpile.web.explorer_sql import guard_connection
from textpile.web.state import adopt_summary_database, find_target, refresh_if_swapped
from textpile.web.analytics import analytics_view, counter_for
from textpile.web.cached import cached_view
from textpile.web.suggest import suggest_view
from textpile.web.views import (
    HIDDEN_PATHS_REGEX,
    hidden_view,
    opensearch_view,
    package_templates_dir,
    robots_view,
    search_view,
    static_view,
)


@hookimpl
def startup(datasette):
    config = datasette.plugin_config("textpile")
    search_time_limit_ms(config)  # a bad setting stops Datasette here
    search_synonyms(config)
    remote_shards(config)
    results_per_site(config)
    ranking_rules(config)
    extra_config(config)
    query_analytics(config)
    # A plain `datasette summary.db`: serve the summary file as textpile's SummaryDatabase.
    target = adopt_summary_database(datasette)
    if target is None:
        return None
    counter_for(datasette)  # the analytics database of an earlier run is served from the start

    async def describe():
        # Datasette 1.0 keeps descriptions and canned queries in its internal database
        # (0.65 asks the get_metadata and canned_queries hooks below instead).
        await store_descriptions(datasette, target.name, database_metadata())
        await store_canned_queries(datasette, target.name, CANNED_QUERIES)

    return describe


@hookimpl
def register_routes(datasette):
    if adopt_summary_database(datasette) is None:
        return []
    return [
        (r"^/$", search_view),
        (r"^/search$", search_view),
        (r"^/suggest$", suggest_view),
        (r"^/cached$", cached_view),
        (r"^/analytics$", analytics_view),
        (r"^/opensearch\.xml$", opensearch_view),
        (r"^/robots\.txt$", robots_view),
        (r"^/-/textpile/static/(?P<path>.*)$", static_view),
        (r"^/-/textpile/shard$", shard_view),
        # Datasette's debug pages and its database list (absolute file paths): 404.
        (HIDDEN_PATHS_REGEX, hidden_view),
    ]


@hookimpl
def prepare_connection(conn, database, datasette):
    if find_target(datasette) is not None:
        # Every connection of an instance serving a summary database: no statement may
        # build huge strings or blobs or return huge results (textpile.web.limits), nor
        # reach what SQL exploration refuses (textpile.web.explorer_sql; sqlar_uncompress
        # capped at the length limit set just before).
        guard_connection(limit_explorer_connection(conn))
    else:
        # The text_pile_v0_2 and text_pile views unpack the compressed Gen2 texts with it
        # (textpile.store.gen2_piles).
        register_functions(conn)


@hookimpl
def extra_js_urls(view_name, datasette):
    # The first script of every Datasette page: script-made style elements get the nonce
    # (textpile.web.csp). The search page runs no script (textpile.web.headers).
    if find_target(datasette) is None or view_name == "textpile_search":
        return None
    return [{"url": datasette.urls.path(STYLE_NONCE_SCRIPT)}]


@hookimpl
def render_cell(value, table, database, datasette):
    # A BLOB in a row of a view: Datasette's download link needs a rowid (textpile.web.cells).
    if not isinstance(value, bytes) or table is None or database is None:
        return None

    async def cell():
        if table not in await datasette.get_database(database).view_names():
            return None
        return view_blob_cell(value)

    return cell


@hookimpl
def prepare_jinja2_environment(env, datasette):
    # Appended last: --template-location / --template-dir files of the same name win.
    # Every template's inline scripts and styles carry the response's nonce (textpile.web.csp).
    env.loader = NonceLoader(ChoiceLoader([env.loader, FileSystemLoader(str(package_templates_dir()))]))
    env.globals["textpile_csp_nonce"] = current_nonce


@hookimpl
def asgi_wrapper(datasette):
    def serving_current(app):
        # Each HTTP request notices a swapped file first, and is counted on the summary
        # database it is served from: a replaced one is closed when its last request ends.
        async def wrapped(scope, receive, send):
            target = find_target(datasette) if scope.get("type") == "http" else None
            if target is None:
                await app(scope, receive, send)
                return
            with refresh_if_swapped(datasette, target).serving():
                await app(scope, receive, send)

        return wrapped

    def served_route():
        target = find_target(datasette)
        return target.route if target is not None else None

    def wrap(app):
        # SQL exploration admitted up to the SQL threads, read-only methods, then headers
        # on every response (textpile.web.guard, textpile.web.headers).
        admitted = sql_admission(app, served_route, lambda: datasette.setting("num_sql_threads"),
                                 lambda: datasette.setting("sql_time_limit_ms"))
        serving = lambda: find_target(datasette) is not None  # noqa: E731
        return serving_current(security_headers(read_only_methods(admitted, serving)))

    return wrap


@hookimpl  # Datasette 0.65 (1.0: the startup hook stores them)
def get_metadata(datasette, key, database, table):
    target = find_target(datasette)
    if target is None:
        return None
    return {"databases": {target.name: database_metadata()}}


@hookimpl  # Datasette 0.65 (1.0: the startup hook stores them)
def canned_queries(datasette, database, actor):
    target = find_target(datasette)
    if target is None or database != target.name:
        return None
    return CANNED_QUERIES


@hookimpl
def menu_links(datasette, actor, request):
    target = find_target(datasette)
    if target is None:
        return None

    async def links():
        if not await may_view_summary(datasette, actor, target.name):
            return []
        return [{"href": datasette.urls.path("/search"), "label": "Search"},
                {"href": datasette.urls.database(target.route), "label": "Explore the index with SQL"}]

    return links


@hookimpl(wrapper=True)
def handle_exception(datasette, request, exception):
    # A wrapper, because Datasette awaits every implementation's result and its default
    # one prints a rich traceback with local variables for each 404: textpile's handler
    # goes first and the default one is dropped; other plugins' handlers still run.
    results = yield
    if find_target(datasette) is None:
        return results

    async def respond():
        return await error_response(datasette, request, exception)

    return [respond, *(r for r in results if not is_datasette_default_handler(r))]
