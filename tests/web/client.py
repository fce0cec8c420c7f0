"""Requests to a Datasette instance through its ASGI client, without a server.

Redirects are followed: Datasette 1.0 answers the 0.65 paths of SQL queries
(``/summary.json?sql=...``) with a redirect to its own (``/summary/-/query.json?sql=...``).
"""

import asyncio
from contextlib import asynccontextmanager

import httpx

from textpile.web.datasette_versions import DATASETTE_1

#: The status of a query page (HTML) whose SQL failed: Datasette 1.0 shows the error in
#: the page, under the SQL to edit, with 200; 0.65 answers 400. JSON answers 400 on both.
SQL_ERROR_PAGE_STATUS = 200 if DATASETTE_1 else 400


async def aget(ds, path, **kwargs):
    """The response of Datasette ``ds`` to ``GET path`` (redirects followed)."""
    return await ds.client.get(path, follow_redirects=True, **kwargs)


def get(ds, path, **kwargs):
    """:func:`aget` run to its end."""
    return asyncio.run(aget(ds, path, **kwargs))


@asynccontextmanager
async def one_app_client(ds):
    """An httpx client sending every request to one ASGI application of ``ds``, as a
    server does (Datasette 1.0's ``ds.client`` builds the application anew for each
    request, and with it the plugin's middleware, which counts the requests it runs)."""
    transport = httpx.ASGITransport(app=ds.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost", follow_redirects=True) as client:
        yield client
