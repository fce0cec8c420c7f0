"""A small index of three sites about asyncio: a documentation site with two versions
(``/docs/3.11/``, ``/docs/3.12/``), a blog and a forum, with and without page dates: the
corpus of the facet, date, sort and grouping tests."""

from __future__ import annotations

import calendar
import datetime as dt
from pathlib import Path

from search.builder import SummaryBuilder

DOCS, BLOG, FORUM = "https://docs.pytest.test", "https://blog.pytest.test", "https://forum.pytest.test"


def day(text: str) -> int:
    """Unix seconds UTC of ``YYYY-MM-DD``."""
    return calendar.timegm(dt.date.fromisoformat(text).timetuple())


#: url -> (title, text, language, time_created, time_updated)
PAGES = {
    f"{DOCS}/docs/3.11/library/asyncio.html": ("asyncio: Asynchronous I/O",
                                               "asyncio is a library to write concurrent code.", "en",
                                               None, day("2023-06-01")),
    f"{DOCS}/docs/3.11/library/asyncio-task.html": ("Coroutines and Tasks",
                                                    "Tasks schedule coroutines with asyncio.", "en",
                                                    None, day("2023-07-01")),
    f"{DOCS}/docs/3.12/library/asyncio.html": ("asyncio: Asynchronous I/O",
                                               "asyncio is a library to write concurrent code.", "en",
                                               None, day("2024-05-01")),
    f"{DOCS}/docs/3.12/library/asyncio-task.html": ("Coroutines and Tasks",
                                                    "Tasks schedule coroutines with asyncio.", "en",
                                                    None, day("2024-06-15")),
    f"{DOCS}/docs/3.12/whatsnew/3.12.html": ("What's New In Python 3.12",
                                             "Improvements to asyncio and the typing module.", "en",
                                             None, day("2024-10-01")),
    # the date it was published: its markup names no update
    f"{BLOG}/2024/asyncio-tips": ("Asyncio tips", "Five asyncio tips for busy people.", "en",
                                  day("2024-02-10"), None),
    f"{BLOG}/2022/asyncio-einfuehrung": ("Asyncio Einführung", "Eine Einführung in asyncio.", "de", None, None),
    f"{FORUM}/t/asyncio-question": ("A question about asyncio", "Why does asyncio block here?", "en", None, None),
}


def versions_site(path: Path) -> None:
    """Write :data:`PAGES` as a summary database at ``path``, its search index built."""
    b = SummaryBuilder(path)
    for url, (title, text, language, created, updated) in PAGES.items():
        b.add_page(url, title=title, text=text, lang=language, time_created=created, time_updated=updated)
    b.build_fts()
    b.close()
