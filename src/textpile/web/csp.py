"""A strict Content Security Policy for Datasette's pages: inline scripts and styles run
only with the response's nonce.

Datasette's templates hold inline ``<script>`` and ``<style>`` elements (page data as
JSON, the SQL editor's set-up, per-table CSS), so its pages were served with
``script-src 'self' 'unsafe-inline'``, which lets any injected script run. Instead each
response gets a fresh random nonce (:func:`new_nonce`, kept in the context variable
:data:`CSP_NONCE` while the request is handled, :mod:`textpile.web.headers`) and the
policy :func:`datasette_policy` allows the scripts and style elements carrying it and
the instance's own files. The nonce is put into the templates' source as they are
loaded (:class:`NonceLoader`, from the plugin's ``prepare_jinja2_environment`` hook):
every ``<script`` and ``<style`` tag written in a template gets
``nonce="{{ textpile_csp_nonce() }}"``, which renders the current response's nonce. Values
rendered into a page are escaped as before, so a ``<script>`` that comes from data never
has a nonce and never runs.

What stays allowed inline: ``style="..."`` attributes (``style-src-attr 'unsafe-inline'``:
Datasette's markup and its editors set them; a style attribute runs no script) and, by its
hash only (``'unsafe-hashes'``), the one event-handler attribute of Datasette 1.0's table
page (:data:`EVENT_HANDLERS`). The SQL editors insert their stylesheets as ``<style>``
elements; the first script of every page, ``static/style-nonce.js`` (the plugin's
``extra_js_urls`` hook), gives the style elements that scripts make the page's nonce (a
script that runs is one the policy allowed already).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from contextvars import ContextVar

from jinja2 import BaseLoader

#: The nonce of the response being made (None outside a request).
CSP_NONCE: ContextVar["str | None"] = ContextVar("textpile_csp_nonce", default=None)
#: Where the plugin serves the script that gives script-made style elements the nonce.
STYLE_NONCE_SCRIPT = "/-/textpile/static/style-nonce.js"
#: The template expression that renders the current nonce.
NONCE_EXPRESSION = "{{ textpile_csp_nonce() }}"
#: Event-handler attributes in Datasette's templates (1.0's table page, on small
#: screens), allowed by their hash.
EVENT_HANDLERS = ("openColumnChooser()",)
_TAG = re.compile(r"<(script|style)(?![\w-])", re.IGNORECASE)


def new_nonce() -> str:
    """A fresh nonce: 128 random bits, base64url."""
    return secrets.token_urlsafe(16)


def current_nonce() -> str:
    """The nonce of the response being made; an empty string outside a request (an
    element with an empty nonce never runs)."""
    return CSP_NONCE.get() or ""


def add_nonces(source: str) -> str:
    """``source`` (a template) with :data:`NONCE_EXPRESSION` as the nonce of every
    ``<script`` and ``<style`` tag written in it."""
    return _TAG.sub(lambda m: f'<{m.group(1)} nonce="{NONCE_EXPRESSION}"', source)


def _hash_source(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode("ascii") + "'"


def datasette_policy(nonce: str) -> str:
    """The Content-Security-Policy of a Datasette page (anything but the search pages)
    whose response has ``nonce``."""
    handlers = " ".join(_hash_source(code) for code in EVENT_HANDLERS)
    return (f"default-src 'self'; script-src 'self' 'nonce-{nonce}' 'unsafe-hashes' {handlers}; "
            f"style-src 'self' 'nonce-{nonce}'; style-src-attr 'unsafe-inline'; img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class NonceLoader(BaseLoader):
    """A Jinja loader giving the templates of ``inner`` with :func:`add_nonces` applied."""

    def __init__(self, inner: BaseLoader) -> None:
        self.inner = inner

    def get_source(self, environment, template):
        source, filename, uptodate = self.inner.get_source(environment, template)
        return add_nonces(source), filename, uptodate

    def list_templates(self):
        return self.inner.list_templates()
