"""Fault harness: random SIGKILLs over ``textpile crawl``, ``textpile summarize`` and
``textpile pipeline``, each followed by one uninterrupted run, against an uninterrupted
reference run (issue 12).

    python bench/faults [--kills 20] [--targets crawl summarize pipeline] [--pages 60] [--seed 7]

For every target the reference run's stderr timeline gives its stages; the kills are
spread over them round-robin (database creation included: the kill comes as soon as the
temporary database appears), each at a random moment inside its stage. After each kill
every database under the trial folder is checked (on a copy) with ``PRAGMA
integrity_check``; then the same command runs again and the trial is judged:

* corrupt DBs: trials where a database failed its integrity check (after the kill or
  after the resume);
* lost rows: pages of the reference missing after the resume (crawl), and crawl log
  entries without a crawl summary (summarize, pipeline);
* resume completed: the run after the kill ended with exit status 0;
* stuck runs: crawl runs without an end (crawl, pipeline) and Dagster runs still
  active (pipeline) after the resume;
* leftovers: temporary databases, lock files and work folders still there afterwards;
* final state equal: the crawler's latest page crawls (crawl) or the summary's
  generations and FTS rows (summarize, the published index for pipeline) equal the
  reference's.

Prints one table (Markdown) and the load average before and after.
"""

from __future__ import annotations

import argparse
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
from site_pages import crawl_config, site  # noqa: E402
from trials import Outcome, Trigger, run  # noqa: E402

from textpile.cli.pipeline import STEPS as PIPELINE_STEPS  # noqa: E402

#: The lines ``textpile summarize`` prints as it starts updating the search index and tidying.
INDEX_LINE = "Updating the full text index ..."
TIDY_LINE = "Tidying the summary database ..."


@dataclass
class Tally:
    """The counts of one target's row."""

    trials: int = 0
    stages: Counter = field(default_factory=Counter)
    corrupt: int = 0
    lost: int = 0
    resumed: int = 0
    stuck: int = 0
    leftovers: int = 0
    equal: int = 0
    notes: list[str] = field(default_factory=list)


def windows(outcome: Outcome, marks: list[tuple[str, str, str | None]]) -> dict[str, tuple[str, float]]:
    """Stage -> (line prefix, seconds the stage lasted in ``outcome``): each mark is
    (stage, line starting it, line ending it, None: the end of the run)."""
    found = {}
    for stage, start, end in marks:
        begin = outcome.first(start)
        if begin is None:
            continue
        finish = outcome.first(end) if end is not None else None
        found[stage] = (start, max(0.0, (finish if finish is not None else outcome.seconds) - begin))
    return found


class Target:
    """One command under test: its folder layout, its command, its stages and checks."""

    name = ""

    def __init__(self, base: Path, site_url: str, pages: int) -> None:
        self.base, self.site_url, self.pages = base, site_url, pages

    def prepare(self, folder: Path) -> None:
        """Put what the command reads into ``folder``."""
        crawl_config(folder / "crawl.toml", self.site_url, self.pages)

    def command(self) -> list[str]:
        raise NotImplementedError

    def marks(self) -> list[tuple[str, str, str | None]]:
        raise NotImplementedError

    def creation_patterns(self) -> list[tuple[str, str]]:
        """(stage, glob) of the databases the command creates."""
        raise NotImplementedError

    def snapshot(self, folder: Path):
        raise NotImplementedError

    def lost(self, folder: Path, reference) -> int:
        raise NotImplementedError

    def stuck(self, folder: Path) -> int:
        raise NotImplementedError


class Crawl(Target):
    name = "crawl"

    def command(self):
        return ["crawl", "--config", "crawl.toml", "-c", "crawl.db"]

    def marks(self):
        return [("crawl", "[ file_ingested ]", "Tidying the database"),
                ("tidy", "Tidying the database", None)]

    def creation_patterns(self):
        return [("database creation", ".crawl.db.creating-*")]

    def snapshot(self, folder):
        return state.crawler_state(folder / "crawl.db")

    def lost(self, folder, reference):
        mine = self.snapshot(folder)
        return sum(1 for url, value in reference.items() if mine.get(url) != value)

    def stuck(self, folder):
        return state.unfinished_agents(folder / "crawl.db")


class Summarize(Target):
    name = "summarize"

    def __init__(self, base, site_url, pages, crawler_db: Path) -> None:
        super().__init__(base, site_url, pages)
        self.crawler_db = crawler_db

    def prepare(self, folder):
        shutil.copyfile(self.crawler_db, folder / "crawl.db")

    def command(self):
        return ["summarize", "-c", "crawl.db", "-s", "s.db", "--batch-size", "10"]

    def marks(self):
        batches = [(f"batch {k}", f"Summarizing page {k} ", f"Summarizing page {k + 1} ") for k in range(1, 40)]
        return [*batches, ("index", INDEX_LINE, "Embedding new and changed pages"),
                ("embedding", "Embedding new and changed pages", TIDY_LINE),
                ("tidy", TIDY_LINE, None)]

    def creation_patterns(self):
        return [("database creation", ".s.db.creating-*")]

    def snapshot(self, folder):
        return state.summary_state(folder / "s.db")

    def lost(self, folder, reference):
        return state.unsummarized(folder / "crawl.db", folder / "s.db")

    def stuck(self, folder):
        return 0


