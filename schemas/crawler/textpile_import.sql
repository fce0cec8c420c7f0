-- textpile's archive imports (textpile import): textpile's own extension beside the
-- unobtanium crawler schema 1.0.0. Each imported archive is one crawl run (an agent row
-- named "import <file name>"); this table says which bytes were imported by which run,
-- so that an archive is never imported twice and an interrupted import resumes.
-- Created IF NOT EXISTS on every open: older crawler databases gain it.
CREATE TABLE IF NOT EXISTS textpile_archive_import (
    sha256 TEXT NOT NULL PRIMARY KEY, -- the hex SHA-256 of the archive file's bytes
    file_name TEXT NOT NULL, -- the archive's file name when it was imported
    kind TEXT NOT NULL CHECK (kind IN ('warc', 'wacz', 'zshot')), -- the archive's kind, from its bytes
    agent_id INTEGER NOT NULL REFERENCES agent(agent_id), -- the crawl run of the import
    started_unix_utc INTEGER NOT NULL, -- when the import started
    finished_unix_utc INTEGER, -- when it finished; NULL while it runs or after it was interrupted
    exchanges_done INTEGER NOT NULL -- archived answers read and written so far, in archive order (the resume point)
) WITHOUT ROWID;
