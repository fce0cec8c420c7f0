"""textpile's Datasette plugin: hooks only; the work is done by the modules beside it.

Registered by the ``[project.entry-points.datasette] textpile`` entry point. When the
Datasette instance serves a summary database (see :mod:`textpile.web.state`) it adds
the search page at ``/`` and ``/search`` (HTML, or JSON with ``format=json``),
``/opensearch.xml``, static files under ``/-/textpile/static/``, table and column
descriptions from the schema comments, the seed's useful queries as canned queries,
and security headers on every response. Instances without a summary database are
left alone.
"""

from __future__ import annotations

from datasette import hookimpl
from jinja2 import ChoiceLoader, FileSystemLoader

from textpile.web.headers import security_headers
from textpile.web.metadata import CANNED_QUERIES, database_metadata
from textpile.web.state import find_target, refresh_if_swapped
from textpile.web.views import opensearch_view, package_templates_dir, search_view, static_view


@hookimpl
def register_routes(datasette):
    if find_target(datasette) is None:
        return []
    return [
        (r"^/$", search_view),
        (r"^/search$", search_view),
        (r"^/opensearch\.xml$", opensearch_view),
        (r"^/-/textpile/static/(?P<path>.*)$", static_view),
    ]


@hookimpl
def prepare_jinja2_environment(env, datasette):
    # Appended last: --template-location / --template-dir files of the same name win.
    env.loader = ChoiceLoader([env.loader, FileSystemLoader(str(package_templates_dir()))])


@hookimpl
def asgi_wrapper(datasette):
    def before_request(scope):
        target = find_target(datasette)
        if target is not None:
            refresh_if_swapped(datasette, target)

    def wrap(app):
        return security_headers(app, before_request)

    return wrap


@hookimpl
def get_metadata(datasette, key, database, table):
    target = find_target(datasette)
    if target is None:
        return None
    return {"databases": {target.name: database_metadata()}}


@hookimpl
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
    return [{"href": datasette.urls.path("/search"), "label": "Search"},
            {"href": datasette.urls.database(target.name), "label": "Explore the index with SQL"}]
