"""The crawl configuration, its policies and criterium chains (seed: "Crawler crawl
configuration" and the criterium pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from textpile.crawl.policy.config import (
    UNCONFIGURED_USER_AGENT,
    CrawlConfig,
    apply_overrides,
    check_database_file,
    config_from_options,
    load_config,
    query_parameter_names,
    read_config_file,
    read_policy_file,
)
from textpile.crawl.policy.criteria import (
    CriteriumError,
    compile_boolean_chain,
    compile_crawl_policy_chain,
    compile_number_chain,
    compile_origin_chain,
    compile_string_chain,
    compile_url_chain,
)
from textpile.crawl.policy.values import parse_duration
from textpile.errors import ConfigError
from textpile.store.urls import parse_url

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEEK = 7 * 86400

REQUIRED = """
default_delay_ms = 50
max_commands_per_run = 10
recrawl_interval = "1 day"
seeds = ["http://127.0.0.1:8000/"]
"""


def write(tmp_path: Path, text: str, name: str = "crawl.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def verdict(config: CrawlConfig, url: str) -> str | None:
    return config.policy_verdict(parse_url(url))


# --------------------------------------------------------------------------- examples


def test_tutorial_example_values():
    config = load_config(EXAMPLES / "tutorial.toml")
    assert config.name == "textpile example index"
    assert config.description.startswith("A small index of two documentation sites")
    assert config.database_file == "example_crawl.db"
    assert config.default_delay_ms == 1000
    assert config.max_commands_per_run == 100
    assert config.recrawl_interval_s == WEEK
    assert config.user_agent == "textpile-example-crawler (for https://example.org/why-we-crawl-your-website)"
    assert config.seeds == ["https://doc.unobtanium.rocks/", "https://slatecave.net/"]
    assert config.allow_private_addresses is False
    assert config.source == EXAMPLES / "tutorial.toml"
    assert [p.reason for p in config.do_not_crawl] == ["Don't crawl the osmocom issue tracker"]
    assert [(p.reason, p.allow) for p in config.url_query_parameters] == [("used for pagination", frozenset({"page"}))]


def test_shared_policies_example():
    config = load_config(EXAMPLES / "tutorial.toml", policy_files=[EXAMPLES / "shared-policies.toml"])
    assert len(config.do_not_crawl) == 1 + 9  # appended after the file's own policies
    assert len(config.url_query_parameters) == 1 + 2
    assert config.do_not_crawl[0].reason == "Don't crawl the osmocom issue tracker"
    assert verdict(config, "https://x.org/login") == (
        "blocked by do_not_crawl[1]: Login, logout and registration pages have nothing to index")
    assert verdict(config, "https://x.org/search?q=a").startswith("blocked by do_not_crawl[2]: Search result")
    assert verdict(config, "https://x.org/comments/feed/").startswith("blocked by do_not_crawl[3]:")
    assert verdict(config, "https://x.org/wiki/Page/history").startswith("blocked by do_not_crawl[4]:")
    assert verdict(config, "https://x.org/calendar/?page=2").startswith("blocked by do_not_crawl[5]:")
    assert verdict(config, "https://x.org/events/list/?month=3").startswith("blocked by do_not_crawl[5]:")
    assert verdict(config, "https://x.org/" + "a/" * 250).startswith("blocked by do_not_crawl[8]:")
    assert verdict(config, "https://x.org/share/twitter").startswith("blocked by do_not_crawl[9]:")
    assert verdict(config, "https://x.org/shared/notes.html") is None
    assert verdict(config, "https://x.org/blog/") is None
    assert verdict(config, "https://x.org/blog/?page=2") is None
    assert verdict(config, "https://x.org/blog/?p=2") is None
    assert verdict(config, "https://x.org/blog/?page=99999999999").startswith("query parameters page not allowed")
    assert verdict(config, "https://x.org/w/index.php?title=Main") is None
    # the pagination rule and the title rule do not combine
    assert verdict(config, "https://x.org/w/index.php?title=Main&page=2") == (
        "query parameters page, title not allowed by any single policy: "
        "url_query_paramters[2] allows title (Classic wiki pages are addressed by title)")


def test_policy_file_alone(tmp_path):
    policies = read_policy_file(EXAMPLES / "shared-policies.toml")
    assert sorted(policies) == ["do_not_crawl", "source", "url_query_parameters"]  # what the file sets
    assert len(policies["do_not_crawl"]) == 9 and policies["source"] == EXAMPLES / "shared-policies.toml"


# --------------------------------------------------------------------------- the seed's examples


def test_osmocom_example(tmp_path):
    config = load_config(write(tmp_path, REQUIRED + '''
[[do_not_crawl]]
reason="Don't crawl the osmocom issue tracker"
if.and = [
{ url.host.equals = "osmocom.org" },
{ url.path.has_prefix = "/issues" },
]
'''))
    assert verdict(config, "https://osmocom.org/issues/6001") == (
        "blocked by do_not_crawl[0]: Don't crawl the osmocom issue tracker")
    assert verdict(config, "https://osmocom.org/issues") is not None
    assert verdict(config, "https://osmocom.org/projects/osmocombb/wiki") is None
    assert verdict(config, "https://example.org/issues/1") is None


def test_theorangeone_example(tmp_path):
    config = load_config(write(tmp_path, REQUIRED + '''
[[url_query_paramters]]
if.url.host.equals = "theorangeone.net"
allow = ["page"]
reason = "used for pagination"
'''))
    assert verdict(config, "https://theorangeone.net/posts/?page=2") is None
    assert verdict(config, "https://theorangeone.net/posts/") is None
    assert verdict(config, "https://theorangeone.net/posts/?") is None  # empty query: no parameters
    assert verdict(config, "https://theorangeone.net/posts/?page=2&sort=new") == (
        "query parameters page, sort not allowed by any single policy: "
        "url_query_paramters[0] allows page (used for pagination)")
    assert verdict(config, "https://example.org/?page=2") == (
        "query parameters page not allowed: no url_query_paramters policy applies to this URL")


def test_query_rules_do_not_combine_and_both_spellings(tmp_path):
    config = load_config(write(tmp_path, REQUIRED + '''
[[url_query_paramters]]
if.always = true
allow = ["foo"]

[[url_query_parameters]]
if = "always"
allow = ["bar", "baz"]
reason = "correct spelling"
'''))
    assert [sorted(p.allow) for p in config.url_query_parameters] == [["foo"], ["bar", "baz"]]
    assert verdict(config, "http://a.org/?foo=1") is None
    assert verdict(config, "http://a.org/?bar=1&baz") is None
    assert verdict(config, "http://a.org/?bar=1&bar=2") is None
    assert verdict(config, "http://a.org/?foo=1&bar=2") == (
        "query parameters bar, foo not allowed by any single policy: url_query_paramters[0] allows foo "
        "((no reason given)); url_query_paramters[1] allows bar, baz (correct spelling)")


def test_query_parameter_names():
    assert query_parameter_names(None) == frozenset()
    assert query_parameter_names("") == frozenset()
    assert query_parameter_names("a=1&b&a=2") == frozenset({"a", "b"})
    assert query_parameter_names("x%5B%5D=1&y+z=2") == frozenset({"x[]", "y z"})


# --------------------------------------------------------------------------- criteria


def url(text: str):
    return parse_url(text)


@pytest.mark.parametrize("chain, value, expected", [
    ({"equals": "abc"}, "abc", True),
    ({"equals": "abc"}, "abcd", False),
    ({"equals": "abc"}, None, False),
    ({"has_prefix": "/issues"}, "/issues/1", True),
    ({"has_prefix": "/issues"}, "/x/issues", False),
    ({"has_suffix": ".pdf"}, "/a.pdf", True),
    ({"has_suffix": ".pdf"}, "/a.pdf.html", False),
    ({"contains": "login"}, "/user/login/", True),
    ({"contains": "login"}, "/user/", False),
    ({"length": {"equals": 3}}, "äöü", True),  # unicode code points, not bytes
    ({"length": {"greater_than": 3}}, "äöü", False),
    ({"length": "is_none"}, None, True),
    ({"length": {"equals": 0}}, None, False),
    ({"is_none": True}, None, True),
    ({"is_none": {}}, "", False),
    ("is_none", None, True),
])
def test_string_criterium(chain, value, expected):
    assert compile_string_chain(chain).matches(value) is expected


@pytest.mark.parametrize("chain, value, expected", [
    ({"equals": 5}, 5, True),
    ({"equals": 5}, 6, False),
    ({"equals": 0.5}, 0.5, True),
    ({"less_than": 5}, 4, True),
    ({"less_than": 5}, 5, False),
    ({"less_than_or_equal": 5}, 5, True),
    ({"less_than_or_equal": 5}, 6, False),
    ({"greater_than": 5}, 6, True),
    ({"greater_than": 5}, 5, False),
    ({"greater_than_or_equal": 5}, 5, True),
    ({"greater_than_or_equal": 5}, 4, False),
    ({"in_list": [80, 443]}, 443, True),
    ({"in_list": [80, 443]}, 8080, False),
    ({"greater_than": 5}, None, False),
    ({"is_none": True}, None, True),
    ({"is_none": True}, 0, False),
])
def test_number_criterium(chain, value, expected):
    assert compile_number_chain(chain).matches(value) is expected


@pytest.mark.parametrize("chain, value, expected", [
    ({"equals": True}, True, True),
    ({"equals": True}, False, False),
    ({"equals": False}, None, False),
    ({"is_none": True}, None, True),
    ({"is_none": True}, False, False),
])
def test_boolean_criterium(chain, value, expected):
    assert compile_boolean_chain(chain).matches(value) is expected


@pytest.mark.parametrize("chain, value, expected", [
    ({"user": {"equals": ""}}, "https://a.org/", True),  # user defaults to "", never None
    ({"user": "is_none"}, "https://a.org/", False),
    ({"user": {"equals": "bob"}}, "https://bob:pw@a.org/", True),
    ({"password": "is_none"}, "https://a.org/", True),  # password defaults to None
    ({"password": {"equals": "pw"}}, "https://bob:pw@a.org/", True),
    ({"path": {"equals": "/a/b"}}, "https://a.org/a/./b", True),
    ({"path": "is_none"}, "https://a.org/", False),
    ({"query": "is_none"}, "https://a.org/", True),  # query defaults to None
    ({"query": {"equals": ""}}, "https://a.org/?", True),
    ({"query": {"equals": "a=1"}}, "https://a.org/?a=1", True),
    ({"fragment": "is_none"}, "https://a.org/", True),
    ({"fragment": {"equals": "top"}}, "https://a.org/#top", True),
    ({"scheme": {"equals": "https"}}, "https://a.org/", True),
    ({"scheme": {"equals": "https"}}, "http://a.org/", False),
    ({"host": {"equals": "osmocom.org"}}, "https://OSMOCOM.org/", True),
    ({"host": {"has_suffix": ".osmocom.org"}}, "https://osmocom.org/", False),
    ({"port": {"equals": 443}}, "https://a.org/", True),  # default port filled in
    ({"port": {"equals": 8443}}, "https://a.org:8443/", True),
    ({"equals": "https://a.org/x#f"}, "https://a.org/x#f", True),
    ({"equals": "https://a.org/x#f"}, "https://a.org/x", False),
    ({"equals": "https://a.org:443/x"}, "https://a.org/x", True),
    ({"same_document_as": "https://a.org/x"}, "https://a.org/x#f", True),
    ({"same_document_as": "https://a.org/x"}, "https://a.org/y", False),
])
def test_url_criterium(chain, value, expected):
    assert compile_url_chain(chain).matches(url(value)) is expected


def test_origin_criterium():
    chain = compile_origin_chain({"and": [{"scheme": {"equals": "https"}}, {"host": {"equals": "a.org"}},
                                          {"port": {"equals": 443}}]})
    assert chain.matches(url("https://a.org/any/path?q")) is True
    assert chain.matches(url("https://a.org:444/")) is False
    with pytest.raises(CriteriumError) as err:
        compile_origin_chain({"path": {"equals": "/"}})
    assert err.value.key_path == "origin.path"


@pytest.mark.parametrize("chain, value, expected", [
    ({"always": True}, "https://a.org/", True),
    ({"always": {}}, "https://a.org/", True),
    ("always", "https://a.org/", True),
    ({"never": True}, "https://a.org/", False),
    ("never", "https://a.org/", False),
    ({"not": {"url": {"host": {"equals": "a.org"}}}}, "https://a.org/", False),
    ({"not": {"url": {"host": {"equals": "a.org"}}}}, "https://b.org/", True),
    ({"not_match": {"url": {"host": {"equals": "a.org"}}}}, "https://b.org/", True),
    ({"not_match": {"url": {"host": {"equals": "a.org"}}}}, "https://a.org/", False),
    ({"and": [{"url": {"scheme": {"equals": "https"}}}, {"url": {"path": {"has_prefix": "/a"}}}]},
     "https://b.org/a/1", True),
    ({"and": [{"url": {"scheme": {"equals": "https"}}}, {"url": {"path": {"has_prefix": "/a"}}}]},
     "http://b.org/a/1", False),
    ({"or": [{"url": {"host": {"equals": "a.org"}}}, {"url": {"host": {"equals": "b.org"}}}]},
     "https://b.org/", True),
    ({"or": [{"url": {"host": {"equals": "a.org"}}}, {"url": {"host": {"equals": "b.org"}}}]},
     "https://c.org/", False),
    # chains nest at every level: inside url, inside path
    ({"url": {"or": [{"host": {"equals": "a.org"}}, {"port": {"in_list": [8080]}}]}}, "http://c.org:8080/", True),
    ({"url": {"path": {"not": {"has_prefix": "/a"}}}}, "https://c.org/b", True),
    ({"url": {"path": {"not": {"has_prefix": "/a"}}}}, "https://c.org/a", False),
    ({"and": [{"always": True}, {"or": [{"never": True}, {"not": "never"}]}]}, "https://c.org/", True),
])
def test_chain_variants(chain, value, expected):
    assert compile_crawl_policy_chain(chain).matches(url(value)) is expected


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("text, key_path, expected", [
    ('[[do_not_crawl]]\nif.url.path.has_prefix = "/a"\n[[do_not_crawl]]\nif.url.path.has_prefix = "/b"\n'
     '[[do_not_crawl]]\nif.url.path.has_prefx = "/c"\n',
     "do_not_crawl[2].if.url.path.has_prefx", "unknown variant 'has_prefx'"),
    ('[[do_not_crawl]]\nif.url.path.has_prefix = 3\n', "do_not_crawl[0].if.url.path.has_prefix",
     "found an integer; expected a string"),
    ('[[do_not_crawl]]\nif.url.host.equals = "a"\nif.url.path.has_prefix = "/b"\n', "do_not_crawl[0].if.url",
     "found 2 keys (host, path); expected exactly one variant"),
    ('[[do_not_crawl]]\nif.and = []\n', "do_not_crawl[0].if.and", "expected a non-empty array"),
    ('[[do_not_crawl]]\nif.and = [ { url.host.equals = "a" }, { url.hots.equals = "b" } ]\n',
     "do_not_crawl[0].if.and[1].url.hots", "unknown variant 'hots'"),
    ('[[do_not_crawl]]\nif.always = false\n', "do_not_crawl[0].if.always", "expected true or an empty table"),
    ('[[do_not_crawl]]\nif = "sometimes"\n', "do_not_crawl[0].if", "found the string 'sometimes'"),
    ('[[do_not_crawl]]\nif.url.port.equals = 70000\n', "do_not_crawl[0].if.url.port.equals",
     "expected an integer from 0 to 65535"),
    ('[[do_not_crawl]]\nif.url.port.in_list = [80, "443"]\n', "do_not_crawl[0].if.url.port.in_list[1]",
     "expected an integer from 0 to 65535"),
    ('[[do_not_crawl]]\nif.url.same_document_as = "https://a.org/#x"\n',
     "do_not_crawl[0].if.url.same_document_as", "expected a URL without a fragment part"),
    ('[[do_not_crawl]]\nif.url.equals = "/relative"\n', "do_not_crawl[0].if.url.equals", "expected an absolute URL"),
    ('[[do_not_crawl]]\nif.not_match.and = []\n', "do_not_crawl[0].if.not_match.and", "unknown variant 'and'"),
    ('[[do_not_crawl]]\nreason = "x"\n', "do_not_crawl[0].if", "missing; expected a crawl policy criterium chain"),
    ('[[do_not_crawl]]\nif = "always"\nunless = "never"\n', "do_not_crawl[0].unless", "unknown key"),
    ('[[do_not_crawl]]\nif = "always"\nreason = 1\n', "do_not_crawl[0].reason", "expected a string"),
    ('do_not_crawl = 1\n', "do_not_crawl", "expected an array of tables ([[do_not_crawl]])"),
    ('[[url_query_paramters]]\nif = "always"\n', "url_query_paramters[0].allow", "missing; expected an array"),
    ('[[url_query_paramters]]\nif = "always"\nallow = "page"\n', "url_query_paramters[0].allow",
     "found a string; expected an array"),
    ('[[url_query_parameters]]\nif = "always"\nallow = [1]\n', "url_query_parameters[0].allow[0]",
     "expected a string"),
])
def test_policy_errors_name_file_and_key(tmp_path, text, key_path, expected):
    path = write(tmp_path, REQUIRED + text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key_path}: "), message
    assert expected in message


@pytest.mark.parametrize("line, key_path, expected", [
    ('seeds = ["ftp://a.org/"]', "seeds[0]", "expected an absolute http(s) URL"),
    ('seeds = ["/relative"]', "seeds[0]", "expected an absolute http(s) URL"),
    ('seeds = ["https://a.org/", 3]', "seeds[1]", "expected a string"),
    ("seeds = []", "seeds", "expected a non-empty array of absolute http(s) URLs"),
    ('seeds = "https://a.org/"', "seeds", "expected a non-empty array"),
    ("default_delay_ms = -1", "default_delay_ms", "found negative number -1; expected a whole number >= 0"),
    ('default_delay_ms = "1000"', "default_delay_ms", "found a string '1000'; expected a whole number >= 0"),
    ("max_commands_per_run = 1.5", "max_commands_per_run", "found a float 1.5"),
    ("max_commands_per_run = true", "max_commands_per_run", "found a boolean True"),
    ('recrawl_interval = "4 fortnights"', "recrawl_interval", "cannot read '4 fortnights'"),
    ("recrawl_interval = -5", "recrawl_interval", "found negative number -5"),
    ('user_agent = "a\\nX-Evil: 1"', "user_agent", "expected a non-empty single-line string"),
    ('allow_private_addresses = "yes"', "allow_private_addresses", "expected true or false"),
    ("name = 3", "name", "expected a string"),
    ('colour = "blue"', "colour", "unknown key; expected one of name, description"),
])
def test_top_level_errors(tmp_path, line, key_path, expected):
    key = line.split(" ", 1)[0]
    base = "\n".join(x for x in REQUIRED.strip().splitlines() if not x.startswith(key + " "))
    path = write(tmp_path, line + "\n" + base + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key_path}: "), message
    assert expected in message


def test_file_level_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the configuration file"):
        load_config(tmp_path / "missing.toml")
    bad = write(tmp_path, "seeds = [\n")
    with pytest.raises(ConfigError, match=f"^{bad}: invalid TOML: "):
        load_config(bad)
    partial = write(tmp_path, 'seeds = ["https://a.org/"]\n', "partial.toml")
    with pytest.raises(ConfigError) as err:
        load_config(partial)
    assert str(err.value) == (f"{partial}: missing required key(s) default_delay_ms, "
                              "max_commands_per_run, recrawl_interval")
    policy = write(tmp_path, 'seeds = ["https://a.org/"]\n', "policy.toml")
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, REQUIRED), policy_files=[policy])
    assert str(err.value).startswith(f"{policy}: seeds: unknown key; expected one of do_not_crawl, ")


@pytest.mark.parametrize("line, expected", [
    ("defualt_delay_ms = 50", "unknown key 'defualt_delay_ms'; did you mean 'default_delay_ms'?"),
    ("max_command_per_run = 10", "unknown key 'max_command_per_run'; did you mean 'max_commands_per_run'?"),
    # the CrawlConfig field name of a duration key is matched to the key the file spells
    ('feed_recrawl_interval_s = "1 day"', "unknown key 'feed_recrawl_interval_s'; did you mean 'feed_recrawl_interval'?"),
    ('[[do_not_crawl]]\nreasn = "x"\nif = "always"', "unknown key 'do_not_crawl[0].reasn'; did you mean 'reason'?"),
    ('[[url_query_parameter]]\nif = "always"\nallow = []',
     "unknown key 'url_query_parameter'; did you mean 'url_query_parameters'?"),
])
def test_a_misspelled_key_is_matched_to_the_near_key(tmp_path, line, expected):
    path = write(tmp_path, REQUIRED + line + "\n")
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert str(err.value) == f"{path}: {expected}"


def test_the_first_problem_in_file_order_is_named_also_before_a_policy(tmp_path):
    path = write(tmp_path, 'max_commands_per_run = "10"\nname = 3\ndefault_delay_ms = 50\nrecrawl_interval = "1 day"\n'
                           'seeds = ["http://127.0.0.1:8000/"]\n[[do_not_crawl]]\nif.url.hots.equals = "b"\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: max_commands_per_run: found a string '10'; expected a whole number >= 0"
    path = write(tmp_path, 'do_not_crawl = [{ if.url.hots.equals = "b" }]\nname = 3\n' + REQUIRED)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: do_not_crawl[0].if.url.hots: unknown variant 'hots'")


def test_a_file_value_an_option_replaces_is_still_checked(tmp_path):
    partial = write(tmp_path, 'default_delay_ms = -1\nseeds = ["http://a.org/"]\n')
    with pytest.raises(ConfigError) as err:
        config_from_options(partial, default_delay_ms=5, max_commands=1, force_recrawl=True)
    assert str(err.value) == f"{partial}: default_delay_ms: found negative number -1; expected a whole number >= 0"


# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize("value, seconds", [
    ("1 second", 1), ("2 seconds", 2), ("30 minutes", 1800), ("1 minute", 60), ("1 hour", 3600),
    ("3 hours", 10800), ("1 day", 86400), ("2 days", 172800), ("1 week", WEEK), ("4 weeks", 4 * WEEK),
    ("4 week", 4 * WEEK), ("1 month", 30 * 86400), ("2 months", 60 * 86400), ("1 year", 365 * 86400),
    ("2 years", 730 * 86400), ("1day", 86400), (" 1 Day ", 86400), ("1 day 12 hours", 129600),
    ("90s", 90), ("0 seconds", 0), (3600, 3600), (0, 0),
])
def test_parse_duration(value, seconds):
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["", "week", "1", "1.5 days", "1 fortnight", "-1 day", "1 day and", -1, 1.5, True])
def test_parse_duration_refuses(value):
    with pytest.raises(ValueError, match="expected a duration"):
        parse_duration(value)


# --------------------------------------------------------------------------- options


def test_apply_overrides_wins_and_defaults(tmp_path):
    config = load_config(write(tmp_path, REQUIRED + 'user_agent = "ua-crawler (for https://a.org/)"\n'))
    assert config.user_agent == "ua-crawler (for https://a.org/)"
    merged = apply_overrides(config, user_agent="other-crawler", max_commands=3, default_delay_ms=0,
                             seeds=["http://127.0.0.1:9/a#frag"], force_recrawl=True, allow_private_addresses=True)
    assert (merged.user_agent, merged.max_commands_per_run, merged.default_delay_ms, merged.seeds,
            merged.recrawl_interval_s, merged.allow_private_addresses, merged.source) == (
        "other-crawler", 3, 0, ["http://127.0.0.1:9/a"], 0, True, config.source)
    assert config.max_commands_per_run == 10  # the original is untouched
    unchanged = apply_overrides(config)
    assert unchanged == config


def test_options_only():
    config = apply_overrides(None, max_commands=5, default_delay_ms=10, seeds=["http://127.0.0.1:8000/"],
                             force_recrawl=True)
    assert config == CrawlConfig(default_delay_ms=10, max_commands_per_run=5, recrawl_interval_s=0,
                                 seeds=["http://127.0.0.1:8000/"], user_agent=UNCONFIGURED_USER_AGENT)


@pytest.mark.parametrize("kwargs, message", [
    ({"max_commands": 1, "default_delay_ms": 1, "force_recrawl": True},
     "no seeds: give --schedule URL or seeds in --config"),
    ({"seeds": ["http://a.org/"], "default_delay_ms": 1, "force_recrawl": True},
     "no command limit: give --max-commands N or max_commands_per_run in --config"),
    ({"seeds": ["http://a.org/"], "max_commands": 1, "force_recrawl": True},
     "no default delay: give --default-delay MILLISECONDS or default_delay_ms in --config"),
    ({"seeds": ["http://a.org/"], "max_commands": 1, "default_delay_ms": 1},
     'no recrawl interval: set recrawl_interval (e.g. "4 weeks") in --config, or give --force-recrawl'),
    ({"seeds": ["mailto:x@a.org"]}, "--schedule: found 'mailto:x@a.org'; expected an absolute http(s) URL"),
    ({"max_commands": -1}, "--max-commands: found negative number -1; expected a whole number >= 0"),
    ({"default_delay_ms": -5}, "--default-delay: found negative number -5; expected a whole number >= 0"),
    ({"user_agent": " "},
     "--user-agent: found ' '; expected a non-empty single-line string without control characters"),
    ({"max_commands": 1, "seeds": ["http://a.org/", "http://a..b.example/"], "user_agent": "a\nb"},
     "--user-agent: found 'a\\nb'; expected a non-empty single-line string without control characters"),
    ({"max_commands": True, "default_delay_ms": 1, "seeds": ["http://a.org/"], "force_recrawl": True},
     "--max-commands: found a boolean True; expected a whole number >= 0"),
    ({"recrawl_interval": "1 fortnight", "seeds": ["http://a.org/"]},
     "recrawl interval option: cannot read '1 fortnight'; expected a duration such as \"4 weeks\", \"30 minutes\" "
     "or \"1 day 12 hours\" (units second, minute, hour, day, week, month, year) or a whole number of seconds"),
])
def test_apply_overrides_errors(kwargs, message):
    with pytest.raises(ConfigError) as err:
        apply_overrides(None, **kwargs)
    assert str(err.value) == message


def test_config_from_options(tmp_path):
    partial = write(tmp_path, 'seeds = ["https://a.org/"]\nrecrawl_interval = "2 days"\nallow_private_addresses = true\n')
    config = config_from_options(partial, policy_files=[EXAMPLES / "shared-policies.toml"], max_commands=7,
                                 default_delay_ms=20)
    assert (config.seeds, config.max_commands_per_run, config.default_delay_ms, config.recrawl_interval_s,
            config.allow_private_addresses, len(config.do_not_crawl)) == (["https://a.org/"], 7, 20, 172800, True, 9)
    with pytest.raises(ConfigError, match=f"no command limit: give --max-commands N or max_commands_per_run in {partial}"):
        config_from_options(partial, default_delay_ms=20)
    no_file = config_from_options(None, policy_files=[EXAMPLES / "shared-policies.toml"], seeds=["https://b.org/"],
                                  max_commands=1, default_delay_ms=0, force_recrawl=True)
    assert no_file.source is None and len(no_file.url_query_parameters) == 2
    assert verdict(no_file, "https://b.org/login") is not None


def test_check_database_file(tmp_path, monkeypatch):
    config = apply_overrides(read_config_file(write(tmp_path, REQUIRED + 'database_file = "data/crawl.db"\n')))
    check_database_file(config, tmp_path / "data" / "crawl.db")
    check_database_file(config, "/srv/x/../data/crawl.db")
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path / "data")
    check_database_file(config, "crawl.db")  # relative paths are made absolute first
    for wrong in ("/srv/other/crawl.db", "/srv/data/crawl.db.bak", "/srv/data/xcrawl.db", "crawl.db/x"):
        with pytest.raises(ConfigError) as err:
            check_database_file(config, wrong)
        assert "does not match database_file = 'data/crawl.db'" in str(err.value)
        assert "--ignore-db-name-from-config" in str(err.value)
        check_database_file(config, wrong, ignore=True)
    unset = apply_overrides(None, seeds=["http://a.org/"], max_commands=1, default_delay_ms=0, force_recrawl=True)
    check_database_file(unset, "/anywhere/at/all.db")


# --------------------------------------------------------------------------- the one model


def test_one_validated_model_built_in_code():
    import pydantic

    base = dict(default_delay_ms=10, max_commands_per_run=5, recrawl_interval_s=60, seeds=["https://a.org/x#f"])
    config = CrawlConfig(**base)
    assert config.seeds == ["https://a.org/x"]  # normalized like a configured seed
    for bad in ({"default_delay_ms": -1}, {"max_commands_per_run": True}, {"recrawl_interval_s": "60"},
                {"seeds": []}, {"seeds": ["mailto:x@a.org"]}, {"user_agent": "a\nb"}, {"no_such_key": 1}):
        with pytest.raises(pydantic.ValidationError):
            CrawlConfig(**{**base, **bad})
    with pytest.raises(pydantic.ValidationError):
        config.default_delay_ms = 0  # frozen: derive another one with apply_overrides
    assert apply_overrides(config, default_delay_ms=0).default_delay_ms == 0 and config.default_delay_ms == 10


def test_every_field_survives_the_overrides(tmp_path):
    config = load_config(write(tmp_path, REQUIRED + 'name = "n"\ndescription = "d"\ndatabase_file = "x/c.db"\n'
                               'user_agent = "ua (for https://a.org/)"\nallow_private_addresses = true\n'
                               'session_parameters = ["sid"]\nmax_urls_per_pattern = 7\nsitemaps = true\n'
                               'feeds = true\nprune = true\nfeed_recrawl_interval = "2 hours"\nmin_recrawl_interval = "1 hour"\n'
                               'max_recrawl_interval = "9 weeks"\ndiscover_sites = true\n'
                               'allow_sites = ["https://b.org/"]\ndeny_sites = ["https://c.org/"]\n'
                               'relevance_min_words = 9\nrelevance_languages = ["en"]\nrelevance_words = ["x"]\n'
                               '[[do_not_crawl]]\nif.url.path.has_prefix = "/a"\n'
                               '[[url_query_paramters]]\nif.always = {}\nallow = ["page"]\n'))
    assert set(CrawlConfig.model_fields) == {
        "default_delay_ms", "max_commands_per_run", "recrawl_interval_s", "seeds", "name", "description",
        "database_file", "user_agent", "do_not_crawl", "url_query_parameters", "allow_private_addresses", "source",
        "session_parameters", "max_urls_per_pattern", "sitemaps", "feeds", "prune", "feed_recrawl_interval_s",
        "min_recrawl_interval_s", "max_recrawl_interval_s",
        "discover_sites", "allow_sites", "deny_sites", "relevance_min_words", "relevance_languages",
        "relevance_words"}
    assert (config.session_parameters, config.max_urls_per_pattern, config.feed_recrawl_interval_s,
            config.min_recrawl_interval_s, config.max_recrawl_interval_s) == (("sid",), 7, 7200, 3600, 63 * 86400)
    assert all(getattr(config, name) not in (None, [], False) for name in CrawlConfig.model_fields
               if name != "recrawl_interval_s")
    assert apply_overrides(config) == config
