"""Security headers for every response (unobtanium-documentation.txt, unobtanium-viewer,
"HTTP headers"), as ASGI middleware.

The search pages get the seed's strict policy (``form-action 'self'`` without the seed's
echoip host), but for one script file of the same origin and requests to it: the
search-as-you-type script (:mod:`textpile.web.suggest`), which the page does not need to
work; no inline script runs. Datasette's own pages need
inline scripts and styles, so they get a policy that still forbids other origins,
framing and base-URI changes.
"""

from __future__ import annotations

SEARCH_PATHS = ("/", "/search", "/opensearch.xml", "/suggest", "/cached", "/analytics")

SEARCH_CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
DATASETTE_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
COMMON_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin",
    "permissions-policy": "interest-cohort=()",
    "x-frame-options": "DENY",
}


def headers_for(path: str) -> list[tuple[bytes, bytes]]:
    """Return the security headers for a response to ``path``."""
    csp = SEARCH_CSP if path in SEARCH_PATHS or path.startswith("/-/textpile/") else DATASETTE_CSP
    items = dict(COMMON_HEADERS, **{"content-security-policy": csp})
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in items.items()]


def security_headers(app, before_request=None):
    """Wrap the ASGI ``app`` so that every HTTP response carries :func:`headers_for` headers.

    ``before_request(scope)``, when given, runs before each HTTP request is handled
    (the plugin uses it to notice a swapped summary database file).
    """

    async def wrapped(scope, receive, send):
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        if before_request is not None:
            before_request(scope)
        extra = headers_for(scope.get("path", ""))

        async def send_with_headers(message):
            if message.get("type") == "http.response.start":
                names = {k for k, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = dict(message, headers=kept + extra)
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped
