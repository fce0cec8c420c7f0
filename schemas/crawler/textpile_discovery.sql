-- textpile's discovery tables: textpile's own extension beside the unobtanium crawler
-- schema 1.0.0 (unobtanium neither writes nor reads them). They hold what the crawler
-- learns besides crawl log entries: the sitemaps and feeds it reads for URLs (atextcrawler's
-- meta resources), the URLs they list with their dates, and the links to sites outside the
-- seeds (atextcrawler's site discovery) with the verdict on each site's start page.
-- Sources: dead-simple-search-how-it-works.txt ("Sitemap discovery", "Page dates");
-- atextcrawler-introduction.md (feeds, feed crawls, site_link, relevance from the start page).
-- Every table is created IF NOT EXISTS on every open: older crawler databases gain them.

-- Sitemaps and feeds: URLs the crawler reads for the URLs they list. Each is also a
-- crawl_candidate, crawled (and logged) like any URL through the crawler's fetcher.
CREATE TABLE IF NOT EXISTS textpile_meta_resource (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id), -- the sitemap's or feed's URL
    kind TEXT NOT NULL CHECK (kind IN ('sitemap', 'feed')), -- what it is, from how it was found and then from its content (a sitemap that turns out to be an RSS feed becomes a feed)
    found_via TEXT NOT NULL CHECK (found_via IN ('robots.txt', 'well-known', 'sitemap index', 'link', 'sitemap')), -- how it was found: a robots.txt Sitemap: line, the well-known /sitemap.xml or /sitemap_index.xml, a sitemap index, a <link rel="alternate"> or Link header or an <a> link, a sitemap's <loc>
    depth INTEGER NOT NULL, -- sitemap index levels above it: 0 unless a sitemap index listed it (at most 3)
    first_seen_unix_utc INTEGER NOT NULL, -- when it was found
    last_read_unix_utc INTEGER, -- when its content was last read as a sitemap or feed; NULL until then
    entries INTEGER, -- the URLs (or, for a sitemap index, sitemaps) it listed at that read; NULL until read
    lastmod_kept BOOL -- whether the dates of that read were kept (1) or discarded (0: one value covered more than half of its dated URLs, a build stamp); NULL when it gave no dates or was not read yet
) WITHOUT ROWID;

-- The URLs sitemaps and feeds listed, with the date each gave (latest read wins).
CREATE TABLE IF NOT EXISTS textpile_listed_url (
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL listed (a crawl_candidate; in a shard's crawler database also a URL of another shard's site, handed off)
    listed_by_url_id INTEGER NOT NULL REFERENCES textpile_meta_resource(url_id), -- the sitemap or feed listing it
    modified_unix_utc INTEGER, -- the sitemap's <lastmod>, or the feed entry's updated (else published) date; NULL when it gave none, or the sitemap's dates were discarded
    seen_unix_utc INTEGER NOT NULL, -- when that listing was read
    PRIMARY KEY (url_id, listed_by_url_id)
) WITHOUT ROWID;

-- URLs whose listing date is later than their last crawl: due again, and crawled before
-- other recrawls (a row is removed when the URL is crawled).
CREATE TABLE IF NOT EXISTS textpile_listed_change (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id) -- the URL a sitemap or feed says changed
);

-- Links from crawled pages to origins outside the seeds (atextcrawler's site_link), as
-- the page's latest crawl had them. Written only with discover_sites = true.
CREATE TABLE IF NOT EXISTS textpile_site_link (
    from_url_id INTEGER NOT NULL REFERENCES url(url_id), -- the crawled page
    to_origin_id INTEGER NOT NULL REFERENCES origin(origin_id), -- the origin linked to
    links INTEGER NOT NULL, -- distinct URLs of that origin the page linked to
    seen_unix_utc INTEGER NOT NULL, -- the page's crawl that found them
    PRIMARY KEY (from_url_id, to_origin_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS textpile_site_link_by_origin ON textpile_site_link(to_origin_id);

-- The relevance verdict on a discovered site's start page (textpile discovered --check).
CREATE TABLE IF NOT EXISTS textpile_site_check (
    origin_id INTEGER NOT NULL PRIMARY KEY REFERENCES origin(origin_id), -- the discovered site
    start_url_id INTEGER NOT NULL REFERENCES url(url_id), -- the start page fetched (the origin's /)
    checked_unix_utc INTEGER NOT NULL, -- when it was fetched
    exit_code INTEGER NOT NULL, -- the crawl exit code of that fetch (170 when robots.txt disallowed it: not fetched)
    relevant BOOL, -- 1 when the start page met the relevance criteria, 0 when not; NULL when it could not be judged (not fetched, not a page)
    verdict TEXT NOT NULL -- why, for people: the criteria met or missed, or what went wrong
) WITHOUT ROWID;
