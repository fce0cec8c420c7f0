"""The one Dagster run of ``textpile pipeline``, and its step-by-step report on stderr.

:func:`run_partition` materializes the pipeline's assets for one crawl-run partition in a
single run of ``pipeline_job`` (partitioned and unpartitioned assets together, their
asset checks included). An event listener on the instance prints ``[n/N] step ...`` when
an asset's step starts and ``[n/N] step: figures; checks k/m passed (s)`` once it and its
checks are done. Dagster is imported inside the functions only.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from textpile.errors import TextpileError
from textpile.processes import ProcessId

#: Console log level of the run: the step lines and the failure message replace Dagster's
#: own log output (whose ERROR records carry tracebacks).
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
#: Written to a Dagster home that has no dagster.yaml: telemetry off; pool limit 1 so
#: that the assets writing summary.db (pool textpile_summary_db) never run at the same
#: time, also under `dagster dev`.
DAGSTER_YAML = (
    "# written by textpile pipeline\n"
    "telemetry:\n  enabled: false\n"
    "concurrency:\n  pools:\n    default_limit: 1\n"
)

SUMMARY_LINES = {
    "crawl_run": lambda m: f"{m.get('total_requests', 0)} requests, {m.get('pages', 0)} pages, "
                           f"{m.get('bytes_received', 0)} bytes, {m.get('pages_per_s', 0)} pages/s",
    "crawl_log_staging": lambda m: f"{m.get('crawl_log_entries', 0)} crawl log entries, {m.get('files', 0)} files",
    "scrape_results": lambda m: f"{m.get('files_scraped', 0)} files scraped, {m.get('links', 0)} links",
    "summary_db": lambda m: f"{m.get('crawls_integrated', 0)} crawls integrated, "
                            f"{m.get('generations_opened', 0)} generations opened, "
                            f"{m.get('generations_closed', 0)} closed, "
                            f"{m.get('self_duplicates', 0)} self-duplicates, {m.get('exact_duplicates', 0)} exact",
    "fts_index": lambda m: f"{m.get('rows', 0)} FTS rows",
    "embeddings": lambda m: f"{m.get('pages_embedded', 0)} pages embedded, {m.get('page_vectors', 0)} page vectors",
    "token_index": lambda m: f"{m.get('tokens', 0)} tokens over {m.get('text_piles', 0)} text piles",
    "published_index": lambda m: f"{m.get('path', '')} ({m.get('bytes', 0)} bytes)",
}


@contextmanager
def open_instance(home: Path):
    """The Dagster instance in folder ``home`` (which exists), given a dagster.yaml
    (:data:`DAGSTER_YAML`) when it has none; closed afterwards. DAGSTER_HOME is not changed."""
    from dagster import DagsterInstance

    config = Path(home) / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML, "utf-8")
    with DagsterInstance.from_config(str(home)) as instance:
        yield instance


def metadata_values(metadata) -> dict[str, object]:
    """Dagster materialization metadata as plain values (``MetadataValue.value``)."""
    return {name: getattr(value, "value", value) for name, value in metadata.items()}


class StepReport:
    """Event listener printing one line when an asset step starts and one when it is done.

    ``steps`` are the asset names in run order; the "done" line of a step is printed when
    the next asset step starts or the run ends (:meth:`finish`), so that it counts the
    step's asset checks, which Dagster runs as steps of their own right after it.
    ``outcomes`` maps each materialized asset to its metadata values.
    """

    def __init__(self, steps: tuple[str, ...], out=None) -> None:
        self.steps = steps
        self.out = out or sys.stderr
        self.outcomes: dict[str, dict[str, object]] = {}
        self._checks: dict[str, list[bool]] = {}
        self._started: dict[str, float] = {}
        self._finished: dict[str, float] = {}
        self._pending: str | None = None

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _number(self, step: str) -> str:
        return f"[{self.steps.index(step) + 1}/{len(self.steps)}]"

    def _flush(self) -> None:
        step, self._pending = self._pending, None
        if step is None:
            return
        checks = self._checks.get(step, [])
        note = f"; checks {sum(checks)}/{len(checks)} passed" if checks else ""
        seconds = self._finished[step] - self._started[step]
        self._say(f"{self._number(step)} {step}: {SUMMARY_LINES[step](self.outcomes.get(step, {}))}{note} "
                  f"({seconds:.1f} s)")

    def __call__(self, entry) -> None:
        """Handle one event log entry of the run."""
        event = entry.dagster_event
        if event is None:
            return
        kind = event.event_type_value
        step = event.step_key
        if kind == "STEP_START" and step in self.steps:
            self._flush()
            self._started[step] = time.monotonic()
            self._say(f"{self._number(step)} {step} ...")
        elif kind == "ASSET_MATERIALIZATION":
            materialization = event.event_specific_data.materialization
            self.outcomes[materialization.asset_key.to_user_string()] = metadata_values(materialization.metadata)
        elif kind == "ASSET_CHECK_EVALUATION":
            evaluation = event.event_specific_data
            self._checks.setdefault(evaluation.asset_key.to_user_string(), []).append(bool(evaluation.passed))
        elif kind == "STEP_SUCCESS" and step in self.steps:
            self._finished[step] = time.monotonic()
            self._pending = step

    def finish(self) -> None:
        """Print the line of the last step done."""
        self._flush()


def error_text(error) -> str:
    """A Dagster ``SerializableErrorInfo`` as one message: the module path of the class
    dropped (``DatabaseError: ...``), and a Dagster ``Failure`` as its description alone."""
    text = error.message.strip()
    qualified, sep, rest = text.partition(": ")
    cls_name = getattr(error, "cls_name", None)
    if sep and cls_name and (qualified == cls_name or qualified.endswith("." + cls_name)):
        return rest if cls_name == "Failure" and qualified.startswith("dagster.") else f"{cls_name}: {rest}"
    return text


def failure_message(result) -> str:
    """Why a run failed: each failed step with the library's own error, each failed check."""
    messages = []
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None and error.cause is not None:
            error = error.cause  # the library's own exception, not Dagster's wrapper
        messages.append(f"{event.step_key}: {error_text(error) if error else 'failed'}")
    for check in result.get_asset_check_evaluations():
        if not check.passed:
            messages.append(f"check {check.check_name} failed: {check.description}")
    return "; ".join(messages) or "the run failed"


