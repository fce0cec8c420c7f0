"""Jobs, sensors and the automation of the textpile pipeline.

``crawl_now`` (by hand) and ``recrawl`` (on the configured cadence) start crawl runs: each
adds a ``crawl_runs`` partition together with its run. ``textpile_automation`` evaluates
the assets' automation conditions: summarize after a crawl run lands, publish when the
index's blocking checks passed.
"""

from textpile_dagster.sensors.automation import textpile_automation
from textpile_dagster.sensors.crawl_now import crawl_now
from textpile_dagster.sensors.jobs import ALL_JOBS, crawl_job, pipeline_job, publish_job, summarize_job
from textpile_dagster.sensors.recrawl import recrawl, recrawl_decision, recrawl_tick

ALL_SENSORS = [crawl_now, recrawl, textpile_automation]

__all__ = [
    "ALL_JOBS",
    "ALL_SENSORS",
    "crawl_job",
    "crawl_now",
    "pipeline_job",
    "publish_job",
    "recrawl",
    "recrawl_decision",
    "recrawl_tick",
    "summarize_job",
    "textpile_automation",
]
