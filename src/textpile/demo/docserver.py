"""The demo's documentation server: pydoc's pages, with pydoc's error pages as 404s.

Run as ``python -S -c "$(cat docserver.py)" HOST PORT`` by :class:`textpile.demo.PydocServer`
(in an empty folder, with ``-S``, so that only the standard library is documented and
nothing of the checkout or the virtual environment is imported). It serves what
``python -m pydoc -p PORT`` serves (through the same page renderer), except that a page
pydoc renders as "Pydoc: Error" (an unknown path, /robots.txt, or a module that cannot be
imported on this platform such as ``asyncio.windows_events``) is answered with status
404 instead of 200, so that the crawler does not index it. It prints ``Server ready at
http://HOST:PORT/`` when listening and stops when it reads ``q`` on stdin (as pydoc does).
Only the standard library is imported here: this file runs without textpile installed.
"""

import http.server
import pydoc
import sys
import threading

ERROR_TITLE = "<title>Pydoc: Error"


class DocHandler(http.server.BaseHTTPRequestHandler):
    """GET only; pydoc's ``_url_handler`` renders the page (the one ``pydoc -p`` uses)."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        content_type = "text/css" if self.path.endswith(".css") else "text/html"
        try:
            body = pydoc._url_handler(self.path, content_type).encode("utf-8")
            status = 404 if ERROR_TITLE.encode() in body[:2000] else 200
        except Exception as exc:  # noqa: BLE001 - a page pydoc cannot render is this request's 500
            content_type, status = "text/plain", 500
            body = f"pydoc could not render {self.path}: {type(exc).__name__}: {exc}\n".encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        """Quiet, like pydoc's own server."""


def main(host: str, port: int) -> None:
    """Serve on ``host:port`` until ``q`` (or the end of stdin) is read."""
    server = http.server.ThreadingHTTPServer((host, port), DocHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"Server ready at http://{host}:{server.server_address[1]}/", flush=True)
    for line in sys.stdin:
        if line.strip() == "q":
            break
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
