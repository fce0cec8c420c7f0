-- textpile's page tables: textpile's own extension beside the unobtanium summary schema
-- (unobtanium neither writes nor reads them). Written by integration with the generation
-- they describe (textpile.summarize.integrate), never changed after.
-- Sources: dead-simple-search-how-it-works.txt ("Page dates": which source gave a page's
-- modified date); unobtanium-documentation.txt, page "Duplicate Types" (near-duplicates are
-- flagged in duplicate_summary as exact duplicates are; these tables say which rows are
-- near and why); textpile.summarize.scrape.fingerprint (the fingerprint).

-- Where document_description.time_updated_unix_utc came from (dead-simple-search's
-- page_modified_source). A row per generation with a time_updated_unix_utc.
CREATE TABLE IF NOT EXISTS textpile_page_date (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation described
    time_updated_source TEXT NOT NULL CHECK (time_updated_source IN ('markup', 'sitemap', 'last-modified')) -- markup: the page's own dateModified (JSON-LD, microdata, meta tags); sitemap: a sitemap's <lastmod> for its URL; last-modified: the answer's Last-Modified header
) WITHOUT ROWID;

-- The similarity fingerprint of a generation's main text (Text Pile Gen1 text): a 64-bit
-- SimHash over word shingles. A row per generation whose main text has enough words for one.
CREATE TABLE IF NOT EXISTS textpile_page_fingerprint (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation fingerprinted
    simhash INTEGER NOT NULL, -- the SimHash, its 64 bits as a signed integer
    title_key INTEGER NOT NULL -- XXH3-64 of document_description.title (as a signed integer; 0 without a title): near-duplicates share their title
) WITHOUT ROWID;

-- The blocks of each fingerprint (textpile.summarize.scrape.fingerprint.bands) as lookup keys:
-- two fingerprints within the near-duplicate distance share at least one block, so the
-- near-duplicates of a generation are found among the generations that share one.
CREATE TABLE IF NOT EXISTS textpile_fingerprint_band (
    origin_id INTEGER NOT NULL REFERENCES origin(origin_id), -- the origin of the generation's URL
    title_key INTEGER NOT NULL, -- textpile_page_fingerprint.title_key
    band_key INTEGER NOT NULL, -- the block's number times 2^32 plus the block's bits
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation fingerprinted
    PRIMARY KEY (origin_id, title_key, band_key, entity_generation_id)
) WITHOUT ROWID;

-- Near-duplicates: the duplicate_summary rows whose two generations have different text
-- piles (not byte for byte duplicates) but the same origin and title and fingerprints
-- within the near-duplicate distance (textpile.summarize.duplicates). One row per pair,
-- kept when the pair's duplicate status ends (its duplicate_summary row says when).
CREATE TABLE IF NOT EXISTS textpile_near_duplicate (
    subject_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- duplicate_summary.subject_entity_generation_id
    duplicate_of_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- duplicate_summary.duplicate_of_entity_generation_id
    hamming_distance INTEGER NOT NULL, -- the bits in which their fingerprints differ
    PRIMARY KEY (subject_entity_generation_id, duplicate_of_entity_generation_id)
) WITHOUT ROWID;

-- Generations by their Gen2 text pile: the exact duplicates of a generation (an index
-- only: entity_generation keeps its documented columns).
CREATE INDEX IF NOT EXISTS textpile_generation_by_gen2_pile ON entity_generation(text_pile_v0_2_id);
