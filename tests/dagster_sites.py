"""Small sites and crawl configurations shared by the Dagster and packaging tests."""

from pathlib import Path

from sites import Response, SiteServer


def page(title: str, body: str, links: list[str]) -> str:
    """A small HTML page with a title, a paragraph and links."""
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (f"<!doctype html><html lang=\"en\"><head><title>{title}</title></head><body><main>"
            f"<h1>{title}</h1><p>{body}</p><ul>{anchors}</ul></main></body></html>")


class ChangingSite:
    """A site of four pages linking each other on 127.0.0.1; ``/b`` changes on ``bump()``.

    Pages: ``/`` (index), ``/a``, ``/b``, ``/c``; robots.txt allows everything.
    """

    PAGES = ("/", "/a", "/b", "/c")

    def __init__(self) -> None:
        self.version = 1
        routes = {
            "/robots.txt": Response(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
            "/": Response(200, page("Gazetteer index", "An index of quaint xylophone pages.", ["/a", "/b", "/c"])),
            "/a": Response(200, page("Alpha page", "Alpha talks about marmalade and otters.", ["/", "/b"])),
            "/b": lambda req: Response(200, page("Bravo page", self._bravo(), ["/", "/c"])),
            "/c": Response(200, page("Charlie page", "Charlie describes zeppelins over fjords.", ["/", "/a"])),
        }
        self.server = SiteServer(routes)

    def _bravo(self) -> str:
        if self.version == 1:
            return "Bravo first edition mentions pumpernickel."
        return "Bravo second edition mentions quinoa instead."

    def bump(self) -> None:
        """Change the text of /b."""
        self.version += 1

    @property
    def base_url(self) -> str:
        return self.server.base_url


def write_config(path: Path, seeds: list[str], *, max_commands: int = 50, recrawl_interval: str = "1 day") -> Path:
    """Write a crawl configuration TOML for a local test site and return its path.

    Sitemaps are off: with them on, every origin whose robots.txt names none is probed at
    /sitemap.xml and /sitemap_index.xml, two more requests in every pipeline test (the
    sitemap tests are in tests/crawl/test_sitemaps.py)."""
    seed_list = ", ".join(f'"{s}"' for s in seeds)
    path.write_text(
        "name = \"dagster test\"\n"
        f"seeds = [{seed_list}]\n"
        "default_delay_ms = 10\n"
        f"max_commands_per_run = {max_commands}\n"
        f"recrawl_interval = \"{recrawl_interval}\"\n"
        "user_agent = \"textpile-test/0.1 (dagster tests)\"\n"
        "allow_private_addresses = true\n"
        "sitemaps = false\n",
        "utf-8",
    )
    return path
