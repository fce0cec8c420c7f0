"""`textpile pipeline`: one crawl run and everything downstream, through the Dagster definitions.

The command imports the installed Dagster layer, ``textpile_dagster.definitions`` (the
same graph ``dagster dev -m textpile_dagster.definitions`` shows; ``--definitions PATH``
loads another definitions.py instead), adds a ``crawl_runs`` partition to the Dagster
instance at ``--dagster-home``, else ``$DAGSTER_HOME`` when set, else
``<data dir>/dagster_home``, and materializes in one run, for that partition:
crawl_run, crawl_log_staging, scrape_results, summary_db, fts_index, embeddings,
published_index, with their asset checks. Dagster is imported inside the command only: the library never
imports it.

Bad input is refused before anything is created: the folder options are checked first
(``--data-dir``/``--dagster-home`` naming a file) and the ``--definitions`` path, then the
crawl configuration, then the definitions are imported. One pipeline at a time runs on a
data directory: the command holds ``DATA_DIR/.textpile-pipeline.lock`` throughout, and a
second one refuses (or, with ``--wait``, waits for the first to finish).
"""

import argparse
from dataclasses import dataclass
import os
import signal
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from textpile.cli.pipeline_supervisor import SUPERVISED_OPTION, parse_supervisor
from textpile.errors import ConfigError, TextpileError

#: The installed module holding the textpile Dagster definitions (``build_definitions``, ``defs``).
DEFINITIONS_MODULE = "textpile_dagster.definitions"

#: The lock file, in the data directory, held by a running ``textpile pipeline``.
PIPELINE_LOCK_NAME = ".textpile-pipeline.lock"

#: The assets materialized, in this order, in the one run of the new partition
#: (``--token-index`` adds token_index before published_index).
STEPS = ("crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
         "published_index")



