"""Crawling: from seed URLs to crawl log entries in the crawler database.

The sub-packages, from the bottom up (each imports only those listed before it):

* :mod:`~textpile.crawl.policy`: what may be crawled: the crawl configuration, the
  criterium chains of its policies, URL traps.
* :mod:`~textpile.crawl.fetcher`: getting one answer: the HTTP request with its caps,
  the SSRF filter, connection pools, crawl delays, robots.txt, content sniffing.
* :mod:`~textpile.crawl.parser`: reading one answer: its charset, HTML page, headers,
  meta refresh, packed links.
* :mod:`~textpile.crawl.discovery`: finding more to crawl: sitemaps, feeds (meta
  resources) and sites outside the seeds.
* :mod:`~textpile.crawl.workers`: work off the event loop: worker processes, the page
  readers.
* :mod:`~textpile.crawl.crawldb`: the crawler database: the records of a crawl, their
  SQL, the writer process, recovery of runs that died, pruning.
* :mod:`~textpile.crawl.interpret`: an answer (fetched, or from a web archive) as its
  crawl log entry.
* :mod:`~textpile.crawl.loop`: the crawl loop: a run, one origin crawler per seed
  origin, the read backlog, the report. Entry point: :func:`textpile.crawl.loop.run.run_crawl`.
"""
