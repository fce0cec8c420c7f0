"""What may be crawled: the crawl configuration (the TOML file of the seed), the criterium
chains of its policies, and URL traps."""
