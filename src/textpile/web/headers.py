"""Security headers for every response (unobtanium-documentation.txt, unobtanium-viewer,
"HTTP headers"), as ASGI middleware.

The search pages get the seed's strict policy (``form-action 'self'`` without the seed's
echoip host), but for one script file of the same origin and requests to it: the
search-as-you-type script (:mod:`textpile.web.suggest`), which the page does not need to
work; no inline script runs. Datasette's own pages get a policy as strict for scripts: no
``'unsafe-inline'``, their inline scripts and style elements run by the response's nonce
(:mod:`textpile.web.csp`); it also forbids other origins, plugins, framing and base-URI
changes.
"""

from __future__ import annotations

from textpile.web.csp import CSP_NONCE, datasette_policy, new_nonce

SEARCH_PATHS = ("/", "/search", "/opensearch.xml", "/suggest", "/cached", "/analytics")

SEARCH_CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
COMMON_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin",
    "permissions-policy": "interest-cohort=()",
    "x-frame-options": "DENY",
}


def headers_for(path: str, nonce: str) -> list[tuple[bytes, bytes]]:
    """Return the security headers for a response to ``path`` whose inline scripts and
    styles carry ``nonce``."""
    search = path in SEARCH_PATHS or path.startswith("/-/textpile/")
    csp = SEARCH_CSP if search else datasette_policy(nonce)
    items = dict(COMMON_HEADERS, **{"content-security-policy": csp})
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in items.items()]


def security_headers(app):
    """Wrap the ASGI ``app`` so that every HTTP response carries :func:`headers_for` headers,
    with a fresh nonce per request (in :data:`textpile.web.csp.CSP_NONCE` while ``app``
    handles it).
    """

    async def wrapped(scope, receive, send):
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        nonce = new_nonce()
        extra = headers_for(scope.get("path", ""), nonce)

        async def send_with_headers(message):
            if message.get("type") == "http.response.start":
                names = {k for k, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = dict(message, headers=kept + extra)
            await send(message)

        token = CSP_NONCE.set(nonce)
        try:
            await app(scope, receive, send_with_headers)
        finally:
            CSP_NONCE.reset(token)

    return wrapped
