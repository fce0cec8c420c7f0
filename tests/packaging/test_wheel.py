"""The built wheel, installed in a fresh virtual environment outside any checkout, runs the
pipeline, the demo and the Dagster code location (`dagster ... -m textpile_dagster.definitions`).

One module-scoped fixture builds the wheel from a copy of the checkout (so the checkout
gets no build/ or egg-info) and installs it with its dependencies into a new venv with
pip (from the package index pip is configured with; the wheels are usually cached).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tomllib
import zipfile
from contextlib import closing
from pathlib import Path

import pytest
from textpile.store.gen2_piles import register_functions

from dagster_sites import ChangingSite, write_config

REPO = Path(__file__).resolve().parents[2]
#: What is never part of a build (top-level names of the checkout).
NOT_SOURCE = {".git", ".venv", "data", "build", "dist", ".pytest_cache", "tmp", ".dagster_home", ".cache"}
#: The Dagster layer's folders and file, and the package they are installed as.
DAGSTER_LAYER = ("definitions.py", "assets", "resources", "sensors")
ASSETS = {"crawl_run", "crawl_log_staging", "scrape_results", "summary_db", "fts_index", "embeddings",
          "published_index", "token_index", "archive_import"}


def _ignore(folder: str, names: list[str]) -> set[str]:
    top = Path(folder).resolve() == REPO
    return {n for n in names if (top and n in NOT_SOURCE) or n == "__pycache__" or n.endswith(".egg-info")}


def _clean_env(tmp: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH, no Dagster home, no venv of ours."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
            "PIP_CONSTRAINT", "PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CONFIG_FILE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["HOME"] = os.environ.get("HOME", str(tmp))  # pip's cache and configuration
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, wheel path, environment) of a fresh venv with the built wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=_ignore)
    dist = tmp / "dist"
    env = _clean_env(tmp)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist),
                            str(source)], cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-3000:]
    [wheel] = dist.glob("textpile-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
                             cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stderr[-3000:]
    env = dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
    return venv / "bin", wheel, env


#: The data files the library reads at run time (schemas, templates, styles, the demo's configuration)
#: and the example configuration files the README passes (examples/ as textpile/examples).
DATA_FILES = ("schemas/*/*.sql", "schemas/*/*.md", "web/templates/*.html", "web/static/*.css", "web/static/*.js", "demo/*.toml",
              "examples/*.toml")


def _expected_members() -> set[str]:
    library = REPO / "src" / "textpile"
    members = {f"textpile/{p.relative_to(library)}" for p in library.rglob("*.py")}
    for name in DAGSTER_LAYER:
        path = REPO / name
        files = [path] if path.is_file() else list(path.rglob("*.py"))
        members |= {f"textpile_dagster/{p.relative_to(REPO)}" for p in files}
    for pattern in DATA_FILES:
        members |= {f"textpile/{p.relative_to(library)}" for p in library.glob(pattern)}
    return {m for m in members if "__pycache__" not in m}


def _package_folders() -> dict[str, Path]:
    """Every folder of the two import packages that holds a file, by its dotted name, as
    setuptools sees them (a folder Python could import is a package, .py files or not)."""
    roots = {"textpile": REPO / "src" / "textpile"} | {f"textpile_dagster.{n}": REPO / n for n in DAGSTER_LAYER[1:]}
    found = {"textpile_dagster": REPO}
    for name, root in roots.items():
        for folder, subfolders, files in os.walk(root, followlinks=True):  # src/textpile/schemas is a symlink
            subfolders[:] = [d for d in subfolders if d != "__pycache__" and d.isidentifier()]
            if files:
                found[".".join([name, *Path(folder).relative_to(root).parts])] = Path(folder)
    return found


def test_every_package_folder_is_listed_so_setuptools_packages_it_without_warning():
    """setuptools warns "Package would be ignored" for every folder holding files that
    is missing from [tool.setuptools] packages (data folders included) at every install."""
    with open(REPO / "pyproject.toml", "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    assert sorted(set(_package_folders()) - listed) == []
    assert sorted(listed - set(_package_folders())) == []


def test_wheel_holds_both_packages_and_no_generic_top_level_name(installed):
    _bin, wheel, _env = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names}
    assert tops == {"textpile", "textpile_dagster", "textpile-0.1.0.dist-info"}
    missing = sorted(_expected_members() - names)
    assert missing == [], ("modules missing from the wheel; add their package to [tool.setuptools] packages "
                           f"in pyproject.toml: {missing}")
    top_level = zipfile.ZipFile(wheel).read("textpile-0.1.0.dist-info/top_level.txt").decode().split()
    assert sorted(top_level) == ["textpile", "textpile_dagster"]


def test_installed_wheel_holds_the_readmes_examples_where_the_readme_says(installed, tmp_path):
    """The README passes examples/shared-policies.toml and names the command that prints
    where an installed wheel has the examples folder."""
    bin_dir, _wheel, env = installed
    readme = (REPO / "README.md").read_text()
    [command] = re.findall(r'`(python -c "[^`]*\bexamples\b[^`]*")`', readme)
    out = subprocess.run([str(bin_dir / "python"), "-c", shlex.split(command)[2]], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    folder = Path(out.stdout.strip())
    assert folder.is_relative_to(bin_dir.parent)
    for name in ("shared-policies.toml", "tutorial.toml"):
        assert (folder / name).read_bytes() == (REPO / "examples" / name).read_bytes()
    checked = subprocess.run([str(bin_dir / "python"), "-c",
                              "import sys; from textpile.crawl.policy.config import read_policy_file; "
                              "print(len(read_policy_file(sys.argv[1])['do_not_crawl']))",
                              str(folder / "shared-policies.toml")],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == "9\n"


def test_installed_packages_live_in_the_venv_only(installed, tmp_path):
    bin_dir, _wheel, env = installed
    out = subprocess.run(
        [str(bin_dir / "python"), "-c",
         "import importlib.util, textpile, textpile_dagster.definitions as d; "
         "print(textpile.__file__); print(d.__file__); "
         "print([n for n in ('assets', 'resources', 'sensors', 'definitions') if importlib.util.find_spec(n)])"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    library, definitions, generic = out.stdout.splitlines()
    venv = str(bin_dir.parent)
    assert library.startswith(venv) and definitions.startswith(venv)
    assert generic == "[]"


def test_installed_pipeline_runs_outside_the_checkout(installed, tmp_path):
    bin_dir, _wheel, env = installed
    site = ChangingSite()
    with site.server:
        config = write_config(tmp_path / "crawl.toml", [site.base_url + "/"], max_commands=10)
        out = subprocess.run([str(bin_dir / "textpile"), "pipeline", "--config", str(config), "--data-dir", "data",
                              "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "(definitions textpile_dagster.definitions, DAGSTER_HOME " in out.stderr
    assert "[7/7] published_index: " in out.stderr
    with closing(register_functions(sqlite3.connect(f"file:{tmp_path / 'data' / 'published' / 'summary.db'}?mode=ro", uri=True))) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] == 4
    found = subprocess.run([str(bin_dir / "textpile"), "search", "-s", "data/published/summary.db", "quinoa OR "
                            "pumpernickel", "--format", "json"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    assert f'"url": "{site.base_url}/b"' in found.stdout


def test_installed_dagster_code_location_loads(installed, tmp_path):
    bin_dir, _wheel, env = installed
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = dict(env, DAGSTER_HOME=str(home), TEXTPILE_DATA_DIR=str(tmp_path / "data"))
    out = subprocess.run([str(bin_dir / "dagster"), "definitions", "validate", "-m", "textpile_dagster.definitions"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    listed = subprocess.run([str(bin_dir / "dagster"), "asset", "list", "-m", "textpile_dagster.definitions"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert set(listed.stdout.split()) == ASSETS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_installed_demo_runs_outside_the_checkout(installed, tmp_path):
    bin_dir, _wheel, env = installed
    out = subprocess.run([str(bin_dir / "textpile"), "demo", "--no-serve", "--no-progress", "-m", "30",
                          "--port", str(_free_port()), "--data-dir", "demo"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Three queries to try:" in out.stdout
    with closing(register_functions(sqlite3.connect(f"file:{tmp_path / 'demo' / 'published' / 'summary.db'}?mode=ro", uri=True))) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] > 5
