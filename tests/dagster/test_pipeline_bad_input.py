"""`textpile pipeline` and publishing on bad input (issue #5 adversarial findings).

Folder options naming files, definitions that are not Python or fail to import, bad
configurations creating nothing, a publish refusal naming the failing checks, and one
pipeline at a time per data directory (its lock file).
"""

import sqlite3
import sys
import threading
import time
from contextlib import closing

import dagster as dg
import pytest

from textpile_dagster.assets import ALL_ASSETS, ALL_CHECKS
from textpile_dagster.assets.publish import refusal_message
from conftest import REPO, write_config
from textpile_dagster.resources import PipelineSettings, build_resources
from textpile.store.locks import exclusive_lock
from textpile.cli import main
from textpile.cli.pipeline import PIPELINE_LOCK_NAME, pipeline_lock_path
from textpile.cli.pipeline_run import failure_message
from textpile.publish import publish
from textpile.store.database import open_summary_db
from textpile.store.gen2_piles import register_functions

DEFINITIONS = str(REPO / "definitions.py")


@pytest.fixture
def config(tmp_path):
    """A valid crawl configuration (its site is never reached by these tests)."""
    return write_config(tmp_path / "crawl.toml", ["http://127.0.0.1:9/"], max_commands=3)


def _pipeline(capsys, *args):
    status = main(["pipeline", "--no-progress", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.err


def test_data_dir_that_is_a_file(tmp_path, config, capsys):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(afile))
    assert (status, err) == (1, f"textpile: error: --data-dir {afile}: is a file, expected a folder\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(afile / "sub"))
    assert (status, err) == (1, f"textpile: error: --data-dir {afile / 'sub'}: {afile} is a file, "
                                "expected a folder\n")
    assert afile.read_text() == "keep me"


def test_dagster_home_that_is_a_file_is_refused_before_the_data_dir_is_made(tmp_path, config, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    data = tmp_path / "data"
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--dagster-home", str(afile))
    assert (status, err) == (1, f"textpile: error: --dagster-home {afile}: is a file, expected a folder\n")
    assert not data.exists()
    # The default DAGSTER_HOME (DATA_DIR/dagster_home) is checked too.
    data.mkdir()
    (data / "dagster_home").write_text("")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data))
    assert (status, err) == (1, f"textpile: error: --dagster-home {data / 'dagster_home'}: is a file, "
                                "expected a folder\n")
    assert sorted(p.name for p in data.iterdir()) == ["dagster_home"]


def test_definitions_that_are_not_python(tmp_path, config, capsys):
    hostname = tmp_path / "hostname"
    hostname.write_text("myhost\n")
    data = tmp_path / "data"
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(hostname))
    assert (status, err) == (2, f"textpile: configuration error: --definitions {hostname}: not a Python file "
                                "(expected a definitions.py); cannot import it\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(tmp_path))
    assert (status, err) == (2, f"textpile: configuration error: --definitions {tmp_path}: is a folder, "
                                "expected the definitions.py file\n")
    assert not data.exists()


def test_definitions_that_fail_to_import(tmp_path, config, capsys):
    folder = tmp_path / "defs"
    folder.mkdir()
    raising = folder / "definitions.py"
    raising.write_text("import os\nraise RuntimeError('boom at import')\n")
    path_before = list(sys.path)
    data = tmp_path / "data"
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(raising))
    assert (status, err) == (2, f"textpile: configuration error: --definitions {raising}: importing it failed "
                                f"(at {raising}, line 2): RuntimeError: boom at import\n")
    assert sys.path == path_before
    importing = folder / "importing.py"
    importing.write_text("import no_such_module_for_textpile\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(importing))
    assert (status, err) == (2, f"textpile: configuration error: --definitions {importing}: importing it failed "
                                f"(at {importing}, line 1): ModuleNotFoundError: No module named "
                                "'no_such_module_for_textpile'\n")
    broken = folder / "broken.py"
    broken.write_text("def (\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(broken))
    assert status == 2
    assert err.startswith(f"textpile: configuration error: --definitions {broken}: importing it failed: "
                          "SyntaxError: ")
    assert "broken.py, line 1" in err
    other = folder / "other.py"
    other.write_text("x = 1\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "--definitions", str(other))
    assert (status, err) == (2, f"textpile: configuration error: --definitions {other}: defines no "
                                "build_definitions(settings); not textpile's definitions.py\n")
    assert sys.path == path_before
    assert not data.exists()


def test_bad_configuration_creates_nothing(tmp_path, config, capsys):
    data = tmp_path / "data"
    incomplete = tmp_path / "incomplete.toml"
    incomplete.write_text('seeds = ["http://127.0.0.1:9/"]\ndefault_delay_ms = 10\nmax_commands_per_run = 3\n')
    status, err = _pipeline(capsys, "--config", str(incomplete), "--data-dir", str(data))
    assert (status, err) == (2, f"textpile: configuration error: {incomplete}: missing required key(s) "
                                "recrawl_interval\n")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data), "-m", "-3")
    assert status == 2  # the exact wording is the crawl configuration's (another module)
    assert err.startswith("textpile: configuration error: --max-commands: found negative number -3; "
                          "expected a whole number >= 0")
    status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data),
                            "--policy-file", str(tmp_path / "missing.toml"))
    assert status == 2 and "missing.toml" in err
    assert not data.exists()


