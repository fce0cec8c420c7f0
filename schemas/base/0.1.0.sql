-- unobtanium base schema 0.1.0, as textpile writes it.
-- Source: unobtanium-documentation.txt, pages "Base Database", "Database Info",
-- "Database Data Types", "URL". Embedded in both the crawler and the summary database;
-- never a database of its own.
--
-- Conventions (page "Database Data Types"): Bool is BOOL holding 0/1; Text is UTF-8 TEXT;
-- timestamps are INTEGER unix seconds in columns ending _unix_utc; durations end _ms;
-- UUIDs are 16-byte BLOBs (v7 when textpile makes them). Columns are NOT NULL unless the
-- documentation marks them Null, and every nullable column says what NULL means.

-- Global database metadata: schema versions and the database kind (page "Database Info").
CREATE TABLE IF NOT EXISTS unobtanium_database_info (
    key TEXT NOT NULL PRIMARY KEY, -- one of unobtanium_base_schema_version, unobtanium_database_kind, unobtanium_crawler_schema_version, unobtanium_summary_schema_version
    value TEXT NOT NULL -- "schemaless" value, such as 0.1.0 or crawler
);

-- URL origins: scheme, host and port, the port filled with the well known default for
-- http, https, ws, wss and ftp (page "URL", section Origin).
CREATE TABLE IF NOT EXISTS origin (
    origin_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    port INTEGER, -- the port as given in the URL or the scheme's well known default; NULL when the scheme has neither
    scheme VARCHAR NOT NULL, -- the scheme as given in the URL, such as https
    host VARCHAR, -- the host, punycode for special schemes; NULL when the URL has no host
    str_origin TEXT NOT NULL UNIQUE -- the origin as a URL of only scheme, host and port, such as https://example.org:443; deduplicates origins
);

-- URLs that point to documents. The fragment is never stored here: it points inside a
-- document and is kept beside url ids where it matters (page "Base Database", url).
CREATE TABLE IF NOT EXISTS url (
    url_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    origin_id INTEGER NOT NULL REFERENCES origin(origin_id), -- the URL's origin
    path TEXT, -- the path, such as /docs/index.html; NULL when the URL has none
    query TEXT, -- the query without its ?; NULL when the URL has none
    username TEXT, -- the user name; NULL when the URL has none
    password TEXT, -- the password; NULL when the URL has none
    str_url TEXT NOT NULL UNIQUE -- the whole URL without fragment, for retrieval and deduplication
);

-- Media types (page "Base Database", mimetype).
CREATE TABLE IF NOT EXISTS mimetype (
    mimetype_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    mime_type TEXT NOT NULL, -- the part before the /, such as text
    mime_subtype TEXT NOT NULL, -- the part after the /, such as html or atom+xml
    mime_suffix TEXT, -- the part after the +, such as xml; NULL when the subtype has no +
    charset TEXT, -- the charset parameter, lower case; NULL when none was given
    str_mimetype TEXT NOT NULL UNIQUE -- the whole type with its parameters sorted alphabetically, such as text/html; charset=utf-8
);

-- The parameters of a media type, one row per parameter (page "Base Database", mime_parameter).
CREATE TABLE IF NOT EXISTS mime_parameter (
    mime_parameter_id INTEGER NOT NULL PRIMARY KEY, -- internal id, not used elsewhere
    mimetype_id INTEGER NOT NULL REFERENCES mimetype(mimetype_id), -- the media type this parameter belongs to
    key TEXT NOT NULL, -- the parameter name, lower case
    value TEXT NOT NULL -- the parameter value, unquoted
);
