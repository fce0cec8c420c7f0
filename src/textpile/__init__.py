"""textpile: a self-hostable search engine for a chosen set of websites.

The library is split by stage: :mod:`textpile.crawl` (web to crawler database),
:mod:`textpile.summarize` (crawler database to summary database and FTS index),
:mod:`textpile.search` (queries over a summary database) and :mod:`textpile.web`
(the Datasette plugin). :mod:`textpile.store` holds the database layer shared by all.
The library never imports Dagster; the Dagster layer lives outside ``src/``.
"""

__version__ = "0.1.0"
