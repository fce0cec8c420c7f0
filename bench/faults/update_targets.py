"""The fault harness's targets of issue 27: a summarize that updates the index by what
changed, and a publish that writes only the changed pages into the published copy.

* ``summarize-update``: a summary database summarized from a first crawl of the test
  site, and a second crawl of the site's second version (changed words, changed links,
  pages answering 404, new pages: :func:`site_pages.second_version`);
  ``textpile summarize`` of the second crawl is killed in staging, scraping,
  integrating, the index update, embedding or the tidy, then run again. Besides the
  summarize checks, the resumed database's search index must equal the same index
  rebuilt whole (:func:`state.index_differences`).
* ``publish``: a published copy of the first summary (state A) and the working database
  at the second (state B); a process calling :func:`textpile.publish.publish` is killed
  with its page-copy child (its whole process group) before, while and after the child
  writes, then publish runs again. The published copy must be A or B exactly after the
  kill (every page's hash as a reader sees it, :func:`state.page_hashes`) and B after the
  resume; a reader process searching it all along (reader.py) must see no error and no
  answer but A's or B's.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import state
from targets import EMBED_LINE, INDEX_LINE, TIDY_LINE, Summarize, Target
from trials import FILE, LABEL, Outcome, Trigger, children, run

#: The scrape results of a staged batch, renamed into place when its scraping is done
#: (textpile.summarize.scrape_stage.scrape_batch): their presence means integrating.
SCRAPED = "tmp/textpile-summarize-*/staging/batch-*/scrape_section.parquet"

#: An interval of a reference run in one stage: (anchor: a line prefix, an event
#: (``event:`` and a trials.LABEL event) or None for the start; the anchor's occurrence,
#: the anchor's second, start, end).
Interval = tuple["str | None", int, float, float, float]
EVENT = "event:"
#: A stage interval shorter than this in the reference run (seconds) is killed at its
#: start: a delay into it would mostly miss it on a loaded machine (the staging of a
#: batch of 10 entries and the page copy's write transaction last 5-40 ms).
SHORT_S = 0.05


def plan_by_intervals(intervals: dict[str, list[Interval]], extra: list[Trigger], kills: int,
                      rng: random.Random, share: float = 0.95) -> list[Trigger]:
    """``kills`` triggers round-robin over the stages (in the order given, then the
    ``extra`` triggers), each in a random interval of its stage at a random moment of
    its first ``share`` (at its start when it lasted less than :data:`SHORT_S`), as a
    delay after the interval's anchor."""
    stages: list = [(stage, spans) for stage, spans in intervals.items() if spans] + [(t.stage, t) for t in extra]
    triggers = []
    for i in range(kills):
        stage, spans = stages[i % len(stages)]
        if isinstance(spans, Trigger):
            triggers.append(spans)
            continue
        line, occurrence, anchor, start, end = rng.choice(spans)
        moment = start if end - start < SHORT_S else rng.uniform(start, start + share * (end - start))
        delay = max(0.0, moment - anchor)
        if line is not None and line.startswith(EVENT):
            triggers.append(Trigger(stage, delay_s=delay, event=line[len(EVENT):]))
        else:
            triggers.append(Trigger(stage, line=line, delay_s=delay, occurrence=occurrence))
    return triggers


