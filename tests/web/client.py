"""Requests to a Datasette instance through its ASGI client, without a server."""

import asyncio


def get(ds, path):
    """The response of Datasette ``ds`` to ``GET path``."""
    return asyncio.run(ds.client.get(path))
