"""A server reading the published copy while publishes write it in place: every answer is
whole (the old state or the new one, never an error or a mix), and the vectors of the
vector modes are loaded again once the content changed."""

from __future__ import annotations

import shutil
import threading

from search.builder import word_site
from textpile.publish import publish
from textpile.web.app import build_datasette
from web.client import get


def test_searches_during_in_place_publishes_see_one_whole_state_and_no_error(tmp_path):
    states = {}
    for n, word in ((3, "alpha"), (5, "beta"), (7, "gamma")):
        word_site(tmp_path / f"{word}.db", n, word)
        states[word] = n
    work, served = tmp_path / "summary.db", tmp_path / "published" / "summary.db"
    shutil.copy(tmp_path / "alpha.db", work)
    assert publish(work, served).whole
    ds = build_datasette(served)
    inode = served.stat().st_ino
    seen, errors = set(), []
    done = threading.Event()

    def publisher() -> None:
        try:
            for _ in range(3):
                for word in ("beta", "gamma", "alpha"):
                    shutil.copy(tmp_path / f"{word}.db", work)
                    assert not publish(work, served).whole
        finally:
            done.set()

    thread = threading.Thread(target=publisher)
    thread.start()
    while not done.is_set():
        response = get(ds, "/summary.json?sql=select+count(*)+as+n+from+url&_shape=array")
        if response.status_code != 200:
            errors.append((response.status_code, response.text[:200]))
            continue
        seen.add(response.json()[0]["n"])
        found = get(ds, "/search?format=json&search=page")
        if found.status_code != 200:
            errors.append((found.status_code, found.text[:200]))
    thread.join()
    assert errors == []
    assert seen <= set(states.values()) and len(seen) >= 1  # never a count between two states
    assert served.stat().st_ino == inode  # written in place
    assert get(ds, "/search?format=json&search=alpha").json()["total"] == 3
    assert get(ds, "/search?format=json&search=gamma").json()["list"] == []
