"""Criterium chains: the small boolean matching language of crawl policies.

Source: unobtanium-documentation.txt, pages "Criterium Chain", "String", "Number",
"Boolean", "Url", "Origin" and "Crawl Policy Criterium" (on "Crawler crawl configuration").

A *chain* combines criteria of one type. Its variants are ``and`` (list of chains, all
match), ``or`` (list of chains, at least one matches), ``not`` (a chain, inverted),
``always``, ``never``, ``not_match`` (a criterium, inverted) and the invisible ``match``
variant: a criterium written directly where a chain is expected matches when it matches.

TOML representation (as serde reads it for the Rust original, plus two unit spellings):

* A chain or criterium is a table with exactly one key, the variant name::

      if.url.host.equals = "osmocom.org"
      if.and = [ { url.host.equals = "osmocom.org" }, { url.path.has_prefix = "/issues" } ]
      if.not.url.scheme.equals = "https"
      if.url.port.in_list = [80, 443]
      if.url.path.length.greater_than = 200

* Variants without argument (``always``, ``never``, ``is_none``) are written in any of
  three ways, all equivalent: ``always = true``, ``always = {}``, or the bare variant name
  as a string where the chain goes (``if = "always"``, ``if.url.query = "is_none"``).
  ``false`` is refused (it reads as "not always", which it would not mean).
* Wherever a criterium takes another criterium as argument (``url``, ``host``,
  ``length``, ...) a whole chain is accepted too, so ``if.url.path.not.has_prefix = "/a"``
  works; a bare criterium is a chain through the invisible ``match`` variant, so every
  form the seed documents means exactly what it documents.
* Lists given to ``and`` / ``or`` and ``in_list`` must not be empty (an empty ``and``
  would silently match everything).

Values the URL criterium matches (page "Url" and page "URL"): ``user`` is the user name,
"" when absent (never None); ``password``, ``query`` and ``fragment`` are None when
absent (a bare ``?`` is the empty query ""); ``path`` is the normalized path ("" never
None); ``scheme``, ``host`` (punycode, IPv6 without brackets) and ``port`` (default port
filled in, as for origins) are the origin's. String criteria other than ``is_none`` never
match None; ``length`` of None hands None to its number criterium (so only ``is_none``
matches there). Number criteria other than ``is_none`` never match None.

Errors are raised as :class:`CriteriumError` naming the key path
(``do_not_crawl[0].if.url.path.has_prefx``) and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from textpile.errors import ConfigError
from textpile.store.urls import ParsedUrl, UrlError, parse_url

#: Variant names of the chain itself.
CHAIN_VARIANTS = ("and", "or", "not", "always", "never", "not_match")
_UNIT_CHAIN_VARIANTS = ("always", "never")


class CriteriumError(ConfigError):
    """A criterium chain in a configuration is invalid.

    ``key_path`` is the dotted path of the offending key (``do_not_crawl[0].if.and[1].url``),
    ``problem`` what is wrong and what was expected. ``str()`` gives both.
    """

    def __init__(self, key_path: str, problem: str) -> None:
        super().__init__(f"{key_path}: {problem}")
        self.key_path = key_path
        self.problem = problem


class Criterium(Protocol):
    """Anything with ``matches(value) -> bool``; chains and criteria alike."""

    def matches(self, value: Any) -> bool:  # pragma: no cover - protocol
        ...


# --------------------------------------------------------------------------- chains


@dataclass(frozen=True)
class And:
    """Matches when every chain matches."""

    chains: tuple[Criterium, ...]

    def matches(self, value: Any) -> bool:
        return all(chain.matches(value) for chain in self.chains)


@dataclass(frozen=True)
class Or:
    """Matches when at least one chain matches."""

    chains: tuple[Criterium, ...]

    def matches(self, value: Any) -> bool:
        return any(chain.matches(value) for chain in self.chains)


@dataclass(frozen=True)
class Not:
    """Matches when the contained chain does not (chain variants ``not`` and ``not_match``)."""

    inner: Criterium

    def matches(self, value: Any) -> bool:
        return not self.inner.matches(value)


@dataclass(frozen=True)
class Always:
    """Always matches."""

    def matches(self, value: Any) -> bool:
        return True


@dataclass(frozen=True)
class Never:
    """Never matches."""

    def matches(self, value: Any) -> bool:
        return False


# --------------------------------------------------------------------------- leaves


@dataclass(frozen=True)
class StringTest:
    """A String criterium: ``op`` in equals, has_prefix, has_suffix, contains, is_none."""

    op: str
    arg: str | None = None

    def matches(self, value: str | None) -> bool:
        if self.op == "is_none":
            return value is None
        if value is None:
            return False
        if self.op == "equals":
            return value == self.arg
        if self.op == "has_prefix":
            return value.startswith(self.arg)
        if self.op == "has_suffix":
            return value.endswith(self.arg)
        return self.arg in value  # contains


@dataclass(frozen=True)
class StringLength:
    """The String criterium ``length``: the length in code points against a number chain."""

    number: Criterium

    def matches(self, value: str | None) -> bool:
        return self.number.matches(None if value is None else len(value))


@dataclass(frozen=True)
class NumberTest:
    """A Number criterium: equals, less_than(_or_equal), greater_than(_or_equal), in_list, is_none."""

    op: str
    arg: Any = None

    def matches(self, value: int | float | None) -> bool:
        if self.op == "is_none":
            return value is None
        if value is None:
            return False
        if self.op == "equals":
            return value == self.arg
        if self.op == "less_than":
            return value < self.arg
        if self.op == "less_than_or_equal":
            return value <= self.arg
        if self.op == "greater_than":
            return value > self.arg
        if self.op == "greater_than_or_equal":
            return value >= self.arg
        return value in self.arg  # in_list (a tuple)


@dataclass(frozen=True)
class BooleanTest:
    """A Boolean criterium: ``equals`` (a bool) or ``is_none``."""

    op: str
    arg: bool | None = None

    def matches(self, value: bool | None) -> bool:
        if self.op == "is_none":
            return value is None
        return value is not None and value == self.arg


def _url_part(part: str, url: ParsedUrl) -> Any:
    if part == "user":
        return url.username or ""
    if part == "path":
        return url.path or ""
    return getattr(url, part)  # password, query, fragment, scheme, host, port


@dataclass(frozen=True)
class UrlPart:
    """A Url or Origin criterium on one component: ``part`` in user, password, path, query,
    fragment, scheme, host, port; ``chain`` matches that component's value."""

    part: str
    chain: Criterium

    def matches(self, url: ParsedUrl) -> bool:
        return self.chain.matches(_url_part(self.part, url))


