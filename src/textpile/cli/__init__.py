"""The ``textpile`` command line: one subcommand per module beside this file.

Each module exposes ``register(subparsers)`` which adds its subcommand(s) and sets
``func`` to a callable taking the parsed namespace and returning an exit status.
Exit statuses: 0 success, 1 a run-time failure (database, network, a file or folder
that cannot be read or written), 2 bad usage or configuration (argparse's own code, a
number too large for an option), 130 interrupted with Ctrl+C, 143 stopped by SIGTERM. Every failure prints one
``textpile: ...`` line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys

from textpile.errors import ConfigError, TextpileError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """Return the full argument parser with every subcommand registered."""
    from textpile.cli import (archive_export, archive_import, crawl, debug, demo, discovered, maintenance, pipeline,
                              search, shards, summarize)

    from textpile import __version__

    parser = argparse.ArgumentParser(
        prog="textpile",
        description="Crawl a chosen set of websites, summarize them into a search index, search it.",
        allow_abbrev=False,  # (else a query word of textpile search such as --=x is taken for --help or --version)
    )
    parser.add_argument("--version", action="version", version=f"textpile {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (demo, pipeline, crawl, archive_import, archive_export, discovered, summarize, maintenance, debug, search,
                   shards):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    SIGTERM stops a command as Ctrl+C does (:mod:`textpile.signals`), with exit
    status 143 instead of 130."""
    from textpile.signals import EXIT_TERMINATED, TerminateAsInterrupt

    try:
        parser = build_parser()  # imports every subcommand's modules: about 0.3 s
    except KeyboardInterrupt:
        print("textpile: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args = parser.parse_args(argv)
    if argv is None and getattr(args, "supervised_by", False) is None:
        # `textpile pipeline` as a program: the pipeline runs in a supervised child
        # process, so that a stop ends all of it in time (textpile.cli.pipeline_supervisor).
        from textpile.cli.pipeline_supervisor import supervise

        return supervise(sys.argv[1:])
    with TerminateAsInterrupt() as signals:
        status = _run(args, signals)
    if signals.terminated and status == EXIT_INTERRUPTED:
        return EXIT_TERMINATED
    return status


def _run(args: argparse.Namespace, signals) -> int:
    """Run the parsed command, turning every failure into its exit status and one line
    (``signals``: the :class:`~textpile.signals.TerminateAsInterrupt` in effect)."""
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"textpile: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except TextpileError as exc:
        print(f"textpile: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        if getattr(args, "supervised_by", None) is None:  # (a supervised pipeline's supervisor says it)
            print("textpile: stopped by SIGTERM" if signals.terminated else "textpile: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`textpile search ... | head`): stop quietly, and keep
        # Python from failing again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
    except OSError as exc:
        print(f"textpile: error: {describe_os_error(exc)}", file=sys.stderr)
        return EXIT_FAILURE
    except sqlite3.Error as exc:
        # The store layer names the file for open and check failures; this is the net
        # for a failure further on (a disk filling up, a lock held too long).
        print(f"textpile: error: SQLite: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except OverflowError as exc:
        print(f"textpile: error: a number given is too large ({exc})", file=sys.stderr)
        return EXIT_USAGE


def describe_os_error(exc: OSError) -> str:
    """``"PATH: reason"`` for a file or folder problem (``"reason"`` when no path is known)."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    if exc.filename2 is not None:
        return f"{exc.filename} -> {exc.filename2}: {reason}"
    return f"{exc.filename}: {reason}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
