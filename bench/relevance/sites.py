"""The benchmark's documentation sites: Debian doc packages, fetched, unpacked, served.

Each site is one Debian package whose HTML is served on its own loopback address
(127.0.0.N, port 80xx), so every site is its own origin and its own host. Packages are
fetched with ``apt-get download`` (the Debian registry is reachable; nothing else is)
and unpacked with ``dpkg -x`` into ``DATA/debs/``; a second run reuses them.

The sites are built by different generators (``Site.generator``): Sphinx (four),
DocBook (PostgreSQL), SQLite's own Tcl scripts, javadoc (the JDK's ``java.base``
module), rustdoc (Rust's ``std``), AsciiDoc (git's manual pages and guides), Doxygen
(Eigen) and Texinfo's makeinfo (GNU Octave's manual). A package much larger than the
others is cut to one part (``Site.scope``), and the pages its generator makes only for
navigation, that its own search leaves out too (javadoc's "Uses of" pages, Doxygen's
member lists and source listings), are not crawled (``Site.skip``).

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
    ``postgres``: the SQL command reference; ``sqlite``: the C API list and titles;
    ``javadoc``, ``rustdoc``, ``asciidoc``, ``doxygen``, ``texinfo``: page titles, see
    judgments.py); every site also has hand-judged everyday and natural queries.
    ``html`` is the HTML folder inside the unpacked package; ``address`` the loopback
    address it is served on; ``generator`` what made the HTML. ``seed`` is the first
    page crawled (relative to ``html``); ``scope``, when not empty, the path prefixes
    (relative, ending in ``/``) outside which nothing is crawled; ``skip`` path parts
    (substrings) of pages never crawled.
    """

    name: str
    package: str
    html: str
    kind: str
    address: str
    generator: str = "Sphinx"
    seed: str = "index.html"
    scope: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    def in_scope(self, path: str) -> bool:
        """Whether the page ``path`` (relative to the site root) is one this site crawls."""
        if self.scope and not path.startswith(self.scope):
            return False
        return not any(part in "/" + path for part in self.skip)

    def root(self, data_dir: Path) -> Path:
        """The folder of the site's HTML under ``data_dir``."""
        return data_dir / "debs" / self.package / self.html


SITES = (
    Site("postgresql", "postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html", "postgres", "127.0.0.11",
         generator="DocBook"),
    Site("sqlite", "sqlite3-doc", "usr/share/doc/sqlite3", "sqlite", "127.0.0.12", generator="Tcl (own scripts)"),
    Site("sphinx", "sphinx-doc", "usr/share/doc/sphinx-doc/html", "sphinx", "127.0.0.13"),
    Site("scipy", "python-scipy-doc", "usr/share/doc/python-scipy-doc/html", "sphinx", "127.0.0.14"),
    Site("sqlalchemy", "python-sqlalchemy-doc", "usr/share/doc/python-sqlalchemy-doc/html", "sphinx", "127.0.0.15"),
    Site("requests", "python-requests-doc", "usr/share/doc/python-requests-doc/html", "sphinx", "127.0.0.16"),
    # The whole JDK is 10,000 pages: its base module only (java.lang, java.util, java.io, java.nio, java.time ...).
    Site("java", "openjdk-17-doc", "usr/share/doc/openjdk-17-jre-headless/api", "javadoc", "127.0.0.17",
         generator="javadoc", seed="java.base/module-summary.html", scope=("java.base/",),
         skip=("/class-use/", "/package-use.html")),
    # Rust's standard library only (the package also holds the books, core, alloc and the compiler's docs).
    Site("rust", "rust-doc", "usr/share/doc/rust-doc/html", "rustdoc", "127.0.0.18",
         generator="rustdoc", seed="std/index.html", scope=("std/",)),
    Site("git", "git-doc", "usr/share/doc/git-doc", "asciidoc", "127.0.0.19", generator="AsciiDoc"),
    # Eigen's reference without its unsupported modules, member lists and source listings.
    Site("eigen", "libeigen3-doc", "usr/share/doc/libeigen3-dev/html", "doxygen", "127.0.0.20",
         generator="Doxygen", skip=("/unsupported/", "-members.html", "_source.html")),
    Site("octave", "octave-doc", "usr/share/doc/octave/octave.html", "texinfo", "127.0.0.21",
         generator="Texinfo (makeinfo)"),
)
SITE_NAMES = tuple(s.name for s in SITES)
PORT = 8080


def ensure_site(site: Site, data_dir: Path, log=print) -> Path:
    """Download and unpack ``site``'s package under ``data_dir`` unless done; return its root.

    Raises:
        RuntimeError: apt-get or dpkg failed (the message says which and why).
    """
    root = site.root(data_dir)
    if (root / site.seed).exists():
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
    if not (root / site.seed).exists():
        raise RuntimeError(f"{site.package} has no {site.html}/{site.seed}")
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
