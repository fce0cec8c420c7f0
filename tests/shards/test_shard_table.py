"""The shard table: stable assignment by rendezvous hash, overrides, errors naming the input."""

import hashlib
from pathlib import Path

import pytest

from textpile.errors import ConfigError
from textpile.shards.config import Shards, load_shards, site_of


def _table(tmp_path, text):
    path = tmp_path / "shards.toml"
    path.write_text(text, "utf-8")
    return load_shards(path)


def _by_formula(shards, site):
    """The rendezvous choice computed here from its definition, independently of the library."""
    weights = {name: int.from_bytes(hashlib.sha256(f"{name}\n{site}".encode()).digest()[:8], "big")
               for name in shards}
    return max(weights, key=weights.get)


def test_assignment_is_the_rendezvous_hash_of_the_origin(tmp_path):
    shards = _table(tmp_path, 'shards = ["a", "b", "c"]\n')
    sites = [f"http://127.0.0.1:{port}" for port in range(8000, 8300)]
    assigned = {site: shards.shard_of(site + "/some/page?x=1") for site in sites}
    assert assigned == {site: _by_formula(("a", "b", "c"), site) for site in sites}
    # every shard gets a fair part of 300 sites (expected 100 each)
    counts = {name: list(assigned.values()).count(name) for name in "abc"}
    assert all(70 <= n <= 130 for n in counts.values()), counts
    # the same origin spelled differently is the same site
    assert site_of("HTTPS://Example.ORG/a") == site_of("https://example.org:443/b") == "https://example.org:443"


def test_a_new_shard_takes_sites_only_for_itself(tmp_path):
    three = Shards(hashed=("a", "b", "c"), root=tmp_path)
    four = Shards(hashed=("a", "b", "c", "d"), root=tmp_path)
    sites = [f"https://site{i}.example" for i in range(400)]
    moved = [s for s in sites if three.shard_of(s) != four.shard_of(s)]
    assert all(four.shard_of(s) == "d" for s in moved)
    assert 60 <= len(moved) <= 140  # about a quarter


def test_overrides_win_and_dedicated_shards_are_listed(tmp_path):
    shards = _table(tmp_path, 'shards = ["a", "b"]\nroot = "data"\n[overrides]\n"https://Big.example/" = "big"\n'
                              '[hosts]\nbig = "beta"\na = "alpha"\n')
    assert shards.names == ("a", "b", "big")
    assert shards.shard_of("https://big.example:443/any/page") == "big"
    assert shards.folder("big") == (tmp_path / "data" / "big").resolve()
    assert shards.queue("big") == "textpile-beta"
    assert shards.queue("b") is None
    moved = _table(tmp_path, 'shards = ["a", "b"]\n[folders]\nb = "/srv/disk2/b"\n')
    assert (moved.folder("a"), moved.folder("b")) == ((tmp_path / "a").resolve(), Path("/srv/disk2/b"))
    seeds = ["https://big.example/", "https://other.example/", "http://127.0.0.1:9/"]
    split = shards.seeds_by_shard(seeds)
    assert split["big"] == ["https://big.example/"]
    assert sorted(split["a"] + split["b"]) == sorted(seeds[1:])


@pytest.mark.parametrize(("text", "message"), [
    ("", "shards: expected a non-empty array of shard names"),
    ('shards = ["a", "A"]\n', "shards[1]: found 'A'; expected a shard name"),
    ('shards = ["a", "a"]\n', "shards: a shard is named twice"),
    ('shards = ["a"]\nextra = 1\n', "unknown key 'extra'"),
    ('shards = ["a"]\n[overrides]\n"https://x.example/page" = "a"\n', "expected an origin (scheme://host[:port])"),
    ('shards = ["a"]\n[overrides]\n"ftp://x.example" = "a"\n', "expected an http(s) URL with a host"),
    ('shards = ["a"]\n[hosts]\nz = "h"\n', "hosts.z: no such shard"),
    ('shards = ["a"\n', "invalid TOML: "),
    ('shards = ["a", "b"]\n[folders]\na = "x"\nb = "x"\n', "folders: two shards share a folder"),
])
def test_bad_tables_are_refused_naming_file_and_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as caught:
        _table(tmp_path, text)
    assert str(tmp_path / "shards.toml") in str(caught.value)
    assert message in str(caught.value)


def test_unknown_shard_is_named(tmp_path):
    shards = _table(tmp_path, 'shards = ["a", "b"]\n')
    with pytest.raises(ConfigError, match="no shard 'c' in .*; the shards are a, b"):
        shards.folder("c")


def test_where_prints_each_urls_shard_and_folder(tmp_path, capsys):
    from textpile.cli import main

    shards = _table(tmp_path, 'shards = ["a", "b"]\n[overrides]\n"https://big.example" = "big"\n')
    urls = ["https://big.example/x", "http://127.0.0.1:8001/"]
    assert main(["shards", "where", "-t", str(tmp_path / "shards.toml"), *urls]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{url}\t{shards.shard_of(url)}\t{shards.folder(shards.shard_of(url))}" for url in urls]
    assert shards.shard_of(urls[0]) == "big"
    assert main(["shards", "where", "-t", str(tmp_path / "missing.toml"), urls[0]]) == 2
    assert "missing.toml: cannot read the shard table" in capsys.readouterr().err
