-- textpile's adaptive recrawl (textpile.crawl.policy.recrawl): textpile's own extension
-- beside the unobtanium crawler schema 1.0.0. Each URL's own recrawl interval, from its
-- history: an unchanged answer lengthens it, a change shortens it (Nutch's
-- AdaptiveFetchSchedule, StormCrawler's AdaptiveScheduler). A URL without a row is due
-- after the configuration's recrawl_interval. Created IF NOT EXISTS on every open:
-- older crawler databases gain it.
CREATE TABLE IF NOT EXISTS textpile_recrawl (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id), -- the URL
    interval_s INTEGER, -- its own recrawl interval in seconds (kept within the configuration's min_recrawl_interval and max_recrawl_interval when used); NULL: the configuration's recrawl_interval
    content_digest INTEGER, -- XXH3-64 of the text of its last answer with a stored text (as a signed integer): the next one is compared with it; NULL when none was stored
    unchanged_answers INTEGER NOT NULL DEFAULT 0 -- the answers in a row that were unchanged (304, or the same text)
) WITHOUT ROWID;
