"""The search page, its JSON API, the OpenSearch description and static files.

``/`` and ``/search`` show the search form; with ``search=`` (or ``q=``) they show
results; with ``format=json`` they answer the JSON that unobtanium's viewer gives and
SearxNG's ``json_engine`` reads (unobtanium-documentation.txt, "Configuring SearxNG to
use Unobtanium": ``results_query: list``, ``title_query: title``, ``url_query: url``,
``content_query: description``, ``first_page_num: 0``). ``mode=keyword|semantic|hybrid``
chooses the search mode (:mod:`textpile.search.service`) and ``like=<entity generation
UUID or URL>`` lists the pages most like one page; the JSON answer then says its ``mode``.
``sort=date`` lists the results newest first (the query's ``sort:date`` does too; the
JSON answer says its ``sort``); ``facets=1`` adds the facet counts to the JSON answer
(the page always shows them). The page groups its results by site (at most the plugin
setting ``results_per_site`` of one site per result page, default 2); the JSON answer
keeps the rank order unless the request asks for grouping (``results_per_site=N``), as
the APIs of Meilisearch (``distinct``) and Typesense (``group_by``) group only when
asked, and as unobtanium's JSON, which SearxNG merges with other engines' results by
position, is in rank order. The answer says the grouping it used (``results_per_site``,
0 for none). A bad ``mode``, ``sort``, ``page``, ``per_page`` or ``results_per_site`` is
a 400 naming it.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from importlib import resources
from pathlib import Path
from urllib.parse import urlencode

from datasette.utils.asgi import Forbidden, NotFound, Response, asgi_static
from datasette.version import __version__ as datasette_version
from markupsafe import escape

from textpile.errors import DatabaseError, TextpileError
from textpile.search.budget import DEFAULT_BUDGET_MS
from textpile.search.query import SORTS
from textpile.search.results import (DEFAULT_PER_PAGE, PagingError, SearchResults, per_site, result_page,
                                     results_json, results_per_page)
from textpile.search.service import DEFAULT_MODE, MODES, ModeError, check_mode, more_like_this, search_pages
from textpile.search.sorting import SortError, check_sort
from textpile.search.synonyms import NO_SYNONYMS, Synonyms
from textpile.web.access import viewable_target
from textpile.web.datasette_versions import site_title
from textpile.web.settings import extra_config, ranking_rules, results_per_site, search_synonyms, search_time_limit_ms
from textpile.web.shards import sharded_search
from textpile.web.state import SummaryDatabase

SEARCH_TEMPLATE = "textpile_search.html"
STATIC_PREFIX = "/-/textpile/static"


def run_search(target: SummaryDatabase, query: str, page: int, per_page: int,
               budget_ms: float = DEFAULT_BUDGET_MS, mode: str | None = None,
               like: str | None = None, synonyms: Synonyms = NO_SYNONYMS, datasette=None, **options) -> SearchResults:
    """Run the search in ``mode`` (or more like ``like``) with the time budget
    ``budget_ms`` and the index's ``synonyms`` on this thread's search connection to ``target``
    (:meth:`SummaryDatabase.search_connection`), through :mod:`textpile.search.service`;
    ``target.semantic`` keeps the model and vectors between requests. ``options`` are
    :func:`textpile.search.engine.search`'s ``facets``, ``sort``, ``per_site`` and ``rules``.
    When ``datasette`` serves several shards (:mod:`textpile.web.shards`), a query searches
    all of them as one index, with the ``options`` and the ``synonyms``, and a ``like``
    search finds its page on whichever shard holds it and its neighbours on every shard
    (:meth:`textpile.search.fanout.ShardedSearch.more_like_this`).

    Raises:
        ModeError: a bad mode, or ``like`` names no page with a vector.
        textpile.semantic.model.ModelError: the model's package is missing.
        DatabaseError, sqlite3.Error: the database cannot be read.
    """
    router = sharded_search(datasette, target) if datasette is not None else None
    if router is not None and like:
        return router.more_like_this(like, page=page, per_page=per_page, budget_ms=budget_ms)
    if router is not None:
        return router.search(query, mode=mode, page=page, per_page=per_page, budget_ms=budget_ms, synonyms=synonyms,
                             **options)
    with target.serving():  # (a replaced target stays open until this ends)
        conn = target.search_connection()
        loaded = None
        if like or check_mode(mode) != "keyword":
            loaded = target.semantic.get(conn, with_model=not like)
        if like:
            return more_like_this(conn, like, semantic=loaded, page=page, per_page=per_page, budget_ms=budget_ms)
        return search_pages(conn, query, mode=mode, semantic=loaded, page=page, per_page=per_page,
                            budget_ms=budget_ms, synonyms=synonyms, **options)


def _query_arg(request) -> str:
    return request.args.get("search") or request.args.get("q") or ""


def _page_url(request, query: str, page: int, per_page: int, mode: str | None = None) -> str:
    """The URL of result page ``page`` of ``query`` (or of the request's ``like=``) in
    ``mode`` (default: the request's mode; the default mode is left out of the URL),
    in the request's order (``sort``)."""
    params = {"search": query} if query or not request.args.get("like") else {"like": request.args.get("like")}
    if page:
        params["page"] = str(page)
    if per_page != DEFAULT_PER_PAGE:
        params["per_page"] = str(per_page)
    mode = mode if mode is not None else request.args.get("mode")
    if mode in MODES and mode != DEFAULT_MODE:
        params["mode"] = mode
    if request.args.get("sort") == "date":
        params["sort"] = "date"
    if request.args.get("results_per_site"):
        params["results_per_site"] = request.args.get("results_per_site")
    return request.path + "?" + urlencode(params)


def _sort_url(request, query: str, per_page: int, sort: str) -> str:
    """The URL of ``query``'s first result page in the order ``sort`` (its own ``sort:``
    words left out: the parameter decides)."""
    words = " ".join(w for w in query.split() if not w.lower().startswith("sort:"))
    url = _page_url(request, words, 0, per_page).replace("&sort=date", "")
    return url + ("&sort=date" if sort == "date" else "")


#: The facets the page shows, with their headings.
FACET_HEADINGS = (("site", "Site"), ("path", "Section"), ("language", "Language"), ("year", "Year"))


def _facet_links(request, results: SearchResults | None, per_page: int) -> list[dict]:
    """The page's facets: ``[{"heading", "choices": [{"value", "count", "url"}]}]``, each
    value linking to its query; only facets with two values or more (one is no choice)."""
    if results is None or results.facets is None:
        return []
    out = []
    for name, heading in FACET_HEADINGS:
        values = getattr(results.facets, name)
        if len(values) >= 2:
            out.append({"heading": heading, "choices": [
                {"value": v.value, "count": f"{v.count:,}" + ("+" if results.facets.lower_bound else ""),
                 "url": _page_url(request, v.query, 0, per_page)} for v in values]})
    return out


def _http(url: str) -> str | None:
    return url if url.lower().startswith(("http://", "https://")) else None


def _display_item(item: dict) -> dict:
    """Add what the template shows: short dates and links only for http(s) URLs."""
    return dict(
        item,
        href=_http(item["url"]),
        section_links=[{"title": x["title"], "href": _http(x["url"])} for x in item["sections"]],
        time_updated_iso=(item["time_updated"] or "")[:10],
        time_created_iso=(item["time_created"] or "")[:10],
    )


#: The JSON answer of a search the actor may not see (Datasette's error JSON shape).
FORBIDDEN_JSON = {"ok": False, "error": "Permission denied: you may not view this search index",
                  "status": 403, "title": "Forbidden"}


async def page_target(datasette, request) -> tuple[SummaryDatabase | None, Response | None]:
    """The summary database a textpile page (search, cached text) reads for ``request``, or
    the answer to give instead: 404 when Datasette serves none, 403 when the actor may not
    view it (:data:`FORBIDDEN_JSON` with ``format=json``; Datasette's error page otherwise:
    raises its ``Forbidden``)."""
    target, allowed = await viewable_target(datasette, request)
    if target is None:
        return None, Response.text("textpile: this Datasette serves no summary database", status=404)
    if not allowed:
        if request.args.get("format") == "json":
            return None, Response.json(FORBIDDEN_JSON, status=403)
        raise Forbidden("Permission denied: you may not view this search index")
    return target, None


async def search_view(datasette, request):
    """Handle ``/`` and ``/search``: form, results, pagination, help; JSON with format=json.

    Answers 403 (Datasette's error page, or :data:`FORBIDDEN_JSON`) when the actor may
    not view the summary database (:mod:`textpile.web.access`).
    """
    target, refusal = await page_target(datasette, request)
    if refusal is not None:
        return refusal
    want_json = request.args.get("format") == "json"
    query = _query_arg(request)
    like = request.args.get("like") or None
    results = None
    error = None
    status = 503
    named = request.args.get("mode") or None  # None: the default mode (silent on an index without vectors)
    try:
        mode = check_mode(named)
    except ModeError as exc:
        mode, error, status = None, str(exc), 400
    # whole numbers, clamped to their range; anything else is refused (the answer then
    # shows the parameter's default)
    paging = {"page": 0, "per_page": DEFAULT_PER_PAGE}
    for name, read in (("page", result_page), ("per_page", results_per_page)):
        try:
            paging[name] = read(request.args.get(name))
        except PagingError as exc:
            if error is None:
                error, status = str(exc), 400
    page, per_page = paging["page"], paging["per_page"]
    grouping = 0 if want_json else results_per_site(datasette.plugin_config("textpile"))
    try:
        grouping = per_site(request.args.get("results_per_site"), grouping)
    except PagingError as exc:
        if error is None:
            error, status = str(exc), 400
    try:
        sort = check_sort(request.args.get("sort"))
    except SortError as exc:
        sort = None
        if error is None:
            error, status = str(exc), 400
    options = {"sort": sort, "facets": not want_json or request.args.get("facets") in ("1", "true"),
               "per_site": grouping,
               "rules": ranking_rules(datasette.plugin_config("textpile"))}
    if error is None and (query.strip() or like or want_json):
        try:
            config = datasette.plugin_config("textpile")
            budget_ms, synonyms = search_time_limit_ms(config), search_synonyms(config)
            results = await asyncio.to_thread(run_search, target, query, page, per_page, budget_ms, named, like,
                                              synonyms, datasette, **options)
        except (ModeError, SortError) as exc:
            error, status = str(exc), 400
        except (sqlite3.Error, DatabaseError) as exc:
            error = f"The search index could not be read: {exc}"
        except TextpileError as exc:  # the model's package is missing
            error = f"The search could not be run: {exc}"
    if results is not None and page == 0 and not like and query.strip():
        from textpile.web.analytics import counter_for  # (it imports this module's neighbours)

        counter = counter_for(datasette)
        if counter is not None:  # the query and its count of results, nothing of the visitor
            await asyncio.to_thread(counter.count, query, results.total)
    if want_json:
        if results is None:
            body = {"query": query, "page": page, "per_page": per_page, "total": 0,
                    "message": error, "fallback_any_term": False, "list": [], "mode": mode, "mode_note": None,
                    "sort": sort or "relevance", "results_per_site": grouping, "facets": None}
            return Response.json(body, status=status)
        body = results_json(results)
        return Response(json.dumps(body, ensure_ascii=False), content_type="application/json; charset=utf-8")
    pages = None
    if results is not None and results.total:
        last = results.page_count - 1
        past = results.past_last_page
        pages = {
            "current": results.page,
            "last": last,
            "past_last": past,
            # Past the end, "previous" leads to the last page that has results.
            "prev_url": (_page_url(request, query, last if past else results.page - 1, per_page)
                         if results.page > 0 else None),
            "next_url": _page_url(request, query, results.page + 1, per_page) if results.page < last else None,
        }
    asked = mode
    if results is not None and not like:
        mode = results.mode  # what ran (keyword on an index without vectors)
    context = {
        "query": query,
        "mode": mode,
        "asked_mode": asked,
        # why the mode that ran is not the one asked for, unless the message says it already
        "mode_note": (results.mode_note if results is not None and results.mode_note
                      and results.mode_note not in results.notes else None),
        "default_mode": DEFAULT_MODE,
        "mode_links": ([{"mode": m, "current": m == mode, "url": _page_url(request, query, 0, per_page, m)}
                        for m in MODES] if query.strip() and not like else []),
        "like": like,
        "site_title": await site_title(datasette) or "textpile",
        "results": results,
        "items": [dict(_display_item(r), more_url=(_page_url(request, r["more_from_site"], 0, per_page)
                                                   if r["more_from_site"] else None))
                  for r in (results_json(results)["list"] if results else [])],
        "pages": pages,
        "error": error,
        # the JSON of what the page shows: grouped as the page is
        "json_url": (_page_url(request, query, page, per_page) + "&format=json"
                     + (f"&results_per_site={grouping}" if grouping and not request.args.get("results_per_site") else "")
                     if query or like else None),
        "suggestion_url": (_page_url(request, results.suggestion, 0, per_page)
                           if results is not None and results.suggestion else None),
        "facets": _facet_links(request, results, per_page),
        "sort_links": ([{"sort": o, "current": o == results.sort, "url": _sort_url(request, query, per_page, o)}
                        for o in SORTS] if results is not None and query.strip() and not like else []),
        "database_url": datasette.urls.database(target.route),
        "datasette_version": datasette_version,
        "static_prefix": STATIC_PREFIX,
        "first_result_number": (results.page * results.per_page + 1) if results else 1,
        "extra": extra_config(datasette.plugin_config("textpile")),
    }
    html = await datasette.render_template(SEARCH_TEMPLATE, context, request=request, view_name="textpile_search")
    return Response.html(html, status=status if error else 200)


async def opensearch_view(datasette, request):
    """Serve the OpenSearch description (``/opensearch.xml``) pointing at ``/search``."""
    base = datasette.absolute_url(request, "/")
    base = base.rstrip("/")
    name = str(escape((await site_title(datasette) or "textpile")[:16]))
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">\n'
        f"  <ShortName>{name}</ShortName>\n"
        "  <Description>Search the pages indexed by this textpile instance</Description>\n"
        "  <InputEncoding>UTF-8</InputEncoding>\n"
        f'  <Url type="text/html" method="get" template="{escape(base)}/search?search={{searchTerms}}"/>\n'
        f'  <Url type="application/json" method="get" template="{escape(base)}/search?format=json&amp;search={{searchTerms}}&amp;page={{startPage?}}" pageOffset="0"/>\n'
        "</OpenSearchDescription>\n"
    )
    return Response(body, content_type="application/opensearchdescription+xml; charset=utf-8")


ROBOTS_TXT = (
    "# textpile: the search page and the SQL views are for people, not for crawlers.\n"
    "User-agent: *\n"
    "Disallow: /?\n"
    "Disallow: /search\n"
    "Disallow: /suggest\n"
    "Disallow: /cached\n"
    "Disallow: /analytics\n"
    "Disallow: /-/\n"
    "Disallow: /opensearch.xml\n"
)


async def robots_view(datasette, request):
    """Serve ``/robots.txt``: keep crawlers off the search results and Datasette's views."""
    db_paths = sorted(datasette.urls.database(db.route) for name, db in datasette.databases.items()
                      if name not in ("_internal", "analytics"))  # /analytics is listed above
    body = ROBOTS_TXT + "".join(f"Disallow: {path}\n" for path in db_paths)
    return Response(body, content_type="text/plain; charset=utf-8")


def package_static_dir() -> Path:
    """The folder of the static files shipped in the package."""
    return Path(str(resources.files("textpile.web").joinpath("static")))


def package_templates_dir() -> Path:
    """The folder of the templates shipped in the package."""
    return Path(str(resources.files("textpile.web").joinpath("templates")))


async def static_view(datasette, request, send):
    """Serve ``/-/textpile/static/<path>``: the template location's ``static/`` first, then the package's."""
    rel = request.url_vars.get("path", "")
    roots = []
    if datasette.template_dir:
        roots.append(Path(datasette.template_dir) / "static")
    roots.append(package_static_dir())
    for root in roots:
        candidate = (root / rel)
        if root.is_dir() and candidate.is_file():
            await asgi_static(root)(request, send)
            return
    await asgi_static(roots[-1])(request, send)


# Datasette's introspection and debug pages, which a public search site does not need:
# thread list, debug messages and permission rules, the pattern portfolio, versions,
# plugins, settings, metadata, config, the current actor, the database list (it
# shows each database file's absolute path) and Datasette 1.0's permission checks. HTML and .json forms. (Table and column
# descriptions show on the table pages; /-/auth-token and /-/logout stay.)
HIDDEN_PAGES = ("threads", "messages", "allow-debug", "patterns", "databases", "permissions", "versions",
                "plugins", "settings", "metadata", "config", "actor",
                # Datasette 1.0's permission debugging pages
                "allowed", "rules", "check", "debug/autocomplete")
HIDDEN_PATHS_REGEX = r"^/-/(" + "|".join(HIDDEN_PAGES) + r")(\.json)?$"


async def hidden_view(datasette, request):
    """Answer 404 (Datasette's error page, with the security headers) for hidden paths."""
    raise NotFound("Page not found")
