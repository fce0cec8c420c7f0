"""Declarative automation: which assets follow their upstream by themselves.

The conditions live on the assets (see ``textpile_dagster.assets``); this sensor
evaluates them. After a crawl run lands (``crawl_run[p]`` materialized, by ``crawl_now``,
``recrawl`` or by hand), its partition is staged and scraped, then ``summary_db``,
``fts_index`` and ``published_index`` follow, as one backfill in dependency order;
``published_index`` only when the blocking checks of ``fts_index`` passed, and
``fts_index`` only when those of ``summary_db`` passed. Nothing is requested twice for
the same update, nothing while its upstream is still running.
"""

from dagster import AssetSelection, AutomationConditionSensorDefinition, DefaultSensorStatus

#: Seconds between two evaluations.
AUTOMATION_INTERVAL_S = 30

textpile_automation = AutomationConditionSensorDefinition(
    "textpile_automation",
    target=AssetSelection.all(),
    default_status=DefaultSensorStatus.STOPPED,
    minimum_interval_seconds=AUTOMATION_INTERVAL_S,
    description="Summarizes each crawl run once it lands (crawl_log_staging and scrape_results of its "
    "partition, then summary_db and fts_index) and publishes the index when the blocking checks passed.",
)
