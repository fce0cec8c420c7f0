"""The summarizer's stages, each reading only what the previous one wrote.

crawler DB --stage_crawl_log--> staging Parquet --scrape_staged--> scrape-result Parquet
--integrate_staged--> summary DB --update_search_index--> FTS5 and search index (by what
changed, :mod:`textpile.index`) --embed--> page and section vectors (:mod:`textpile.semantic.embed`). :func:`summarize` runs them all in batches of
up to 1000 crawl log entries (the CLI); the Dagster assets call the stages one by one per
crawl-run partition.
Source: unobtanium-documentation.txt, pages "Summarizing", "Database Batching".
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from textpile.folders import remove_folder
from textpile.processes import remove_leftovers_of_dead
from textpile.semantic.embed import EmbedReport, embed_summary_in
from textpile.progress import Progress, progress_bar
from textpile.signals import handlers_replaced
from textpile.errors import DatabaseError, TextpileError
from textpile.index.update import IndexReport, update_index
from textpile.store.creation import SIDE_SUFFIXES
from textpile.store.changed_pages import forget as forget_changes
from textpile.store.changed_pages import checkpoint_recorded, hold_checkpoints, recorded_writes
from textpile.store.database import open_crawler_db, open_summary_db, sqlite_errors, tidy
from textpile.store.locks import refuse_when_locked
from textpile.store.watch import FileWatch
from textpile.summarize import staging
from textpile.summarize.integrate import IntegrationReport, integrate_batch
from textpile.summarize.scrape_pool import ScrapePool
from textpile.summarize.scrape_stage import count_files_to_scrape, scrape_batch


#: The name of summarize's temporary work folder, before its owner's pid
#: (``textpile-summarize-<pid>-<random>`` in the system's temporary folder).
TEMP_PREFIX = "textpile-summarize-"


@dataclass
class StageReport:
    """What :func:`stage_crawl_log` wrote: batch folders and row counts per table."""

    batches: list[Path] = field(default_factory=list)
    crawl_log_entries: int = 0
    files: int = 0
    bytes_of_text: int = 0


@dataclass
class ScrapeReport:
    """What :func:`scrape_staged` wrote."""

    files_scraped: int = 0
    links: int = 0
    noindex: int = 0
    seconds: float = 0.0
    scrape_errors: int = 0


@dataclass
class SummaryReport:
    """What a whole :func:`summarize` run did (the seed's end report, plus figures)."""

    pages_processed: int = 0
    integration: IntegrationReport = field(default_factory=IntegrationReport)
    fts_rows: int = 0
    #: What the search index update did (None when the run stopped before it).
    index: IndexReport | None = None
    seconds: float = 0.0
    interrupted: bool = False
    #: Why the run stopped early because of the summary database (its file, the cause,
    #: what was kept), or None.
    failure: str | None = None
    batches: int = 0
    stage: StageReport = field(default_factory=StageReport)
    scrape: ScrapeReport = field(default_factory=ScrapeReport)
    #: What embedding did (None when ``embeddings=False`` or the run stopped before it).
    embedding: EmbedReport | None = None


def _add_stage_counts(report: StageReport, batch_dir: Path, counts: dict[str, int]) -> None:
    report.batches.append(batch_dir)
    report.crawl_log_entries += counts["crawl_log"]
    report.files += counts["file"]
    report.bytes_of_text += counts["bytes_of_text"]


def stage_crawl_log(crawler_db: str | Path, staging_dir: str | Path, *, agent_uuid: uuid.UUID | None = None,
                    summary_db: str | Path | None = None, batch_size: int = 1000, progress: bool = True) -> StageReport:
    """Write crawl log entries (of one agent, or all) not yet in ``summary_db`` to Parquet.

    Entries are taken in time order and cut into batches of up to ``batch_size``; each
    batch becomes ``staging_dir/batch-NNNNN/`` with crawl_log, request, file, file_text and
    redirect Parquet files (zstd). Earlier ``batch-*`` folders in ``staging_dir`` are
    replaced. See :mod:`textpile.summarize.staging`.

    Raises:
        DatabaseError: ``crawler_db`` is missing or not a crawler database, or
            ``summary_db`` exists and is not a summary database.
        TextpileError: ``batch_size`` is below 1.
    """
    if summary_db is not None and Path(summary_db).exists():
        open_summary_db(summary_db, create=False, read_only=True).close()
    report = StageReport()
    with progress_bar("Staging crawl log", None, enabled=progress) as bar:
        for batch_dir, counts in staging.iter_batches(crawler_db, staging_dir, agent_uuid=agent_uuid,
                                                      summary_db=summary_db, batch_size=batch_size,
                                                      on_total=bar.update_total):
            _add_stage_counts(report, batch_dir, counts)
            bar.advance(counts["crawl_log"])
    return report


def _scrape_into(report: ScrapeReport, batch_dir: Path, bar: Progress, pool: ScrapePool) -> None:
    """Scrape one batch into ``report`` with ``pool``, advancing ``bar`` by one per file scraped."""
    started = time.monotonic()
    files, links, noindex, errors = scrape_batch(batch_dir, on_file=lambda: bar.advance(1), pool=pool)
    report.files_scraped += files
    report.links += links
    report.noindex += noindex
    report.scrape_errors += errors
    report.seconds += time.monotonic() - started


def scrape_staged(staging_dir: str | Path, *, progress: bool = True,
                  scrape_processes: int | None = None) -> ScrapeReport:
    """Scrape every staged file under ``staging_dir`` into scrape-result Parquet beside it.

    Writes ``scrape_file.parquet``, ``scrape_link.parquet`` and ``scrape_section.parquet``
    into each batch folder (replacing earlier results), scraping in ``scrape_processes``
    worker processes (None: one per CPU; 0: in this process; see
    :class:`~textpile.summarize.scrape_pool.ScrapePool`). See
    :mod:`textpile.summarize.scrape_stage`. The progress bar counts files, out of the
    number of files to scrape in every batch.

    Raises:
        TextpileError: a scraping worker process died; the batches scraped before keep
            their results.
        ValueError: ``scrape_processes`` is negative.

    One writer at a time per summary database: the run holds an exclusive lock on
    ``<summary_db>.lock`` (:func:`summary_lock_path`; the Dagster assets writing it
    hold the same one) from start to end; when another process holds it, TextpileError
    says so at once: "<summary_db>: another summarize or pipeline run is writing this
    summary database (lock <summary_db>.lock held by pid N)".
    """
    report = ScrapeReport()
    batches = staging.batch_dirs(staging_dir)
    with progress_bar("Scraping", None, enabled=progress) as bar, ScrapePool(scrape_processes) as pool:
        bar.update_total(sum(count_files_to_scrape(batch_dir) for batch_dir in batches))
        for batch_dir in batches:
            _scrape_into(report, batch_dir, bar, pool)
    return report


def integrate_staged(summary_db: str | Path, staging_dir: str | Path, *, progress: bool = True) -> IntegrationReport:
    """Integrate staged crawl logs and scrape results into the summary database.

    Each batch folder is integrated in its own transaction (in batch order); crawls
    already summarized are skipped, so running it again changes nothing. The summary
    database is created when missing. See :mod:`textpile.summarize.integrate`.

    Raises:
        DatabaseError: ``summary_db`` is not a summary database.
        TextpileError: a batch folder lacks its staged or scrape-result Parquet files.
    """
    report = IntegrationReport()
    started = time.monotonic()
    batches = staging.batch_dirs(staging_dir)
    conn = open_summary_db(summary_db)
    try:
        with progress_bar("Integrating", len(batches), enabled=progress) as bar, sqlite_errors(summary_db), \
                recorded_writes(conn, summary_db):
            for batch_dir in batches:
                report.add(integrate_batch(conn, batch_dir))
                bar.advance(1)
    finally:
        conn.close()
    report.seconds = time.monotonic() - started
    return report


def summarize(crawler_db: str | Path, summary_db: str | Path, *, work_dir: str | Path | None = None,
              batch_size: int = 1000, progress: bool = True,
              log: Callable[[str], None] | None = None, embeddings: bool = True,
              scrape_processes: int | None = None, rebuild_index: bool = False) -> SummaryReport:
    """Summarize every not yet integrated crawl log entry of ``crawler_db`` into ``summary_db``.

    Per batch of up to ``batch_size`` entries: stage to Parquet under ``work_dir`` (a
    temporary folder when None, removed afterwards; those of killed runs, whose process
    is gone, are removed first), scrape (in ``scrape_processes`` worker processes, None:
    one per CPU, 0: in this process; :class:`~textpile.summarize.scrape_pool.ScrapePool`),
    integrate (one transaction). Memory is bounded by the batch size: a batch's staged
    texts and the chunks being scraped, never the whole crawl.
    Then bring the FTS and search index up to date by what changed
    (:func:`textpile.index.update.update_index`; rebuilt whole with ``rebuild_index``),
    bring the page and section vectors up to date (unless ``embeddings`` is False;
    :func:`textpile.semantic.embed.embed_summary_in`: only new or changed searchable
    generations are embedded) and tidy the summary database
    (:func:`textpile.store.database.tidy`: no whole-file rewrite). ``log`` gets the seed's progress lines ("Summarizing page 1 ...", "Found 0
    self duplicates."). Ctrl+C while embedding keeps the vectors of the batches done.

    Ctrl+C (KeyboardInterrupt) stops after rolling back the current batch: the report
    says ``interrupted``, the FTS index is still updated from what was committed (so it
    matches the database; a second Ctrl+C stops that too), embedding and tidying are
    skipped; the next run continues (and embeds the pages not embedded yet). A kill
    loses at most the current batch's uncommitted transaction.

    When the summary database fails under the run (disk full, I/O error) or is deleted
    or replaced (checked after each batch), or the disk of the staging files is full
    (ENOSPC; the current batch's files are removed), the run stops there:
    ``report.failure`` names the file or folder, the cause and what was kept; the batches committed before stay (and, but
    for a deleted or replaced file, the FTS index is rebuilt from them when possible).

    Ctrl+C inside a DuckDB query counts as Ctrl+C too (see
    :mod:`textpile.summarize.interrupts`), and a Ctrl+C that a library swallowed still
    stops the run at the next batch boundary (run from the main thread).

    Raises:
        DatabaseError: ``crawler_db`` is missing, empty or not a crawler database, or
            ``summary_db`` is not a summary database; either is corrupt, read-only (the
            summary database) or locked, or the lock file beside it cannot be created.
            The message names the file. A summary database this call created is removed
            again when the run raises before any crawl log entry was integrated (a
            damaged crawler database), so no empty one is left; an existing one stays.
        TextpileError: ``batch_size`` is below 1, or ``work_dir`` exists and is not a
            folder, or a scraping worker process died (killed, out of memory): the
            batches integrated before are kept and the next run continues.
        ValueError: ``scrape_processes`` is negative.

    One writer at a time per summary database: the run holds an exclusive lock on
    ``<summary_db>.lock`` (:func:`summary_lock_path`; the Dagster assets writing it
    hold the same one) from start to end; when another process holds it, TextpileError
    says so at once: "<summary_db>: another summarize or pipeline run is writing this
    summary database (lock <summary_db>.lock held by pid N)".
    """
    started = time.monotonic()
    say = log or (lambda text: None)
    if batch_size < 1:
        raise TextpileError(f"batch size must be at least 1, got {batch_size}")
    if work_dir is not None and Path(work_dir).exists() and not Path(work_dir).is_dir():
        raise TextpileError(f"{work_dir}: not a folder (the work folder for the Parquet staging files)")
    open_crawler_db(crawler_db, create=False, read_only=True).close()
    created = not os.path.lexists(summary_db)
    conn = open_summary_db(summary_db)  # first: its errors name a missing folder or a wrong file
    try:
        with refuse_when_locked(summary_lock_path(summary_db), summary_db,
                                "another summarize or pipeline run is writing this summary database"):
            try:
                if rebuild_index:  # it rewrites most pages: the next publish reads them all anyway
                    forget_changes(summary_db)
                hold_checkpoints(conn, summary_db)
                report = _summarize_locked(conn, crawler_db, summary_db, started, say, work_dir=work_dir,
                                           batch_size=batch_size, progress=progress, embeddings=embeddings,
                                           scrape_processes=scrape_processes, rebuild_index=rebuild_index)
                if not conn.in_transaction:  # the pages it wrote, for the next publish
                    with sqlite_errors(summary_db):
                        checkpoint_recorded(conn, summary_db)
                return report
            except BaseException:
                # Refused (a damaged crawler database found while reading it) before the
                # first batch was integrated: the summary database this run created holds
                # nothing, so it goes. One that existed before is never removed.
                if created and _nothing_integrated(conn):
                    conn.close()
                    _remove_database(Path(summary_db))
                raise
    finally:
        conn.close()


def _nothing_integrated(conn) -> bool:
    """True when the summary database of ``conn`` has no crawl log entry integrated (no
    ``crawl_summary`` row); False also when that cannot be read (then it is kept)."""
    try:
        return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM crawl_summary)").fetchone()[0] == 1
    except sqlite3.Error:
        return False


