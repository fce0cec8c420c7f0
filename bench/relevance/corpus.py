"""Crawling and summarizing each benchmark site with textpile, cached between runs.

Per site, under ``DATA/index/<site>/``: ``crawler.db`` (crawled once, unless
``--recrawl``) and ``summary.db``, re-made from the crawler database whenever the
summarizer's code changed (a digest of ``src/textpile/summarize/`` is kept in
``summary.stamp``) or ``--resummarize`` is given. The search tables are rebuilt on every
run by the caller (cheap), so ranking and index changes need neither.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import textpile
from textpile.crawl.loop.run import run_crawl
from textpile.crawl.policy.config import load_config
from textpile.summarize.pipeline import summarize

from sites import Site, SiteServer

#: Parts of a Sphinx site that its own search does not index either (sources, assets,
#: highlighted module code); the same policy for every site.
_CONFIG = """
name = "textpile relevance benchmark: {name}"
default_delay_ms = 0
max_commands_per_run = 100000
recrawl_interval = "100 years"
user_agent = "textpile-bench (relevance benchmark on loopback)"
seeds = ["{base}/{seed}"]
allow_private_addresses = true

[[do_not_crawl]]
reason = "sources, assets and highlighted code are not documentation pages"
if.or = [
    {{ url.path.has_prefix = "/_sources/" }}, {{ url.path.has_prefix = "/_static/" }},
    {{ url.path.has_prefix = "/_images/" }}, {{ url.path.has_prefix = "/_downloads/" }},
    {{ url.path.has_prefix = "/_modules/" }}, {{ url.path.has_prefix = "/_panels_static/" }},
]
"""
#: A site cut to a part of its package (``Site.scope``) and the pages it never crawls (``Site.skip``).
_SCOPE = """
[[do_not_crawl]]
reason = "outside the part of the package this site is"
if.and = [{conditions}]
"""
_SKIP = """
[[do_not_crawl]]
reason = "pages left out of this site (Site.skip): navigation its generator makes, or a part not benchmarked"
if.or = [{conditions}]
"""


def crawl_config(site: Site, base_url: str) -> str:
    """The crawl configuration (TOML) of ``site`` served at ``base_url``."""
    text = _CONFIG.format(name=site.name, base=base_url, seed=site.seed)
    if site.scope:
        text += _SCOPE.format(conditions=", ".join(
            f"{{ url.path.not.has_prefix = {json.dumps('/' + prefix)} }}" for prefix in site.scope))
    if site.skip:
        text += _SKIP.format(conditions=", ".join(
            f"{{ url.path.contains = {json.dumps(part)} }}" for part in site.skip))
    return text


#: Files of textpile/summarize that do not change what a summary holds: the run's order
#: of stages and the versions of the others (the search index is rebuilt on every run).
_NOT_EXTRACTION = {"pipeline.py", "versions.py", "rebuild.py", "retention.py", "tokens.py"}


def summarizer_digest() -> str:
    """A digest of the summarizer's source files: it changes when extraction changes."""
    pkg = Path(textpile.__file__).parent
    h = hashlib.blake2b(digest_size=16)
    for path in sorted((pkg / "summarize").rglob("*.py")):
        if path.name in _NOT_EXTRACTION:
            continue
        h.update(path.relative_to(pkg).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def ensure_index(site: Site, root: Path, data_dir: Path, digest: str, *, recrawl: bool = False,
                 resummarize: bool = False, log=print) -> Path:
    """Crawl (if needed) and summarize (if needed) ``site``; return its summary database.

    ``digest`` is :func:`summarizer_digest` taken when the process started (the code it
    runs), so a file edited meanwhile cannot stamp a database it did not make.
    """
    folder = data_dir / "index" / site.name
    folder.mkdir(parents=True, exist_ok=True)
    crawler_db = folder / "crawler.db"
    summary_db = folder / "summary.db"
    stamp = folder / "summary.stamp"
    if recrawl and crawler_db.exists():
        for p in folder.iterdir():
            p.unlink() if p.is_file() else shutil.rmtree(p)
    if not (folder / "crawl.done").exists():
        config_path = folder / "crawl.toml"
        with SiteServer(root, site.address) as server:
            config_path.write_text(crawl_config(site, server.base_url))
            log(f"== crawling {site.name} ({server.base_url})")
            report = run_crawl(load_config(config_path), crawler_db, progress=True)
        log(f"   {report.total_requests} requests, {report.ingested_files} pages")
        (folder / "crawl.done").write_text(f"{report.total_requests} {report.ingested_files}\n")
        resummarize = True
    if resummarize or not summary_db.exists() or not stamp.exists() or stamp.read_text().strip() != digest:
        for p in folder.glob("summary.db*"):
            p.unlink()
        log(f"== summarizing {site.name}")
        report = summarize(crawler_db, summary_db, progress=True)
        log(f"   {report.pages_processed} crawl log entries, {report.fts_rows} searchable pages")
        stamp.write_text(digest + "\n")
    return summary_db
