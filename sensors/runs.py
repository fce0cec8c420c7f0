"""Queries on the Dagster instance shared by the crawl-starting sensors and ``textpile
pipeline``: which runs are still active, which of them crawl, which were left STARTED by
a process that died.

A run that ``textpile pipeline`` executes in its own process carries
:data:`PROCESS_TAGS` (host, pid, process start time); a run that ``dagster dev`` launches
with the DefaultRunLauncher names its run worker's pid in its RUN_START event. When that
process is killed the run stays STARTED for good, and the sensors would wait for it
forever: :func:`fail_dead_runs` marks such runs failed with the reason, and frees the
concurrency pool slots that runs ended holding (:func:`free_slots_of_ended_runs`).
"""

from __future__ import annotations

from dagster import AssetKey, DagsterEventType, DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter

from textpile.processes import START_TIME_SLACK_S, ProcessId, process_alive, process_start_unix, this_process
from textpile_dagster.sensors.jobs import crawl_job

#: Tags of a run executed in the process of ``textpile pipeline``.
HOST_TAG, PID_TAG, PROCESS_STARTED_TAG = "textpile/host", "textpile/pid", "textpile/process_started"
PROCESS_TAGS = (HOST_TAG, PID_TAG, PROCESS_STARTED_TAG)

#: Run statuses of a run that has not ended.
ACTIVE_STATUSES = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
#: How many active runs are looked at (far more than textpile ever has at once).
_ACTIVE_LIMIT = 500


def active_runs(instance: DagsterInstance, job_name: str | None = None) -> list[DagsterRun]:
    """Runs queued, starting, started or canceling (of ``job_name`` when given), newest first."""
    return list(instance.get_runs(filters=RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES),
                                  limit=_ACTIVE_LIMIT))


def active_crawl_runs(instance: DagsterInstance) -> list[DagsterRun]:
    """Active runs of crawl_job, plus any other active run materializing crawl_run."""
    crawl_key = AssetKey("crawl_run")
    return [
        run for run in active_runs(instance)
        if run.job_name == crawl_job.name or (run.asset_selection is not None and crawl_key in run.asset_selection)
    ]


def process_tags(process: ProcessId | None = None) -> dict[str, str]:
    """:data:`PROCESS_TAGS` of ``process`` (default: this one), for a run executed in it."""
    process = process or this_process()
    started = "" if process.started_unix is None else f"{process.started_unix:.2f}"
    return {HOST_TAG: process.host, PID_TAG: str(process.pid), PROCESS_STARTED_TAG: started}


def _worker(instance: DagsterInstance, run: DagsterRun) -> tuple[int, float | None, float | None, str | None] | None:
    """(pid, process start, not-after time, host) of the process running ``run``: from
    :data:`PROCESS_TAGS`, or, for a run the local DefaultRunLauncher started, from its
    RUN_START event (the run worker's pid; that process began before the event). None
    when unknown (another launcher: its processes may live on other machines)."""
    tags = run.tags
    if tags.get(PID_TAG, "").isdigit():
        started = tags.get(PROCESS_STARTED_TAG) or None
        return int(tags[PID_TAG]), float(started) if started else None, None, tags.get(HOST_TAG)
    from dagster._core.launcher import DefaultRunLauncher

    if not isinstance(instance.run_launcher, DefaultRunLauncher):
        return None
    starts = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_START)
    if not starts or starts[-1].dagster_event is None or starts[-1].dagster_event.pid is None:
        return None
    return starts[-1].dagster_event.pid, None, starts[-1].timestamp, None


def dead_runs(instance: DagsterInstance) -> list[tuple[DagsterRun, str]]:
    """Active runs whose process no longer runs (on this host), each with the reason to
    give when marking it failed. The process is known from :data:`PROCESS_TAGS` (runs of
    ``textpile pipeline``) or the RUN_START event of a run the local DefaultRunLauncher
    started; a pid now held by a process that began later is another process."""
    found = []
    for run in active_runs(instance):
        if run.status in (DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED):
            continue  # not started by any process yet: the queue's and run monitoring's business
        worker = _worker(instance, run)
        if worker is None:
            continue
        pid, started, not_after, host = worker
        alive = process_alive(pid, started_unix=started, host=host)
        if alive and not_after is not None:
            began = process_start_unix(pid)
            alive = began is None or began <= not_after + START_TIME_SLACK_S
        if alive is False:
            where = f" on {host}" if host else ""
            found.append((run, f"the process that ran it (pid {pid}{where}) ended while the run was "
                               f"{run.status.value.lower()} (killed?)"))
    return found


def fail_dead_runs(instance: DagsterInstance, *, by: str) -> list[str]:
    """Mark every run of :func:`dead_runs` failed (a RUN_FAILURE event with the reason and
    ``by``, who noticed) and free the concurrency pool slots its steps held, and those of
    runs that ended holding slots (:func:`free_slots_of_ended_runs`); return one line per
    run marked or slot freed."""
    lines = []
    storage = instance.event_log_storage
    for run, reason in dead_runs(instance):
        message = f"{reason}; marked failed by {by}"
        instance.report_run_failed(run, message=message)
        if storage.supports_global_concurrency_limits:
            # Its steps' pool slots (textpile_summary_db: one at a time) would stay taken,
            # and every later summary_db step would wait for them for good.
            storage.free_concurrency_slots_for_run(run.run_id)
        lines.append(f"run {run.run_id} ({run.job_name}): {message}")
    return lines + free_slots_of_ended_runs(instance, by=by)


def free_slots_of_ended_runs(instance: DagsterInstance, *, by: str) -> list[str]:
    """Free the concurrency pool slots (and queued claims) of runs that ended, or are gone,
    while holding them: a run killed with the daemon's process group is marked failed by
    Dagster's run monitoring or by :func:`fail_dead_runs`, but its claims stayed, so every
    later step of the pool (summary_db: pool textpile_summary_db, one at a time) waited
    for them for good. Returns one line per run whose slots were freed, naming ``by``."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return []
    holders: dict[str, set[str]] = {}
    for pool, info in storage.get_concurrency_infos(sorted(storage.get_concurrency_keys())).items():
        for claim in [*info.claimed_slots, *info.pending_steps]:
            holders.setdefault(claim.run_id, set()).add(pool)
    lines = []
    for run_id, pools in sorted(holders.items()):
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            continue
        storage.free_concurrency_slots_for_run(run_id)
        state = "gone" if run is None else run.status.value
        lines.append(f"run {run_id} ({state}) ended holding the pool slot of {', '.join(sorted(pools))}; "
                     f"freed by {by}")
    return lines
