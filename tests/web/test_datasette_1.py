"""The plugin's tests on Datasette 1.0 too (issue 31): CI runs the suite with the Datasette
the project installs by default (0.65, the newest 0.65.x), and this test runs the web
tests again with the newest 1.0 release (an alpha while there is no other).

A second environment holds only Datasette 1.0 and what it needs beyond this environment
(pip resolves it with this environment's packages visible through a .pth file, so it
installs three small packages from the package index pip is configured with, as
tests/packaging does), then runs tests/web and the semantic web tests in it.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from textpile.web.datasette_versions import DATASETTE_1

REPO = Path(__file__).resolve().parents[2]
#: The newest Datasette 1.0 release, pre-releases included.
DATASETTE_1_REQUIREMENT = "datasette>=1.0a0,<1.1"

pytestmark = pytest.mark.skipif(DATASETTE_1, reason="runs on Datasette 1.0 already (this is the second run)")


@pytest.fixture(scope="module")
def datasette_1_python(tmp_path_factory) -> Path:
    """The Python of an environment that sees this one's packages, Datasette 1.0 before them."""
    env = tmp_path_factory.mktemp("datasette1") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=300)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    # After the environment's own packages: this environment's, with their .pth files
    # (the editable textpile among them).
    (Path(site) / "zz_textpile_environment.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n", "utf-8")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--pre",
                              DATASETTE_1_REQUIREMENT], capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stderr[-3000:]
    return python


def test_the_web_tests_pass_on_datasette_1(datasette_1_python):
    version = subprocess.run([str(datasette_1_python), "-c", "from datasette.version import __version__ as v; "
                              "import textpile.web.datasette_versions as d; print(v, d.DATASETTE_1)"],
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0, version.stderr
    number, is_1 = version.stdout.split()
    assert number.startswith("1.") and is_1 == "True", version.stdout
    run = subprocess.run([str(datasette_1_python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/web",
                          "tests/semantic/test_web_semantic.py", "tests/test_readable_by_other_tools.py"],
                         cwd=REPO, capture_output=True, text=True, timeout=3600)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, f"on Datasette {number}: {summary}\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert " passed" in summary and "failed" not in summary, summary
