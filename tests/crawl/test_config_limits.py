"""Configuration values that are well-formed but absurd, and small file problems:
upper bounds of numbers (file keys and -m/-d), a UTF-8 BOM, an empty database_file,
seeds with invalid hosts or ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from textpile.cli import main
from textpile.crawl.policy.bounds import MAX_COMMANDS_PER_RUN, MAX_DEFAULT_DELAY_MS, MAX_RECRAWL_INTERVAL_S
from textpile.crawl.policy.config import apply_overrides, load_config
from textpile.crawl.policy.values import parse_duration
from textpile.errors import ConfigError

BASE = {
    "default_delay_ms": "50",
    "max_commands_per_run": "10",
    "recrawl_interval": '"1 day"',
    "seeds": '["http://127.0.0.1:8000/"]',
}


def write(tmp_path: Path, **keys: str) -> Path:
    """A configuration with BASE's keys, ``keys`` replacing or adding TOML values."""
    values = {**BASE, **keys}
    path = tmp_path / "crawl.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in values.items()), encoding="utf-8")
    return path


def config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(path)
    return str(err.value)


@pytest.mark.parametrize("key, value, expected", [
    ("default_delay_ms", "99999999999999999999",
     "default_delay_ms: found 99999999999999999999, which is too large; expected at most 3600000 ms (an hour)"),
    ("default_delay_ms", "3600001",
     "default_delay_ms: found 3600001, which is too large; expected at most 3600000 ms (an hour)"),
    ("max_commands_per_run", "1000000001",
     "max_commands_per_run: found 1000000001, which is too large; expected at most 1000000000"),
    ("recrawl_interval", '"99999999999999999999 years"',
     "recrawl_interval: found '99999999999999999999 years', which is more than 100 years (3153600000 seconds); "
     "expected at most 100 years"),
    ("recrawl_interval", "99999999999999999999",
     "recrawl_interval: found 99999999999999999999, which is more than 100 years (3153600000 seconds); "
     "expected at most 100 years"),
    ("recrawl_interval", '"101 years"',
     "recrawl_interval: found '101 years', which is more than 100 years (3153600000 seconds); "
     "expected at most 100 years"),
    ("recrawl_interval", f'"{"9" * 5000} seconds"', "which is more than 100 years"),
])
def test_numbers_beyond_the_upper_bounds_name_the_key(tmp_path, key, value, expected):
    path = write(tmp_path, **{key: value})
    message = config_error(path)
    assert message.startswith(f"{path}: {key}: ")
    assert expected in message


def test_the_upper_bounds_themselves_are_accepted(tmp_path):
    config = load_config(write(tmp_path, default_delay_ms=str(MAX_DEFAULT_DELAY_MS),
                               max_commands_per_run=str(MAX_COMMANDS_PER_RUN), recrawl_interval='"100 years"'))
    assert (config.default_delay_ms, config.max_commands_per_run, config.recrawl_interval_s) == (
        3_600_000, 10**9, 3_153_600_000)
    assert parse_duration(MAX_RECRAWL_INTERVAL_S) == MAX_RECRAWL_INTERVAL_S
    assert parse_duration("50 years 50 years") == MAX_RECRAWL_INTERVAL_S


def test_option_values_beyond_the_bounds(tmp_path):
    base = load_config(write(tmp_path))
    with pytest.raises(ConfigError) as err:
        apply_overrides(base, default_delay_ms=3_600_001)
    assert str(err.value) == "--default-delay: found 3600001, which is too large; expected at most 3600000 ms (an hour)"
    with pytest.raises(ConfigError) as err:
        apply_overrides(base, max_commands=10**20)
    assert str(err.value) == ("--max-commands: found 100000000000000000000, which is too large; "
                              "expected at most 1000000000")
    with pytest.raises(ConfigError) as err:
        apply_overrides(base, recrawl_interval="200 years")
    assert "which is more than 100 years" in str(err.value)


@pytest.mark.parametrize("argv, expected", [
    (["-d", "99999999999999999999"], "argument -d/--default-delay: expected a whole number from 0 to 3600000 "
                                     "(an hour), got '99999999999999999999' (too large)"),
    (["-m", "1000000001"], "argument -m/--max-commands: expected a whole number from 0 to 1000000000, "
                           "got '1000000001' (too large)"),
    (["-m", "²"], "argument -m/--max-commands: expected a whole number from 0 to 1000000000, got '²'"),
    (["-m", "١٢"], "argument -m/--max-commands: expected a whole number from 0 to 1000000000, got '١٢'"),
    (["-d", "-5"], "argument -d/--default-delay: expected a whole number from 0 to 3600000 (an hour), got '-5'"),
    (["-d", "1_000"], "argument -d/--default-delay: expected a whole number from 0 to 3600000 (an hour), "
                      "got '1_000'"),
])
def test_cli_options_out_of_range_exit_2_naming_the_option(tmp_path, capsys, argv, expected):
    with pytest.raises(SystemExit) as exc:
        main(["crawl", "-c", str(tmp_path / "c.db"), "--schedule", "http://127.0.0.1:1/", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"textpile crawl: error: {expected}"
    assert "invalid" not in err and not (tmp_path / "c.db").exists()


def test_cli_accepts_the_bounds(tmp_path, monkeypatch):
    import textpile.cli.crawl as crawl_cli

    parser = __import__("textpile.cli", fromlist=["build_parser"]).build_parser()
    args = parser.parse_args(["crawl", "-c", "x.db", "-m", "1000000000", "-d", "+3600000"])
    assert (args.max_commands, args.default_delay) == (10**9, 3_600_000)
    assert crawl_cli.whole_number(5)("005") == 5


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "crawl.toml"
    path.write_bytes(b"\xef\xbb\xbf" + 'name = "bom"\n'.encode() +
                     "".join(f"{k} = {v}\n" for k, v in BASE.items()).encode())
    config = load_config(path)
    assert (config.name, config.seeds) == ("bom", ["http://127.0.0.1:8000/"])


@pytest.mark.parametrize("value", ['""', '"   "'])
def test_empty_database_file_is_refused(tmp_path, value):
    path = write(tmp_path, database_file=value)
    message = config_error(path)
    assert message.startswith(f"{path}: database_file: found ")
    assert 'expected a database path such as "data/crawl.db"' in message


@pytest.mark.parametrize("seed, expected", [
    ("http://exa mple.org/", "invalid"),
    ("http://a<b.example/", "invalid"),
    ("http://example.org:0/", "port"),
    ("http://[v1.x]/", "invalid"),
    ("http://[1::2::3]/", "invalid"),
    ("http://a..b.example/", "invalid"),
    ("http://example.org:99999/", "invalid"),
])
def test_seeds_with_invalid_hosts_or_ports_name_the_seed(tmp_path, seed, expected):
    path = write(tmp_path, seeds=f'["http://ok.example/", "{seed}"]')
    message = config_error(path)
    assert message.startswith(f"{path}: seeds[1]: "), message
    assert expected in message.lower()
    with pytest.raises(ConfigError) as err:
        apply_overrides(load_config(write(tmp_path)), seeds=[seed])
    assert str(err.value).startswith("--schedule: ")


@pytest.mark.parametrize("seed, normalized", [
    ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ("http://Example.ORG/", "http://example.org/"),
    ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ("http://under_score.example:65535/", "http://under_score.example:65535/"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/"),
])
def test_valid_seeds_still_pass(tmp_path, seed, normalized):
    assert load_config(write(tmp_path, seeds=f'["{seed}"]')).seeds == [normalized]
