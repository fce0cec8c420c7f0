"""Finding more to crawl: sitemaps and feeds (meta resources) read for the URLs they list,
and sites outside the seeds (site discovery)."""
