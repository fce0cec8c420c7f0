"""`textpile demo`: the main job on the embedded default, end to end, then search it.

Starts Python's documentation server (pydoc) on 127.0.0.1, crawls it with the shipped
demo configuration through the Dagster pipeline (:func:`textpile.cli.pipeline.execute_pipeline`),
publishes the index, prints three example queries with their first results, then serves
the search frontend until Ctrl+C. Running it again reuses the data folder: the crawl
continues where it stopped, and pages are recrawled once the recrawl interval is over.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from textpile.cli.crawl import whole_number
from textpile.crawl.policy.bounds import MAX_COMMANDS_PER_RUN
from textpile.demo import DEFAULT_PORT, PydocServer, check_port_free, write_demo_config
from textpile.errors import ConfigError

#: The largest TCP port number.
MAX_PORT = 65535

#: Where the demo serves its search page: beside pydoc's port, away from `dagster dev`'s 3000.
DEMO_LISTEN_ON = "127.0.0.1:7465"

#: Queries shown after the demo crawl; each finds pages of the standard library docs.
EXAMPLE_QUERIES = ("json decoder", '"temporary directory"', "csv writer")


def register(subparsers) -> None:
    """Add the ``demo`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "demo",
        help="crawl, index and serve the local Python documentation (no internet needed)",
        description="Start `python -m pydoc` on 127.0.0.1, run the pipeline on it with the shipped "
        "demo configuration, print example queries, and serve the search page until Ctrl+C.",
    )
    p.add_argument("--data-dir", type=Path, default=Path("data/demo"),
                   help="folder for the databases and the Dagster instance (default data/demo)")
    # Checked as they are parsed (exit 2 naming the option), before any work starts.
    p.add_argument("--port", type=whole_number(MAX_PORT, minimum=1), default=DEFAULT_PORT,
                   help=f"port for the pydoc server (default {DEFAULT_PORT}; another port is another site)")
    p.add_argument("-m", "--max-commands", type=whole_number(MAX_COMMANDS_PER_RUN), metavar="N",
                   help="requests in this run (default: the configuration's 400)")
    p.add_argument("-l", "--listen-on", default=DEMO_LISTEN_ON,
                   help=f"search frontend address (default {DEMO_LISTEN_ON}; `dagster dev` takes 3000)")
    p.add_argument("--no-serve", action="store_true", help="stop after the example queries")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it is below it (for copyable commands)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _command_prefix(name: str = "textpile") -> str:
    """How to type the command ``name`` (a script of this environment) here: plain when it
    is on PATH, else the venv's script."""
    import shutil

    found = shutil.which(name)
    script = Path(sys.executable).with_name(name)
    if found and Path(found).resolve() == script.resolve():
        return name
    return _shown_path(script) if script.exists() else name


def print_examples(published_db: Path, queries: tuple[str, ...] = EXAMPLE_QUERIES) -> int:
    """Print each query as a command to copy, with its first result; return how many found something."""
    import shlex

    from textpile.search.service import search_pages
    from textpile.store.database import connect

    found = 0
    # the counts and first results printed are keyword mode's: the command says so, so that it
    # prints them again (the default mode, hybrid, adds the pages nearest in meaning)
    prefix = f"{_command_prefix()} search --mode keyword -s {shlex.quote(_shown_path(published_db))}"
    conn = connect(published_db, read_only=True)
    try:
        for query in queries:
            results = search_pages(conn, query, mode="keyword", per_page=1)
            print(f"  {prefix} {shlex.quote(query)}")
            if results.results:
                found += 1
                top = results.results[0]
                noun = "result" if results.total == 1 and not results.total_is_lower_bound else "results"
                print(f"      {results.total_label} {noun}, first: {top.title} <{top.url}>")
            else:
                print(f"      no results ({results.message or 'nothing matched'})")
    finally:
        conn.close()
    return found


def dagster_dev_command(data_dir: Path, config: Path) -> str:
    """The ``dagster dev`` command that opens the demo's Dagster instance and data
    (DAGSTER_HOME absolute: Dagster refuses a relative one)."""
    import shlex

    home = shlex.quote(str((data_dir / "dagster_home").absolute()))
    return (f"DAGSTER_HOME={home} TEXTPILE_DATA_DIR={shlex.quote(_shown_path(data_dir))} "
            f"TEXTPILE_CONFIG={shlex.quote(_shown_path(config))} {_command_prefix('dagster')} dev "
            "-m textpile_dagster.definitions")


def run(args: argparse.Namespace) -> int:
    """Run the demo; return the exit status (0, or 130 after Ctrl+C while crawling)."""
    from textpile.cli import main
    from textpile.cli.pipeline import execute_pipeline, print_report

    data_dir = args.data_dir.absolute()
    # Fail now, not after a long crawl, when pydoc's port or the search page's address is taken.
    check_port_free(args.port)
    if not args.no_serve:
        from textpile.web.app import bind_listen_socket, parse_listen_on

        host, port = parse_listen_on(args.listen_on)
        if port == args.port and host in ("127.0.0.1", "0.0.0.0", "localhost"):
            raise ConfigError(f"--listen-on {args.listen_on}: that is pydoc's port (--port {args.port}); "
                              "give the search page another port")
        bind_listen_socket(args.listen_on).close()
    config = write_demo_config(data_dir, args.port)
    print(f"== starting Python's documentation server: python -S -m pydoc -p {args.port}", file=sys.stderr)
    with PydocServer(args.port) as pydoc:
        print(f"== crawling {pydoc.base_url} with {config} through the Dagster pipeline", file=sys.stderr)
        # Its own Dagster instance, whatever DAGSTER_HOME says (the command below opens it).
        outcome = execute_pipeline(config, data_dir, max_commands=args.max_commands,
                                   dagster_home=data_dir / "dagster_home", progress=not args.no_progress)
        print_report(outcome)
        published = Path(outcome.settings.published_db)
        print("\nThree queries to try:")
        print_examples(published)
        print(f"\nThe Dagster UI over the same runs (http://127.0.0.1:3000/):\n  {dagster_dev_command(data_dir, config)}")
        if args.no_serve:
            return 0
        host_port = args.listen_on
        print(f"\nSearch page: http://{host_port}/   JSON: http://{host_port}/search?format=json&search=json+decoder")
        print(f"SQL exploration: http://{host_port}/{published.stem}   (Ctrl+C stops the demo)\n", flush=True)
        return main(["serve", "--summary-db", str(published), "--listen-on", host_port])