def test_refusal_message_names_the_failing_checks():
    assert refusal_message({"referential_integrity": "2 orphan references, 0 foreign key violations"}) == (
        "refusing to publish a summary database that fails its checks "
        "(referential_integrity: 2 orphan references, 0 foreign key violations)"
    )
    assert refusal_message({"fts_matches_searchable_generations": "1 FTS rows vs 0 searchable generations: "
                                                                   "1 extra, 0 missing"}).endswith(
        "; the summary changed after the FTS index was rebuilt: materialize fts_index, then published_index")


def test_published_index_refusal_names_the_check(tmp_path):
    settings = PipelineSettings(data_dir=tmp_path / "data", config_path=tmp_path / "unused.toml")
    settings.data_dir.mkdir()
    with closing(open_summary_db(settings.summary_db)) as conn:
        conn.execute("INSERT INTO full_text_entity_index (rowid, text_pile_id, any, title, text) "
                     "VALUES (7, 1, 'any', 'stray', 'a row without its generation')")
        conn.commit()
    with dg.instance_for_test() as instance:
        result = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=build_resources(settings),
                                selection=["published_index"], raise_on_error=False)
    assert not result.success
    assert failure_message(result) == (
        "published_index: refusing to publish a summary database that fails its checks "
        "(fts_matches_searchable_generations: 1 FTS rows vs 0 searchable generations: 1 extra, 0 missing); "
        "the summary changed after the FTS index was rebuilt: materialize fts_index, then published_index"
    )
    assert not settings.published_db.exists()


def test_publish_onto_a_folder_or_under_a_file(tmp_path):
    source = tmp_path / "summary.db"
    open_summary_db(source).close()
    (tmp_path / "folder").mkdir()
    from textpile.errors import DatabaseError

    with pytest.raises(DatabaseError, match="the published path is a folder, expected a file"):
        publish(source, tmp_path / "folder")
    (tmp_path / "afile").write_text("")
    with pytest.raises(DatabaseError, match=f"cannot publish there, {tmp_path / 'afile'} is a file"):
        publish(source, tmp_path / "afile" / "published" / "summary.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder", "summary.db"]


def test_second_pipeline_on_the_same_data_dir_refuses(tmp_path, config, capsys):
    data = tmp_path / "data"
    lock = data / PIPELINE_LOCK_NAME
    assert pipeline_lock_path(data) == lock
    with exclusive_lock(lock) as held:  # another pipeline, as far as the command can tell
        assert held
        status, err = _pipeline(capsys, "--config", str(config), "--data-dir", str(data),
                                "--definitions", DEFINITIONS)
    assert (status, err) == (1, f"textpile: error: another textpile pipeline is running on {data} (lock {lock}); "
                                "wait for it to finish, or give --wait to queue behind it\n")
    assert sorted(p.name for p in data.iterdir()) == []  # no partition, no databases; the lock file went with its holder


def test_second_pipeline_with_wait_runs_after_the_first(tmp_path, changing_site, capsys):
    config = write_config(tmp_path / "crawl.toml", [changing_site.base_url + "/"], max_commands=10)
    data = tmp_path / "data"
    lock = pipeline_lock_path(data)
    taken, release = threading.Event(), threading.Event()

    def other_pipeline():
        with exclusive_lock(lock):
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=other_pipeline)
    holder.start()
    taken.wait(10)
    timer = threading.Timer(1.0, release.set)
    timer.start()
    started = time.monotonic()
    try:
        status = main(["pipeline", "--no-progress", "--wait", "--config", str(config), "--data-dir", str(data),
                       "--definitions", DEFINITIONS])
    finally:
        release.set()
        timer.cancel()
        holder.join()
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert status == 0, err
    assert elapsed >= 1.0
    assert err.startswith(f"textpile pipeline: another textpile pipeline is running on {data} (lock {lock}); "
                          "waiting for it to finish ...\n")
    with closing(register_functions(sqlite3.connect(f"file:{data / 'published' / 'summary.db'}?mode=ro", uri=True))) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0] == 4, err
    # The lock is free again afterwards.
    with exclusive_lock(lock, wait=False) as held:
        assert held