#: Error classes of a step that Ctrl+C or SIGTERM stopped (textpile's assets stop cleanly
#: and re-raise KeyboardInterrupt; elsewhere Dagster raises its own).
INTERRUPTIONS = ("KeyboardInterrupt", "DagsterExecutionInterruptedError")


def interrupted_step(result) -> str | None:
    """The step of a run that Ctrl+C or SIGTERM stopped, or None when none was."""
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None:
            if getattr(error, "cls_name", None) in INTERRUPTIONS:
                return event.step_key
            error = error.cause
    return None


def run_partition(job, instance, key: str, steps: tuple[str, ...], *,
                  owner: ProcessId | None = None) -> dict[str, dict[str, object]]:
    """Materialize ``steps`` (asset names) of ``job`` for partition ``key`` in one run
    recorded in ``instance``, reporting each step on stderr; return metadata per asset.
    The run's tags name ``owner`` (default this process; the ``textpile pipeline`` process
    that supervises this one, :mod:`textpile.cli.pipeline_supervisor`), so that a run left
    STARTED by a killed pipeline is recognized and marked failed
    (``textpile_dagster.sensors.runs.process_tags``).

    Raises:
        TextpileError: the run failed; the message names the run, the failed steps and
            checks, and the steps that did not run.
        KeyboardInterrupt: Ctrl+C or SIGTERM stopped it (a line on stderr says where).
    """
    from dagster import AssetKey

    from textpile_dagster.sensors.runs import process_tags

    run_id = str(uuid.uuid4())
    report = StepReport(steps)
    instance.add_event_listener(run_id, report)
    sigterm = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    try:
        result = job.execute_in_process(
            instance=instance, partition_key=key, asset_selection=[AssetKey(s) for s in steps], run_id=run_id,
            run_config=QUIET_LOGS, raise_on_error=False,
            tags={"textpile/trigger": "textpile pipeline", **process_tags(owner)},
        )
    finally:
        if sigterm is not None:
            # Dagster leaves SIGTERM as SIGINT is when it ends (ignored in a background job).
            signal.signal(signal.SIGTERM, sigterm)
    report.finish()
    interrupted = interrupted_step(result)
    if interrupted is not None:
        print(f"textpile pipeline: interrupted during {interrupted} (run {result.run_id}); what was done is "
              "kept, and the next textpile pipeline resumes from there", file=sys.stderr, flush=True)
        raise KeyboardInterrupt
    if not result.success:
        failed = [e.step_key for e in result.get_step_failure_events()]
        missing = [s for s in steps if s not in report.outcomes and s not in failed]
        not_run = f"; not materialized: {', '.join(missing)}" if missing else ""
        what = f"{failed[0]} failed" if failed else "the run failed"
        raise TextpileError(f"{what} (run {result.run_id}): {failure_message(result)}{not_run}")
    return report.outcomes
