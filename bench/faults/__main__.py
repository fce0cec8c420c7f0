"""Fault harness: random SIGKILLs over ``textpile crawl``, ``textpile summarize``,
``textpile pipeline``, a summarize that updates the index by what changed and a publish,
each followed by one uninterrupted run, against an uninterrupted reference run (issues
12 and 27).

    python bench/faults [--kills 20] [--targets crawl summarize pipeline summarize-update publish]
                        [--pages 60] [--seed 7] [--keep DIR]

For every target the reference run gives its stages (the lines it prints, the files it
makes, or for publish what its processes hold: targets.py, update_targets.py); the kills
are spread over them round-robin (database creation included: the kill comes as soon as
the temporary database appears), each at a random moment inside its stage, and each
kill is counted under the stage it landed in. After each kill every database under the
trial folder is checked (on a copy) with ``PRAGMA integrity_check``; then the same
command runs again and the trial is judged:

* corrupt DBs: trials where a database failed its integrity check (after the kill or
  after the resume);
* lost rows: pages of the reference missing after the resume (crawl), crawl log entries
  without a crawl summary (summarize, summarize-update, pipeline), generations of the
  working database missing in the published copy (publish);
* resume completed: the run after the kill ended with exit status 0;
* stuck runs: crawl runs without an end (crawl, pipeline) and Dagster runs still
  active (pipeline) after the resume;
* leftovers: temporary databases, lock files, work folders and page-copy manifests
  being written still there afterwards;
* final state equal: the crawler's latest page crawls (crawl), the summary's generations
  and FTS rows (summarize, summarize-update, the published index for pipeline), or every
  page of the published copy (publish) equal the reference's;
* index equal to a rebuild: every derived table and FTS5 row of the summary's search
  index equals those of a copy rebuilt whole (summarize, summarize-update, pipeline,
  publish);
* after the kill (publish): the published copy was state A (the copy before) or state B
  (the working database) exactly, page by page, or neither;
* reader errors (publish): per kind of reader (reader.py: a long-lived connection, a
  connection per search, both in one process), each a process searching the published
  copy during the killed run and the resume: rounds that failed, gave an answer of
  neither state, or still gave state A once B was published, of all rounds.

Prints one table (Markdown) and the load average before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import state  # noqa: E402
from site_pages import crawl_config, second_version, site  # noqa: E402
from targets import Crawl, Pipeline, Summarize, Target  # noqa: E402
from trials import Trigger, run, textpile  # noqa: E402
from update_targets import Publish, SummarizeUpdate  # noqa: E402

TARGETS = ("crawl", "summarize", "pipeline", "summarize-update", "publish")


@dataclass
class Tally:
    """The counts of one target's row (``index_equal``: None when not judged)."""

    trials: int = 0
    unjudged: int = 0
    stages: Counter = field(default_factory=Counter)
    corrupt: int = 0
    lost: int = 0
    resumed: int = 0
    stuck: int = 0
    leftovers: int = 0
    equal: int = 0
    index_equal: int | None = None
    after_kill: Counter = field(default_factory=Counter)
    after_kill_by_stage: Counter = field(default_factory=Counter)
    #: Per reader kind: [rounds, errors].
    readers: dict[str, list[int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def reader(self, results: dict[str, tuple[int, int, list[str]]], where: str) -> None:
        for kind, (rounds, errors, examples) in results.items():
            counts = self.readers.setdefault(kind, [0, 0])
            counts[0] += rounds
            counts[1] += errors
            if errors:
                self.notes.append(f"{where}: {kind} reader: {errors} errors in {rounds} rounds: {examples}")


#: How often a trial is started again, with half the delay, when the process ended
#: before its kill came (the stage was shorter than in the reference run).
RETRIES = 3


def _env(folder: Path) -> dict:
    return {"TMPDIR": str(folder / "tmp")}


def _fresh(root: Path, name: str) -> Path:
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "tmp").mkdir(parents=True)
    return folder


def trial(target: Target, trigger: Trigger, reference_state, tally: Tally, root: Path, number: int) -> None:
    """Start the command in a fresh folder and kill it at ``trigger`` (again with half the
    delay when it ended first, up to :data:`RETRIES` times), run it again, judge."""
    with contextlib.ExitStack() as during:
        for attempt in range(RETRIES + 1):
            folder = _fresh(root, f"{target.name}-{number:02d}")
            env = _env(folder)
            target.prepare(folder)
            around = during.enter_context(target.during(folder))
            killed = run(target.command(), folder, trigger=trigger, env=env, group=target.group,
                         label=target.label(folder))
            if killed.killed or attempt == RETRIES:
                break
            during.close()
            if around is not None:
                tally.reader(around.result(), f"{folder.name} (ended first, attempt {attempt + 1})")
            trigger = trigger.later(0.5)
        tally.trials += 1
        bad = state.corrupt(folder)
        stage = target.stage_of(folder, killed, trigger)
        tally.stages[stage] += 1
        left_as = target.after_kill(folder)
        if left_as is not None:
            tally.after_kill[left_as] += 1
            tally.after_kill_by_stage[(stage, left_as)] += 1
            if left_as == "neither":
                tally.notes.append(f"{folder.name}: after the kill the published copy is neither state A nor B")
        resumed = run(target.command(), folder, env=env, group=target.group)
    if around is not None:
        tally.reader(around.result(), folder.name)
    bad += state.corrupt(folder)
    if bad:
        tally.corrupt += 1
        tally.notes.append(f"{folder.name}: corrupt: {bad}")
    if resumed.returncode == 0:
        tally.resumed += 1
    else:
        tally.notes.append(f"{folder.name}: resume exit {resumed.returncode}: "
                           f"{' | '.join(line for _, line in resumed.lines[-3:])}")
    lost = target.lost(folder, reference_state)
    tally.lost += lost
    tally.stuck += target.stuck(folder)
    left = state.leftovers(folder)
    tally.leftovers += len(left)
    if left:
        tally.notes.append(f"{folder.name}: leftovers {[str(p.relative_to(folder)) for p in left]}")
    if target.snapshot(folder) == reference_state:
        tally.equal += 1
    else:
        tally.notes.append(f"{folder.name}: final state differs (killed at {trigger.stage} +{trigger.delay_s:.2f} s)")
    if target.judges_index:
        differences = state.index_differences(target.summary_db(folder))
        tally.index_equal = (tally.index_equal or 0) + (not differences)
        if differences:
            tally.notes.append(f"{folder.name}: the index differs from a rebuild: {differences}")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def second_crawl(root: Path, server, pages: int, first: Path) -> Path:
    """The first crawl's database crawled again (every URL due) while the site serves
    its second version (site_pages.second_version)."""
    folder = _fresh(root, "second-crawl")
    crawl_config(folder / "crawl.toml", server.base_url, pages)
    state.copy_db(first, folder / "crawl.db")
    with second_version(server, pages):
        crawled = run(textpile(["crawl", "--config", "crawl.toml", "-c", "crawl.db", "--force-recrawl"]), folder,
                      env=_env(folder))
    assert crawled.returncode == 0, crawled.lines[-5:]
    return folder / "crawl.db"


def summarized(root: Path, name: str, crawler_db: Path, summary_db: Path | None = None) -> Path:
    """``summary_db`` (or a new one) summarizing ``crawler_db``, in a folder of its own."""
    folder = _fresh(root, name)
    state.copy_db(crawler_db, folder / "crawl.db")
    if summary_db is not None:
        state.copy_db(summary_db, folder / "s.db")
    done = run(textpile(["summarize", "-c", "crawl.db", "-s", "s.db", "--batch-size", "10"]), folder, env=_env(folder))
    assert done.returncode == 0, (name, done.lines[-5:])
    return folder / "s.db"


def cell(value) -> str:
    return "–" if value is None else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs per target (default 20)")
    parser.add_argument("--targets", nargs="+", default=list(TARGETS), choices=TARGETS)
    parser.add_argument("--pages", type=int, default=60, help="pages of the test site (default 60)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the trial folders here (default: a temporary folder)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = args.keep or Path(tempfile.mkdtemp(prefix="textpile-faults-"))
    root.mkdir(parents=True, exist_ok=True)
    # checks remembered by textpile.store.checked stay in the trial folders
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")
    load_before = load()
    rows = []
    figures = []
    started = time.monotonic()
    with site(args.pages) as server:
        base = _fresh(root, "reference-crawl")
        crawl_config(base / "crawl.toml", server.base_url, args.pages)
        crawled = run(textpile(["crawl", "--config", "crawl.toml", "-c", "crawl.db"]), base, env=_env(base))
        assert crawled.returncode == 0, crawled.lines[-5:]
        first_crawl = base / "crawl.db"
        targets = {"crawl": lambda: Crawl(root, server.base_url, args.pages),
                   "summarize": lambda: Summarize(root, server.base_url, args.pages, first_crawl)}
        targets["pipeline"] = lambda: Pipeline(root, server.base_url, args.pages)
        if {"summarize-update", "publish"} & set(args.targets):
            second = second_crawl(root, server, args.pages, first_crawl)
            state_a = summarized(root, "first-summary", first_crawl)
            state_b = summarized(root, "second-summary", second, state_a)
            targets["summarize-update"] = lambda: SummarizeUpdate(root, server.base_url, args.pages, second, state_a)
            targets["publish"] = lambda: Publish(root, server.base_url, args.pages, state_a, state_b,
                                                 {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]})
        for name in args.targets:
            target = targets[name]()
            if isinstance(target, Publish):
                counts = target.setup(root / "publish-setup")
                figures.append(f"publish: state A {len(target.state_a)} pages ({counts['A']} searchable pages), "
                               f"state B {counts['B']} searchable pages")
            folder = _fresh(root, f"{name}-reference")
            target.prepare(folder)
            reference = target.reference(folder, _env(folder))
            assert reference.returncode == 0, (name, reference.lines[-5:], reference.stdout[-500:])
            reference_state = target.snapshot(folder)
            tally = Tally()
            if isinstance(target, Publish):
                tally.reader(target.reference_reader, f"{name}-reference")
                written = reference.stdout.split()
                figures.append(f"publish: the reference publish wrote {written[0]} of {written[1]} pages; state B "
                               f"{'equals' if target.state_b == state.page_hashes(state_b) else 'DIFFERS FROM'} "
                               "the working database page by page")
            for number, trigger in enumerate(target.plan(reference, args.kills, rng), 1):
                try:
                    trial(target, trigger, reference_state, tally, root, number)
                except Exception as exc:  # a trial the harness could not judge is counted and named, not fatal
                    tally.unjudged += 1
                    tally.notes.append(f"{name}-{number:02d}: the harness could not judge this trial: "
                                       f"{type(exc).__name__}: {exc}")
                print(f"{name} {number}/{args.kills}: killed at {trigger.stage}", file=sys.stderr, flush=True)
            rows.append((name, tally, reference.seconds))
    print(f"\nFault harness: {args.pages}-page site, seed {args.seed}, {time.monotonic() - started:.0f} s; "
          f"load average before {load_before}, after {load()}; trial folders: {root}\n")
    for figure in figures:
        print(f"- {figure}")
    print("\n| target | trials | kills by stage | corrupt DBs | lost rows | resume completed | stuck runs | "
          "leftovers | final state equal | index equal to a rebuild | after the kill | reader errors (rounds) |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for name, tally, seconds in rows:
        stages = ", ".join(f"{stage} {count}" for stage, count in tally.stages.items())
        index = "–" if tally.index_equal is None else f"{tally.index_equal}/{tally.trials}"
        after = ", ".join(f"{k} {v}" for k, v in sorted(tally.after_kill.items())) or "–"
        reader = ", ".join(f"{kind} {errors} ({rounds})" for kind, (rounds, errors) in tally.readers.items()) or "–"
        trials = f"{tally.trials} ({tally.unjudged} not judged)" if tally.unjudged else str(tally.trials)
        print(f"| {name} (uninterrupted {seconds:.1f} s) | {trials} | {stages} | {tally.corrupt} | {tally.lost} "
              f"| {tally.resumed}/{tally.trials} | {tally.stuck} | {tally.leftovers} | {tally.equal}/{tally.trials} "
              f"| {index} | {after} | {reader} |")
    for name, tally, _ in rows:
        if tally.after_kill_by_stage:
            print(f"\n{name}, the state the kill left by the stage it landed in:\n")
            print("| stage | " + " | ".join(sorted(tally.after_kill)) + " |")
            print("| --- |" + " ---: |" * len(tally.after_kill))
            for stage in tally.stages:
                print(f"| {stage} | " + " | ".join(str(tally.after_kill_by_stage[(stage, left)])
                                                  for left in sorted(tally.after_kill)) + " |")
    notes = [note for _, tally, _ in rows for note in tally.notes]
    if notes:
        print("\nNotes:")
        for note in notes:
            print(f"- {note}")
    if args.keep is None and not notes:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
