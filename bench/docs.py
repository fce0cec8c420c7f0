"""Real documentation pages for the benchmarks, from Debian packages (no other network).

``doc_tree("python3.11-doc")`` downloads the package with ``apt-get download`` into
``bench/data/cache/`` (once), unpacks it with ``dpkg -x`` and returns its HTML folder.
``labelled_pages()`` returns the 23 real news pages with expected main text that
newspaper4k's source distribution ships (``pip download --no-binary``, once).
Both are cached under ``bench/data/`` (ignored by git).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
CACHE = DATA / "cache"
#: Where each documentation package installs its HTML.
DOC_HTML = {
    "python3.11-doc": "usr/share/doc/python3.11/html",
    "sqlite3-doc": "usr/share/doc/sqlite3",
}
NEWSPAPER4K = "newspaper4k==0.9.6"


def doc_tree(package: str = "python3.11-doc") -> Path:
    """The HTML folder of Debian documentation package ``package`` (see module doc).

    Raises:
        SystemExit: the package cannot be downloaded or unpacked (the message says why).
    """
    root = CACHE / package
    html = root / DOC_HTML[package]
    if html.is_dir():
        return html
    CACHE.mkdir(parents=True, exist_ok=True)
    debs = sorted(CACHE.glob(f"{package}_*.deb"))
    if not debs:
        done = subprocess.run(["apt-get", "download", package], cwd=CACHE, capture_output=True, text=True)
        debs = sorted(CACHE.glob(f"{package}_*.deb"))
        if not debs:
            raise SystemExit(f"apt-get download {package} failed: {done.stderr.strip()}")
    subprocess.run(["dpkg", "-x", str(debs[-1]), str(root)], check=True)
    if not html.is_dir():
        raise SystemExit(f"{debs[-1]} has no {DOC_HTML[package]}")
    return html


def html_files(root: Path) -> list[Path]:
    """The regular ``.html`` files under ``root``, sorted (symlinks left out)."""
    return sorted(p for p in root.rglob("*.html") if p.is_file() and not p.is_symlink())


def labelled_pages() -> list[tuple[str, str, str]]:
    """``(name, html, expected_text)`` for each page of newspaper4k's test data that has
    both an HTML file and an expected text file (23 pages), sorted by name."""
    folder = CACHE / "newspaper4k-0.9.6" / "tests" / "data"
    if not folder.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        sdists = sorted(CACHE.glob("newspaper4k-*.tar.gz"))
        if not sdists:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--no-binary", ":all:", NEWSPAPER4K, "-d", str(CACHE)], check=True)
            sdists = sorted(CACHE.glob("newspaper4k-*.tar.gz"))
        with tarfile.open(sdists[-1]) as tar:
            members = [m for m in tar.getmembers() if "/tests/data/" in m.name and m.isfile()]
            tar.extractall(CACHE, members=members, filter="data")
    pages = []
    for html in sorted((folder / "html").glob("*.html")):
        text = folder / "txt" / f"{html.stem}.txt"
        if text.exists():
            pages.append((html.stem, html.read_text("utf-8", "replace"), text.read_text("utf-8", "replace")))
    return pages
