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
    text_pile_id INTEGER REFERENCES text_pile_gen1(text_pile_id), -- its Gen1 text pile (the text_pile view's row; the reference names the table behind it); NULL when it has no searchable text (redirects, errors, non-HTML)
    text_pile_v0_2_id INTEGER REFERENCES text_pile_gen2(text_pile_id), -- its Gen2 text pile (the text_pile_v0_2 view's row; the reference names the table behind it); NULL when it has no searchable text
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

-- Links parsed out of a generation's file: the documented link_summary, a view over two
-- compact textpile tables (textpile.store.links), because a site's pages repeat the same
-- links (navigation, sidebars, footers). The seed marks entity_generation_id "Primary
-- Key" as well; it is a reference (many links per generation), so it is not.

-- Each distinct link once: where it points and its text.
CREATE TABLE IF NOT EXISTS link_target (
    link_target_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    link_to_url INTEGER NOT NULL REFERENCES url(url_id), -- link_summary.link_to_url
    link_to_fragment TEXT, -- link_summary.link_to_fragment
    text VARCHAR -- link_summary.text
);
-- A destination's links by fragment: integration finds a link's stored target in a few rows
-- (a much-linked page has thousands of fragments and texts). It serves the lookups by
-- destination alone too; link_target_by_url, on link_to_url alone, was its older form.
DROP INDEX IF EXISTS link_target_by_url;
CREATE INDEX IF NOT EXISTS link_target_by_url_fragment ON link_target(link_to_url, link_to_fragment);

-- Each distinct markup of a link once: where in the document it was and what it is.
CREATE TABLE IF NOT EXISTS link_style (
    link_style_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    flags INTEGER NOT NULL, -- link_summary's booleans as bits, from bit 0: rel_nofollow, rel_me, rel_tag, in_header, in_footer, in_aside, in_nav, in_form, in_main, in_article, in_section, in_table, in_figure, in_address, in_code, in_headline, in_list, in_paragraph, contains_headline
    destination_type INTEGER, -- link_summary.destination_type
    link_locality INTEGER NOT NULL, -- link_summary.link_locality
    html_tag_name VARCHAR -- link_summary.html_tag_name
);
CREATE INDEX IF NOT EXISTS link_style_by_value ON link_style(flags, destination_type, link_locality, html_tag_name);

-- The links of one generation, in document order.
CREATE TABLE IF NOT EXISTS link_list (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation the links are part of
    first_link_summary_id INTEGER NOT NULL UNIQUE, -- the link_summary_id of its first link; the others follow one by one
    link_count INTEGER NOT NULL, -- how many links it has (the next generation's ids start after them)
    links_packed BLOB NOT NULL, -- the JSON array of its links in document order, each [link_target_id, link_style_id], packed as text_pile_gen2's values are
    links_size INTEGER NOT NULL -- the JSON array's length in bytes
);

-- Links parsed out of a generation's file (the documented link_summary table), one row per
-- link: link_list, link_target and link_style joined back.
CREATE VIEW IF NOT EXISTS link_summary AS
SELECT l.first_link_summary_id + j.key AS link_summary_id, -- internal id
       l.entity_generation_id AS entity_generation_id, -- the generation the link is part of
       t.link_to_url AS link_to_url, -- the URL the link points at, without fragment
       t.link_to_fragment AS link_to_fragment, -- the fragment the link points at; NULL when it has none
       (s.flags >> 0) & 1 AS rel_nofollow, -- 1 when rel contains nofollow
       (s.flags >> 1) & 1 AS rel_me, -- 1 when rel contains me
       (s.flags >> 2) & 1 AS rel_tag, -- 1 when rel contains tag
       (s.flags >> 3) & 1 AS in_header, -- location signature: inside <header>
       (s.flags >> 4) & 1 AS in_footer, -- location signature: inside <footer>
       (s.flags >> 5) & 1 AS in_aside, -- location signature: inside <aside>
       (s.flags >> 6) & 1 AS in_nav, -- location signature: inside <nav>
       (s.flags >> 7) & 1 AS in_form, -- location signature: inside <form>
       (s.flags >> 8) & 1 AS in_main, -- location signature: inside <main>
       (s.flags >> 9) & 1 AS in_article, -- location signature: inside <article>
       (s.flags >> 10) & 1 AS in_section, -- location signature: inside <section>
       (s.flags >> 11) & 1 AS in_table, -- location signature: inside <table>
       (s.flags >> 12) & 1 AS in_figure, -- location signature: inside <figure>
       (s.flags >> 13) & 1 AS in_address, -- location signature: inside <address>
       (s.flags >> 14) & 1 AS in_code, -- location signature: inside <code>
       (s.flags >> 15) & 1 AS in_headline, -- location signature: inside <h1> to <h6>
       (s.flags >> 16) & 1 AS in_list, -- location signature: inside <ul>, <ol> or <dl>
       (s.flags >> 17) & 1 AS in_paragraph, -- location signature: inside <p>
       (s.flags >> 18) & 1 AS contains_headline, -- 1 when the link element contains a headline element
       s.destination_type AS destination_type, -- link destination type: 0 file, 1 document, 2 feed, 3 stylesheet, 4 script, 100-103 media, 1000 communication; NULL when it could not be derived
       s.link_locality AS link_locality, -- link locality: 0 self, 1 in, 2 out
       s.html_tag_name AS html_tag_name, -- the HTML element the link appeared in, such as a or link; NULL when not from HTML
       t.text AS text -- human readable text describing the link; NULL when it had none
FROM link_list l, json_each(CAST(sqlar_uncompress(l.links_packed, l.links_size) AS TEXT)) j
JOIN link_target t ON t.link_target_id = json_extract(j.value, '$[0]')
JOIN link_style s ON s.link_style_id = json_extract(j.value, '$[1]');

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

-- Text piles Gen2, stored once per digest, compressed (textpile.store.gen2_piles). Encoding
-- of the values: schemas/summary/text_pile_v0_2.md. Each *_packed column holds its value
-- as the SQLite archive (sqlar) format stores a file: the zlib stream (RFC 1950) of its
-- bytes, or the bytes themselves when compressing would not make them shorter; *_size is
-- the value's length in bytes (equal to the packed length when kept as it is). So
-- sqlar_uncompress(packed, size) gives the value back: a function of the sqlite3 shell
-- (built with zlib; it has sqlar_compress too) that textpile registers on its own
-- connections and Datasette's.
CREATE TABLE IF NOT EXISTS text_pile_gen2 (
    text_pile_id INTEGER NOT NULL PRIMARY KEY, -- internal id (text_pile_v0_2.text_pile_id)
    blake2b512_digest BLOB NOT NULL UNIQUE, -- BLAKE2b-512 over the encoded text and metadata (not the cache): exact duplicate detection
    text_packed BLOB NOT NULL, -- text_pile_v0_2.text (UTF-8), packed
    text_size INTEGER NOT NULL, -- its length in bytes
    metadata_packed BLOB NOT NULL, -- text_pile_v0_2.metadata, packed
    metadata_size INTEGER NOT NULL, -- its length in bytes
    segmentation_cache_packed BLOB NOT NULL, -- text_pile_v0_2.segmentation_cache, packed
    segmentation_cache_size INTEGER NOT NULL -- its length in bytes
);

-- Restart points of the packed Gen2 texts longer than 64 KiB: text_packed is one zlib stream
-- with a full flush about every 64 KiB of text, so a reader of a part deep in a long text (a
-- search result's section) inflates it from the nearest point before that part, not from
-- the start (textpile.store.gen2_piles.pack_text). Texts without rows are read from the start.
CREATE TABLE IF NOT EXISTS text_pile_gen2_block (
    text_pile_id INTEGER NOT NULL REFERENCES text_pile_gen2(text_pile_id), -- the packed text
    char_offset INTEGER NOT NULL, -- code points of the text before the point
    byte_offset INTEGER NOT NULL, -- UTF-8 bytes of the text before the point
    packed_offset INTEGER NOT NULL, -- bytes of text_packed before the point (raw deflate data starts there)
    PRIMARY KEY (text_pile_id, char_offset)
) WITHOUT ROWID;

-- Text piles Gen2 (the documented text_pile_v0_2 table), one row per digest: the values
-- unpacked from text_pile_gen2.
CREATE VIEW IF NOT EXISTS text_pile_v0_2 AS
SELECT g2.text_pile_id AS text_pile_id, -- internal id
       g2.blake2b512_digest AS blake2b512_digest, -- BLAKE2b-512 over the encoded text and metadata (not the cache): exact duplicate detection
       CAST(sqlar_uncompress(g2.text_packed, g2.text_size) AS TEXT) AS text, -- the page text in reading order
       sqlar_uncompress(g2.metadata_packed, g2.metadata_size) AS metadata, -- semantic markers and document language, encoded as documented
       sqlar_uncompress(g2.segmentation_cache_packed, g2.segmentation_cache_size) AS segmentation_cache -- segment lengths, relevance markers, sentence lengths, guessed language, encoded as documented
FROM text_pile_gen2 g2;

-- Inserting into text_pile_v0_2 as into the documented table (textpile's integration and
-- any SQL client) stores the values packed (sqlar_compress keeps a value that would not get
-- shorter as it is). INSERT OR IGNORE keeps the row of an existing digest, as for a table;
-- a NULL in a documented column is refused as the table would refuse it.
CREATE TRIGGER IF NOT EXISTS text_pile_v0_2_insert INSTEAD OF INSERT ON text_pile_v0_2
BEGIN
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile_v0_2.blake2b512_digest') WHERE NEW.blake2b512_digest IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile_v0_2.text') WHERE NEW.text IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile_v0_2.metadata') WHERE NEW.metadata IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile_v0_2.segmentation_cache') WHERE NEW.segmentation_cache IS NULL;
    INSERT INTO text_pile_gen2(text_pile_id, blake2b512_digest, text_packed, text_size, metadata_packed, metadata_size,
                               segmentation_cache_packed, segmentation_cache_size)
    VALUES (NEW.text_pile_id, NEW.blake2b512_digest,
            sqlar_compress(CAST(NEW.text AS BLOB)), length(CAST(NEW.text AS BLOB)),
            sqlar_compress(CAST(NEW.metadata AS BLOB)), length(CAST(NEW.metadata AS BLOB)),
            sqlar_compress(CAST(NEW.segmentation_cache AS BLOB)), length(CAST(NEW.segmentation_cache AS BLOB)));
END;

-- Text piles Gen1, stored once per digest (deprecated upstream, kept for the FTS index), as
-- spans of a Gen2 text (textpile.store.text_piles): every Gen1 field is made of lines of
-- the Gen2 text of the same page, so the text is stored once, in text_pile_v0_2. Each
-- field is a JSON array; its elements joined by a line break give the field: an element
-- [start, length] is length bytes of the UTF-8 text_pile_v0_2.text from byte start (from
-- 0; bytes, as substr over a BLOB jumps there where over TEXT it walks every character
-- before; the view reads the unpacked bytes of text_pile_gen2), a JSON string is that
-- text itself (a line the Gen2 text lacks, or one shorter written out). The arrays of
-- text and secondary_text are a few spans (runs of lines) and kept as they are; those of
-- the other fields, which pick single lines (headlines, code, quotes), are packed as
-- text_pile_gen2's values are (*_spans_packed and its length *_spans_size).
CREATE TABLE IF NOT EXISTS text_pile_gen1 (
    text_pile_id INTEGER NOT NULL PRIMARY KEY, -- internal id (text_pile.text_pile_id)
    blake2b512_digest BLOB NOT NULL UNIQUE, -- BLAKE2b-512 of the six fields joined by three line breaks, in column order
    text_pile_v0_2_id INTEGER REFERENCES text_pile_gen2(text_pile_id), -- the Gen2 text the spans point into; NULL when every element is written out
    text_spans TEXT NOT NULL, -- JSON spans of text: the main content lines
    secondary_text_spans TEXT NOT NULL, -- JSON spans of secondary_text: the other lines
    big_headlines_spans_packed BLOB NOT NULL, -- the JSON spans of big_headlines, packed
    big_headlines_spans_size INTEGER NOT NULL, -- their length in bytes
    small_headlines_spans_packed BLOB NOT NULL, -- the JSON spans of small_headlines, packed
    small_headlines_spans_size INTEGER NOT NULL, -- their length in bytes
    code_text_spans_packed BLOB NOT NULL, -- the JSON spans of code_text, packed
    code_text_spans_size INTEGER NOT NULL, -- their length in bytes
    quote_text_spans_packed BLOB NOT NULL, -- the JSON spans of quote_text, packed
    quote_text_spans_size INTEGER NOT NULL -- their length in bytes
);

-- Text piles Gen1 (the documented text_pile table; deprecated upstream, kept for the FTS
-- index), one row per digest: the fields read from their spans in text_pile_gen1, in plain
-- SQL, so Datasette, the sqlite3 shell and FTS5 external content read it as a table.
CREATE VIEW IF NOT EXISTS text_pile AS
SELECT g1.text_pile_id AS text_pile_id, -- internal id
       g1.blake2b512_digest AS blake2b512_digest, -- BLAKE2b-512 of the six fields joined by three line breaks, in column order
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(g1.text_spans) s) AS text, -- main content, one line per paragraph; empty string when none
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(g1.secondary_text_spans) s) AS secondary_text, -- everything not main content; empty string when none
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(CAST(sqlar_uncompress(g1.big_headlines_spans_packed, g1.big_headlines_spans_size) AS TEXT)) s) AS big_headlines, -- h1 and h2 headlines, one per line; empty string when none
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(CAST(sqlar_uncompress(g1.small_headlines_spans_packed, g1.small_headlines_spans_size) AS TEXT)) s) AS small_headlines, -- h3 to h6 headlines, one per line; empty string when none
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(CAST(sqlar_uncompress(g1.code_text_spans_packed, g1.code_text_spans_size) AS TEXT)) s) AS code_text, -- text marked up as code; empty string when none
       (SELECT coalesce(group_concat(CASE s.type WHEN 'text' THEN s.value
                                    ELSE CAST(substr(sqlar_uncompress(g2.text_packed, g2.text_size), json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]')) AS TEXT) END,
                               char(10)), '') FROM json_each(CAST(sqlar_uncompress(g1.quote_text_spans_packed, g1.quote_text_spans_size) AS TEXT)) s) AS quote_text -- text marked up as quote; empty string when none
FROM text_pile_gen1 g1 LEFT JOIN text_pile_gen2 g2 ON g2.text_pile_id = g1.text_pile_v0_2_id;

-- Plain SQL clients may insert into text_pile as into the documented table: the fields are
-- stored written out (textpile's integration stores spans, textpile.store.text_piles).
-- INSERT OR IGNORE keeps the row of an existing digest, as for a table; a NULL in a
-- documented column (each is an empty string when the page has none) is refused as the
-- table would refuse it.
CREATE TRIGGER IF NOT EXISTS text_pile_insert INSTEAD OF INSERT ON text_pile
BEGIN
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.blake2b512_digest') WHERE NEW.blake2b512_digest IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.text') WHERE NEW.text IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.secondary_text') WHERE NEW.secondary_text IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.big_headlines') WHERE NEW.big_headlines IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.small_headlines') WHERE NEW.small_headlines IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.code_text') WHERE NEW.code_text IS NULL;
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: text_pile.quote_text') WHERE NEW.quote_text IS NULL;
    INSERT INTO text_pile_gen1(text_pile_id, blake2b512_digest, text_pile_v0_2_id,
                               text_spans, secondary_text_spans,
                               big_headlines_spans_packed, big_headlines_spans_size,
                               small_headlines_spans_packed, small_headlines_spans_size,
                               code_text_spans_packed, code_text_spans_size,
                               quote_text_spans_packed, quote_text_spans_size)
    SELECT NEW.text_pile_id, NEW.blake2b512_digest, NULL,
           json_array(NEW.text), json_array(NEW.secondary_text),
           sqlar_compress(big_headlines), length(big_headlines),
           sqlar_compress(small_headlines), length(small_headlines),
           sqlar_compress(code_text), length(code_text),
           sqlar_compress(quote_text), length(quote_text)
    FROM (SELECT CAST(json_array(NEW.big_headlines) AS BLOB) AS big_headlines,
                 CAST(json_array(NEW.small_headlines) AS BLOB) AS small_headlines,
                 CAST(json_array(NEW.code_text) AS BLOB) AS code_text,
                 CAST(json_array(NEW.quote_text) AS BLOB) AS quote_text);
END;

-- Token index (experimental): the tokens.
CREATE TABLE IF NOT EXISTS token (
    token_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    token_text TEXT NOT NULL UNIQUE -- the normalized token
);

-- Token index (experimental): how often each token occurs in each Gen1 text pile.
CREATE TABLE IF NOT EXISTS token_statistics (
    token_id INTEGER NOT NULL REFERENCES token(token_id), -- the token
    text_pile_id INTEGER NOT NULL REFERENCES text_pile_gen1(text_pile_id), -- the Gen1 text pile (a row of the text_pile view)
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