def register(subparsers) -> None:
    """Add the ``pipeline`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "pipeline",
        help="run a crawl run and everything downstream through the Dagster definitions",
        description="Crawl (a new crawl_runs partition), stage, scrape, integrate, index and publish, "
        "headless, recording the materializations in a Dagster instance.",
    )
    p.add_argument("--config", required=True, type=Path, help="crawl configuration TOML file")
    p.add_argument("--data-dir", type=Path, default=Path("data"),
                   help="folder for crawler.db, summary.db, staging/, published/ (default ./data)")
    p.add_argument("--policy-file", action="append", type=Path, default=[], metavar="FILE",
                   help="extra policy file (repeatable)")
    p.add_argument("-m", "--max-commands", type=int, help="override max_commands_per_run")
    p.add_argument("-d", "--default-delay", type=int, metavar="MS", help="override default_delay_ms")
    p.add_argument("--allow-private-addresses", action="store_true", default=None,
                   help="let the crawler connect to loopback/private addresses (local sites)")
    p.add_argument("--force-recrawl", action="store_true", help="crawl every candidate, due or not")
    p.add_argument("--dagster-home", type=Path,
                   help="Dagster instance folder (default: $DAGSTER_HOME when set, else DATA_DIR/dagster_home)")
    p.add_argument("--definitions", type=Path,
                   help="a Dagster definitions.py with build_definitions(settings) to run instead of the "
                   f"installed {DEFINITIONS_MODULE}")
    p.add_argument("--token-index", action="store_true",
                   help="also rebuild the experimental token index (token, token_statistics)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--wait", action="store_true",
                   help="when another textpile pipeline runs on the same data dir, wait for it to finish "
                   "instead of refusing")
    p.add_argument("--serve", action="store_true",
                   help="afterwards, serve the published index like `textpile serve` until Ctrl+C")
    p.add_argument("-l", "--listen-on", default="127.0.0.1:3000", metavar="IP:PORT",
                   help="address for --serve (default 127.0.0.1:3000, local machine only)")
    # The supervised child of `textpile pipeline` (textpile.cli.pipeline_supervisor): its supervisor.
    p.add_argument(SUPERVISED_OPTION, dest="supervised_by", type=parse_supervisor, default=None,
                   help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def dagster_home_for(data_dir: Path, option: Path | None, environ: dict | None = None) -> tuple[Path, str]:
    """The Dagster instance folder of a pipeline run, and where it came from.

    ``option`` (``--dagster-home``) wins; then ``DAGSTER_HOME`` from ``environ`` (default
    ``os.environ``) when set and not empty; else ``data_dir/dagster_home``. The second
    value names the source for messages: ``"--dagster-home"``, ``"DAGSTER_HOME"`` or
    ``"default"``.
    """
    environ = os.environ if environ is None else environ
    if option is not None:
        return Path(option), "--dagster-home"
    if environ.get("DAGSTER_HOME"):
        return Path(environ["DAGSTER_HOME"]), "DAGSTER_HOME"
    return Path(data_dir) / "dagster_home", "default"


def import_definitions_module(name: str = DEFINITIONS_MODULE):
    """Import the installed Dagster definitions module ``name``.

    Raises:
        ConfigError: it is not installed or fails to import (the message names it and
            says how to reinstall).
    """
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(f"cannot import the Dagster definitions {name} ({exc}); reinstall textpile "
                          "(pip install textpile) or give --definitions PATH") from exc


def check_definitions_path(path: Path) -> Path:
    """Return ``path`` resolved, after checking that it names an existing ``.py`` file.

    Raises:
        ConfigError: no such file, a folder, or not a ``.py`` file (the message names ``path``).
    """
    resolved = Path(path).resolve()
    if resolved.is_dir():
        raise ConfigError(f"--definitions {path}: is a folder, expected the definitions.py file")
    if not resolved.is_file():
        raise ConfigError(f"--definitions {path}: no such file")
    if resolved.suffix != ".py":
        raise ConfigError(f"--definitions {path}: not a Python file (expected a definitions.py); cannot import it")
    return resolved


def load_definitions_module(path: Path):
    """Import ``path`` (a definitions.py of your own) as a module, its folder first on
    sys.path so that modules beside it import.

    Raises:
        ConfigError: the file does not exist, is a folder, is not a ``.py`` file, fails to
            import (the message names the file and the exception), or has no
            ``build_definitions``. sys.path is left as it was on every failure.
    """
    import importlib.util
    import traceback

    given = path
    path = check_definitions_path(path)
    spec = importlib.util.spec_from_file_location("textpile_dagster_definitions", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"--definitions {given}: not a Python file (expected a definitions.py); cannot import it")
    root = str(path.parent)
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any import-time failure of user code becomes a usage error
        if added and root in sys.path:
            sys.path.remove(root)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
        where = "" if isinstance(exc, SyntaxError) or not frames else \
            f" (at {frames[-1].filename}, line {frames[-1].lineno})"
        raise ConfigError(
            f"--definitions {given}: importing it failed{where}: {type(exc).__name__}: {exc}"
        ) from exc
    if not hasattr(module, "build_definitions"):
        if added and root in sys.path:
            sys.path.remove(root)
        raise ConfigError(f"--definitions {given}: defines no build_definitions(settings); "
                          "not textpile's definitions.py")
    return module


def check_folder_option(option: str, path: Path) -> Path:
    """Return ``path`` made absolute, after checking that it can be a folder: it is one
    or does not exist yet, and its nearest existing ancestor is a folder.

    ``option`` (e.g. ``"--data-dir"``) names the input in the messages. Creates nothing.

    Raises:
        TextpileError: ``"<option> <path>: is a file, expected a folder"``, or the ancestor
            that is a file is named.
    """
    absolute = Path(path).absolute()
    if absolute.exists() and not absolute.is_dir():
        raise TextpileError(f"{option} {path}: is a file, expected a folder")
    for parent in absolute.parents:
        if parent.exists():
            if not parent.is_dir():
                raise TextpileError(f"{option} {path}: {parent} is a file, expected a folder")
            break
    return absolute


def _make_folder(option: str, path: Path) -> None:
    """``mkdir -p path``; an OSError becomes a TextpileError naming the option and path."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TextpileError(f"{option} {path}: cannot create the folder: {exc.strerror or exc}") from exc