def _remove_database(path: Path) -> None:
    """Remove the database file ``path`` and the files SQLite keeps beside it."""
    for suffix in ("", *SIDE_SUFFIXES):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def summary_lock_path(summary_db: str | Path) -> Path:
    """The lock file of a summary database's writers: ``<summary_db>.lock`` beside it
    (held by :func:`summarize` and by the Dagster assets writing it)."""
    return Path(f"{os.fspath(summary_db)}.lock")


def _summarize_locked(conn, crawler_db: str | Path, summary_db: str | Path, started: float, say, *,
                      work_dir: str | Path | None, batch_size: int, progress: bool, embeddings: bool,
                      scrape_processes: int | None, rebuild_index: bool = False) -> SummaryReport:
    """The body of :func:`summarize`, with the summary database open as ``conn`` and its
    lock held."""
    report = SummaryReport()
    watch = FileWatch.of(summary_db)
    gone = False  # the file was deleted or replaced under the run
    temp = None
    if work_dir is None:
        remove_leftovers_of_dead(tempfile.gettempdir(), TEMP_PREFIX)
        temp = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")
        work_dir = temp
    try:
        staging_dir = Path(work_dir) / "staging"
        try:
            with progress_bar("Summarizing", None, enabled=progress) as bar, _InterruptSeen() as interrupts, \
                    ScrapePool(scrape_processes) as pool:
                for batch_dir, counts in staging.iter_batches(crawler_db, staging_dir, summary_db=summary_db,
                                                              batch_size=batch_size, on_total=bar.update_total):
                    interrupts.check()
                    report.batches += 1
                    _add_stage_counts(report.stage, batch_dir, counts)
                    say(f"Summarizing page {report.batches} ({counts['crawl_log']} crawl log entries) ...")
                    # The bar counts crawl log entries: one per file as it is scraped, the
                    # batch's other entries (robots.txt, redirects, errors) once it is integrated.
                    scraped_before = report.scrape.files_scraped
                    _scrape_into(report.scrape, batch_dir, bar, pool)
                    try:
                        with sqlite_errors(summary_db):
                            result = integrate_batch(conn, batch_dir)
                    except DatabaseError as exc:
                        # A Ctrl+C inside a function SQLite called (the text_pile view's
                        # sqlar_uncompress, as a new Gen1 pile is read back) comes as
                        # SQLite's error about that function: it is an interruption.
                        interrupts.check()
                        report.failure = _kept(str(exc), report)
                        break
                    report.integration.add(result)
                    report.failure = watch.problem("summarize")
                    if report.failure is not None:
                        gone = True
                        break
                    say(f"Found {result.self_duplicates} self duplicates.")
                    say(f"Found {result.exact_duplicates} exact duplicates.")
                    say(f"Found {result.near_duplicates} near-duplicates.")
                    remove_folder(batch_dir)
                    bar.advance(counts["crawl_log"] - (report.scrape.files_scraped - scraped_before))
                    interrupts.check()
        except KeyboardInterrupt:
            report.interrupted = True
            say("Interrupted: the current page was rolled back; the next run continues from here.")
            say("Updating the search index with what was kept; press Ctrl+C again to stop at once "
                "(the next run updates it and embeds the new pages).")
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            # The staging files filled their disk: stop as a full summary database does,
            # and free the space the current batch took (the next run stages it again).
            for batch in staging.batch_dirs(staging_dir):
                remove_folder(batch, ignore_errors=True)
            where = exc.filename or staging_dir
            report.failure = _kept(f"{where}: no space left on device while writing the staging files "
                                   "(free some disk space)", report)
        report.pages_processed = report.integration.crawls_integrated
        report.integration.seconds = time.monotonic() - started
        if not gone:
            _finish(conn, summary_db, report, say, embeddings=embeddings, progress=progress,
                    rebuild_index=rebuild_index)
    finally:
        if temp is not None:
            remove_folder(temp, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report


def _kept(problem: str, report: SummaryReport) -> str:
    """``problem`` with what the summary database kept, for :attr:`SummaryReport.failure`."""
    return (f"{problem}; summarizing stopped: the {report.integration.crawls_integrated} crawl log entries "
            "integrated before are kept, and the next run continues from there")


def _finish(conn, summary_db, report: SummaryReport, say, *, embeddings: bool = True, progress: bool = True,
            rebuild_index: bool = False) -> None:
    """Update the FTS index, embed and, after a complete run, tidy; a database that
    fails here sets ``report.failure`` (the index then stays as it was). A Ctrl+C that
    lands inside a Python function SQLite calls (the text_pile view's sqlar_uncompress,
    while the full text index reads it) reaches here as SQLite's error about that
    function: it is an interruption (``report.interrupted``, exit 130), not a failure."""
    with _InterruptSeen() as interrupts:
        try:
            with sqlite_errors(summary_db):
                say("(Re)generating full text index ..." if rebuild_index else "Updating the full text index ...")
                report.index = update_index(conn, rebuild=rebuild_index, progress=progress)
                report.fts_rows = report.index.pages
                if embeddings and report.failure is None and not report.interrupted:  # after Ctrl+C the next run embeds
                    _embed(conn, report, say, progress)
                if not report.interrupted and report.failure is None:
                    say("Tidying the summary database ...")
                    tidy(conn)
        except DatabaseError as exc:
            if interrupts.seen:
                report.interrupted = True
                say("Interrupted while updating the search index: the next run updates it.")
            elif report.failure is None:
                report.failure = _kept(str(exc), report)


def _embed(conn, report: SummaryReport, say, progress: bool) -> None:
    """Bring the vectors up to date (committed per batch); Ctrl+C stops it, keeping them."""
    say("Embedding new and changed pages ...")
    try:
        report.embedding = embed_summary_in(conn, progress=progress)
    except KeyboardInterrupt:
        report.interrupted = True
        say("Interrupted while embedding: the pages embedded so far are kept; the next run embeds the rest.")


class _InterruptSeen:
    """Remember a Ctrl+C (SIGINT) or SIGTERM even when a library swallows its KeyboardInterrupt.

    While active (main thread only; elsewhere it does nothing), each of SIGINT and SIGTERM
    whose handler is a Python function (Python's Ctrl+C handler; the CLI's SIGTERM one,
    :class:`textpile.signals.TerminateAsInterrupt`) still runs it, raising
    KeyboardInterrupt, and also sets a flag; :meth:`check` raises KeyboardInterrupt when
    the flag is set. A native library that checks for signals and clears the error (a
    DuckDB query finishing just as Ctrl+C arrives) then still stops the run at the next
    batch boundary, and SQLite's error about a function it called that was interrupted
    is known for an interruption.
    """

    def __init__(self) -> None:
        self.seen = False
        self._replaced = handlers_replaced((signal.SIGINT, signal.SIGTERM),
                                           lambda previous: partial(self._handler, previous),
                                           python_handlers_only=True)

    def _handler(self, previous, signum, frame) -> None:
        self.seen = True
        previous(signum, frame)

    def __enter__(self) -> "_InterruptSeen":
        self._replaced.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._replaced.__exit__(*exc)

    def check(self) -> None:
        """Raise KeyboardInterrupt when SIGINT or SIGTERM arrived since :meth:`__enter__`."""
        if self.seen:
            raise KeyboardInterrupt
