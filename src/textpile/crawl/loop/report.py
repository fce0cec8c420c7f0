"""What a crawl run shows: the live display while it runs and the end report.

Source: unobtanium-documentation.txt, page "Your first search engine" (the crawler's
output: ``[ file_ingested ] …`` lines, "Ran out of crawl commands on …", and the
``[Crawl_Statistics_Report]`` with out_of_patience_origins, total_requests and
ingested_files). textpile adds the counts per exit code, bytes and duration.
"""

from __future__ import annotations

import sys

from textpile.enums import ExitCode


def format_report(report) -> str:
    """The end report of a :class:`~textpile.crawl.loop.run.CrawlReport` as TOML-like text.

    Exit codes are listed by number; names are the seed's exit code names. The spread of
    the origins' recrawl intervals follows (table ``recrawl_intervals``, when any page has
    a recrawl history: :mod:`textpile.crawl.policy.recrawl`), then per origin the URLs
    pruned or why it was not (table ``pruning``: :mod:`textpile.crawl.crawldb.prune`). The origins
    that refused or never answered follow, each with the reason (tables
    ``refusal_reasons`` and ``unreachable_origins``, only when there are any).
    """
    lines = ["[Crawl_Statistics_Report]"]
    origins = ", ".join(f'"{o}"' for o in report.out_of_patience_origins)
    lines.append(f"out_of_patience_origins = [{origins}]")
    refused = ", ".join(_toml_string(o) for o in report.refused_origins)
    lines.append(f"refused_origins = [{refused}]")
    lines.append(f"total_requests = {report.total_requests}")
    lines.append(f"ingested_files = {report.ingested_files}")
    lines.append(f"bytes_received = {report.bytes_received}")
    lines.append(f"duration_s = {report.duration_s:.1f}")
    lines.append(f"interrupted = {'true' if report.interrupted else 'false'}")
    lines.append("")
    lines.append("[Crawl_Statistics_Report.exit_codes]")
    for name, count in sorted(report.exit_code_counts.items(), key=lambda kv: ExitCode[kv[0]].value):
        lines.append(f"{name} = {count}")
    spread = getattr(report, "recrawl_intervals", None)
    if spread:
        lines.append("")
        lines.append("[Crawl_Statistics_Report.recrawl_intervals]")
        lines += [f"{name} = {value}" for name, value in spread.items()]
    pruning = _pruning_lines(report)
    if pruning:
        lines.append("")
        lines.append("[Crawl_Statistics_Report.pruning]")
        lines += pruning
    if report.refused_origins:
        lines.append("")
        lines.append("[Crawl_Statistics_Report.refusal_reasons]")
        for origin, reason in report.refused_origins.items():
            lines.append(f"{_toml_string(origin)} = {_toml_string(reason)}")
    unreachable = report.unreachable_origins
    if unreachable:
        lines.append("")
        lines.append("[Crawl_Statistics_Report.unreachable_origins]")
        for origin, cause in unreachable.items():
            lines.append(f"{_toml_string(origin)} = {_toml_string(cause)}")
    return "\n".join(lines) + "\n"


def _pruning_lines(report) -> list[str]:
    """The lines of the report's ``pruning`` table: each origin that had URLs pruned, with
    their number, and each that was not pruned, with why, unless the report says so
    already (out of patience, refused, unreachable)."""
    pruned, not_pruned = getattr(report, "pruned", {}), getattr(report, "not_pruned", {})
    said = {*report.out_of_patience_origins, *report.refused_origins, *report.unreachable_origins}
    lines = []
    for origin in report.origins:
        if pruned.get(origin):
            lines.append(f"{_toml_string(origin)} = {_toml_string(f'{len(pruned[origin])} URL(s) pruned')}")
        elif origin in not_pruned and origin not in said:
            lines.append(f"{_toml_string(origin)} = {_toml_string('not pruned: ' + not_pruned[origin])}")
    return lines


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class CrawlDisplay:
    """A progress display on stderr. On a terminal, a rich bar of commands used (out of
    the run's budget), the number of requests and the exit code counts, with one line
    per crawl log entry above it. Elsewhere (a log file, cron, a pipe) the same lines per
    entry, never wrapped, and every :data:`~textpile.progress.PLAIN_INTERVAL_S` seconds a
    line ``Crawling: 250/400 requests (30 s)`` (commands used out of the run's budget, as
    the bar; :class:`~textpile.progress.PlainProgress`), plus one at the end. When
    ``enabled`` is false every method does nothing, except :meth:`warn`, which still
    writes to stderr unless ``warnings`` is false.

    Use as a context manager.
    """

    def __init__(self, *, enabled: bool, total_commands: int, warnings: bool = True) -> None:
        self.enabled = enabled
        self.warnings = warnings
        self.total = total_commands
        self.requests = 0
        self.counts: dict[str, int] = {}
        self._progress = None
        self._task = None
        self._plain = None

    def __enter__(self) -> "CrawlDisplay":
        if self.enabled and not getattr(sys.stderr, "isatty", lambda: False)():
            from textpile.progress import PlainProgress

            self._plain = PlainProgress("Crawling", self.total or None, unit="requests").start()
        elif self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=Console(file=sys.stderr), transient=False)
            self._progress.__enter__()
            self._task = self._progress.add_task("crawling", total=self.total or None)
        return self

    def __exit__(self, *exc) -> None:
        if self._plain is not None:
            self._plain.stop()
            self._plain = None
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None

    def _describe(self) -> str:
        top = sorted(self.counts.items(), key=lambda kv: -kv[1])[:4]
        codes = " ".join(f"{name}={count}" for name, count in top)
        return f"requests={self.requests} {codes}".strip()

    def request(self) -> None:
        """Count one request sent."""
        self.requests += 1
        if self._progress is not None:
            self._progress.update(self._task, description=self._describe())

    def entry(self, code: ExitCode, url: str, *, robots: bool = False) -> None:
        """Show a written crawl log entry (``robots``: a robots.txt fetch)."""
        self.counts[code.name] = self.counts.get(code.name, 0) + 1
        advance = 0 if code in (ExitCode.blocked_by_robots_txt, ExitCode.blocked_url_by_local_policy) else 1
        line = f"fetched robots.txt: [ {code.name} ] {url}" if robots else f"[ {code.name} ] {url}"
        if self._plain is not None:
            self._plain.say(line)
            self._plain.advance(advance)
        elif self._progress is not None:
            self._progress.update(self._task, advance=advance, description=self._describe())
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def warn(self, text: str) -> None:
        """Show a warning on stderr, above the display when there is one, and also when
        the display is off unless ``warnings`` was turned off too."""
        if self._plain is not None:
            self._plain.say(text)
        elif self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        elif self.warnings:
            print(text, file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        """Show a message about the run (an origin finished, out of commands …)."""
        if self._plain is not None:
            self._plain.say(text)
        elif self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        elif self.enabled:
            print(text, file=sys.stderr)
