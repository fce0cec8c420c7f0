"""``textpile serve -e/--extra-config FILE`` as unobtanium-viewer's: the template
configuration, default extra.toml in the template location, given to the templates."""

import asyncio

import pytest
from datasette.app import Datasette
from datasette.utils import StartupError

from textpile.cli import build_parser
from textpile.cli.setting_files import read_extra_config
from textpile.errors import ConfigError
from textpile.web.app import build_datasette
from web.client import get


def test_e_is_read_and_shown_by_the_default_template(tmp_path, summary_path):
    extra = tmp_path / "site.toml"
    extra.write_text('notice = "Indexed weekly <b>by hand</b>."\n'
                     '[[links]]\ntitle = "About"\nurl = "https://example.org/about"\n')
    args = build_parser().parse_args(["serve", "-e", str(extra)])
    assert args.extra_config == str(extra)
    config = read_extra_config(args.extra_config, args.template_location)
    assert config == {"notice": "Indexed weekly <b>by hand</b>.",
                      "links": [{"title": "About", "url": "https://example.org/about"}]}
    page = get(build_datasette(summary_path, extra_config=config), "/").text
    assert '<p class="tp-notice">Indexed weekly &lt;b&gt;by hand&lt;/b&gt;.</p>' in page
    assert '<a href="https://example.org/about">About</a>' in page


def test_default_is_extra_toml_in_the_template_location(tmp_path):
    assert read_extra_config(None, None) is None
    assert read_extra_config(None, str(tmp_path)) is None  # no extra.toml there: none
    (tmp_path / "extra.toml").write_text('notice = "hello"\n')
    assert read_extra_config(None, str(tmp_path)) == {"notice": "hello"}
    assert build_parser().parse_args(["serve", "--extra-config", "x.toml"]).extra_config == "x.toml"


def test_a_missing_or_bad_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.toml: cannot read the template configuration \(-e/--extra-config\)"):
        read_extra_config(str(tmp_path / "nope.toml"), None)
    bad = tmp_path / "bad.toml"
    bad.write_text("notice = \n")
    with pytest.raises(ConfigError, match="bad.toml: invalid TOML: "):
        read_extra_config(str(bad), None)


def test_a_bad_notice_stops_datasette(summary_path):
    ds = Datasette(files=[], immutables=[str(summary_path)], metadata={"plugins": {"textpile": {"extra": {"notice": 3}}}})
    with pytest.raises(StartupError, match="plugins.textpile.extra.notice: expected text, got 3"):
        asyncio.run(ds.invoke_startup())
