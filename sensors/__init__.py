"""Jobs, the recrawl schedule and the sensors of the textpile pipeline."""

from textpile_dagster.sensors.asset_sensors import partitions_to_summarize, publish_after_index, summarize_after_crawl
from textpile_dagster.sensors.crawl_now import crawl_now
from textpile_dagster.sensors.jobs import ALL_JOBS, crawl_job, pipeline_job, publish_job, summarize_job
from textpile_dagster.sensors.schedules import recrawl_decision, recrawl_schedule

ALL_SCHEDULES = [recrawl_schedule]
ALL_SENSORS = [crawl_now, summarize_after_crawl, publish_after_index]

__all__ = [
    "ALL_JOBS",
    "ALL_SCHEDULES",
    "ALL_SENSORS",
    "crawl_job",
    "crawl_now",
    "partitions_to_summarize",
    "pipeline_job",
    "publish_after_index",
    "publish_job",
    "recrawl_decision",
    "recrawl_schedule",
    "summarize_after_crawl",
    "summarize_job",
]
