"""Automation conditions of the assets (evaluated by the ``textpile_automation`` sensor).

* :data:`AFTER_CRAWL` (crawl_log_staging, scrape_results): Dagster's ``eager()``: a
  partition is staged once its crawl run landed, and scraped once it is staged (both in
  one run when requested on the same tick).
* :data:`AFTER_SCRAPE` (summary_db): whenever a scrape_results partition updated (or is
  requested on the same tick) and none is in progress. Unlike ``eager()`` it does not wait
  for missing partitions: a crawl run that failed has no scrape results and must not stop
  the summary for good (summary_db integrates in key order and stops before a partition
  that is staged but not scraped).
* :data:`AFTER_CHECKS` (fts_index, published_index): ``eager()`` and
  ``all_deps_blocking_checks_passed()``: an index that failed its blocking checks is not
  built upon nor published.

So a crawl run landing leads, one automation tick after the other, to a run staging and
scraping its partition, then summary_db (with its checks), fts_index (with its check),
published_index.
"""

from dagster import AutomationCondition

AFTER_CRAWL = AutomationCondition.eager()

AFTER_SCRAPE = (
    AutomationCondition.any_deps_updated().since_last_handled()
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.in_progress()
).with_label("after_scrape")

AFTER_CHECKS = AutomationCondition.eager() & AutomationCondition.all_deps_blocking_checks_passed()
