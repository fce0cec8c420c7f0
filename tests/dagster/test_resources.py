"""Resources: recorded responses, the staging area layout, partition keys."""

import asyncio
import json

import httpx
import pytest

from textpile_dagster.assets.partitions import agent_uuid_of, key_unix_ms, new_crawl_run_key
from textpile_dagster.resources import RecordedHttpFetcher, RecordedResponse, StagingAreaResource
from textpile.errors import ConfigError


def _get(transport, method, url):
    async def go():
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.request(method, url)
            return response.status_code, response.headers.get("content-type"), response.text
    return asyncio.run(go())


def test_recorded_fetcher_answers_from_file_and_inline(tmp_path):
    recordings = tmp_path / "rec.json"
    recordings.write_text(json.dumps([
        {"url": "http://x.example/", "body": "<p>from file</p>"},
        {"url": "http://x.example/gone", "status": 410, "headers": {"content-type": "text/plain"}, "body": "gone"},
    ]))
    fetcher = RecordedHttpFetcher(recordings_path=str(recordings),
                                  responses=[RecordedResponse(url="http://x.example/", body="<p>inline</p>")])
    transport = fetcher.transport()
    assert _get(transport, "GET", "http://x.example/#frag") == (200, "text/html; charset=utf-8", "<p>inline</p>")
    assert _get(transport, "GET", "http://x.example/gone") == (410, "text/plain", "gone")
    assert _get(transport, "HEAD", "http://x.example/gone") == (410, "text/plain", "")
    assert _get(transport, "GET", "http://x.example/other") == (404, "text/plain", "not recorded")


def test_recorded_fetcher_rejects_bad_recordings(tmp_path):
    with pytest.raises(ConfigError, match="cannot read recorded responses"):
        RecordedHttpFetcher(recordings_path=str(tmp_path / "missing.json")).transport()
    bad = tmp_path / "bad.json"
    bad.write_text('{"url": "http://x.example/"}')
    with pytest.raises(ConfigError, match="expected a JSON list"):
        RecordedHttpFetcher(recordings_path=str(bad)).transport()
    bad.write_text('[{"body": "no url"}]')
    with pytest.raises(ConfigError, match="item 0 is not an object with a url"):
        RecordedHttpFetcher(recordings_path=str(bad)).transport()


def test_partition_keys():
    key = new_crawl_run_key(1_700_000_000_123)
    assert len(key) == 32 and key == key.lower()
    assert agent_uuid_of(key).version == 7
    assert key_unix_ms(key) == 1_700_000_000_123
    assert new_crawl_run_key(1_700_000_000_124) > key
    for bad in ("", "xyz", key.upper(), key[:-1], "0" * 31 + "g"):
        with pytest.raises(ValueError, match="not a crawl-run partition key"):
            agent_uuid_of(bad)


def test_staging_area_layout(tmp_path):
    staging = StagingAreaResource(root=str(tmp_path / "staging"))
    assert staging.staged_keys() == []
    late, early = new_crawl_run_key(2_000_000_000_000), new_crawl_run_key(1_000_000_000_000)
    folder = staging.reset_partition(late)
    (folder / "old.parquet").write_bytes(b"")
    staging.write_marker(late, "_textpile_scraped.json", {"files_scraped": 3})
    assert staging.has_marker(late, "_textpile_scraped.json")
    assert json.loads((folder / "_textpile_scraped.json").read_text())["files_scraped"] == 3
    assert list(staging.reset_partition(late).iterdir()) == []  # reset empties the folder
    staging.reset_partition(early)
    (tmp_path / "staging" / "not-a-key").mkdir()
    assert staging.staged_keys() == [early, late]
    with pytest.raises(ValueError, match="not a crawl-run partition key"):
        staging.partition_dir("../escape")


def test_parquet_row_counts_group_batches(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    staging = StagingAreaResource(root=str(tmp_path))
    key = new_crawl_run_key()
    folder = staging.reset_partition(key)
    for batch, rows in (("batch-00001", 2), ("batch-00002", 3)):
        (folder / batch).mkdir()
        pq.write_table(pa.table({"x": list(range(rows))}), folder / batch / "crawl_log.parquet")
    pq.write_table(pa.table({"x": [1]}), folder / "batch-00001" / "file.parquet")
    assert staging.parquet_row_counts(key) == {"crawl_log": 5, "file": 1}
