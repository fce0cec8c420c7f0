"""What Datasette 0.65 and Datasette 1.0 do differently, one function each, through their
public APIs only.

The plugin runs on the 0.65 line and on the 1.0 alphas (pyproject.toml allows both; CI
tests both: tests/web/test_datasette_1.py). The differences it meets:

* permissions: 0.65 checks a cascade of ``(action, resource)`` pairs with
  ``check_visibility(actor, permissions=...)``; 1.0 asks
  ``allowed(action=..., resource=DatabaseResource(...), actor=...)``, whose rules cascade
  from the instance to the database themselves;
* table and column descriptions, canned queries and the instance title: 0.65 reads them
  from metadata (the ``get_metadata`` and ``canned_queries`` plugin hooks, the
  ``metadata=`` argument); 1.0 keeps them in its internal database (``set_*_metadata``,
  ``add_query``, ``get_instance_metadata``) and has neither hook;
* plugin settings: in 0.65's metadata, in 1.0's configuration (``config=``).
"""

from __future__ import annotations

from datasette.version import __version__ as DATASETTE_VERSION

#: True on Datasette 1.0 (its alphas included), False on 0.65.
DATASETTE_1 = int(DATASETTE_VERSION.split(".", 1)[0]) >= 1


async def may_view_database(datasette, actor: dict | None, database: str) -> bool:
    """Whether ``actor`` (None: anonymous) may see database ``database``: the action
    ``view-database``, which falls back on ``view-instance`` (an ``allow`` block on the
    instance denies it too), as Datasette's database page checks it."""
    if DATASETTE_1:
        from datasette.resources import DatabaseResource

        return await datasette.allowed(action="view-database", resource=DatabaseResource(database), actor=actor)
    visible, _private = await datasette.check_visibility(
        actor, permissions=[("view-database", database), "view-instance"])
    return visible


def datasette_arguments(title: str, plugin_settings: dict | None) -> dict:
    """Keyword arguments of ``Datasette(...)`` giving the instance ``title`` and the
    textpile plugin's settings ``plugin_settings`` (None: none)."""
    arguments: dict = {"metadata": {"title": title}}
    if plugin_settings is not None:
        plugins = {"plugins": {"textpile": dict(plugin_settings)}}
        if DATASETTE_1:
            arguments["config"] = plugins
        else:
            arguments["metadata"].update(plugins)
    return arguments


async def site_title(datasette) -> str | None:
    """The instance's title (its ``title`` metadata), or None when it has none."""
    if DATASETTE_1:
        return (await datasette.get_instance_metadata()).get("title")
    return datasette.metadata("title")


async def store_descriptions(datasette, database: str, metadata: dict) -> None:
    """On Datasette 1.0, store ``metadata`` (``{"description": str, "tables": {table:
    {"description": str, "columns": {column: str}}}}``) as database ``database``'s,
    table and column descriptions; on 0.65 the ``get_metadata`` hook gives them instead."""
    if not DATASETTE_1:
        return
    await datasette.set_database_metadata(database, "description", metadata["description"])
    for table, described in metadata["tables"].items():
        if described["description"]:
            await datasette.set_resource_metadata(database, table, "description", described["description"])
        for column, text in described["columns"].items():
            await datasette.set_column_metadata(database, table, column, "description", text)


async def store_canned_queries(datasette, database: str, queries: dict) -> None:
    """On Datasette 1.0, add ``queries`` (``{name: {"sql", "title", "description"}}``) as
    read-only stored queries of database ``database``; on 0.65 the ``canned_queries``
    hook gives them instead."""
    if not DATASETTE_1:
        return
    for name, query in queries.items():
        await datasette.add_query(database, name, query["sql"], title=query.get("title"),
                                  description=query.get("description"), source="plugin")
