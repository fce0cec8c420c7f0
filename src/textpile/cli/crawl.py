"""``textpile crawl``: run the crawl loop for a crawl configuration.

Source: unobtanium-documentation.txt, page "unobtanium-crawler", section ``crawl`` (the
options), page "Crawler crawl configuration" (what they override).
"""

from __future__ import annotations

import argparse
import atexit
import re
import signal
import sys
import threading

from textpile.cli import EXIT_INTERRUPTED, EXIT_OK
from textpile.crawl.policy.bounds import MAX_COMMANDS_PER_RUN, MAX_DEFAULT_DELAY_MS, MAX_DEFAULT_DELAY_WORDS
from textpile.errors import TextpileError


def whole_number(maximum: int, unit: str = "", *, minimum: int = 0):
    """An argparse ``type``: a whole number (ASCII digits) from ``minimum`` to ``maximum``.

    Bad values give argparse's usage error (exit 2) naming the option, e.g.
    "argument -m/--max-commands: expected a whole number from 0 to 1000000000, got '²'".
    """
    def convert(text: str) -> int:
        expected = f"expected a whole number from {minimum} to {maximum}{unit}"
        stripped = text.strip()
        if not re.fullmatch(r"\+?[0-9]+", stripped):
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        digits = stripped.lstrip("+").lstrip("0") or "0"
        if len(digits) > len(str(maximum)) or int(digits) > maximum:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r} (too large)")
        if int(digits) < minimum:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        return int(digits)

    convert.__name__ = "whole number"
    return convert


def register(subparsers) -> None:
    """Add the ``crawl`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "crawl",
        help="crawl the configured sites into a crawler database",
        description="Start the crawl loop for a crawl configuration (--config) and/or options. "
                    "Prints the statistics report on stdout; progress goes to stderr.",
    )
    p.add_argument("-c", "--database", required=True, metavar="FILE",
                   help="crawler database to store the crawl results in (created if missing)")
    p.add_argument("-u", "--user-agent", metavar="USER_AGENT",
                   help="the HTTP User-Agent (overrides user_agent); robots.txt is matched against "
                        "its part before the first space")
    p.add_argument("-w", "--worker-name", default="ant", metavar="NAME",
                   help="worker name logged to the agent table (default: ant)")
    p.add_argument("-m", "--max-commands", type=whole_number(MAX_COMMANDS_PER_RUN), metavar="N",
                   help="maximum number of crawl commands in this run (overrides max_commands_per_run)")
    p.add_argument("-d", "--default-delay", type=whole_number(MAX_DEFAULT_DELAY_MS, f" ({MAX_DEFAULT_DELAY_WORDS})"),
                   metavar="MILLISECONDS",
                   help="default wait between requests to one origin (overrides default_delay_ms)")
    p.add_argument("--schedule", action="append", metavar="URL",
                   help="a seed URL; repeatable; overrides seeds")
    p.add_argument("--config", metavar="PATH", help="crawl configuration file (TOML)")
    p.add_argument("--policy-file", action="append", default=[], metavar="PATH",
                   help="file of additional do_not_crawl / url_query_paramters policies; repeatable")
    p.add_argument("--force-recrawl", action="store_true",
                   help="schedule every known URL again, ignoring recrawl_interval")
    p.add_argument("--ignore-db-name-from-config", action="store_true",
                   help="do not check the database path against database_file")
    p.add_argument("--allow-private-addresses", action="store_true", default=None,
                   help="allow loopback, private, link-local and reserved addresses (off by default)")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.set_defaults(func=run)


def _ignore_late_interrupts() -> None:
    """At interpreter exit, ignore SIGINT: Python resets its SIGINT handler to the OS
    default while finalizing, so a Ctrl+C arriving after the work is done would kill the
    process by signal (status -2 for a subprocess caller, no message). An interrupt
    before this point raises KeyboardInterrupt, which the CLI reports as exit 130."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def run(args: argparse.Namespace) -> int:
    """Run ``textpile crawl`` with parsed ``args``; return the exit status
    (0 done, 130 interrupted; configuration errors raise ConfigError). Another crawl
    running on the same database raises TextpileError (exit 1) at once.

    Each origin whose address the SSRF filter refuses is reported once on stderr while
    the run goes on (also with --no-progress) and in the statistics report; when every
    seed origin was refused, nothing was crawled and TextpileError (exit 1) says why and
    how to allow such addresses. When no seed origin answered at all (each unreachable:
    no address, connection refused, timeout ...; or refused), TextpileError (exit 1)
    names each origin with its cause; when some answered, each unreachable origin is
    named with its cause on stderr (``textpile: warning: ...``) and the exit is 0; so is
    a run allowed 0 commands ("0 requests allowed ...: nothing crawled").
    When the database failed under the run (deleted or
    replaced, disk full, read-only, I/O error), the report is printed and TextpileError
    (exit 1) names the file, the cause and what was kept."""
    from textpile.crawl.policy.config import check_database_file, config_from_options
    from textpile.crawl.loop.report import format_report
    from textpile.crawl.loop.run import run_crawl

    atexit.unregister(_ignore_late_interrupts)
    atexit.register(_ignore_late_interrupts)

    config = config_from_options(
        args.config,
        policy_files=args.policy_file,
        user_agent=args.user_agent,
        max_commands=args.max_commands,
        default_delay_ms=args.default_delay,
        seeds=args.schedule,
        force_recrawl=args.force_recrawl,
        allow_private_addresses=args.allow_private_addresses,
    )
    check_database_file(config, args.database, ignore=args.ignore_db_name_from_config)
    report = run_crawl(config, args.database, worker_name=args.worker_name,
                       force_recrawl=args.force_recrawl, progress=not args.no_progress)
    sys.stdout.write(format_report(report))
    sys.stdout.flush()
    if report.failure is not None:
        raise TextpileError(report.failure)
    if report.interrupted:
        return EXIT_INTERRUPTED
    if report.every_origin_refused:
        raise TextpileError(report.refusal_message())
    if report.nothing_answered:
        raise TextpileError(report.unreachable_message())
    if config.max_commands_per_run == 0:
        print("textpile: warning: 0 requests allowed (max_commands_per_run = 0, or --max-commands 0): "
              "nothing crawled", file=sys.stderr)
    for line in report.unreachable_message().splitlines():
        print(f"textpile: warning: {line}", file=sys.stderr)
    return EXIT_OK
