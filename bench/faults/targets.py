"""The commands the fault harness kills: what each reads, its stages, its checks.

A :class:`Target` prepares a trial folder, gives the command, plans its kills from an
uninterrupted reference run (:func:`plan_by_marks`: the stderr lines that start and end
each stage), names the stage a kill landed in, and judges the folder afterwards. This
module holds ``crawl``, ``summarize`` and ``pipeline``; ``summarize-update`` and
``publish`` are in :mod:`update_targets`.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import state
from site_pages import crawl_config
from trials import Outcome, Trigger, run, textpile

from textpile.cli.pipeline import STEPS as PIPELINE_STEPS

#: The lines ``textpile summarize`` prints as it starts updating the search index,
#: embedding and tidying.
INDEX_LINE = "Updating the full text index ..."
EMBED_LINE = "Embedding new and changed pages"
TIDY_LINE = "Tidying the summary database ..."

#: A mark: (stage, line starting it, line or lines ending it (the first found), None: the end of the run).
Mark = tuple[str, str, "str | tuple[str, ...] | None"]


def windows(outcome: Outcome, marks: list[Mark]) -> dict[str, tuple[str, float]]:
    """Stage -> (line prefix, seconds the stage lasted in ``outcome``)."""
    found = {}
    for stage, start, end in marks:
        begin = outcome.first(start)
        if begin is None:
            continue
        ends = (end,) if isinstance(end, str) else end or ()
        finish = next((t for t in map(outcome.first, ends) if t is not None), outcome.seconds)
        found[stage] = (start, max(0.0, finish - begin))
    return found


class Target:
    """One command under test: its folder layout, its command, its stages and checks."""

    name = ""
    #: Kill the command's whole process group (it runs in a session of its own).
    group = False
    #: Whether the summary's search index is compared with the same index rebuilt whole.
    judges_index = False

    def __init__(self, base: Path, site_url: str, pages: int) -> None:
        self.base, self.site_url, self.pages = base, site_url, pages

    def prepare(self, folder: Path) -> None:
        """Put what the command reads into ``folder``."""
        crawl_config(folder / "crawl.toml", self.site_url, self.pages)

    def command(self) -> list[str]:
        raise NotImplementedError

    def reference(self, folder: Path, env: dict) -> Outcome:
        """The uninterrupted reference run in ``folder`` (prepared)."""
        return run(self.command(), folder, env=env, group=self.group)

    def plan(self, reference: Outcome, kills: int, rng: random.Random) -> list[Trigger]:
        return plan_by_marks(self, reference, kills, rng)

    def marks(self) -> list[Mark]:
        raise NotImplementedError

    def creation_patterns(self) -> list[tuple[str, str]]:
        """(stage, glob) of the databases the command creates."""
        return []

    def label(self, folder: Path):
        """A function of the process id naming what the command is doing, called just
        before the kill (None: the trigger's stage names it)."""
        return None

    def stage_of(self, folder: Path, killed: Outcome, trigger: Trigger) -> str:
        """The stage the kill landed in."""
        return killed.label or trigger.stage

    def during(self, folder: Path):
        """A context manager around the killed run and the resume (a reader), yielding
        an object whose ``result()`` gives (rounds, errors, examples), or None."""
        return contextlib.nullcontext()

    def after_kill(self, folder: Path) -> str | None:
        """What state the killed run left (publish: the old one or the new one), or None."""
        return None

    def summary_db(self, folder: Path) -> Path | None:
        """The summary database whose index is judged (:attr:`judges_index`)."""
        return None

    def snapshot(self, folder: Path):
        raise NotImplementedError

    def lost(self, folder: Path, reference) -> int:
        raise NotImplementedError

    def stuck(self, folder: Path) -> int:
        return 0


class Crawl(Target):
    name = "crawl"

    def command(self):
        return textpile(["crawl", "--config", "crawl.toml", "-c", "crawl.db"])

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
    judges_index = True

    def __init__(self, base, site_url, pages, crawler_db: Path) -> None:
        super().__init__(base, site_url, pages)
        self.crawler_db = crawler_db

    def prepare(self, folder):
        state.copy_db(self.crawler_db, folder / "crawl.db")

    def command(self):
        return textpile(["summarize", "-c", "crawl.db", "-s", "s.db", "--batch-size", "10"])

    def marks(self):
        batches = [(f"batch {k}", f"Summarizing page {k} ", (f"Summarizing page {k + 1} ", INDEX_LINE))
                   for k in range(1, 40)]
        return [*batches, ("index", INDEX_LINE, (EMBED_LINE, TIDY_LINE)),
                ("embedding", EMBED_LINE, TIDY_LINE),
                ("tidy", TIDY_LINE, None)]

    def creation_patterns(self):
        return [("database creation", ".s.db.creating-*")]

    def summary_db(self, folder):
        return folder / "s.db"

    def snapshot(self, folder):
        return state.summary_state(folder / "s.db")

    def lost(self, folder, reference):
        return state.unsummarized(folder / "crawl.db", folder / "s.db")


class Pipeline(Target):
    name = "pipeline"
    judges_index = True
    STEPS = PIPELINE_STEPS  # the steps textpile pipeline prints, in order

    def command(self):
        return textpile(["pipeline", "--config", "crawl.toml", "--data-dir", "data", "--no-progress"])

    def marks(self):
        total = len(self.STEPS)
        return [(step, f"[{n}/{total}] {step} ...", f"[{n}/{total}] {step}: ") for n, step in enumerate(self.STEPS, 1)]

    def creation_patterns(self):
        return [("crawler.db creation", "data/.crawler.db.creating-*"),
                ("summary.db creation", "data/.summary.db.creating-*")]

    def summary_db(self, folder):
        return folder / "data" / "published" / "summary.db"

    def snapshot(self, folder):
        return state.summary_state(folder / "data" / "published" / "summary.db")

    def lost(self, folder, reference):
        return state.unsummarized(folder / "data" / "crawler.db", folder / "data" / "published" / "summary.db")

    def stuck(self, folder):
        return (state.unfinished_agents(folder / "data" / "crawler.db")
                + state.active_dagster_runs(folder / "data" / "dagster_home"))


def plan_by_marks(target: Target, reference: Outcome, kills: int, rng: random.Random) -> list[Trigger]:
    """``kills`` triggers spread round-robin over the target's stages (database creation
    first), each at a random moment inside the stage's window in the reference run."""
    stages = [Trigger(stage, pattern=pattern) for stage, pattern in target.creation_patterns()]
    stages += [Trigger(stage, line=prefix, delay_s=length)
               for stage, (prefix, length) in windows(reference, target.marks()).items()]
    triggers = []
    for i in range(kills):
        stage = stages[i % len(stages)]
        delay = rng.uniform(0, stage.delay_s * 0.95) if stage.line else 0.0
        triggers.append(Trigger(stage.stage, stage.pattern, stage.line, delay))
    return triggers
