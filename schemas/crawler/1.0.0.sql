-- unobtanium crawler schema 1.0.0, as textpile writes it, on top of base schema 0.1.0.
-- Source: unobtanium-documentation.txt, pages "Crawler Database", "Crawl Log",
-- "Crawl exit code", "Crawl Data Tree", "Database Data Types".
-- Enumerations: exit_code -> page "Crawl exit code" (textpile.enums.ExitCode);
-- crawl_type -> page "Crawl Log" (textpile.enums.CrawlType); information_source ->
-- page "Information Source" (textpile.enums.InformationSource).

-- Crawling agents: one row per crawl run (one `textpile crawl` invocation or one Dagster
-- crawl_run partition). textpile's crawl-run partition key is hex(agent_uuid).
-- Seed contradictions resolved here:
--   * agent_id is documented as "Text Primary Key" but crawl_log.agent_id references it as
--     Integer and the page "Database Data Types" says a primary key must be
--     INTEGER NOT NULL PRIMARY KEY: it is an INTEGER.
--   * the end time is documented as time_finished_unitx_utc; the same page requires every
--     timestamp column to end in _unix_utc, so it is time_finished_unix_utc.
CREATE TABLE IF NOT EXISTS agent (
    agent_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    time_started_unix_utc INTEGER NOT NULL, -- when the agent started its work
    time_finished_unix_utc INTEGER, -- when the agent finished its work; NULL while it runs or when it was terminated by force
    agent_uuid BLOB NOT NULL UNIQUE, -- external id of the agent (UUID v7, 16 bytes)
    name TEXT NOT NULL, -- the worker name given with --worker-name (default ant)
    http_user_agent TEXT -- the HTTP User-Agent sent; NULL when a user agent does not apply (an import from a dump)
);

-- The crawl log: append only, one row per finished crawl command (page "Crawl Log").
CREATE TABLE IF NOT EXISTS crawl_log (
    crawl_log_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    agent_id INTEGER NOT NULL REFERENCES agent(agent_id), -- the agent responsible for the entry
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL that was crawled
    crawl_type INTEGER NOT NULL, -- crawl type: 0 file_crawl, 1 robotstxt_fetch, 2 metadata_crawl
    crawl_uuid BLOB NOT NULL UNIQUE, -- external id of this crawl (UUID v7, 16 bytes); crawl_summary.crawl_uuid in the summary database
    time_started_unix_utc INTEGER NOT NULL, -- when the action that resulted in this entry started
    time_taken_ms INTEGER NOT NULL, -- how long the action took, in milliseconds
    exit_code INTEGER NOT NULL, -- the crawl exit code of the action, such as 20 file_ingested
    message TEXT -- an error message for humans debugging; NULL when there is nothing to say
);
-- For querying the last exit code of a URL.
CREATE INDEX IF NOT EXISTS crawl_log_quickinfo ON crawl_log(url_id, time_started_unix_utc, exit_code);

-- Requests belonging to a crawl log entry (a fluke retry makes a second one).
CREATE TABLE IF NOT EXISTS request (
    request_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    crawl_log_id INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id), -- the crawl log entry this request belongs to
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL requested (may differ from the crawled URL)
    time_sent_unix_utc INTEGER NOT NULL, -- when the request was sent
    request_duration_ms INTEGER, -- how long the request took, in milliseconds; NULL when measuring failed
    robotstxt_approved BOOL NOT NULL, -- 1 when robots.txt approved the request (robots.txt fetches themselves count as approved)
    exit_code INTEGER NOT NULL, -- the crawl exit code of this single request
    server_last_modified_unix_utc INTEGER, -- the Last-Modified header as sent; NULL when the header was missing or unparsable
    http_status_code INTEGER, -- the HTTP status code; NULL when no HTTP response was received
    http_etag VARCHAR -- the ETag header as sent; NULL when no ETag was received
);

-- File metadata obtained from a request (or from a dump).
CREATE TABLE IF NOT EXISTS file (
    file_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    crawl_log_id INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id), -- the crawl log entry that resulted in this file
    request_id INTEGER REFERENCES request(request_id), -- the request this file came from, of the same crawl log entry; NULL when the file did not come from a network request (a dump)
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL this file is associated with
    last_modified_unix_utc INTEGER, -- last modification from the most reliable source (textpile: the Last-Modified header unless it equals the response's Date header); NULL when no readable date was present
    file_size INTEGER, -- the body size in bytes after content decoding; NULL when unknown
    mimetype_id INTEGER NOT NULL REFERENCES mimetype(mimetype_id), -- the file's media type
    canonical_url_id INTEGER REFERENCES url(url_id) -- the URL the file claims as its canonical version (RFC 6596); NULL when it made no such claim
);

-- Text content of a file, converted to UTF-8 (charset from BOM, header, meta, detection).
CREATE TABLE IF NOT EXISTS file_text (
    file_id INTEGER NOT NULL PRIMARY KEY REFERENCES file(file_id), -- the file this text belongs to
    text TEXT NOT NULL -- unparsed text content of the file as UTF-8
);

-- Redirects resulting from a request. The crawler never follows them.
CREATE TABLE IF NOT EXISTS redirect (
    redirect_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    crawl_log_id INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id), -- the crawl log entry that resulted in this redirect
    request_id INTEGER REFERENCES request(request_id), -- the request this redirect came from; NULL when it did not come from a network request (a dump)
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL that redirected
    last_modified_unix_utc INTEGER, -- last modification per response headers; NULL when none was readable
    to_url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL the redirect points at (its fragment is dropped)
    information_source INTEGER NOT NULL, -- where the redirect came from: 0 unknown, 1 response_header, 2 file_metadata, 3 file_body, 4 summary
    is_permanent BOOL NOT NULL, -- 1 when future requests can be expected to redirect the same way (301, 308)
    by_security_policy BOOL NOT NULL -- 1 for a redirect forced by a security policy (http to https upgrade); currently always 0
);

-- Crawling metadata per URL: every URL considered for crawling. Duplicates what the crawl
-- log knows so that it survives clean-ups of the log.
CREATE TABLE IF NOT EXISTS crawl_candidate (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id), -- the URL this metadata is for
    last_crawl_time_unix_utc INTEGER, -- when the URL was last crawled; NULL when it was discovered but never crawled
    last_crawl_exit_code INTEGER, -- the crawl exit code of the last crawl; NULL when unavailable
    last_contentful_crawl_time_unix_utc INTEGER, -- the last crawl with a contentful exit code (20, 29, 31, 32, 41, 44, 180, 181); NULL when there was none
    last_contentful_http_etag TEXT -- the ETag of that last contentful crawl; NULL when there was none or it had no ETag
);