def validate_crawl_config(
    config: Path,
    policy_files: list[Path] | tuple[Path, ...] = (),
    *,
    max_commands: int | None = None,
    default_delay_ms: int | None = None,
    allow_private_addresses: bool | None = None,
) -> None:
    """Load the crawl configuration as the ``crawl_config`` resource will (same file,
    policy files and overrides), so that a bad one is refused before anything is created.

    Raises:
        ConfigError: the file, a policy file or an override is missing or invalid.
    """
    from textpile.crawl.policy.config import apply_overrides, load_config

    loaded = load_config(Path(config).absolute(), policy_files=tuple(Path(p).absolute() for p in policy_files))
    apply_overrides(loaded, max_commands=max_commands, default_delay_ms=default_delay_ms,
                    allow_private_addresses=allow_private_addresses)


def pipeline_lock_path(data_dir: Path) -> Path:
    """The lock file a running ``textpile pipeline`` holds: ``DATA_DIR/.textpile-pipeline.lock``."""
    return Path(data_dir) / PIPELINE_LOCK_NAME


def _hold_pipeline_lock(stack: ExitStack, data_dir: Path, *, wait: bool) -> None:
    """Take the data directory's pipeline lock for the life of ``stack``.

    Raises:
        TextpileError: another pipeline holds it and ``wait`` is false.
    """
    from textpile.store.locks import exclusive_lock

    lock = pipeline_lock_path(data_dir)
    if stack.enter_context(exclusive_lock(lock, wait=False)):
        return
    message = f"another textpile pipeline is running on {data_dir} (lock {lock})"
    if not wait:
        raise TextpileError(f"{message}; wait for it to finish, or give --wait to queue behind it")
    print(f"textpile pipeline: {message}; waiting for it to finish ...", file=sys.stderr, flush=True)
    stack.enter_context(exclusive_lock(lock, wait=True))


def _steps(token_index: bool) -> tuple[str, ...]:
    if not token_index:
        return STEPS
    return (*STEPS[:-1], "token_index", STEPS[-1])


@dataclass
class PipelineOutcome:
    """What :func:`execute_pipeline` did: the partition key, per-step metadata, paths, time."""

    key: str
    outcomes: dict[str, dict[str, object]]
    settings: object  # resources.PipelineSettings
    seconds: float


def execute_pipeline(
    config: Path,
    data_dir: Path,
    *,
    policy_files: list[Path] | tuple[Path, ...] = (),
    max_commands: int | None = None,
    default_delay_ms: int | None = None,
    allow_private_addresses: bool | None = None,
    force_recrawl: bool = False,
    token_index: bool = False,
    dagster_home: Path | None = None,
    definitions: Path | None = None,
    progress: bool = True,
    wait: bool = False,
    owner=None,
) -> PipelineOutcome:
    """Run one crawl run and everything downstream through the Dagster definitions.

    First finishes what killed runs left (:mod:`textpile.cli.pipeline_resume`: stuck
    Dagster runs marked failed, unfinished crawl runs closed, their crawl log entries
    staged and scraped). Then adds a ``crawl_runs`` partition and materializes
    :data:`STEPS` for it in one recorded run (see :mod:`textpile.cli.pipeline_run`),
    printing a line per step to stderr. The
    Dagster instance is :func:`dagster_home_for`. Checks, in this order and before
    creating anything: the folder options, the definitions path, the crawl configuration;
    then imports the definitions.
    Then creates ``data_dir`` and holds its pipeline lock (:func:`pipeline_lock_path`)
    until it returns; with ``wait`` it waits for another pipeline holding it. The Dagster
    runs name ``owner`` (a ``ProcessId``; default this process) as the process running them.

    Raises:
        ConfigError: the definitions are not installed or fail to import, or the crawl
            configuration is invalid.
        TextpileError: ``data_dir``/``dagster_home`` is a file; another pipeline runs on
            ``data_dir`` (and ``wait`` is false); a step failed (the message names the
            step and the reason).
    """
    started = time.monotonic()
    data_dir = check_folder_option("--data-dir", data_dir)
    home_path, home_source = dagster_home_for(data_dir, dagster_home)
    home = check_folder_option("--dagster-home" if home_source != "DAGSTER_HOME" else "DAGSTER_HOME", home_path)
    if definitions is not None:
        check_definitions_path(definitions)
    validate_crawl_config(config, policy_files, max_commands=max_commands, default_delay_ms=default_delay_ms,
                          allow_private_addresses=allow_private_addresses)
    if definitions is not None:
        module, definitions_name = load_definitions_module(definitions), str(Path(definitions).resolve())
    else:
        module, definitions_name = import_definitions_module(), DEFINITIONS_MODULE
    with ExitStack() as stack:
        _make_folder("--data-dir", data_dir)
        _hold_pipeline_lock(stack, data_dir, wait=wait)
        return _execute_locked(module, definitions_name, config, data_dir, home, started,
                               policy_files=policy_files, max_commands=max_commands,
                               default_delay_ms=default_delay_ms,
                               allow_private_addresses=allow_private_addresses,
                               force_recrawl=force_recrawl, token_index=token_index, progress=progress,
                               owner=owner)