class SummarizeUpdate(Summarize):
    name = "summarize-update"
    STAGES = ("staging", "scraping", "integrating", "index update", "embedding", "tidy")

    def __init__(self, base, site_url, pages, crawler_db: Path, first_summary: Path) -> None:
        super().__init__(base, site_url, pages, crawler_db)
        self.first_summary = first_summary

    def prepare(self, folder):
        state.copy_db(self.crawler_db, folder / "crawl.db")
        state.copy_db(self.first_summary, folder / "s.db")

    def reference(self, folder, env):
        return run(self.command(), folder, env=env, watch=SCRAPED)

    def creation_patterns(self):
        return []

    def plan(self, reference: Outcome, kills: int, rng: random.Random) -> list[Trigger]:
        """Intervals from the reference's lines (``Summarizing page k`` starts batch k's
        scraping, its second ``Found`` line ends its integrating, the staging of the
        next batch lasts until the next ``Summarizing page``) and the moments each
        batch's scrape results appeared (scraping -> integrating: a kill in integrating
        counts from their appearance in the trial's run)."""
        lines = reference.lines
        starts = [(t, line) for t, line in lines if line.startswith("Summarizing page ")]
        founds = [t for t, line in lines if line.startswith("Found ")][1::2]  # "... exact duplicates."
        scraped = sorted(reference.appeared.values())
        index_at = reference.first(INDEX_LINE)
        embed_at = reference.first(EMBED_LINE)
        tidy_at = reference.first(TIDY_LINE)
        spans: dict[str, list[Interval]] = {stage: [] for stage in self.STAGES}
        first = starts[0][0] if starts else index_at
        spans["staging"].append((None, 1, 0.0, 0.0, first))
        for k, (t, line) in enumerate(starts):
            prefix = line.split("(")[0]
            if k < len(scraped) and k < len(founds):
                spans["scraping"].append((prefix, 1, t, t, scraped[k]))
                batch = SCRAPED.replace("batch-*", f"batch-{k + 1:05d}")  # numbered from 1 (staging.iter_batches)
                spans["integrating"].append((EVENT + FILE + batch, 1, scraped[k], scraped[k], founds[k]))
                following = starts[k + 1][0] if k + 1 < len(starts) else index_at
                spans["staging"].append(("Found ", 2 * (k + 1), founds[k], founds[k], following))
        after_index = embed_at if embed_at is not None else tidy_at
        if index_at is not None and after_index is not None:
            spans["index update"].append((INDEX_LINE, 1, index_at, index_at, after_index))
        if embed_at is not None and tidy_at is not None:
            spans["embedding"].append((EMBED_LINE, 1, embed_at, embed_at, tidy_at))
        if tidy_at is not None:
            spans["tidy"].append((TIDY_LINE, 1, tidy_at, tidy_at, reference.seconds))
        return plan_by_intervals(spans, [], kills, rng)

    def stage_of(self, folder, killed, trigger):
        """The stage from the last of the run's own lines before the kill and, within a
        batch, whether its scrape results were there (the process is dead: its files
        are as it left them)."""
        if not killed.killed:
            return f"{trigger.stage} (ended first)"
        last = None
        for _, line in killed.lines:
            if line.startswith(("Summarizing page ", "Found ", INDEX_LINE, EMBED_LINE, TIDY_LINE)):
                last = line
        if last is None or last.startswith("Found "):
            return "staging"
        if last.startswith("Summarizing page "):
            return "integrating" if any(folder.glob(SCRAPED)) else "scraping"
        return {INDEX_LINE: "index update", EMBED_LINE: "embedding", TIDY_LINE: "tidy"}[
            next(p for p in (INDEX_LINE, EMBED_LINE, TIDY_LINE) if last.startswith(p))]


#: The program killed: publish in a process of its own (it runs its page copy as a child).
PUBLISH_PROGRAM = ("import sys\nfrom textpile.publish import publish\n"
                   "r = publish(sys.argv[1], sys.argv[2])\n"
                   "print(r.pages_copied, r.pages, r.whole)\n")
PUBLISHED = Path("published") / "summary.db"
#: The queries the reader runs: titles of a page that changed its words, of one that
#: went away, of a new one (added by the target), and words on every page.
QUERIES = ("page 1", "page 3", "page 2", "index more")


def _locked_bytes(pid: int, inode: int) -> set[int]:
    """The bytes of the file with ``inode`` that process ``pid`` holds POSIX locks on
    (/proc/locks): SQLite's WAL locks are bytes of the -shm file (120: the writer's)."""
    held = set()
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if len(parts) < 8 or parts[1] != "POSIX" or int(parts[4]) != pid:
            continue
        if int(parts[5].split(":")[2]) == inode:
            end = parts[7]
            held.update(range(int(parts[6]), (int(end) if end != "EOF" else int(parts[6])) + 1))
    return held


