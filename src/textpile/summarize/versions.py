"""Versions of what each summarizer stage writes, for Dagster's ``code_version``.

Bump a version whenever the stage's output for the same input changes (a new column,
another extraction rule, a fixed bug): the Dagster UI then shows the partitions written
by the older version as stale ("code version changed"), a backfill of them writes them
again, and ``summary_db`` rebuilds the summary database from every partition when a
partition's scrape results are of another extraction version than the one integrated.
"""

#: :func:`textpile.summarize.pipeline.stage_crawl_log`: the staged Parquet tables.
STAGING_VERSION = "1"
#: :func:`textpile.summarize.pipeline.scrape_staged`: text piles, descriptions, links.
EXTRACTION_VERSION = "4"  # 2: sections (scrape_section.parquet); 3: textpile's own main content decision;
# 4: the main text's fingerprint and the source of the modified date (scrape_file.simhash, time_updated_source)
#: :func:`textpile.summarize.pipeline.integrate_staged`: the summary database rows.
INTEGRATION_VERSION = "3"  # 2: section_summary; 3: textpile_pages.sql (date source, fingerprints, near-duplicates)
#: :func:`textpile.index.update.update_search_index`: the FTS5 and search index.
FTS_VERSION = "3"  # 2: textpile's analyzed search tables beside full_text_entity_index; 3: updated by difference
