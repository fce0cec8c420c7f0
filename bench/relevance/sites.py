"""The benchmark's documentation sites: Debian doc packages, fetched, unpacked, served.

Each site is one Debian package whose HTML is served on its own loopback address
(127.0.0.N, port 80xx), so every site is its own origin and its own host. Packages are
fetched with ``apt-get download`` (the Debian registry is reachable; nothing else is)
and unpacked with ``dpkg -x`` into ``DATA/debs/``; a second run reuses them.

python3.11-doc and python-django-doc are deliberately absent: textpile is also judged on
sites it was never tuned on.
"""

from __future__ import annotations

import http.server
import io
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Site:
    """One benchmark site.

    ``kind`` selects how its judged queries are made (``sphinx``: objects.inv;
    ``postgres``: the SQL command reference; ``sqlite``: the C API list and titles).
    ``html`` is the HTML folder inside the unpacked package; ``address`` the loopback
    address it is served on.
    """

    name: str
    package: str
    html: str
    kind: str
    address: str

    def root(self, data_dir: Path) -> Path:
        """The folder of the site's HTML under ``data_dir``."""
        return data_dir / "debs" / self.package / self.html


SITES = (
    Site("postgresql", "postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html", "postgres", "127.0.0.11"),
    Site("sqlite", "sqlite3-doc", "usr/share/doc/sqlite3", "sqlite", "127.0.0.12"),
    Site("sphinx", "sphinx-doc", "usr/share/doc/sphinx-doc/html", "sphinx", "127.0.0.13"),
    Site("scipy", "python-scipy-doc", "usr/share/doc/python-scipy-doc/html", "sphinx", "127.0.0.14"),
    Site("sqlalchemy", "python-sqlalchemy-doc", "usr/share/doc/python-sqlalchemy-doc/html", "sphinx", "127.0.0.15"),
    Site("requests", "python-requests-doc", "usr/share/doc/python-requests-doc/html", "sphinx", "127.0.0.16"),
)
SITE_NAMES = tuple(s.name for s in SITES)
PORT = 8080


def ensure_site(site: Site, data_dir: Path, log=print) -> Path:
    """Download and unpack ``site``'s package under ``data_dir`` unless done; return its root.

    Raises:
        RuntimeError: apt-get or dpkg failed (the message says which and why).
    """
    root = site.root(data_dir)
    if (root / "index.html").exists():
        return root
    debs = data_dir / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    log(f"== fetching Debian package {site.package}")
    got = subprocess.run(["apt-get", "download", site.package], cwd=debs, capture_output=True, text=True)
    if got.returncode != 0:
        raise RuntimeError(f"apt-get download {site.package} failed: {got.stderr.strip()[-500:]}")
    deb = sorted(debs.glob(f"{site.package}_*.deb"))
    if not deb:
        raise RuntimeError(f"apt-get download {site.package} left no .deb in {debs}")
    out = debs / site.package
    unpacked = subprocess.run(["dpkg", "-x", str(deb[-1]), str(out)], capture_output=True, text=True)
    if unpacked.returncode != 0:
        raise RuntimeError(f"dpkg -x {deb[-1]} failed: {unpacked.stderr.strip()[-500:]}")
    if not (root / "index.html").exists():
        raise RuntimeError(f"{site.package} has no {site.html}/index.html")
    return root


#: ``<link rel="canonical" href="https://the-real-site/...">``: served from a mirror, every
#: page would otherwise be not_canonical (180) and unindexed.
_CANONICAL = re.compile(rb"<link\b[^>]*\brel=[\"']?canonical\b[^>]*>", re.I)


class SiteServer:
    """Serve ``root`` on ``address``:``port`` (threaded); a context manager.

    HTML pages are served without their ``rel=canonical`` link (they name the public
    site, and this is a mirror of it). ``base_url`` is ``http://address:port`` without a
    trailing slash.
    """

    def __init__(self, root: Path, address: str, port: int = PORT) -> None:
        root = Path(root)

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(root), **kw)

            def log_message(self, *args) -> None:
                pass

            def send_head(self):
                path = self.translate_path(self.path)
                if not path.endswith(".html"):
                    return super().send_head()
                try:
                    with open(path, "rb") as f:
                        body = _CANONICAL.sub(b"", f.read())
                except OSError:
                    return super().send_head()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return io.BytesIO(body)

        self._httpd = http.server.ThreadingHTTPServer((address, port), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://{address}:{port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "SiteServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
