"""The site the fault harness crawls: pages with unique text, served on 127.0.0.1.

Every page has its own title and words (no two are exact duplicates, so which copy of a
duplicate wins cannot depend on crawl order) and links to the index and three other
pages; robots.txt is a 404 (everything allowed). Each answer waits ``delay_s``, so a crawl
lasts long enough to be killed in the middle.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from sites import Response, SiteServer  # noqa: E402

WORDS = ("quokka numbat bilby dunnart wombat echidna platypus dingo kowari quoll bettong potoroo "
         "wallaby pademelon possum glider cuscus bandicoot antechinus phascogale").split()


def page(number: int, pages: int, rng: random.Random) -> str:
    """The HTML of page ``number`` of ``pages``: a title, three paragraphs, links."""
    words = [f"{rng.choice(WORDS)}{number}x{i}" for i in range(240)]
    paragraphs = "".join(f"<p>{' '.join(words[i:i + 80])}</p>" for i in range(0, 240, 80))
    links = "".join(f'<li><a href="/p{(number * 7 + k) % pages}.html">more</a></li>' for k in (1, 2, 3))
    return (f"<!doctype html><html lang=\"en\"><head><title>Page {number}: {words[0]}</title></head>"
            f"<body><main><h1>Page {number}</h1>{paragraphs}<ul><li><a href=\"/\">index</a></li>{links}</ul>"
            "</main></body></html>")


def site(pages: int, *, delay_s: float = 0.01, seed: int = 12) -> SiteServer:
    """A :class:`SiteServer` of ``pages`` pages and an index (not started)."""
    rng = random.Random(seed)
    routes = {"/robots.txt": Response(404),
              "/": Response(200, "<!doctype html><title>Index</title><ul>" + "".join(
                  f'<li><a href="/p{i}.html">page {i}</a></li>' for i in range(pages)) + "</ul>", delay_s=delay_s)}
    for number in range(pages):
        routes[f"/p{number}.html"] = Response(200, page(number, pages, rng), delay_s=delay_s)
    return SiteServer(routes)


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