#: SQLite's WAL write lock: byte 120 of the -shm file (WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK).
WAL_WRITE_LOCK_BYTE = 120


class Readers:
    """reader.py of each kind (:data:`reader.KINDS`) in a process of its own for the
    block; ``result()`` after it."""

    def __init__(self, folder: Path, expected: Path, env: dict, last_state: str) -> None:
        from reader import KINDS

        self.dir = folder / "reader"
        self.dir.mkdir(exist_ok=True)
        self.stop = self.dir / "stop"
        self.stop.unlink(missing_ok=True)
        self.last_state, self.env = last_state, env
        self.kinds = {kind: self.dir / f"{kind}.json" for kind in KINDS}
        self.procs: dict[str, subprocess.Popen] = {}
        self.args = [sys.executable, str(Path(__file__).with_name("reader.py")), str(folder / PUBLISHED),
                     str(expected)]

    def __enter__(self) -> "Readers":
        for kind, out in self.kinds.items():
            out.unlink(missing_ok=True)
            Path(f"{out}.ready").unlink(missing_ok=True)
            with open(self.dir / f"{kind}.stderr", "w") as err:
                self.procs[kind] = subprocess.Popen([*self.args, str(out), str(self.stop), kind],
                                                    env={**os.environ, **self.env}, stderr=err)
        for kind, out in self.kinds.items():
            proc = self.procs[kind]
            if not wait_for(lambda: Path(f"{out}.ready").exists() or proc.poll() is not None):
                raise RuntimeError(f"the {kind} reader did not finish its first round in 60 s")
        return self

    def __exit__(self, *exc) -> None:
        made = self.stop.with_name("stop.tmp")
        made.write_text(self.last_state)
        os.replace(made, self.stop)
        for proc in self.procs.values():
            proc.wait(timeout=300)

    def result(self) -> dict[str, tuple[int, int, list[str]]]:
        """Per kind: (rounds, errors, examples); a reader that died is one error."""
        out = {}
        for kind, path in self.kinds.items():
            proc = self.procs[kind]
            if proc.returncode != 0 or not path.exists():
                last = (self.dir / f"{kind}.stderr").read_text().strip().splitlines()[-1:]
                out[kind] = (0, 1, [f"reader exit {proc.returncode}: {last}"])
            else:
                data = json.loads(path.read_text())
                out[kind] = (data["rounds"], data["errors"], data["examples"])
        return out


