-- textpile's pruning (textpile.crawl.crawldb.prune): textpile's own extension beside the
-- unobtanium crawler schema 1.0.0. The links each page gave on its latest answer that
-- said something about it (a contentful crawl, or a noindex page's), so that the URLs
-- a site still reaches are known after a crawl in which unchanged pages answered 304 or
-- were not due. A page without a row: its links are not known (crawled before textpile
-- kept them); it is then requested without validators. Created IF NOT EXISTS on every
-- open: older crawler databases gain it.
CREATE TABLE IF NOT EXISTS textpile_page_links (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id), -- the page
    links BLOB NOT NULL -- the str_url of every URL it leads to on a seed origin (its links unless nofollow, its redirect, refresh or canonical target, its feeds), one per line, UTF-8, zlib-compressed
) WITHOUT ROWID;
