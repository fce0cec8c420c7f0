"""Growth benchmark: what a run costs at 10K, 100K and 300K pages, beside a full rebuild.

    python bench/growth [--sizes 10000,100000,300000] [--data-dir DIR] [--sources DB,...]
                        [--changed 0.01] [--gone 0.001] [--repeat 3] [--rebuild-repeat 3]
                        [--before-src OLD/src]

Per size, a corpus of real pages replicated with varied text (corpus.py, built once and
cached under ``--data-dir``; the sources default to the relevance benchmark's summarized
sites) and a crawl of its changes (changes.py: ``--changed`` of its pages with new words,
``--gone`` answering 404). Then, per system (this checkout's textpile, and with
``--before-src`` another checkout's ``src/`` as ``textpile-before``), interleaved step by
step, each step a process of its own (step.py) on the system's own copy:

1. ``rebuild``: ``textpile summarize --rebuild-index`` with nothing new (the whole search
   index built and the database tidied: what every summarize did before, with a VACUUM);
2. ``publish-1``: the first published copy;
3. ``nothing``: ``textpile summarize`` with nothing new to summarize (for this and the
   summarize steps below, the index update's own CPU seconds are printed apart);
4. ``change``: ``textpile summarize`` of the crawl of changes; with ``--repeat N`` also
   ``change-2`` .. ``change-N``, the same run on copies of the state before it (a run's CPU
   time varies by 10-20% on a shared machine: the ratio below takes the median);
5. ``change+rebuild``: the same crawl summarized into a copy of the state before it with
   ``--rebuild-index`` (the same run, the index rebuilt whole: what step 4 is compared to);
   with ``--rebuild-repeat N`` also ``change+rebuild-2`` .. ``change+rebuild-N`` on copies
   of their own, taking turns with the repeats of step 4, and the ratio takes the median of
   these too (a run of minutes varies as much: 297 to 391 CPU-s for the same work at 100K
   on one day of one machine).
   Every copy is opened once by a summarize with nothing new before its run (not printed),
   as the working file was by step 3: a writer checks a file no textpile writer closed
   (``PRAGMA quick_check``, about 4 CPU-s at 100K), and a daily run does not;
6. ``publish``: the published copy brought up to date after step 4;

and search latency (the library call's CPU time per query, p50/p99) after steps 1, 3 and
4. Then, per ``--crawl-sizes``, a crawler database of that many fetched pages (real crawls
replicated, crawler_corpus.py) and a crawl run of 10 requests into it (``textpile crawl
-m 10`` of a small site served on 127.0.0.1): what a crawl run costs on a large crawler
database (before: a VACUUM of the whole file at its end). Printed per step: CPU seconds of
the step's whole process tree, imports included (step.py: its scraping workers and the
forkserver they come from are sampled with bench/proctree.py; before, their CPU, about
6-10 ms per page scraped, was not counted), bytes written and read (``/proc/self/io``: page-cache
folios dirtied and read whole, more than the write calls on files read cold, see ``_pages``; a
publish's row also names its pages written and read), the peak RSS of its largest process, the peak
disk the system's folder took (its files summed every 0.1 s, temporary staging files
included) over what it held before, wall seconds, and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from changes import read_origins, write_changes, write_origins  # noqa: E402
from corpus import build_corpus  # noqa: E402
from crawler_corpus import build_crawler_corpus  # noqa: E402

QUERIES = ["the", "create table", "select", "index", "function", "return value", "json", "http request", "thread",
           "connection pool", "transaction", "error", "configuration file", "how to install", "iterator",
           "regular expression", "date and time", "foreign key", "vacuum", "trigger", "parse arguments",
           "array", "string format", "memory", "performance tuning", "backup", "encoding", "unicode",
           "sort order", "join", "primary key", "timeout", "logging", "test", "session", "query plan",
           "window function", "cursor", "collation", "full text search"]


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass
    return total


class DiskPeak:
    """The largest size of ``folder`` (its files summed) seen every 0.1 s while active."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.start = _folder_bytes(folder)
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _folder_bytes(self.folder))

    def __enter__(self) -> "DiskPeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _folder_bytes(self.folder))


