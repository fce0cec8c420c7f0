"""One extractor measurement for the summarize benchmark (a child process of
bench_summarize.py), printed as one JSON line.

    python bench/summarize/run_extract.py --extractor textpile --mode f1
    python bench/summarize/run_extract.py --extractor trafilatura --mode speed --pages FILE [--repeat 2]
    python bench/summarize/run_extract.py --extractor resiliparse --mode pool --pages FILE [--processes 2]

``f1``: mean main-text F1 over the labelled pages (bench/docs.py ``labelled_pages``).
``speed``: CPU seconds per page in this one process (time.process_time), over the pages
listed in FILE (one path per line), ``--repeat`` times. ``pool``: the pages over
``--processes`` worker processes; wall seconds and CPU seconds of all processes
(bench/proctree.py).
``--textpile-src`` puts another checkout's ``src`` first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

URL_PREFIX = "http://docs.test/"


def _extract_file(job: tuple[str, str]) -> int:
    from extractors import EXTRACTORS

    name, path = job
    html = Path(path).read_bytes().decode("utf-8", "replace")
    return len(EXTRACTORS[name](html, URL_PREFIX + Path(path).name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extractor", required=True)
    parser.add_argument("--mode", choices=("f1", "speed", "pool"), required=True)
    parser.add_argument("--pages", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--textpile-src", type=Path)
    args = parser.parse_args()
    if args.textpile_src is not None:
        sys.path.insert(0, str(args.textpile_src))
        # Worker processes come from a forkserver, a new interpreter that imports the installed
        # textpile before it takes this sys.path: PYTHONPATH puts the other checkout first there too.
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(args.textpile_src), os.environ.get("PYTHONPATH"))))
    from extractors import EXTRACTORS, f1

    extract = EXTRACTORS[args.extractor]
    if args.mode == "f1":
        from docs import labelled_pages

        scores = {name: f1(extract(html, f"https://news.example/{name}"), expected)
                  for name, html, expected in labelled_pages()}
        print(json.dumps({"f1": sum(scores.values()) / len(scores), "pages": scores}))
        return
    paths = [line for line in args.pages.read_text().splitlines() if line]
    if args.mode == "speed":
        bodies = [(URL_PREFIX + Path(p).name, Path(p).read_bytes().decode("utf-8", "replace")) for p in paths]
        extract(bodies[0][1], bodies[0][0])  # imports and caches outside the measurement
        started = time.process_time()
        for _ in range(args.repeat):
            for url, html in bodies:
                extract(html, url)
        cpu = time.process_time() - started
        print(json.dumps({"pages": len(bodies) * args.repeat, "cpu_s": cpu,
                          "bytes": sum(len(h.encode("utf-8")) for _, h in bodies) * args.repeat}))
        return
    from proctree import ProcessTree

    context = get_context("forkserver")
    with context.Pool(args.processes) as pool:
        pool.map(_extract_file, [(args.extractor, paths[0])] * args.processes)  # start the workers
        started = time.monotonic()
        with ProcessTree() as tree:
            pool.map(_extract_file, [(args.extractor, p) for p in paths], chunksize=4)
        wall = time.monotonic() - started
    print(json.dumps({"pages": len(paths), "wall_s": wall, "cpu_s": tree.cpu_s()}))


if __name__ == "__main__":
    main()
