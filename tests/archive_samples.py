"""Real web archives for the import tests: the WARC files of pywb's ``sample_archive``
(Webrecorder's pywb 2.10.0 source distribution on PyPI: captures of example.com and a
crawl of www.iana.org made by real crawlers, with revisits, a single-member gzip file and
an ARC file).

They are not copied into this repository: :func:`pywb_warcs` fetches pywb's source
distribution once with pip (a package registry, like every other test dependency) into
``.cache/test-data`` of the checkout and unpacks only ``sample_archive/warcs``. Nothing
else is fetched; a machine that cannot reach the registry fails these tests with a
message saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PYWB = "pywb==2.10.0"
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "test-data"
WARCS = CACHE / "pywb-2.10.0" / "sample_archive" / "warcs"


def pywb_warcs() -> Path:
    """The folder of pywb's sample WARC files, fetched and unpacked on first use.

    Raises:
        RuntimeError: pip could not fetch the source distribution (its output in the message).
    """
    if (WARCS / "iana.warc.gz").is_file():
        return WARCS
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                               "--disable-pip-version-check", "-q", "-d", tmp, PYWB],
                              capture_output=True, text=True, timeout=600)
        sdists = list(Path(tmp).glob("pywb-*.tar.gz"))
        if proc.returncode != 0 or not sdists:
            raise RuntimeError(f"pip download {PYWB} failed (the import tests need pywb's sample WARCs from PyPI): "
                               f"{proc.stderr.strip()[-2000:]}")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(sdists[0]) as tar:
            members = [m for m in tar.getmembers() if "/sample_archive/warcs/" in m.name and m.isfile()]
            tar.extractall(unpacked, members=members, filter="data")
        target = WARCS.parent.parent
        if not (WARCS / "iana.warc.gz").is_file():
            shutil.rmtree(target, ignore_errors=True)
            os.replace(unpacked / "pywb-2.10.0", target)
    return WARCS
