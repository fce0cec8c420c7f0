"""The crawl loop: a crawl run, one origin crawler per seed origin, the read backlog that
bounds the memory of pages waiting to be read, and what a run shows and reports."""