def _execute_locked(module, definitions_name: str, config: Path, data_dir: Path, home: Path, started: float, *,
                    policy_files, max_commands, default_delay_ms, allow_private_addresses, force_recrawl,
                    token_index, progress, owner) -> PipelineOutcome:
    """The body of :func:`execute_pipeline`, its inputs checked and the lock held."""
    from textpile.cli.pipeline_resume import resume_interrupted
    from textpile.cli.pipeline_run import open_instance, run_partition
    from textpile_dagster.assets.partitions import CRAWL_RUNS, new_crawl_run_key
    from textpile_dagster.resources import PipelineSettings

    settings = PipelineSettings(
        data_dir=data_dir,
        config_path=config.absolute(),
        policy_files=[p.absolute() for p in policy_files],
        max_commands=max_commands,
        default_delay_ms=default_delay_ms,
        allow_private_addresses=allow_private_addresses,
        force_recrawl=force_recrawl,
        show_progress=progress,
    )
    defs = module.build_definitions(settings)
    defs.resolve_all_job_defs()
    # Fail on a bad configuration before a partition is added.
    defs.resources["crawl_config"].load()
    job = defs.resolve_job_def("pipeline_job")
    _make_folder("--dagster-home", home)
    with open_instance(home) as instance:
        resume_interrupted(job, instance, settings, defs.resources["staging_area"], owner=owner)
        key = new_crawl_run_key()
        instance.add_dynamic_partitions(CRAWL_RUNS, [key])
        print(f"textpile pipeline: crawl run {key} (definitions {definitions_name}, DAGSTER_HOME {home})",
              file=sys.stderr, flush=True)
        outcomes = run_partition(job, instance, key, _steps(token_index), owner=owner)
    return PipelineOutcome(key, outcomes, settings, time.monotonic() - started)


def print_report(outcome: PipelineOutcome) -> None:
    """Print the short end report of a pipeline run to stdout."""
    key, outcomes, settings = outcome.key, outcome.outcomes, outcome.settings
    crawl, summary, fts = outcomes["crawl_run"], outcomes["summary_db"], outcomes["fts_index"]
    print(
        f"crawl run {key}: {crawl.get('total_requests', 0)} requests, {crawl.get('pages', 0)} pages crawled; "
        f"{summary.get('crawls_integrated', 0)} crawls summarized; {fts.get('rows', 0)} pages indexed; "
        f"{outcome.seconds:.1f} s"
    )
    print(f"crawler database: {settings.crawler_db}")
    print(f"summary database: {settings.summary_db}")
    print(f"published index:  {settings.published_db}")


def run(args: argparse.Namespace) -> int:
    """Run the pipeline for a new crawl-run partition; print progress and a report."""
    try:
        outcome = execute_pipeline(
            args.config, args.data_dir, policy_files=args.policy_file, max_commands=args.max_commands,
            default_delay_ms=args.default_delay, allow_private_addresses=args.allow_private_addresses,
            force_recrawl=args.force_recrawl, token_index=args.token_index, dagster_home=args.dagster_home,
            definitions=args.definitions, progress=not args.no_progress, wait=args.wait, owner=args.supervised_by,
        )
    except KeyboardInterrupt:
        if args.supervised_by is not None:
            # Stopping: the supervisor sent its one SIGINT and ends the process group in
            # time; another signal (a service manager's SIGTERM to every process) would
            # only cut the cleanup short.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise
    print_report(outcome)
    if args.serve:
        from textpile.cli import main

        # The published path is swapped atomically by later runs; `textpile serve` notices.
        return main(["serve", "--summary-db", str(outcome.settings.published_db), "--listen-on", args.listen_on])
    return 0
