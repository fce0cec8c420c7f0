"""The site the fault harness crawls: pages with unique text, served on 127.0.0.1.

Every page has its own title and words (no two are exact duplicates, so which copy of a
duplicate wins cannot depend on crawl order) and links to the index and three other
pages; robots.txt is a 404 (everything allowed). Each answer waits ``delay_s``, so a crawl
lasts long enough to be killed in the middle.

:func:`second_version` is the same site a while later, for a second crawl: some pages
changed their words (to words the first version never had), some changed only their
links, some answer 404, and new pages appear, linked from the index.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from sites import Response, SiteServer  # noqa: E402

WORDS = ("quokka numbat bilby dunnart wombat echidna platypus dingo kowari quoll bettong potoroo "
         "wallaby pademelon possum glider cuscus bandicoot antechinus phascogale").split()
#: The words of the second version's changed and new pages: none is in WORDS.
NEW_WORDS = ("kakapo kiwi takahe weka kea kaka tui bellbird fantail morepork tomtit pukeko "
             "saddleback kokako rifleman whio karearea hihi").split()


def page(number: int, pages: int, *, seed: int = 12, words: tuple[str, ...] | list[str] = WORDS,
         link_step: int = 7) -> str:
    """The HTML of page ``number`` of ``pages``: a title, three paragraphs of ``words``
    (drawn with a generator of its own, so a page is the same whatever else changes),
    links to the index and to pages ``number * link_step + 1..3``."""
    rng = random.Random(seed * 100_003 + number)
    words = [f"{rng.choice(words)}{number}x{i}" for i in range(240)]
    paragraphs = "".join(f"<p>{' '.join(words[i:i + 80])}</p>" for i in range(0, 240, 80))
    links = "".join(f'<li><a href="/p{(number * link_step + k) % pages}.html">more</a></li>' for k in (1, 2, 3))
    return (f"<!doctype html><html lang=\"en\"><head><title>Page {number}: {words[0]}</title></head>"
            f"<body><main><h1>Page {number}</h1>{paragraphs}<ul><li><a href=\"/\">index</a></li>{links}</ul>"
            "</main></body></html>")


def _index(numbers) -> str:
    return ("<!doctype html><title>Index</title><ul>"
            + "".join(f'<li><a href="/p{i}.html">page {i}</a></li>' for i in numbers) + "</ul>")


def routes(pages: int, *, delay_s: float = 0.01, seed: int = 12) -> dict[str, Response]:
    """The first version's routes: an index and ``pages`` pages."""
    out = {"/robots.txt": Response(404), "/": Response(200, _index(range(pages)), delay_s=delay_s)}
    for number in range(pages):
        out[f"/p{number}.html"] = Response(200, page(number, pages, seed=seed), delay_s=delay_s)
    return out


#: In the second version, of every six pages (by number modulo 6): 1 has new words, 2 new
#: links, 3 answers 404; and a fifth as many new pages as there were appear.
CHANGED_WORDS, CHANGED_LINKS, GONE = 1, 2, 3


def second_routes(pages: int, *, delay_s: float = 0.01, seed: int = 12) -> dict[str, Response]:
    """The second version's routes (module docstring)."""
    out = routes(pages, delay_s=delay_s, seed=seed)
    new = range(pages, pages + max(1, pages // 5))
    for number in range(pages):
        kind = number % 6
        if kind == CHANGED_WORDS:
            out[f"/p{number}.html"] = Response(200, page(number, pages, seed=seed + 1, words=NEW_WORDS),
                                               delay_s=delay_s)
        elif kind == CHANGED_LINKS:
            out[f"/p{number}.html"] = Response(200, page(number, pages, seed=seed, link_step=11), delay_s=delay_s)
        elif kind == GONE:
            out[f"/p{number}.html"] = Response(404, "<html><body>gone</body></html>", delay_s=delay_s)
    for number in new:
        out[f"/p{number}.html"] = Response(200, page(number, pages, seed=seed, words=NEW_WORDS), delay_s=delay_s)
    out["/"] = Response(200, _index([*range(pages), *new]), delay_s=delay_s)
    return out


def site(pages: int, *, delay_s: float = 0.01, seed: int = 12) -> SiteServer:
    """A :class:`SiteServer` of ``pages`` pages and an index (not started)."""
    return SiteServer(routes(pages, delay_s=delay_s, seed=seed))


@contextmanager
def second_version(server: SiteServer, pages: int, *, delay_s: float = 0.01, seed: int = 12) -> Iterator[None]:
    """``server`` serves :func:`second_routes` inside the block, the first version after."""
    first = dict(server.routes)
    server.routes.clear()
    server.routes.update(second_routes(pages, delay_s=delay_s, seed=seed))
    try:
        yield
    finally:
        server.routes.clear()
        server.routes.update(first)


def crawl_config(path: Path, base_url: str, pages: int) -> Path:
    """A crawl configuration that crawls the whole site in one run."""
    path.write_text(
        'name = "fault harness"\n'
        "default_delay_ms = 0\n"
        f"max_commands_per_run = {10 * pages + 20}\n"
        'recrawl_interval = "1 day"\n'
        'user_agent = "textpile-faults (bench)"\n'
        f'seeds = ["{base_url}/"]\n'
        "allow_private_addresses = true\n", "utf-8")
    return path
