"""Soak benchmark: a server's memory and open files across publishes under load.

    python bench/soak [--publishes 100] [--clients 20] [--whole-every 10] [--share 0.05]
                      [--warm-requests 300] [--variants 4] [--data-dir DIR] [--idle-s 40]

The corpus is python3.11-doc (Debian's package, ``bench/docs.py``) served on 127.0.0.1,
crawled and summarized by textpile once (cached under ``--data-dir``/soak: embeddings
included, so the vector modes have vectors to reload). Then, on a copy:

* the copy is published (``textpile.publish``) and ``textpile serve`` serves the
  published file, in a process of its own;
* ``--clients`` threads send requests without pause: keyword searches (HTML and JSON),
  hybrid and semantic searches, "more like this", table pages and SQL queries of the
  exploration; a 503 of the SQL admission (busy: more SQL requests than threads, by
  design) and a table page cut off by the whole-request time limit (a 400 "SQL
  Interrupted": at load 15 a table page's queries take more than its 3 s) are counted
  apart, any other failure (a status other than 200, a refused
  connection, a result page that does not parse) is a client error;
* the main thread publishes ``--publishes`` times, from the corpus and from
  ``--variants`` states made from it before the clients start, in turn: in each variant
  another ``--share`` of the searchable pages left the index (the generations closed, the
  index updated by what changed, as crawls that change pages do), so each publish takes
  such a share out or brings it back; every
  ``--whole-every``-th publish replaces the file whole (a copy made whole beside it is
  renamed onto it: the server swaps to the new file);
  the others write the changed pages in place;
* the clients first send ``--warm-requests`` requests (the model, the vectors and the
  pages read once: what any server holds after its first minutes);
* after publishes 1, 10, 25, 50, 75 and 100 (and ``--idle-s`` seconds after the last,
  clients stopped: longer than the 30 s the server keeps a replaced file's connections)
  the server's RSS, its anonymous part (RssAnon: the heap, not the mapped database), its
  open files and those on deleted files are printed, with the requests so far, the
  errors and the load average.

Pass: RSS after 100 publishes within 1.3x of RSS after 1, and 0 client errors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from docs import doc_tree  # noqa: E402

from textpile.index.update import update_index  # noqa: E402
from textpile.publish import publish  # noqa: E402
from textpile.store.database import open_summary_db  # noqa: E402
from textpile.store.page_copy import MANIFEST_SUFFIX  # noqa: E402
from textpile.store.searchable import searchable  # noqa: E402

TEXTPILE = str(Path(sys.executable).with_name("textpile"))
SAMPLES = (1, 10, 25, 50, 75, 100)
QUERIES = ("dictionary", "list comprehension", "asyncio event loop", "unicode strings", "exceptions",
           "regular expression", "sqlite3 cursor", "threading lock", "decorator", "pathlib glob",
           "how do I sort a list", "read a file line by line", "json dumps indent", "socket server",
           "dataclass field default", "generator yield", "logging handler", "subprocess run")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, timeout_s: float = 120) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{url} did not answer within {timeout_s:.0f} s")
        time.sleep(0.2)


def build_corpus(data_dir: Path) -> Path:
    """The summary database of python3.11-doc, crawled and summarized once (cached)."""
    summary = data_dir / "summary.db"
    if summary.exists():
        return summary
    data_dir.mkdir(parents=True, exist_ok=True)
    root = doc_tree("python3.11-doc")
    server = subprocess.Popen([sys.executable, str(HERE.parent / "crawl" / "docserver.py"), "--root", str(root),
                               "--origins", "1", "--log", str(data_dir / "requests.json")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = json.loads(server.stdout.readline())["ports"][0]
        config = data_dir / "crawl.toml"
        config.write_text(f'name = "soak"\nseeds = ["http://127.0.0.1:{port}/index.html"]\ndefault_delay_ms = 0\n'
                          'max_commands_per_run = 5000\nrecrawl_interval = "4 weeks"\nallow_private_addresses = true\nsitemaps = false\n', "utf-8")
        crawler = data_dir / "crawler.db"
        print(f"crawling python3.11-doc into {crawler} ...", flush=True)
        subprocess.run([TEXTPILE, "crawl", "--config", str(config), "-c", str(crawler), "--no-progress"],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        server.stdin.close()
        server.wait(60)
    print(f"summarizing into {summary} ...", flush=True)
    partial = data_dir / "summary.partial.db"
    subprocess.run([TEXTPILE, "summarize", "-c", str(crawler), "-s", str(partial), "--no-progress"],
                   check=True, stdout=subprocess.DEVNULL)
    partial.rename(summary)
    return summary


def _page_text(html: str) -> str:
    """The words of a page (an error page's message), without its markup and scripts."""
    html = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", html)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


class Clients:
    """``n`` threads sending requests to ``base`` until :meth:`stop`; counts outcomes."""

    def __init__(self, base: str, n: int, eg_uuids: list[str]) -> None:
        self.base = base
        self.eg_uuids = eg_uuids
        self.requests = self.busy = self.timed_out = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(n)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self.threads:
            thread.join(60)

    def _paths(self, rng: random.Random):
        query = rng.choice(QUERIES).replace(" ", "+")
        kind = rng.random()
        if kind < 0.45:
            return f"/search?search={query}&format=json", "json"
        if kind < 0.60:
            return f"/search?search={query}", "html"
        if kind < 0.70:
            return f"/search?search={query}&mode=hybrid&format=json", "json"
        if kind < 0.75:
            return f"/search?search={query}&mode=semantic&format=json", "json"
        if kind < 0.80 and self.eg_uuids:
            return f"/search?like={rng.choice(self.eg_uuids)}&format=json", "json"
        if kind < 0.90:
            return f"/summary/url?_size=20&_sort_desc=url_id&url_id__gt={rng.randrange(400)}", "html"
        return ("/summary.json?sql=select+count(*)+from+entity_generation+where+confirmed_end_unix_utc+is+null"
                "&_shape=array", "json")

    def _run(self, index: int) -> None:
        import httpx

        rng = random.Random(index)
        with httpx.Client(base_url=self.base, timeout=60, follow_redirects=True) as client:
            while not self._stop.is_set():
                path, kind = self._paths(rng)
                try:
                    response = client.get(path)
                    problem = None
                    if response.status_code == 503 and path.startswith("/summary"):
                        with self._lock:
                            self.busy += 1
                    elif response.status_code == 400 and path.startswith("/summary/") and \
                            "<title>SQL Interrupted</title>" in response.text:
                        with self._lock:
                            self.timed_out += 1
                    elif response.status_code != 200:
                        problem = f"{response.status_code} {path}: {_page_text(response.text)[:400]}"
                    elif kind == "json":
                        response.json()
                except (httpx.HTTPError, ValueError) as exc:
                    problem = f"{type(exc).__name__} {path}: {exc}"
                with self._lock:
                    self.requests += 1
                    if problem is not None:
                        self.errors.append(problem)


def churn(work: Path, ids: list[int], close: bool) -> None:
    """Close (or open again) the generations ``ids`` of ``work`` and update its index."""
    with closing(open_summary_db(work)) as conn:
        marks = ",".join("?" * len(ids))
        with conn:
            conn.execute(f"UPDATE entity_generation SET confirmed_end_unix_utc = "
                         f"{'last_seen_unix_utc' if close else 'NULL'} WHERE entity_generation_id IN ({marks})", ids)
        update_index(conn)


def replace_whole(source: Path, served: Path):
    """Publish ``source`` as a new file that replaces ``served`` (``os.replace``: the
    server swaps to it), as textpile's first publish does; return the publish's report.
    The new copy is made whole beside it; then ``served``'s WAL files go (the server's
    connections keep theirs open: they read the old file until it is swapped out) and the
    copy and its page manifest are renamed onto ``served``'s names."""
    side = served.with_name("next-" + served.name)
    for suffix in ("", "-wal", "-shm", MANIFEST_SUFFIX):
        Path(f"{side}{suffix}").unlink(missing_ok=True)
    report = publish(source, side)
    assert report.whole
    for suffix in ("-wal", "-shm"):
        Path(f"{served}{suffix}").unlink(missing_ok=True)
    os.replace(side, served)
    os.replace(f"{side}{MANIFEST_SUFFIX}", f"{served}{MANIFEST_SUFFIX}")
    return report


def server_figures(pid: int) -> dict[str, float]:
    """RSS and RssAnon (MB) and open files (all, on deleted files) of process ``pid``."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines() if ":" in line}
    fds = deleted = 0
    for entry in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{entry}")
        except OSError:
            continue
        fds += 1
        deleted += target.endswith(" (deleted)")
    return {"rss_mb": int(fields["VmRSS"].split()[0]) / 1024, "anon_mb": int(fields["RssAnon"].split()[0]) / 1024,
            "fds": fds, "deleted": deleted}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--publishes", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--whole-every", type=int, default=10, help="every Nth publish replaces the file whole (0: never)")
    parser.add_argument("--share", type=float, default=0.05, help="share of the pages that change before each publish")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--idle-s", type=float, default=40.0)
    parser.add_argument("--warm-requests", type=int, default=300,
                        help="requests served before the first publish (the model, vectors and pages loaded)")
    parser.add_argument("--variants", type=int, default=4, help="states with other pages changed (made before the clients start)")
    args = parser.parse_args()
    corpus = build_corpus(args.data_dir / "soak")
    with tempfile.TemporaryDirectory(dir=args.data_dir) as tmp:
        work, served = Path(tmp) / "work.db", Path(tmp) / "published" / "summary.db"
        shutil.copy(corpus, work)
        publish(work, served)
        with closing(sqlite3.connect(f"file:{work}?mode=ro", uri=True)) as conn:
            uuid_of = dict(conn.execute(f"SELECT entity_generation_id, entity_generation_uuid FROM entity_generation eg "
                                        f"WHERE {searchable('eg')} ORDER BY 1"))
        ids = sorted(uuid_of)
        # The changed states are made before the clients start: updating the index in
        # this process while 20 client threads share its GIL took a minute a publish.
        rng = random.Random(7)
        variants, closed = [], set()
        for k in range(args.variants):
            variant = Path(tmp) / f"variant{k}.db"
            shutil.copy(corpus, variant)
            changed = sorted(rng.sample(ids, max(1, round(len(ids) * args.share))))
            churn(variant, changed, close=True)
            variants.append(variant)
            closed.update(changed)
        # "more like this" of pages searchable in every state (another is a 400, rightly)
        uuids = [uuid_of[i].hex() for i in ids if i not in closed][:50]
        port = _free_port()
        server = subprocess.Popen([TEXTPILE, "serve", "-s", str(served), "-l", f"127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rows = []
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_for(base + "/search?search=list&format=json")
            clients = Clients(base, args.clients, uuids)
            clients.start()
            while clients.requests < args.warm_requests:  # the model, vectors and pages loaded
                time.sleep(0.5)
            reported = 0  # client errors printed so far
            print(f"{len(ids)} searchable pages; {args.share:.0%} change before each publish; "
                  f"every {args.whole_every or 'no'}th publish is whole; {args.clients} clients", flush=True)
            started = time.monotonic()
            for n in range(1, args.publishes + 1):
                # odd publishes bring back the base state, even ones a variant
                source = work if n % 2 else variants[(n // 2) % len(variants)]
                if args.whole_every and n % args.whole_every == 0:
                    report = replace_whole(source, served)
                else:
                    report = publish(source, served)
                if n in SAMPLES:
                    time.sleep(2)  # requests of the new state in flight
                    rows.append((str(n), server_figures(server.pid), clients.requests, (clients.busy, clients.timed_out),
                                 len(clients.errors), os.getloadavg()[0], report.whole))
                    print(f"  publish {n}: {rows[-1]}", flush=True)
                    for problem in clients.errors[reported:]:
                        print("    error:", problem, flush=True)
                    reported = len(clients.errors)
            seconds = time.monotonic() - started
            clients.stop()
            time.sleep(args.idle_s)
            rows.append((f"idle {args.idle_s:.0f} s", server_figures(server.pid), clients.requests, (clients.busy, clients.timed_out),
                         len(clients.errors), os.getloadavg()[0], False))
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    print(f"\n{args.publishes} publishes in {seconds:.0f} s under {args.clients} clients "
          f"({rows[-1][2]} requests, {rows[-1][2] / seconds:.0f}/s)")
    print(f"{'after':<10} {'RSS MB':>7} {'anon MB':>8} {'fds':>4} {'deleted':>8} {'requests':>9} {'busy 503':>9} {'time limit':>10} "
          f"{'errors':>7} {'load':>5}")
    for label, fig, requests, (busy, timed_out), errors, load, _whole in rows:
        print(f"{label:<10} {fig['rss_mb']:>7.0f} {fig['anon_mb']:>8.0f} {fig['fds']:>4} {fig['deleted']:>8} "
              f"{requests:>9} {busy:>9} {timed_out:>10} {errors:>7} {load:>5.1f}")
    first = rows[0][1]["rss_mb"]
    last = next(r for r in rows if r[0] == str(args.publishes))[1]["rss_mb"] if args.publishes in SAMPLES else \
        rows[-2][1]["rss_mb"]
    ratio = last / first
    print(f"RSS after {args.publishes} / after 1: {ratio:.2f} (pass: at most 1.30); client errors: "
          f"{len(clients.errors)} (pass: 0)")
    for problem in clients.errors[:10]:
        print("  error:", problem)
    return 0 if ratio <= 1.3 and not clients.errors else 1


if __name__ == "__main__":
    sys.exit(main())