class Pipeline(Target):
    name = "pipeline"
    STEPS = PIPELINE_STEPS  # the steps textpile pipeline prints, in order

    def command(self):
        return ["pipeline", "--config", "crawl.toml", "--data-dir", "data", "--no-progress"]

    def marks(self):
        total = len(self.STEPS)
        return [(step, f"[{n}/{total}] {step} ...", f"[{n}/{total}] {step}: ") for n, step in enumerate(self.STEPS, 1)]

    def creation_patterns(self):
        return [("crawler.db creation", "data/.crawler.db.creating-*"),
                ("summary.db creation", "data/.summary.db.creating-*")]

    def snapshot(self, folder):
        return state.summary_state(folder / "data" / "published" / "summary.db")

    def lost(self, folder, reference):
        return state.unsummarized(folder / "data" / "crawler.db", folder / "data" / "published" / "summary.db")

    def stuck(self, folder):
        return (state.unfinished_agents(folder / "data" / "crawler.db")
                + state.active_dagster_runs(folder / "data" / "dagster_home"))


def plan(target: Target, reference: Outcome, kills: int, rng: random.Random) -> list[Trigger]:
    """``kills`` triggers spread round-robin over the target's stages, each at a random
    moment inside the stage's window in the reference run."""
    stages = [Trigger(stage, pattern=pattern) for stage, pattern in target.creation_patterns()]
    stages += [Trigger(stage, line=prefix, delay_s=length)
               for stage, (prefix, length) in windows(reference, target.marks()).items()]
    triggers = []
    for i in range(kills):
        stage = stages[i % len(stages)]
        delay = rng.uniform(0, stage.delay_s * 0.95) if stage.line else 0.0
        triggers.append(Trigger(stage.stage, stage.pattern, stage.line, delay))
    return triggers


#: How often a trial is started again, with half the delay, when the process ended
#: before its kill came (the stage was shorter than in the reference run).
RETRIES = 3


def _killed_run(target: Target, trigger: Trigger, root: Path, number: int) -> tuple[Path, dict, Outcome, Trigger]:
    """Start the command in a fresh folder and kill it at ``trigger``; again with half the
    delay when it ended first. Returns the folder, its environment, the run, the trigger."""
    for attempt in range(RETRIES + 1):
        folder = root / f"{target.name}-{number:02d}"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "tmp").mkdir(parents=True)
        env = {"TMPDIR": str(folder / "tmp")}
        target.prepare(folder)
        killed = run(target.command(), folder, trigger=trigger, env=env)
        if killed.killed or attempt == RETRIES:
            return folder, env, killed, trigger
        trigger = Trigger(trigger.stage, trigger.pattern, trigger.line, trigger.delay_s / 2)
    raise AssertionError("unreachable")


def trial(target: Target, trigger: Trigger, reference_state, tally: Tally, root: Path, number: int) -> None:
    folder, env, killed, trigger = _killed_run(target, trigger, root, number)
    tally.trials += 1
    tally.stages[trigger.stage if killed.killed else f"{trigger.stage} (ended first)"] += 1
    bad = state.corrupt(folder)
    resumed = run(target.command(), folder, env=env)
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


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs per target (default 20)")
    parser.add_argument("--targets", nargs="+", default=["crawl", "summarize", "pipeline"],
                        choices=["crawl", "summarize", "pipeline"])
    parser.add_argument("--pages", type=int, default=60, help="pages of the test site (default 60)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the trial folders here (default: a temporary folder)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = args.keep or Path(tempfile.mkdtemp(prefix="textpile-faults-"))
    root.mkdir(parents=True, exist_ok=True)
    load_before = load()
    rows = []
    started = time.monotonic()
    with site(args.pages) as server:
        base = root / "reference-crawl"
        base.mkdir()
        crawl_config(base / "crawl.toml", server.base_url, args.pages)
        crawled = run(["crawl", "--config", "crawl.toml", "-c", "crawl.db"], base)
        assert crawled.returncode == 0, crawled.lines[-5:]
        targets = {"crawl": Crawl(root, server.base_url, args.pages),
                   "summarize": Summarize(root, server.base_url, args.pages, base / "crawl.db"),
                   "pipeline": Pipeline(root, server.base_url, args.pages)}
        for name in args.targets:
            target = targets[name]
            folder = root / f"{name}-reference"
            folder.mkdir()
            (folder / "tmp").mkdir()
            target.prepare(folder)
            reference = run(target.command(), folder, env={"TMPDIR": str(folder / "tmp")})
            assert reference.returncode == 0, (name, reference.lines[-5:])
            reference_state = target.snapshot(folder)
            tally = Tally()
            for number, trigger in enumerate(plan(target, reference, args.kills, rng), 1):
                trial(target, trigger, reference_state, tally, root, number)
                print(f"{name} {number}/{args.kills}: killed at {trigger.stage}", file=sys.stderr, flush=True)
            rows.append((name, tally, reference.seconds))
    print(f"\nFault harness: {args.pages}-page site, seed {args.seed}, {time.monotonic() - started:.0f} s; "
          f"load average before {load_before}, after {load()}; trial folders: {root}\n")
    print("| target | trials | kills by stage | corrupt DBs | lost rows | resume completed | stuck runs | "
          "leftovers | final state equal |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, tally, seconds in rows:
        stages = ", ".join(f"{stage} {count}" for stage, count in tally.stages.items())
        print(f"| {name} (uninterrupted {seconds:.1f} s) | {tally.trials} | {stages} | {tally.corrupt} | {tally.lost} "
              f"| {tally.resumed}/{tally.trials} | {tally.stuck} | {tally.leftovers} | {tally.equal}/{tally.trials} |")
    notes = [note for _, tally, _ in rows for note in tally.notes]
    if notes:
        print("\nNotes:")
        for note in notes:
            print(f"- {note}")
    if args.keep is None and not notes:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
