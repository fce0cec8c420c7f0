"""Synonyms: a small per-index table of words and phrases that mean the same (issue 29).

A table is a list of groups, each two or more words or phrases (``[["k8s", "kubernetes"],
["postgres", "postgresql"]]``). A query word or quoted phrase that is a member of a
group (compared folded: lower case, without diacritics, words as the analyzer splits
them) is read as the group's members joined with OR, as if the user had typed
``k8s OR kubernetes``: each member matches by its own analyzed terms (a phrase in a row),
and the ranking treats them as it treats any OR group. Exclusions (``-"k8s"``) stay as
typed: the semantic modes read them from the query too. The empty table
(:data:`NO_SYNONYMS`) changes nothing.

Only a whole query item is looked up: the two unquoted words ``red hat`` are two items
and do not match the group member ``red hat``; ``"red hat"`` in quotes does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from textpile.errors import ConfigError
from textpile.index.analysis import Analyzer, fold
from textpile.search.plan import Item, QueryPlan
from textpile.search.query import parse_query

#: The most groups a table may hold, and members per group (the server reads its table
#: at every search; it is meant for a site's abbreviations, not a thesaurus).
MAX_GROUPS = 1_000
MAX_MEMBERS = 20


def member_key(analyzer: Analyzer, text: str) -> str:
    """The form a group member and a query item are compared in: the words of ``text``
    (as the analyzer splits them) folded (:func:`~textpile.index.analysis.fold`), joined
    by one space; "" when ``text`` holds no word."""
    return " ".join(fold(w) for w in analyzer.words(text))


@dataclass(frozen=True)
class Synonyms:
    """A checked synonym table (:func:`synonym_table`): ``groups`` as given, and each
    member's key (:func:`member_key`) mapped to the index of its group."""

    groups: tuple[tuple[str, ...], ...] = ()
    by_key: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.groups)


#: The empty table: searches are as without synonyms.
NO_SYNONYMS = Synonyms()


def synonym_table(groups: object, where: str = "synonyms") -> Synonyms:
    """Check ``groups`` (a list of lists of strings, as read from a configuration) and
    return the table. ``where`` names the setting in error messages.

    Raises:
        ConfigError: ``groups`` is not a list of at most :data:`MAX_GROUPS` lists of 2 to
            :data:`MAX_MEMBERS` strings, a member holds no word (letters or digits), or a
            member is in two groups (or twice in one); the message names the entry
            (``synonyms[2][1]``).
    """
    if not isinstance(groups, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of groups (lists of words), got {groups!r}")
    if len(groups) > MAX_GROUPS:
        raise ConfigError(f"{where}: {len(groups)} groups; at most {MAX_GROUPS}")
    analyzer = Analyzer()
    by_key: dict[str, int] = {}
    checked: list[tuple[str, ...]] = []
    for i, group in enumerate(groups):
        if not isinstance(group, (list, tuple)) or not 2 <= len(group) <= MAX_MEMBERS:
            raise ConfigError(f"{where}[{i}]: expected a list of 2 to {MAX_MEMBERS} words or phrases, got {group!r}")
        for j, member in enumerate(group):
            if not isinstance(member, str):
                raise ConfigError(f"{where}[{i}][{j}]: expected a string, got {member!r}")
            key = member_key(analyzer, member)
            if not key:
                raise ConfigError(f"{where}[{i}][{j}]: {member!r} holds no letters or digits")
            if key in by_key:
                raise ConfigError(f"{where}[{i}][{j}]: {member!r} is already in group {by_key[key]}")
            by_key[key] = i
        checked.append(tuple(group))
    return Synonyms(tuple(checked), by_key)


def query_synonyms(synonyms: Synonyms, query: str) -> Synonyms:
    """The groups of ``synonyms`` that a positive item of ``query`` is a member of (what
    :func:`with_synonyms` reads of the table for it), as a table; ``synonyms`` itself
    when it is empty. A search over shards sends this part of its table to each shard
    (:mod:`textpile.search.shards`)."""
    if not synonyms:
        return synonyms
    analyzer = Analyzer()
    wanted = sorted({synonyms.by_key[k] for k in (member_key(analyzer, t.text) for t in parse_query(query).positive_terms)
                     if k in synonyms.by_key})
    return synonym_table([list(synonyms.groups[g]) for g in wanted]) if wanted else NO_SYNONYMS


def _expanded(item: Item, synonyms: Synonyms, analyzer: Analyzer, codes: Sequence[str | None]) -> list[Item]:
    """``item`` and, when it is a group member, the group's other members as items."""
    group = synonyms.by_key.get(member_key(analyzer, item.text))
    if group is None:
        return [item]
    out = [item]
    for member in synonyms.groups[group]:
        if member_key(analyzer, member) == member_key(analyzer, item.text):
            continue
        alternatives = tuple(analyzer.query_alternatives(member, list(codes)))
        if alternatives:
            out.append(Item(member, len(alternatives[0]) > 1, alternatives))
    return out


def with_synonyms(plan: QueryPlan, synonyms: Synonyms, analyzer: Analyzer,
                  codes: Sequence[str | None]) -> QueryPlan:
    """``plan`` with each item that is a member of a group of ``synonyms`` joined by
    the group's other members (OR: one requirement); ``plan`` itself when the table is
    empty or no item is a member."""
    if not synonyms or not any(member_key(analyzer, i.text) in synonyms.by_key
                               for i in plan.items):
        return plan

    def expand(items: list[Item]) -> list[Item]:
        kept: dict[str, Item] = {}  # by key: "k8s OR kubernetes" keeps each once
        for item in items:
            for e in _expanded(item, synonyms, analyzer, codes):
                kept.setdefault(member_key(analyzer, e.text), e)
        return list(kept.values())

    return QueryPlan([expand(requirement) for requirement in plan.requirements], list(plan.excluded),
                     list(plan.messages))
