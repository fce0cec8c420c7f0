"""The files ``textpile serve`` and ``textpile search`` read their settings from, each a
TOML file checked before anything is searched or served: the ranking rules
(``--ranking-rules``), the synonym table (``--synonyms``) and the template
configuration (``-e/--extra-config``). A bad file is a :class:`ConfigError` naming it and
the entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textpile.errors import ConfigError
from textpile.toml_file import read_toml

if TYPE_CHECKING:
    from textpile.search.synonyms import Synonyms


def _read_toml_setting(path, key: str, expected: str, what: str) -> object:
    """The value of ``key`` in the TOML file ``path`` (None when the file has none), a file
    holding no other key.

    Raises:
        ConfigError: the file cannot be read, is no TOML or has another key (named, with
            ``expected``, how the key is written); ``what`` names the file's content.
    """
    data = read_toml(path, what)
    unknown = sorted(set(data) - {key})
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (expected {expected})")
    return data.get(key)


def read_ranking_rules(path) -> list[dict]:
    """The ``[[ranking_rules]]`` of the TOML file ``path``, checked
    (:func:`textpile.web.settings.compile_ranking_rules`); a file without any gives none.

    Raises:
        ConfigError: the file cannot be read, is no TOML, has keys other than
            ``ranking_rules``, or a rule is bad (the message names the file and the key).
    """
    from textpile.web.settings import compile_ranking_rules

    rules = _read_toml_setting(path, "ranking_rules", "[[ranking_rules]]", "file of ranking rules") or []
    try:
        compile_ranking_rules(rules)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return rules


def read_synonyms(path) -> Synonyms:
    """The synonym table of the TOML file ``path`` (``synonyms = [["k8s", "kubernetes"],
    ...]``), checked (:func:`textpile.search.synonyms.synonym_table`); a file without the
    key gives the empty table.

    Raises:
        ConfigError: the file cannot be read, is no TOML, has keys other than
            ``synonyms``, or the table is bad (the message names the file and the entry:
            ``synonyms.toml: synonyms[1]: ...``).
    """
    from textpile.search.synonyms import NO_SYNONYMS, synonym_table

    groups = _read_toml_setting(path, "synonyms", "synonyms = [[...], ...]", "synonym table")
    return NO_SYNONYMS if groups is None else synonym_table(groups, f"{path}: synonyms")


def read_extra_config(path, template_location) -> dict | None:
    """The template configuration of ``serve -e/--extra-config``, as unobtanium-viewer
    reads it (unobtanium-documentation.txt, "unobtanium-viewer": the template
    configuration file, its content depending on the template; default ``extra.toml``
    inside the template location): the TOML file ``path``, else
    ``template_location/extra.toml`` when that exists, else None.

    Raises:
        ConfigError: ``path`` (or the default file) cannot be read or is no TOML; the
            message names the file.
    """
    from pathlib import Path

    if path is None:
        if template_location is None or not (Path(template_location) / "extra.toml").is_file():
            return None
        path = Path(template_location) / "extra.toml"
    return read_toml(path, "template configuration (-e/--extra-config)")
