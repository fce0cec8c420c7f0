"""One measured step of the growth benchmark, in a Python process of its own.

    python bench/growth/step.py rebuild SUMMARY_DB
    python bench/growth/step.py summarize SUMMARY_DB CRAWLER_DB
    python bench/growth/step.py summarize-rebuild SUMMARY_DB CRAWLER_DB
    python bench/growth/step.py publish SUMMARY_DB PUBLISHED_DB
    python bench/growth/step.py search SUMMARY_DB QUERIES_JSON
    python bench/growth/step.py crawl CRAWLER_DB CONFIG

Prints one JSON line: the CPU seconds of the process and all its descendants
(``cpu_s``, imports included: a run of the CLI costs them too; the scraping workers are the
forkserver's children, never this process's reaped ones, so they are sampled with
bench/proctree.py) and of this process alone (``step_cpu_s``), the bytes it and they wrote and read
(``/proc/self/io``, which adds reaped children's), the peak RSS of its largest process
(KiB), and for ``search`` the p50/p99 CPU milliseconds per query. Runs whichever textpile
is first on ``sys.path`` (the benchmark sets PYTHONPATH to compare an older ``src/``):
``rebuild`` calls the index rebuild of either layout.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proctree import ProcessTree  # noqa: E402


def _io() -> dict[str, int]:
    with open("/proc/self/io") as fh:
        fields = dict(line.split(": ") for line in fh.read().splitlines())
    return {"write_bytes": int(fields["write_bytes"]), "read_bytes": int(fields["read_bytes"])}


def _rebuild(summary_db: str) -> dict:
    try:
        from textpile.index.update import update_search_index
    except ImportError:  # an older textpile: every summarize rebuilt the index
        from textpile.summarize.fts import rebuild_fts
        return {"pages": rebuild_fts(summary_db)}
    return {"pages": update_search_index(summary_db, rebuild=True).pages}


def _summarize(summary_db: str, crawler_db: str, rebuild_index: bool = False) -> dict:
    """``textpile summarize`` as the CLI runs it (its imports included), with the index
    update's own CPU seconds when this textpile reports them."""
    import inspect

    from textpile.summarize import pipeline

    reports = []
    real = pipeline.summarize

    def recording(*args, **kwargs):
        reports.append(real(*args, **kwargs))
        return reports[-1]

    # an older textpile has no --rebuild-index: it rebuilt the index on every summarize
    extra = ["--rebuild-index"] if rebuild_index and "rebuild_index" in inspect.signature(real).parameters else []
    pipeline.summarize = recording  # the CLI imports it when it runs
    from textpile.cli import main

    code = main(["summarize", "-c", crawler_db, "-s", summary_db, "--no-embeddings", "--no-progress", *extra])
    index = getattr(reports[0], "index", None) if reports else None
    return {"exit": code, "index_cpu_s": getattr(index, "cpu_seconds", None)}


def _summarize_rebuilding(summary_db: str, crawler_db: str) -> dict:
    return _summarize(summary_db, crawler_db, rebuild_index=True)


def _publish(summary_db: str, published: str) -> dict:
    from textpile.publish import publish

    report = publish(summary_db, published)
    return {"bytes": report.bytes, "pages_copied": getattr(report, "pages_copied", None),
            "pages_read": getattr(report, "pages_read", None), "pages": getattr(report, "pages", None)}


def _search(summary_db: str, queries_json: str) -> dict:
    from contextlib import closing

    from textpile.search.engine import search
    from textpile.store.database import open_summary_db

    queries = json.loads(open(queries_json).read())
    times = []
    with closing(open_summary_db(summary_db, read_only=True)) as conn:
        for query in queries:  # warm-up
            search(conn, query)
        for query in queries:
            started = time.thread_time()
            search(conn, query)
            times.append((time.thread_time() - started) * 1000)
    times.sort()
    return {"p50_ms": times[len(times) // 2], "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))],
            "queries": len(times)}


def _crawl(crawler_db: str, config: str) -> dict:
    from textpile.cli import main

    code = main(["crawl", "-c", crawler_db, "--config", config, "--no-progress", "--ignore-db-name-from-config"])
    return {"exit": code}


STEPS = {"crawl": _crawl, "rebuild": _rebuild, "summarize": _summarize, "summarize-rebuild": _summarize_rebuilding,
         "publish": _publish, "search": _search}


def main(argv: list[str]) -> int:
    step, *args = argv
    io0, wall0 = _io(), time.monotonic()
    # every sample lists the descendants: a batch's scraping workers live about a second
    with ProcessTree(children_every=1, pss_every=10**9) as tree:
        result = STEPS[step](*args)
    io1 = _io()
    result.update(cpu_s=tree.cpu_s(), step_cpu_s=tree.own_cpu_s(), wall_s=time.monotonic() - wall0,
                  write_bytes=io1["write_bytes"] - io0["write_bytes"], read_bytes=io1["read_bytes"] - io0["read_bytes"],
                  peak_rss_kib=max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                   resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
