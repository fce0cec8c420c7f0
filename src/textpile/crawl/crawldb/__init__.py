"""The crawler database during a crawl: the records of a crawl (log entries, candidates),
their SQL, the writer process that writes them off the event loop, and recovery of crawl
runs whose process died."""
