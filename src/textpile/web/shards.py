"""The web frontend over shards: its search over every shard, and its shard endpoint.

``textpile serve -s a.db -s b.db --shard http://host:3000/`` serves each summary database
as its own Datasette database (SQL exploration shows every shard) and searches all of
them, with the served shards named by the plugin setting ``shards`` (URLs), as one index
(:class:`textpile.search.fanout.ShardedSearch`). The local shards are read through their
:class:`~textpile.web.state.SummaryDatabase` (each pool thread keeps its connection; a
published copy that replaced its file is followed). The fan-out is kept on the first
summary database's object and closed with it.

``/-/textpile/shard`` is what another textpile asks this one, as a shard, about its
first summary database (:mod:`textpile.search.shards`): ``op=hosts``, ``op=priors`` (its
pages per prior key), ``op=stats`` (``search=``, ``languages=`` those of every shard,
``tier_pages=`` its pages in one index's first tier, ``near=0`` without the close words of
typo tolerance), ``op=keys`` (``search=``, ``stats=`` the summed statistics,
``page_scan=``, ``section_scan=``: :mod:`textpile.search.cuts`) and ``op=search``
(``search=``, ``stats=`` the summed statistics and the shard's cut, ``mode=``,
``budget_ms=``, ``facets=1``, ``sort=date``), answered in JSON; 400 naming a bad parameter.
``op=render`` (``words=`` the snippet words of a search's answer, ``sources=`` the snippet
sources of up to 100 of its results) answers their snippets, in order.
``op=page`` (``like=``) and ``op=like`` (``page=``, ``exclude=``) are "more like this"
(:func:`_like_op`). ``op=stats``, ``op=keys`` and ``op=search`` take the searching textpile's synonym groups
for the query (``synonyms=[["k8s","kubernetes"]]``; none: no synonyms): the search over
shards uses one table, the searching textpile's, not each shard's own setting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from dataclasses import replace

from datasette.utils.asgi import Response

from textpile.errors import DatabaseError, TextpileError
from textpile.search.cuts import scan_keys
from textpile.search.engine import MAX_CANDIDATES
from textpile.search.fanout import ShardedSearch
from textpile.search.render import MAX_RENDER, SnippetSource, render_snippets
from textpile.search.shards import (ANSWER_DEPTH, LocalShard, RemoteShard, ShardError, answer_json, answer_of, keys_json,
                                    languages_from_json, origin_hosts, prior_pages, query_stats, shard_search,
                                    source_from_json, stats_from_json, stats_json, synonyms_from_json,
                                    words_from_json)
from textpile.search.service import ModeError, check_mode, like_page
from textpile.search.shard_like import like_from_json, like_json, shard_like
from textpile.search.sorting import SortError, check_sort
from textpile.web.access import viewable_target
from textpile.web.settings import remote_shards, search_time_limit_ms
from textpile.web.state import SummaryDatabase, find_targets, refresh_if_swapped

#: The largest scan the shard endpoint's ``op=keys`` takes (matches in prior order).
MAX_SCAN = MAX_CANDIDATES + 1

def _local_shard(datasette, name: str) -> LocalShard:
    """The shard of the summary database served as ``name``, read through its current
    :class:`SummaryDatabase` (a replaced file is followed)."""
    def current() -> SummaryDatabase:
        db = datasette.databases.get(name)
        if not isinstance(db, SummaryDatabase):
            raise DatabaseError(f"{name}: no longer served")
        return refresh_if_swapped(datasette, db)

    @contextlib.contextmanager
    def connect():
        yield current().search_connection()

    return LocalShard(name, connect, semantic=lambda: current().semantic, memo=lambda: current().shard_memo)


def sharded_search(datasette, target: SummaryDatabase) -> ShardedSearch | None:
    """The search over every shard of ``datasette`` (its summary databases and the
    ``shards`` setting's URLs), kept on ``target`` (the first summary database); None
    when it serves one summary database and no other shard."""
    names = [db.name for db in find_targets(datasette)]
    urls = remote_shards(datasette.plugin_config("textpile"))
    if len(names) < 2 and not urls:
        return None
    with target.sharded_search_lock:
        router = target.sharded_search
        if router is None:
            router = ShardedSearch([_local_shard(datasette, n) for n in names] + [RemoteShard(u) for u in urls])
            target.sharded_search = router
            target.on_close(router.close)
        return router


async def _like_op(datasette, request, target: SummaryDatabase, op: str) -> dict | Response:
    """The answer to ``op=page`` (``like=`` a URL or entity generation UUID: the page and
    its vector, or ``{"held": false}``) or ``op=like`` (``page=`` that answer, ``exclude=``
    the generation to leave out, ``depth=`` the results to render, ``budget_ms=``,
    ``facets=1``, ``sort=date``: the pages nearest to its vector), :mod:`textpile.search.shard_like`; a 400 naming a bad parameter.

    Raises:
        ShardError, SortError: a bad ``page`` or ``sort``.
    """
    def vectors(conn):
        return target.semantic.get(conn, with_model=False)

    if op == "page":
        wanted = request.args.get("like", "")
        if not wanted.strip():
            return _bad("like: expected a page's URL or entity generation UUID")

        def find():
            conn = target.search_connection()
            return like_json(like_page(conn, wanted, vectors(conn)))

        return await asyncio.to_thread(find)
    text = request.args.get("page", "")
    try:
        like = like_from_json(json.loads(text))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ShardError(f"page: expected the answer of op=page, got {text[:80]!r}") from exc
    if like is None or like.vector is None:
        return _bad("page: expected a page with its vector")
    limit = search_time_limit_ms(datasette.plugin_config("textpile"))
    numbers = {}
    for name, default in (("budget_ms", str(limit)), ("exclude", None), ("depth", str(ANSWER_DEPTH))):
        value = request.args.get(name) or default
        if value is not None and _whole(value) is None:
            return _bad(f"{name}: expected a whole number, got {value[:80]!r}")
        numbers[name] = None if value is None else _whole(value)
    facets = request.args.get("facets") == "1"
    sort = check_sort(request.args.get("sort") or None)

    def run():
        conn = target.search_connection()
        return answer_json(answer_of(shard_like(conn, like, vectors(conn), numbers["exclude"], depth=numbers["depth"],
                                                budget_ms=min(numbers["budget_ms"], limit), facets=facets, sort=sort)))

    return await asyncio.to_thread(run)


def _render_params(request) -> tuple[list[list[str]], list[SnippetSource]]:
    """The ``words`` and ``sources`` of ``op=render``.

    Raises:
        ShardError: either is missing or malformed (the message names it).
    """
    try:
        words = words_from_json(json.loads(request.args.get("words", "")))
    except ValueError as exc:
        raise ShardError(f"words: expected the snippet words of a search's answer (lists of strings): {exc}") from exc
    try:
        doc = json.loads(request.args.get("sources", ""))
        if not isinstance(doc, list) or not 0 < len(doc) <= MAX_RENDER:
            raise ValueError(f"expected 1 to {MAX_RENDER} sources")
        sources = [source_from_json(item) for item in doc]
    except (KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"sources: expected the snippet sources of a search's results: {exc}") from exc
    return words, sources


def _whole(text: str) -> int | None:
    """The whole number ``text`` writes in ASCII digits, at most 18 of them (any count of
    pages or milliseconds; SQLite's integers end at 2**63); None when it is none."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def _bad(message: str) -> Response:
    return Response.json({"ok": False, "error": message, "status": 400}, status=400)


async def shard_view(datasette, request):
    """Handle ``/-/textpile/shard`` (module docstring) for the first summary database."""
    target, allowed = await viewable_target(datasette, request)
    if target is None:
        return Response.json({"ok": False, "error": "this Datasette serves no summary database", "status": 404},
                             status=404)
    if not allowed:
        return Response.json({"ok": False, "error": "Permission denied", "status": 403}, status=403)
    op = request.args.get("op")
    query = request.args.get("search", "")
    if op not in ("hosts", "priors", "stats", "keys", "search", "render", "page", "like"):
        return _bad(f"op: expected hosts, priors, stats, keys, search, render, page or like, got {op!r}")
    try:
        synonyms = synonyms_from_json(request.args.get("synonyms"))
        if op == "hosts":
            doc = {"hosts": sorted(await asyncio.to_thread(lambda: origin_hosts(target.search_connection())))}
        elif op == "priors":
            doc = {"priors": await asyncio.to_thread(lambda: prior_pages(target.search_connection()))}
        elif op == "stats":
            text = request.args.get("languages")
            languages = languages_from_json(text) if text else None
            tier_text = request.args.get("tier_pages")
            tier_pages = _whole(tier_text) if tier_text is not None else None
            if tier_text is not None and tier_pages is None:
                return _bad(f"tier_pages: expected a whole number of pages, got {tier_text[:80]!r}")
            near = request.args.get("near", "1")
            if near not in ("0", "1"):
                return _bad(f"near: expected 0 or 1, got {near!r}")
            doc = stats_json(await asyncio.to_thread(lambda: query_stats(target.search_connection(), query, languages,
                                                                         tier_pages, synonyms, target.shard_memo,
                                                                         near == "1")))
        elif op == "keys":
            stats = stats_from_json(request.args.get("stats", ""))
            scans = []
            for name in ("page_scan", "section_scan"):
                text = request.args.get(name, "")
                number = _whole(text)
                if number is None or not 0 < number <= MAX_SCAN:
                    return _bad(f"{name}: expected a whole number from 1 to {MAX_SCAN}, got {text[:80]!r}")
                scans.append(number)
            doc = keys_json(await asyncio.to_thread(lambda: scan_keys(
                target.search_connection(), query, replace(stats, memo=target.shard_memo), *scans, synonyms)))
        elif op == "render":
            words, sources = _render_params(request)
            snippets = await asyncio.to_thread(lambda: render_snippets(target.search_connection(), words, sources))
            doc = {"snippets": [[s.html, s.text] for s in snippets]}
        elif op in ("page", "like"):
            doc = await _like_op(datasette, request, target, op)
            if isinstance(doc, Response):
                return doc
        else:
            stats = stats_from_json(request.args.get("stats", ""))
            mode = request.args.get("mode") or None
            check_mode(mode)  # None: the default mode, quiet on an index without vectors
            limit = search_time_limit_ms(datasette.plugin_config("textpile"))
            budget_text = request.args.get("budget_ms") or str(limit)
            if _whole(budget_text) is None:
                return _bad(f"budget_ms: expected a whole number of milliseconds, got {budget_text[:80]!r}")
            budget_ms = min(_whole(budget_text), limit)
            facets = request.args.get("facets") == "1"
            sort = check_sort(request.args.get("sort") or None)

            def run():
                conn = target.search_connection()
                semantic = target.semantic.get(conn) if check_mode(mode) != "keyword" else None
                return answer_json(answer_of(shard_search(conn, query, replace(stats, memo=target.shard_memo),
                                                          mode=mode, semantic=semantic,
                                                          budget_ms=budget_ms, facets=facets, sort=sort,
                                                          synonyms=synonyms)))

            doc = await asyncio.to_thread(run)
    except (ShardError, ModeError, SortError) as exc:
        return _bad(str(exc))
    except (sqlite3.Error, DatabaseError, TextpileError) as exc:
        return Response.json({"ok": False, "error": f"The search index could not be read: {exc}", "status": 503},
                             status=503)
    return Response.json(doc)
