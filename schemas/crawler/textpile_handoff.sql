-- textpile's hand-off between site shards (textpile.shards.handoff): textpile's own
-- extension beside the unobtanium crawler schema 1.0.0. A shard's crawl finds links to
-- sites of other shards (seed origins the shard table assigns elsewhere); it crawls none of
-- them and writes each here instead, in the same transaction as the crawl log entry of the
-- page that linked it. The owning shard's next crawl reads the rows addressed to it from
-- every other shard's crawler database (read only) and makes them crawl candidates in its
-- own, remembering how far it read. So each crawler database keeps one writer (its own
-- shard's crawl) and both sides resume after a crash. A row is deleted once taken in and
-- no longer linked (textpile.shards.handoff.prune_outbox). Created IF NOT EXISTS on every open:
-- older crawler databases gain them.

-- The outbox: URLs found by this shard's crawls on sites of other shards.
CREATE TABLE IF NOT EXISTS textpile_handoff (
    handoff_id INTEGER NOT NULL PRIMARY KEY, -- ascending in the order written (a row no longer needed is deleted; the largest is emptied instead, so ids are never reused)
    shard TEXT NOT NULL, -- the shard holding the URL's site when it was written ('' in the emptied largest row: no shard)
    str_url TEXT NOT NULL, -- the URL, as url.str_url ('' in the emptied largest row)
    kind TEXT CHECK (kind IN ('sitemap', 'feed')), -- a sitemap or feed to read (as textpile_meta_resource.kind); NULL: a page
    found_via TEXT, -- for a sitemap or feed: as textpile_meta_resource.found_via; NULL for a page
    depth INTEGER, -- for a sitemap: as textpile_meta_resource.depth; NULL for a page
    found_unix_utc INTEGER NOT NULL, -- when it was first found
    UNIQUE (shard, str_url)
);

-- The inbox's read positions: how far this shard has taken the outbox of each other shard.
CREATE TABLE IF NOT EXISTS textpile_handoff_taken (
    from_shard TEXT NOT NULL PRIMARY KEY, -- the shard whose outbox was read
    last_handoff_id INTEGER NOT NULL, -- its largest handoff_id taken (rows above it are still to take)
    taken_unix_utc INTEGER NOT NULL -- when it was last read
) WITHOUT ROWID;

-- Which crawler database each read position is of: the agent_uuid of its first crawl run
-- (agent rows are never deleted). A position read from a database since made anew (its
-- first crawl run another) is not one of the new database's rows: it is read from its start.
CREATE TABLE IF NOT EXISTS textpile_handoff_source (
    from_shard TEXT NOT NULL PRIMARY KEY, -- the shard whose outbox was read
    first_agent_uuid BLOB NOT NULL -- the agent_uuid of the first crawl run of its crawler database then
) WITHOUT ROWID;