class Publish(Target):
    name = "publish"
    group = True
    judges_index = True

    def __init__(self, base, site_url, pages, before: Path, after: Path, env: dict) -> None:
        super().__init__(base, site_url, pages)
        self.before, self.after, self.env = before, after, env
        self.expected = base / "publish-expected.json"
        self.state_a: tuple[int, ...] = ()
        self.state_b: tuple[int, ...] = ()
        self.queries = (*QUERIES, f"page {pages}")

    def setup(self, scratch: Path) -> dict:
        """State A's page hashes (a copy published from the first summary) and the answers
        the reader expects from A and from B; returns the figures of the two states."""
        from reader import answer
        from textpile.publish import publish
        from textpile.store.database import open_summary_db

        scratch.mkdir(parents=True, exist_ok=True)
        published = scratch / PUBLISHED
        publish(self.before, published)
        self.state_a = state.page_hashes(published)
        states = {}
        for name, db in (("A", published), ("B", self.after)):
            with tempfile.TemporaryDirectory(prefix="faults-answers-") as tmp:
                copy = state.copy_db(db, Path(tmp) / "summary.db")
                conn = open_summary_db(copy, create=False, read_only=True)
                try:
                    count, results = answer(conn, list(self.queries))
                finally:
                    conn.close()
            states[name] = {"count": count, "results": results}
        self.expected.write_text(json.dumps({"states": states}))
        return {name: s["count"] for name, s in states.items()}

    def prepare(self, folder):
        from textpile.publish import publish

        state.copy_db(self.after, folder / "work.db")
        report = publish(self.before, folder / PUBLISHED)
        assert report.whole, report

    def command(self):
        return [sys.executable, "-c", PUBLISH_PROGRAM, "work.db", str(PUBLISHED)]

    def reference(self, folder, env):
        with Readers(folder, self.expected, self.env, "B") as reader:
            outcome = run(self.command(), folder, env=env, group=True, label=self.label(folder), sample=True)
        self.reference_reader = reader.result()
        self.state_b = state.page_hashes(folder / PUBLISHED)
        return outcome

    def label(self, folder):
        """What the publish process with that pid is doing: before its page-copy child
        started or after it ended (the manifest was written again); in the child: in its
        write transaction (it holds the WAL's write lock, /proc/locks), after its commit
        (it held that lock, or the WAL grew), else hashing the pages."""
        published = folder / PUBLISHED
        wal, shm = Path(f"{published}-wal"), Path(f"{published}-shm")
        manifest = Path(f"{published}-pages")

        def identity(path: Path):
            try:
                st = path.stat()
                return st.st_ino, st.st_mtime_ns, st.st_size
            except FileNotFoundError:
                return None

        manifest_before, wal_before = identity(manifest), (identity(wal) or (0, 0, 0))[2]
        seen = set()

        def label(pid: int) -> str:
            kids = children(pid)
            if not kids:
                return ("publish: after the page copy" if identity(manifest) != manifest_before
                        else "publish: before the page copy")
            shm_id = identity(shm)
            if shm_id is not None and WAL_WRITE_LOCK_BYTE in _locked_bytes(kids[0], shm_id[0]):
                seen.add("write")
                return "page copy: write transaction"
            if "write" in seen or (identity(wal) or (0, 0, 0))[2] > wal_before:
                return "page copy: after its commit"
            return "page copy: hashing the pages"

        return label

    def plan(self, reference, kills, rng):
        """Each stage the reference's samples saw (:meth:`label`), a kill at a random
        moment of the first half of its length in the reference after the trial's run is
        first seen in it (half: the stages last as long again or half as long from one
        run to the next on a loaded machine), and a kill as soon as the published copy's
        WAL grows (the commit writing it)."""
        spans: dict[str, list[Interval]] = {}
        samples = reference.samples
        for i, (t, name) in enumerate(samples):
            end = samples[i + 1][0] if i + 1 < len(samples) else reference.seconds
            if spans.get(name) and spans[name][-1][4] == t:
                line, occurrence, anchor, start, _ = spans[name][-1]
                spans[name][-1] = (line, occurrence, anchor, start, end)
                continue
            spans.setdefault(name, []).append((EVENT + LABEL + name, 1, t, t, end))
        commit = Trigger("page copy: the WAL's first growth", grows=f"{PUBLISHED}-wal")
        return plan_by_intervals(spans, [commit], kills, rng, share=0.5)

    def stage_of(self, folder, killed, trigger):
        if not killed.killed:
            return f"{trigger.stage} (ended first)"
        return f"{killed.label} (WAL growing)" if trigger.grows else killed.label

    def during(self, folder):
        return Readers(folder, self.expected, self.env, "B")

    def after_kill(self, folder):
        hashes = state.page_hashes(folder / PUBLISHED)
        return "A" if hashes == self.state_a else "B" if hashes == self.state_b else "neither"

    def summary_db(self, folder):
        return folder / PUBLISHED

    def snapshot(self, folder):
        return state.page_hashes(folder / PUBLISHED)

    def lost(self, folder, reference):
        """Generations of the working database (state B) the published copy lacks."""
        work, published = state.summary_state(folder / "work.db"), state.summary_state(folder / PUBLISHED)
        return len(set(work[0]) - set(published[0] if published else ()))


def wait_for(condition, timeout_s: float = 60.0) -> bool:
    """Poll ``condition`` until true or ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False