@dataclass(frozen=True)
class UrlEquals:
    """The Url criterium ``equals`` (whole URL, fragment included) or ``same_document_as``
    (``ignore_fragment``: the URL without its fragment). ``url`` is normalized by parse_url."""

    url: ParsedUrl
    ignore_fragment: bool

    def matches(self, url: ParsedUrl) -> bool:
        if self.ignore_fragment:
            return url.str_url == self.url.str_url
        return url.url_with_fragment == self.url.url_with_fragment


@dataclass(frozen=True)
class PolicyUrl:
    """The Crawl Policy criterium ``url``: the URL to be crawled matches ``chain``."""

    chain: Criterium

    def matches(self, url: ParsedUrl) -> bool:
        return self.chain.matches(url)


# --------------------------------------------------------------------------- compiling


def toml_type_name(value: Any) -> str:
    """How a TOML value's type is named in error messages (\"an integer\", \"a table\", ...)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _unit(value: Any, path: str) -> None:
    if value is True or value == {}:
        return
    raise CriteriumError(path, f"found {toml_type_name(value)} {value!r}; expected true or an empty table {{}} "
                               "(this variant takes no argument)")


@dataclass(frozen=True)
class _Kind:
    """How to compile one criterium type: its name, variants and argument compilers."""

    name: str
    variants: dict[str, Callable[[Any, str], Criterium]]
    units: frozenset[str]


def _chain(value: Any, kind: _Kind, path: str) -> Criterium:
    chain_units = ", ".join(f"'{u}'" for u in (*_UNIT_CHAIN_VARIANTS, *sorted(kind.units)))
    expected = (f"a table with one key, one of {', '.join(CHAIN_VARIANTS)} (chain) or "
                f"{', '.join(kind.variants)} ({kind.name}), or one of the strings {chain_units}")
    if isinstance(value, str):
        if value == "always":
            return Always()
        if value == "never":
            return Never()
        if value in kind.units:
            return kind.variants[value](True, path)
        raise CriteriumError(path, f"found the string {value!r}; expected {expected}")
    if not isinstance(value, dict):
        raise CriteriumError(path, f"found {toml_type_name(value)}; expected {expected}")
    if len(value) != 1:
        found = ", ".join(value) if value else "none"
        raise CriteriumError(path, f"found {len(value)} keys ({found}); expected exactly one variant "
                                   f"per {kind.name} chain (combine several with and = [ {{...}}, {{...}} ])")
    (key, arg), = value.items()
    sub = f"{path}.{key}"
    if key in ("and", "or"):
        if not isinstance(arg, list) or not arg:
            raise CriteriumError(sub, f"found {toml_type_name(arg)}; expected a non-empty array of {kind.name} chains")
        chains = tuple(_chain(item, kind, f"{sub}[{i}]") for i, item in enumerate(arg))
        return And(chains) if key == "and" else Or(chains)
    if key == "not":
        return Not(_chain(arg, kind, sub))
    if key == "always":
        _unit(arg, sub)
        return Always()
    if key == "never":
        _unit(arg, sub)
        return Never()
    if key == "not_match":
        return Not(_criterium(arg, kind, sub))
    if key in kind.variants:
        return kind.variants[key](arg, sub)
    raise CriteriumError(sub, f"unknown variant {key!r}; expected one of {', '.join(CHAIN_VARIANTS)} (chain) "
                              f"or {', '.join(kind.variants)} ({kind.name})")


def _criterium(value: Any, kind: _Kind, path: str) -> Criterium:
    """A bare criterium (no chain variants), as ``not_match`` takes."""
    expected = f"a table with one key, one of {', '.join(kind.variants)} ({kind.name})"
    if isinstance(value, str) and value in kind.units:
        return kind.variants[value](True, path)
    if not isinstance(value, dict) or len(value) != 1:
        raise CriteriumError(path, f"found {toml_type_name(value)}; expected {expected}")
    (key, arg), = value.items()
    if key not in kind.variants:
        raise CriteriumError(f"{path}.{key}", f"unknown variant {key!r}; expected {expected}")
    return kind.variants[key](arg, f"{path}.{key}")


def _string_arg(op: str) -> Callable[[Any, str], Criterium]:
    def build(arg: Any, path: str) -> Criterium:
        if not isinstance(arg, str):
            raise CriteriumError(path, f"found {toml_type_name(arg)}; expected a string")
        return StringTest(op, arg)
    return build


def _is_none(test: type) -> Callable[[Any, str], Criterium]:
    def build(arg: Any, path: str) -> Criterium:
        _unit(arg, path)
        return test("is_none")
    return build


def _number_kind(lo: int | None = None, hi: int | None = None, integer: bool = False) -> _Kind:
    what = f"an integer from {lo} to {hi}" if integer else "a number"

    def number(arg: Any, path: str) -> int | float:
        ok = isinstance(arg, (int, float)) and not isinstance(arg, bool)
        if ok and integer and not isinstance(arg, int):
            ok = False
        if ok and lo is not None and not lo <= arg <= hi:
            ok = False
        if not ok:
            raise CriteriumError(path, f"found {toml_type_name(arg)} {arg!r}; expected {what}")
        return arg

    def op(name: str) -> Callable[[Any, str], Criterium]:
        return lambda arg, path: NumberTest(name, number(arg, path))

    def in_list(arg: Any, path: str) -> Criterium:
        if not isinstance(arg, list) or not arg:
            raise CriteriumError(path, f"found {toml_type_name(arg)}; expected a non-empty array of numbers ({what} each)")
        return NumberTest("in_list", tuple(number(item, f"{path}[{i}]") for i, item in enumerate(arg)))

    variants = {name: op(name) for name in ("equals", "less_than", "less_than_or_equal",
                                             "greater_than", "greater_than_or_equal")}
    variants["in_list"] = in_list
    variants["is_none"] = _is_none(NumberTest)
    name = "Number criterium (port, 0-65535)" if integer else "Number criterium"
    return _Kind(name, variants, frozenset({"is_none"}))


NUMBER = _number_kind()
PORT_NUMBER = _number_kind(0, 65535, integer=True)

STRING = _Kind(
    "String criterium",
    {
        "equals": _string_arg("equals"),
        "has_prefix": _string_arg("has_prefix"),
        "has_suffix": _string_arg("has_suffix"),
        "contains": _string_arg("contains"),
        "length": lambda arg, path: StringLength(_chain(arg, NUMBER, path)),
        "is_none": _is_none(StringTest),
    },
    frozenset({"is_none"}),
)


def _boolean_equals(arg: Any, path: str) -> Criterium:
    if not isinstance(arg, bool):
        raise CriteriumError(path, f"found {toml_type_name(arg)}; expected true or false")
    return BooleanTest("equals", arg)


BOOLEAN = _Kind("Boolean criterium", {"equals": _boolean_equals, "is_none": _is_none(BooleanTest)},
                frozenset({"is_none"}))


def _part(name: str, kind: _Kind) -> Callable[[Any, str], Criterium]:
    return lambda arg, path: UrlPart(name, _chain(arg, kind, path))


def _url_equals(ignore_fragment: bool) -> Callable[[Any, str], Criterium]:
    def build(arg: Any, path: str) -> Criterium:
        if not isinstance(arg, str):
            raise CriteriumError(path, f"found {toml_type_name(arg)}; expected an absolute URL string")
        try:
            url = parse_url(arg)
        except UrlError as exc:
            raise CriteriumError(path, f"{exc}; expected an absolute URL") from None
        if ignore_fragment and url.fragment is not None:
            raise CriteriumError(path, f"{arg!r} has a fragment; expected a URL without a fragment part")
        return UrlEquals(url, ignore_fragment)
    return build


_ORIGIN_VARIANTS = {"scheme": _part("scheme", STRING), "host": _part("host", STRING),
                    "port": _part("port", PORT_NUMBER)}
ORIGIN = _Kind("Origin criterium", dict(_ORIGIN_VARIANTS), frozenset())
URL = _Kind(
    "Url criterium",
    {
        "user": _part("user", STRING),
        "password": _part("password", STRING),
        "path": _part("path", STRING),
        "query": _part("query", STRING),
        "fragment": _part("fragment", STRING),
        **_ORIGIN_VARIANTS,
        "equals": _url_equals(False),
        "same_document_as": _url_equals(True),
    },
    frozenset(),
)
CRAWL_POLICY = _Kind("Crawl Policy criterium",
                     {"url": lambda arg, path: PolicyUrl(_chain(arg, URL, path))}, frozenset())


def compile_crawl_policy_chain(value: Any, path: str = "if") -> Criterium:
    """Compile a crawl policy criterium chain (the ``if`` of a policy) read from TOML.

    The result's ``matches(url: ParsedUrl) -> bool`` tells whether the policy applies.

    Raises:
        CriteriumError: ``value`` is not a valid chain; the message names the key path
            below ``path`` and what was expected.
    """
    return _chain(value, CRAWL_POLICY, path)


def compile_url_chain(value: Any, path: str = "url") -> Criterium:
    """Compile a Url criterium chain; ``matches(ParsedUrl)``. Raises CriteriumError."""
    return _chain(value, URL, path)


def compile_origin_chain(value: Any, path: str = "origin") -> Criterium:
    """Compile an Origin criterium chain; ``matches(ParsedUrl)`` looks at scheme, host and
    port only. Raises CriteriumError."""
    return _chain(value, ORIGIN, path)


def compile_string_chain(value: Any, path: str = "string") -> Criterium:
    """Compile a String criterium chain; ``matches(str | None)``. Raises CriteriumError."""
    return _chain(value, STRING, path)


def compile_number_chain(value: Any, path: str = "number") -> Criterium:
    """Compile a Number criterium chain; ``matches(int | float | None)``. Raises CriteriumError."""
    return _chain(value, NUMBER, path)


def compile_boolean_chain(value: Any, path: str = "boolean") -> Criterium:
    """Compile a Boolean criterium chain; ``matches(bool | None)``. Raises CriteriumError."""
    return _chain(value, BOOLEAN, path)

