"""The README against the code (as sqlite-utils' tests/test_docs.py): every option of every
``textpile`` command is documented with its command, every option the README gives a
command is one of its parser's, and the configuration keys of its table are the crawl
configuration model's fields, in both directions."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from textpile.cli import build_parser
from textpile.cli.search import search_help_parser
from textpile.crawl.policy.config import CrawlConfig

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
#: An option as usages write it: ``-c``, ``--crawler-db`` (also in ``-c/--crawler-db``,
#: ``[--page N]``), never a word's inner hyphen (``URL-or-UUID``).
OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*")
#: CrawlConfig fields that are no key of the file: the file it was read from.
NOT_KEYS = {"source"}
#: Policy tables as the seed spells them (textpile reads both spellings).
SEED_SPELLING = {"url_query_parameters": "url_query_paramters"}


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its command line (``textpile``, ``textpile crawl``,
    ``textpile delete old-crawl-log-entries`` ...). ``textpile search`` reads its own
    arguments; :func:`search_help_parser` documents its options."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, command: str) -> None:
        out[command] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{command} {name}")

    walk(build_parser(), "textpile")
    out["textpile search"] = search_help_parser()
    return out


PARSERS = _parsers()


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The options a user is shown (not --help, nor a hidden one such as the supervised
    pipeline's --supervised-by, whose help is SUPPRESS)."""
    return {s for a in parser._actions if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS
            for s in a.option_strings}


def _command(words: list[str]) -> tuple[str | None, list[str]]:
    """The longest command that ``textpile`` and ``words`` begin with, and the words after it."""
    for n in range(len(words), -1, -1):
        command = " ".join(["textpile", *words[:n]])
        if command in PARSERS:
            return command, words[n:]
    return None, words


def _usages() -> list[tuple[str, str, set[str]]]:
    """``(command, where, options)`` for every usage of a command the README writes: a
    line of a code block that runs ``textpile`` (with the lines that continue it: indented,
    starting with ``[`` or ``-``), an inline code span that starts with ``textpile``, the
    options table of ``textpile crawl`` and the CLI overrides of the configuration table.
    Quoted arguments (queries) are left out."""
    found = []

    def add(text: str, where: str) -> None:
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", " ", text)
        command, rest = _command(unquoted.split()[1:])
        if command is not None:
            found.append((command, where, set(OPTION.findall(" ".join(rest)))))

    for block in re.findall(r"^```[^\n]*\n(.*?)^```", README, flags=re.M | re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            run = re.match(r"\s*(?:\S*/)?(textpile\s.*)", line)
            if run is None:
                continue
            text = run.group(1).split(" #")[0]
            for more in lines[i + 1:]:
                if not re.match(r"\s+[\[-]", more):
                    break
                text += " " + more
            add(text, f"code: {line.strip()[:60]}")
    for span in re.findall(r"`(textpile\s[^`]*)`", README):
        add(span, f"`{span[:60]}`")
    crawl_table = _table("| option | meaning |")
    found.append(("textpile crawl", "the options table of textpile crawl",
                  {o for row in crawl_table for o in OPTION.findall(row[0])}))
    found.append(("textpile crawl", "the configuration table's CLI overrides",
                  {o for row in _table("| key | meaning | CLI override |") for o in OPTION.findall(row[2])}))
    return found


def _table(header: str) -> list[list[str]]:
    """The rows (cells, stripped) of the README's table whose header line is ``header``."""
    lines = README.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


USAGES = _usages()


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_option_of_a_command_is_in_the_readme(command):
    documented = set().union(*(options for c, _, options in USAGES if c == command))
    has_subcommands = any(c.startswith(command + " ") for c in PARSERS)  # textpile debug: its subcommands are shown
    assert has_subcommands or any(c == command for c, _, _ in USAGES), f"the README never shows `{command}`"
    missing = sorted(_options(PARSERS[command]) - documented)
    assert not missing, f"`{command}` has options the README does not give it: {missing}"


@pytest.mark.parametrize(("command", "where", "options"), USAGES, ids=[f"{c} | {w}" for c, w, _ in USAGES])
def test_every_option_in_the_readme_is_its_commands(command, where, options):
    unknown = sorted(options - _options(PARSERS[command]))
    assert not unknown, f"the README gives `{command}` options it does not have ({where}): {unknown}"


def _toml_key(name: str, field) -> str:
    """The configuration file's key of the CrawlConfig field ``name``: its alias when it has
    one; a duration kept in seconds (``recrawl_interval_s``) is written as text ("4 weeks")
    under its name without the unit."""
    alias = field.validation_alias or field.alias
    if isinstance(alias, str):
        return alias
    return name.removesuffix("_s") if name.endswith("_interval_s") else name


def _policy(field) -> bool:
    """Whether the field is a list of policies (an array of tables: ``[[do_not_crawl]]``)."""
    return "Policy" in str(field.annotation)


def test_the_configuration_table_holds_every_key_and_no_other():
    fields = {n: f for n, f in CrawlConfig.model_fields.items() if n not in NOT_KEYS}
    keys = {_toml_key(n, f) for n, f in fields.items() if not _policy(f)}
    table = _table("| key | meaning | CLI override |")
    documented = {k for row in table for k in re.findall(r"`([a-z_]+)`", row[0])}
    assert sorted(documented - keys) == [], "the README's table has keys the configuration does not"
    assert sorted(keys - documented) == [], "the configuration has keys the README's table does not give"
    for name, field in fields.items():
        if _policy(field):
            assert f"[[{SEED_SPELLING.get(name, name)}]]" in README, f"the README shows no [[{name}]] table"


def test_configuration_keys_named_by_options_exist():
    keys = {_toml_key(n, f) for n, f in CrawlConfig.model_fields.items() if n not in NOT_KEYS}
    named = {k for row in _table("| option | meaning |") for k in re.findall(r"\[`([a-z_]+)`\]", row[1])}
    assert named and sorted(named - keys) == []


#: The port `dagster dev` serves its UI on without -p (Dagster's documented default).
DAGSTER_DEV_PORT = 3000


def test_the_own_sites_recipe_runs_textpile_serve_and_dagster_dev_on_different_ports():
    """Both default to port 3000: the recipe gives `dagster dev` another one, and
    `textpile serve` keeps its own default (that of unobtanium-viewer)."""
    section = README.split("## Your own sites", 1)[1].split("\n## ", 1)[0]
    default_port = int(PARSERS["textpile serve"].get_default("listen_on").rsplit(":", 1)[1])
    assert default_port == 3000
    serve_ports, dagster_ports = set(), set()
    for line in section.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:2] == ["textpile", "serve"]:
            given = [words[i + 1] for i, w in enumerate(words) if w in ("-l", "--listen-on")]
            serve_ports |= {int(g.rsplit(":", 1)[1]) for g in given} or {default_port}
        if "dagster" in words and words[words.index("dagster") + 1:][:1] == ["dev"]:
            given = [words[i + 1] for i, w in enumerate(words) if w in ("-p", "--port")]
            dagster_ports |= {int(g) for g in given} or {DAGSTER_DEV_PORT}
    assert serve_ports == {3000}
    assert dagster_ports == {3001}
    assert "http://127.0.0.1:3001/" in section and "http://127.0.0.1:3000/" in section
