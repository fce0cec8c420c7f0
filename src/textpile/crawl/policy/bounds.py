"""The bounds of the crawl configuration's numbers: textpile's sanity limits (a larger
value is certainly a typo, and would overflow SQLite integers or sleep for ever).

Its own module, without imports, so that the command line parser checks its options
against the same bounds without importing the crawler (:mod:`textpile.cli.crawl`).
"""

#: The longest ``default_delay_ms`` (``--default-delay``): an hour, in milliseconds.
MAX_DEFAULT_DELAY_MS = 3_600_000
#: :data:`MAX_DEFAULT_DELAY_MS` in words, for messages.
MAX_DEFAULT_DELAY_WORDS = "an hour"
#: The most ``max_commands_per_run`` (``--max-commands``).
MAX_COMMANDS_PER_RUN = 10**9
#: The longest ``recrawl_interval`` and ``feed_recrawl_interval``: 100 years, in seconds.
MAX_RECRAWL_INTERVAL_S = 100 * 365 * 86400
#: The most ``max_urls_per_pattern``.
MAX_URLS_PER_PATTERN = 10**9
#: The most ``relevance_min_words``.
MAX_RELEVANCE_MIN_WORDS = 10**9
