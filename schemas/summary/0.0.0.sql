-- unobtanium summary schema 0.0.0 (with the text_pile_v0_2 additions of
-- 0.0.0-textrank-preview.0), as textpile writes it, on top of base schema 0.1.0.
-- Source: unobtanium-documentation.txt, pages "Summary Database", "Entity Generation",
-- "Entity Data Tree", "Crawl Summary", "Duplicate Types", "Text Pile Gen1",
-- "Text Pile Gen2", "Calculating Indexiness", "Link Locality", "Location Signature",
-- "Link destination type", "Information Source", "Token Index".
-- The text_pile_v0_2 blob encodings are defined in schemas/summary/text_pile_v0_2.md.

-- Entity generations: the space/time coordinates of one version of a document.
CREATE TABLE IF NOT EXISTS entity_generation (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    entity_generation_uuid BLOB NOT NULL, -- external id (UUID v7, 16 bytes)
    url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL this generation is about
    url_fragment TEXT, -- the id of the document element this generation is about; NULL for the whole document
    first_seen_unix_utc INTEGER NOT NULL, -- first known existence (the request time of the crawl that opened it)
    last_seen_unix_utc INTEGER NOT NULL, -- last known existence, moved by every crawl that finds it unchanged
    confirmed_end_unix_utc INTEGER, -- when the generation was known to be closed (the next generation's first_seen, or the 404/410); NULL while it is open
    marked_duplicate BOOL NOT NULL, -- 1 when duplicate_summary flags it as an exact duplicate (a cache of that table)
    text_pile_id INTEGER REFERENCES text_pile(text_pile_id), -- its Gen1 text pile; NULL when it has no searchable text (redirects, errors, non-HTML)
    text_pile_v0_2_id INTEGER REFERENCES text_pile_v0_2(text_pile_id), -- its Gen2 text pile; NULL when it has no searchable text
    CHECK (first_seen_unix_utc <= last_seen_unix_utc)
);
CREATE INDEX IF NOT EXISTS entity_generation_by_uuid ON entity_generation(entity_generation_uuid);
CREATE INDEX IF NOT EXISTS entity_generation_by_first_seen ON entity_generation(url_id, url_fragment, first_seen_unix_utc);
CREATE INDEX IF NOT EXISTS entity_generation_by_text_pile ON entity_generation(text_pile_id, confirmed_end_unix_utc);
CREATE INDEX IF NOT EXISTS entity_generation_by_active ON entity_generation(marked_duplicate, confirmed_end_unix_utc);

-- Exact duplicates: the subject generation has the same Gen2 text pile as another of the
-- same origin with a shorter URL. Always addressed through the subject generation.
CREATE TABLE IF NOT EXISTS duplicate_summary (
    subject_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation flagged as duplicate
    duplicate_of_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation it duplicates
    duplicate_status_start_unix_utc INTEGER NOT NULL, -- when the duplicate status started (when it was detected)
    duplicate_status_end_unix_utc INTEGER -- when the duplicate status ended; NULL while it lasts
);
CREATE INDEX IF NOT EXISTS duplicate_summary_by_duplicate ON duplicate_summary(subject_entity_generation_id, duplicate_status_end_unix_utc);

-- One row per integrated crawl log entry (page "Crawl Summary").
CREATE TABLE IF NOT EXISTS crawl_summary (
    crawl_summary_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation this crawl resulted in or confirmed
    was_robotstxt_approved BOOL NOT NULL, -- 1 when robots.txt approved the crawl
    crawl_type INTEGER NOT NULL, -- crawl type, as in crawl_log
    crawl_uuid BLOB NOT NULL, -- crawl_log.crawl_uuid of the crawler database: marks the crawl as integrated
    agent_uuid BLOB NOT NULL, -- agent.agent_uuid of the agent that made the requests
    time_started_unix_utc INTEGER NOT NULL, -- when the crawl action started (the request's time sent)
    exit_code INTEGER NOT NULL, -- the crawl exit code of the crawl action
    request_duration_ms INTEGER -- how long the crawl action took, in milliseconds; NULL when the measurement failed
);
CREATE INDEX IF NOT EXISTS crawl_summary_by_crawl_uuid ON crawl_summary(crawl_uuid);

-- HTTP extension of crawl_summary; present only when the crawl got an HTTP response.
CREATE TABLE IF NOT EXISTS http_summary (
    crawl_summary_id INTEGER NOT NULL PRIMARY KEY REFERENCES crawl_summary(crawl_summary_id), -- the crawl summary extended
    status_code INTEGER NOT NULL, -- the HTTP status code
    etag TEXT -- the ETag header; NULL when none was returned
);

-- File metadata of a generation, from the crawler database's file table.
CREATE TABLE IF NOT EXISTS file_summary (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation extended (one file per generation)
    file_size INTEGER, -- the file size in bytes; NULL when unknown
    mimetype_id INTEGER REFERENCES mimetype(mimetype_id), -- the file's media type; NULL when unknown
    canonical_url_id INTEGER REFERENCES url(url_id) -- the URL the file claims as canonical; NULL when it made no such claim
);

-- Redirect metadata of a generation, from the crawler database's redirect table.
CREATE TABLE IF NOT EXISTS redirect_summary (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation extended (one redirect per generation)
    to_url_id INTEGER NOT NULL REFERENCES url(url_id), -- the URL the redirect points at
    information_source INTEGER NOT NULL, -- where the redirect came from (Information Source enumeration)
    by_security_policy BOOL NOT NULL, -- 1 when caused by a security policy; currently always 0
    to_url_fragment TEXT -- the fragment of the target; NULL when it has none (the crawler database keeps none, so always NULL)
);

-- Links parsed out of a generation's file. The seed marks entity_generation_id
-- "Primary Key" as well; it is a reference (many links per generation), so it is not.
CREATE TABLE IF NOT EXISTS link_summary (
    link_summary_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation the link is part of
    link_to_url INTEGER NOT NULL REFERENCES url(url_id), -- the URL the link points at, without fragment
    link_to_fragment TEXT, -- the fragment the link points at; NULL when it has none
    rel_nofollow BOOL NOT NULL, -- 1 when rel contains nofollow
    rel_me BOOL NOT NULL, -- 1 when rel contains me
    rel_tag BOOL NOT NULL, -- 1 when rel contains tag
    in_header BOOL NOT NULL, -- location signature: inside <header>
    in_footer BOOL NOT NULL, -- location signature: inside <footer>
    in_aside BOOL NOT NULL, -- location signature: inside <aside>
    in_nav BOOL NOT NULL, -- location signature: inside <nav>
    in_form BOOL NOT NULL, -- location signature: inside <form>
    in_main BOOL NOT NULL, -- location signature: inside <main>
    in_article BOOL NOT NULL, -- location signature: inside <article>
    in_section BOOL NOT NULL, -- location signature: inside <section>
    in_table BOOL NOT NULL, -- location signature: inside <table>
    in_figure BOOL NOT NULL, -- location signature: inside <figure>
    in_address BOOL NOT NULL, -- location signature: inside <address>
    in_code BOOL NOT NULL, -- location signature: inside <code>
    in_headline BOOL NOT NULL, -- location signature: inside <h1> to <h6>
    in_list BOOL NOT NULL, -- location signature: inside <ul>, <ol> or <dl>
    in_paragraph BOOL NOT NULL, -- location signature: inside <p>
    contains_headline BOOL NOT NULL, -- 1 when the link element contains a headline element
    destination_type INTEGER, -- link destination type: 0 file, 1 document, 2 feed, 3 stylesheet, 4 script, 100-103 media, 1000 communication; NULL when it could not be derived
    link_locality INTEGER NOT NULL, -- link locality: 0 self, 1 in, 2 out
    html_tag_name VARCHAR, -- the HTML element the link appeared in, such as a or link; NULL when not from HTML
    text VARCHAR -- human readable text describing the link; NULL when it had none
);
CREATE INDEX IF NOT EXISTS link_summary_by_entity_generation ON link_summary(entity_generation_id);

-- Document metadata, derived best effort.
CREATE TABLE IF NOT EXISTS document_description (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation described
    time_created_unix_utc INTEGER, -- when the document was published, from its own markup only (JSON-LD, microdata, Open Graph, Dublin Core); NULL when unavailable or discarded as doubtful
    time_updated_unix_utc INTEGER, -- when the document was last updated (dateModified, else Last-Modified); NULL when unavailable or discarded as doubtful
    primary_language VARCHAR, -- IANA language subtag of the primary language, such as en; NULL when unavailable
    title TEXT, -- the <title>; NULL when unavailable
    primary_headline TEXT, -- the main headline (not the site name); NULL when unavailable
    description TEXT, -- meta description, else og:description; NULL when unavailable
    indexiness INTEGER NOT NULL -- indexiness score: negative for leaf pages, positive for navigation pages
);

-- Text piles Gen1, stored once per digest (deprecated upstream, kept for the FTS index).
CREATE TABLE IF NOT EXISTS text_pile (
    text_pile_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    blake2b512_digest BLOB NOT NULL UNIQUE, -- BLAKE2b-512 of the six fields joined by three line breaks, in column order
    text TEXT NOT NULL, -- main content, one line per paragraph; empty string when none
    secondary_text TEXT NOT NULL, -- everything not main content; empty string when none
    big_headlines TEXT NOT NULL, -- h1 and h2 headlines, one per line; empty string when none
    small_headlines TEXT NOT NULL, -- h3 to h6 headlines, one per line; empty string when none
    code_text TEXT NOT NULL, -- text marked up as code; empty string when none
    quote_text TEXT NOT NULL -- text marked up as quote; empty string when none
);

-- Text piles Gen2, stored once per digest. Encoding: schemas/summary/text_pile_v0_2.md.
CREATE TABLE IF NOT EXISTS text_pile_v0_2 (
    text_pile_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    blake2b512_digest BLOB NOT NULL UNIQUE, -- BLAKE2b-512 over the encoded text and metadata (not the cache): exact duplicate detection
    text TEXT NOT NULL, -- the page text in reading order
    metadata BLOB NOT NULL, -- semantic markers and document language, encoded as documented
    segmentation_cache BLOB NOT NULL -- segment lengths, relevance markers, sentence lengths, guessed language, encoded as documented
);

-- Token index (experimental): the tokens.
CREATE TABLE IF NOT EXISTS token (
    token_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    token_text TEXT NOT NULL UNIQUE -- the normalized token
);

-- Token index (experimental): how often each token occurs in each Gen1 text pile.
CREATE TABLE IF NOT EXISTS token_statistics (
    token_id INTEGER NOT NULL REFERENCES token(token_id), -- the token
    text_pile_id INTEGER NOT NULL REFERENCES text_pile(text_pile_id), -- the text pile
    occurances INTEGER NOT NULL, -- occurrences of the token in the text pile (the seed's spelling)
    UNIQUE (token_id, text_pile_id)
);

-- What full_text_entity_index reads its column values from (FTS5 external content, so the
-- text is stored once, in text_pile): one row per generation with a Gen1 text pile, the
-- columns of full_text_entity_index. The index itself holds only searchable generations;
-- rows of generations closed since the last rebuild keep their content here.
CREATE VIEW IF NOT EXISTS full_text_entity_source AS
SELECT eg.entity_generation_id AS entity_generation_id, eg.text_pile_id AS text_pile_id, 'any' AS any,
       coalesce(nullif(dd.title, ''), nullif(dd.primary_headline, ''), '') AS title, dd.description AS description,
       tp.text AS text, tp.secondary_text AS secondary_text, tp.big_headlines AS big_headlines,
       tp.small_headlines AS small_headlines, tp.code_text AS code_text, tp.quote_text AS quote_text
FROM entity_generation eg
JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id;

-- Full text index over open, non-duplicate generations; rowid is entity_generation_id.
-- External content (full_text_entity_source): the columns read as documented, the text is
-- not stored twice. Count its rows with MATCH 'any : "any"' (a plain count(*) counts the view).
CREATE VIRTUAL TABLE IF NOT EXISTS full_text_entity_index USING fts5(
    text_pile_id UNINDEXED, -- the Gen1 text pile the row was derived from
    any, -- always the string "any", so that purely negative queries can be written (any:any NOT ...)
    title, -- document_description.title
    description, -- document_description.description; NULL when none
    text, -- text_pile.text
    secondary_text, -- text_pile.secondary_text
    big_headlines, -- text_pile.big_headlines
    small_headlines, -- text_pile.small_headlines
    code_text, -- text_pile.code_text
    quote_text, -- text_pile.quote_text
    content = 'full_text_entity_source',
    content_rowid = 'entity_generation_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