def run_step(system: dict, folder: Path, step: str, *args: Path) -> dict:
    """Run step.py ``step`` for ``system`` with its temporary files in ``folder``; its figures."""
    env = dict(os.environ, TMPDIR=str(folder / "tmp"))
    (folder / "tmp").mkdir(exist_ok=True)
    if system["src"]:
        env["PYTHONPATH"] = system["src"]
    with DiskPeak(folder) as disk:
        proc = subprocess.run([sys.executable, str(HERE / "step.py"), step, *map(str, args)], env=env,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{system['name']} {step} failed:\n{proc.stderr[-3000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["disk_peak_extra"] = disk.peak - disk.start
    figures["load"] = os.getloadavg()[0]
    return figures


def _pages(figures: dict) -> str:
    """A publish's pages: written into the published copy / read from the working
    database (of the database's pages), e.g. ``25,161 / 25,413 (556,194)``; '' for other
    steps. The pages say what the publish wrote; the bytes written column
    (``/proc/self/io``) counts page-cache folios as writes dirty them, which is more than
    was written on files read cold (our reading: readahead brings them in as large
    folios, ext4 on Linux 6.18, and a 4 KiB write counts its whole folio). Measured: the
    100K publish after a change, its two files put out of the cache first (as this
    benchmark's earlier runs do), counted 979 MB written for 194 MB of write calls (its
    WAL and checkpoint, strace) and 211 MB that reached the device (/proc/diskstats, synced
    before and after); with its files cached, 212 MB counted."""
    if figures.get("pages_copied") is None:
        return ""
    return f"{figures['pages_copied']:,} / {figures['pages_read']:,} ({figures['pages']:,})"


def prepare(size: int, data: Path, sources: list[Path], changed: float, gone: float, log=print) -> dict[str, Path]:
    """The corpus, its crawl of changes and an empty crawler database for ``size`` (cached)."""
    corpus, origins = data / f"corpus-{size}.db", data / f"corpus-{size}.origins.json"
    if not corpus.exists() or not origins.exists():
        log(f"== building the {size}-page corpus")
        built = build_corpus(corpus, sources, size, log=log)
        write_origins(origins, built["origins"])
        log(f"   {built['pages']} pages in {built['seconds']:.0f} s ({built['pages'] / built['seconds']:.0f} pages/s)")
    changes = data / f"changes-{size}-{changed}-{gone}.db"
    if not changes.exists():
        counts = write_changes(corpus, read_origins(origins), changes, changed=changed, gone=gone, seed=997)
        log(f"   changes: {counts}")
    empty = data / "empty-crawler.db"
    if not empty.exists():
        from textpile.store.database import open_crawler_db
        open_crawler_db(empty).close()
    return {"corpus": corpus, "changes": changes, "empty": empty}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:  # noqa: A002 (the base class's name)
        pass


@contextlib.contextmanager
def _served(root: Path):
    """``root`` served over HTTP on 127.0.0.1 (a free port) while inside; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data" / "growth")
    parser.add_argument("--sources", help="comma-separated summary databases (default: the relevance sites')")
    parser.add_argument("--relevance-data", type=Path, default=HERE.parent / "data")
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--gone", type=float, default=0.001)
    parser.add_argument("--rebuild-repeat", type=int, default=3,
                        help="runs of the change+rebuild step (default 3; the ratio takes their median)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the change step (default 3; the ratio "
                        "takes their median)")
    parser.add_argument("--before-src", help="another checkout's src/ to run beside this one")
    parser.add_argument("--crawl-sizes", default="100000", help="crawler databases to crawl 10 requests into ('' none)")
    parser.add_argument("--crawl-site", type=Path, help="a folder of HTML to serve for the crawl (default: the "
                        "sphinx site of the relevance benchmark's packages)")
    args = parser.parse_args()
    data = args.data_dir
    data.mkdir(parents=True, exist_ok=True)
    if args.sources:
        sources = [Path(s) for s in args.sources.split(",")]
    else:
        sources = sorted(p for p in (args.relevance_data / "index").glob("*/summary.db"))
    if not sources:
        raise SystemExit("no source summary databases: run `python bench/relevance` first, or pass --sources")
    queries = data / "queries.json"
    queries.write_text(json.dumps(QUERIES))
    systems = [{"name": "textpile", "src": None}]
    if args.before_src:
        systems.append({"name": "textpile-before", "src": str(Path(args.before_src).resolve())})
    rows = []
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        paths = prepare(size, data, sources, args.changed, args.gone)
        work = {}
        for system in systems:
            folder = data / f"work-{size}-{system['name']}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            shutil.copy(paths["corpus"], folder / "summary.db")
            work[system["name"]] = folder
        plan = [("rebuild", lambda f: (f / "summary.db", paths["empty"])),
                ("search-1", lambda f: (f / "summary.db", queries)),
                ("publish-1", lambda f: (f / "summary.db", f / "published" / "summary.db")),
                ("nothing", lambda f: (f / "summary.db", paths["empty"])),
                ("search-2", lambda f: (f / "summary.db", queries)),
                ("copy", None),
                ("change", lambda f: (f / "summary.db", paths["changes"])),
                # the repeats of both runs alternate: a machine that slows down or speeds up over
                # minutes moves both medians alike
                *sorted([*((f"change-{k}", k, functools.partial(
                              lambda k, f: (f / f"repeat-{k}" / "summary.db", paths["changes"]), k))
                           for k in range(2, args.repeat + 1)),
                         *((f"change+rebuild{'' if k == 1 else f'-{k}'}", k + 0.5, functools.partial(
                              lambda k, f: (f / f"rebuild-{k}" / "summary.db", paths["changes"]), k))
                           for k in range(1, args.rebuild_repeat + 1))], key=lambda run: run[1]),
                ("search-3", lambda f: (f / "summary.db", queries)),
                ("publish", lambda f: (f / "summary.db", f / "published" / "summary.db"))]
        plan = [(run[0], run[-1]) for run in plan]  # (step, its arguments)
        for step, arguments in plan:
            for system in systems:
                folder = work[system["name"]]
                if step == "copy":  # the state before the change, for the repeats and the runs that rebuild
                    (folder / "before").mkdir(exist_ok=True)
                    shutil.copy(folder / "summary.db", folder / "before" / "summary.db")
                    continue
                given = arguments(folder)
                copy = given[0].parent if given[0].parent != folder else None  # a repeat's own folder
                if copy is not None:  # made just before its run (one copy on disk at a time), vouched for
                    copy.mkdir(exist_ok=True)
                    shutil.copy(folder / "before" / "summary.db", copy / "summary.db")
                    run_step(system, folder, "summarize", copy / "summary.db", paths["empty"])
                    # the copy's dirty pages written out first, as a daily run finds its file: at 300K
                    # the two runs right after a 7 GB copy (most of the 24 GiB of memory page cache
                    # then) cost 65 and 69 CPU-s, the first change run on the working file 46; their
                    # scraping workers, which never read the copy, took 50% more too, so the machine
                    # may have slowed down instead (not told apart yet)
                    os.sync()
                kind = step.split("-")[0] if step.startswith(("search", "publish", "change-", "change+rebuild-")) else step
                command = {"rebuild": "summarize-rebuild", "search": "search", "publish": "publish", "nothing": "summarize",
                           "change": "summarize", "change+rebuild": "summarize-rebuild"}[kind]
                figures = run_step(system, folder, command, *given)
                rows.append((size, system["name"], step, figures))
                if copy is not None:  # not needed any more
                    shutil.rmtree(copy)
                print(f"{size:>7} {system['name']:<16} {step:<15} {figures['cpu_s']:8.2f} CPU-s "
                      f"{_mb(figures['write_bytes']):>10} MB written {_mb(figures['disk_peak_extra']):>9} MB disk "
                      f"{figures['peak_rss_kib'] / 1024:7.0f} MiB"
                      + (f"  p50 {figures['p50_ms']:.1f} p99 {figures['p99_ms']:.1f} ms" if 'p50_ms' in figures else "")
                      + (f"  {_pages(figures)} pages written / read" if _pages(figures) else "")
                      + f"  load {figures['load']:.1f}", flush=True)
        for folder in work.values():
            shutil.rmtree(folder / "before", ignore_errors=True)
    crawl_sizes = [int(x) for x in args.crawl_sizes.split(",") if x.strip()]
    if crawl_sizes:
        site = args.crawl_site or next((args.relevance_data / "debs" / "sphinx-doc").glob("usr/share/doc/*/html"))
        crawlers = sorted(p for p in (args.relevance_data / "index").glob("*/crawler.db"))
        with _served(site) as base:
            config = data / "crawl-10.toml"
            config.write_text(f'name = "growth"\ndefault_delay_ms = 0\nmax_commands_per_run = 10\n'
                              f'recrawl_interval = "100 years"\nuser_agent = "textpile-bench"\n'
                              f'seeds = ["{base}/index.html"]\nallow_private_addresses = true\n')
            for size in crawl_sizes:
                corpus = data / f"crawler-{size}.db"
                if not corpus.exists():
                    built = build_crawler_corpus(corpus, crawlers, size)
                    print(f"   crawler corpus: {built['pages']} pages, {built['bytes'] / 1e9:.2f} GB in "
                          f"{built['seconds']:.0f} s")
                for system in systems:
                    folder = data / f"crawl-{size}-{system['name']}"
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir()
                    shutil.copy(corpus, folder / "crawler.db")
                # The first crawl opens a copy no textpile writer has closed (its quick_check reads the
                # whole file once); the second is the steady state of a crawl every day.
                for step in ("crawl 10", "crawl again"):
                    for system in systems:
                        folder = data / f"crawl-{size}-{system['name']}"
                        figures = run_step(system, folder, "crawl", folder / "crawler.db", config)
                        rows.append((size, system["name"], step, figures))
                        print(f"{size:>7} {system['name']:<16} {step:<15} {figures['cpu_s']:8.2f} CPU-s "
                              f"{_mb(figures['write_bytes']):>10} MB written {_mb(figures['disk_peak_extra']):>9} MB disk "
                              f"{figures['wall_s']:6.1f} s  load {figures['load']:.1f}", flush=True)
    print()
    print("| pages | system | step | CPU-s | of it the step's process | of it the index | MB written | MB read "
          "| peak MB disk | peak RSS MiB | wall s | search p50/p99 ms | pages written / read (of) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size, name, step, f in rows:
        search = f"{f['p50_ms']:.1f} / {f['p99_ms']:.1f}" if "p50_ms" in f else ""
        index = f"{f['index_cpu_s']:.2f}" if f.get("index_cpu_s") is not None else ""
        print(f"| {size:,} | {name} | {step} | {f['cpu_s']:.2f} | {f['step_cpu_s']:.2f} | {index} | {_mb(f['write_bytes'])} | "
              f"{_mb(f['read_bytes'])} | {_mb(f['disk_peak_extra'])} | {f['peak_rss_kib'] / 1024:.0f} | "
              f"{f['wall_s']:.1f} | {search} | {_pages(f)} | {f['load']:.1f} |")
    for size, name in dict.fromkeys((size, name) for size, name, _step, _f in rows):
        cpu = {step: f["cpu_s"] for s2, n2, step, f in rows if (s2, n2) == (size, name)}
        runs = [c for step, c in cpu.items() if step == "change" or step.startswith("change-")]
        rebuilds = [c for step, c in cpu.items() if step.startswith("change+rebuild")]
        if runs and rebuilds:
            change, rebuilt = statistics.median(runs), statistics.median(rebuilds)
            print(f"{size:,} {name}: the change run ({', '.join(f'{c:.2f}' for c in runs)} CPU-s, median {change:.2f}) is "
                  f"{change / rebuilt:.1%} of the same run with --rebuild-index "
                  f"({', '.join(f'{c:.2f}' for c in rebuilds)} CPU-s, median {rebuilt:.2f})"
                  + (f", {change / cpu['rebuild']:.1%} of a rebuild with nothing new" if cpu.get("rebuild") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
