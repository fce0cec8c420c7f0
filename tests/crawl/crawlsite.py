"""Helpers for crawl tests: configurations written as TOML, and database rows read back
with origins replaced by short labels (A, B, C) so that assertions are exact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textpile.crawl.policy.config import load_config

UA = "textpile-test (for https://example.invalid/why)"
TOKEN = "textpile-test"


def write_config(tmp_path: Path, seeds: list[str], *, delay_ms: int = 0, max_commands: int = 500,
                 recrawl: str = "1 week", extra: str = "", allow_private: bool = True,
                 sitemaps: bool = False) -> Path:
    """Write a crawl configuration TOML into ``tmp_path`` and return its path.

    ``sitemaps`` is off unless a test asks for it: with it on, every origin whose
    robots.txt names no sitemap is probed at /sitemap.xml and /sitemap_index.xml, two
    more crawl log entries in every test about something else."""
    seed_list = ", ".join(f'"{s}"' for s in seeds)
    text = (
        'name = "test index"\n'
        f"default_delay_ms = {delay_ms}\n"
        f"max_commands_per_run = {max_commands}\n"
        f'recrawl_interval = "{recrawl}"\n'
        f'user_agent = "{UA}"\n'
        f"seeds = [{seed_list}]\n"
        f"allow_private_addresses = {'true' if allow_private else 'false'}\n"
        f"sitemaps = {'true' if sitemaps else 'false'}\n"
        f"{extra}\n"
    )
    path = tmp_path / "crawl.toml"
    path.write_text(text)
    return path


def config(tmp_path: Path, seeds: list[str], **kw):
    """A loaded CrawlConfig (see :func:`write_config`)."""
    return load_config(write_config(tmp_path, seeds, **kw))


class Rows:
    """Read a crawler database with origins replaced by labels."""

    def __init__(self, db_path: Path, labels: dict[str, str]) -> None:
        self.conn = sqlite3.connect(db_path)
        self.labels = labels

    def short(self, url: str | None) -> str | None:
        if url is None:
            return None
        for origin, label in self.labels.items():
            if url.startswith(origin):
                return label + url[len(origin):]
        return url

    def log(self) -> list[tuple]:
        """(url, crawl_type, exit_code, message) of every crawl log entry in order."""
        rows = self.conn.execute(
            "SELECT u.str_url, l.crawl_type, l.exit_code, l.message FROM crawl_log l"
            " JOIN url u ON u.url_id = l.url_id ORDER BY l.crawl_log_id").fetchall()
        return [(self.short(u), t, e, self.msg(m)) for u, t, e, m in rows]

    def msg(self, message: str | None) -> str | None:
        if message is None:
            return None
        for origin, label in self.labels.items():
            message = message.replace(origin, label)
        return message

    def log_by_url(self) -> dict[str, list[tuple]]:
        """url -> [(crawl_type, exit_code, message), ...] in crawl order."""
        out: dict[str, list[tuple]] = {}
        for url, t, e, m in self.log():
            out.setdefault(url, []).append((t, e, m))
        return out

    def requests(self, url: str) -> list[tuple]:
        """(requested url, exit_code, http_status, etag, robotstxt_approved, server_last_modified)
        of the requests of crawl log entries of ``url`` (a label URL), in order."""
        rows = self.conn.execute(
            "SELECT ru.str_url, r.exit_code, r.http_status_code, r.http_etag, r.robotstxt_approved,"
            " r.server_last_modified_unix_utc FROM request r JOIN crawl_log l ON l.crawl_log_id = r.crawl_log_id"
            " JOIN url u ON u.url_id = l.url_id JOIN url ru ON ru.url_id = r.url_id ORDER BY r.request_id").fetchall()
        full = self.full(url)
        return [(self.short(ru), e, s, et, a, lm) for ru, e, s, et, a, lm in rows
                if self._entry_url(ru, full)]

    def _entry_url(self, requested: str, full: str) -> bool:
        return requested == full

    def full(self, url: str) -> str:
        for origin, label in self.labels.items():
            if url.startswith(label + "/"):
                return origin + url[len(label):]
        return url

    def redirects(self) -> list[tuple]:
        """(from, to, information_source, is_permanent, by_security_policy, exit code of the entry)."""
        rows = self.conn.execute(
            "SELECT u.str_url, t.str_url, r.information_source, r.is_permanent, r.by_security_policy, l.exit_code"
            " FROM redirect r JOIN url u ON u.url_id = r.url_id JOIN url t ON t.url_id = r.to_url_id"
            " JOIN crawl_log l ON l.crawl_log_id = r.crawl_log_id"
            " JOIN request q ON q.request_id = r.request_id AND q.crawl_log_id = r.crawl_log_id"
            " ORDER BY r.redirect_id").fetchall()
        return [(self.short(a), self.short(b), s, p, sp, e) for a, b, s, p, sp, e in rows]

    def candidates(self) -> dict[str, tuple]:
        """url -> (last_crawl_exit_code, crawled?, contentful crawled?, last_contentful_http_etag)."""
        rows = self.conn.execute(
            "SELECT u.str_url, c.last_crawl_exit_code, c.last_crawl_time_unix_utc IS NOT NULL,"
            " c.last_contentful_crawl_time_unix_utc IS NOT NULL, c.last_contentful_http_etag"
            " FROM crawl_candidate c JOIN url u ON u.url_id = c.url_id").fetchall()
        return {self.short(u): (e, bool(t), bool(ct), et) for u, e, t, ct, et in rows}

    def files(self) -> dict[str, tuple]:
        """url -> (str_mimetype, file_size, text or None, canonical url, last_modified)."""
        rows = self.conn.execute(
            "SELECT u.str_url, m.str_mimetype, f.file_size, t.text, cu.str_url, f.last_modified_unix_utc"
            " FROM file f JOIN url u ON u.url_id = f.url_id JOIN mimetype m ON m.mimetype_id = f.mimetype_id"
            " JOIN request r ON r.request_id = f.request_id AND r.crawl_log_id = f.crawl_log_id"
            " LEFT JOIN file_text t ON t.file_id = f.file_id LEFT JOIN url cu ON cu.url_id = f.canonical_url_id"
            " ORDER BY f.file_id").fetchall()
        return {self.short(u): (m, s, t, self.short(c), lm) for u, m, s, t, c, lm in rows}
