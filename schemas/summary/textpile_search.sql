-- textpile's search tables: textpile's own extension beside the unobtanium summary schema
-- (unobtanium neither writes nor reads them). section_summary is written by integration
-- (one row per section of a generation's document); the other tables are derived, kept up
-- to date with full_text_entity_index by every summarize for the generations it opened,
-- closed or marked duplicate (textpile.index.update), and rebuilt whole on demand. The
-- FTS5 tables are contentless: they hold analyzed terms (textpile.search.analysis) and no
-- copy of the text, so reading their columns gives NULL; join their rowid to
-- search_page.docid and search_section.docid.

-- Sections of a generation's document: headings and definition terms with their anchors
-- (textpile.summarize.scrape.sections). A section is the element of the document that
-- entity_generation.url_fragment can name.
CREATE TABLE IF NOT EXISTS section_summary (
    section_summary_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation whose document holds the section
    section_index INTEGER NOT NULL, -- the section's position in the document, from 0
    anchor TEXT, -- the fragment (element id, without #) that scrolls to the section; NULL when it has none
    title TEXT NOT NULL, -- the visible text of the heading or definition term
    level INTEGER NOT NULL, -- 1 to 6 for headings h1 to h6, 7 for a definition term with an id
    start_offset INTEGER NOT NULL, -- where the section starts in the Gen2 text (text_pile_v0_2.text), in code points from 0
    end_offset INTEGER NOT NULL, -- where the section ends in the Gen2 text, in code points, exclusive
    UNIQUE (entity_generation_id, section_index)
);

-- Per searchable page: what the reranker knows about it besides its text.
CREATE TABLE IF NOT EXISTS search_page (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the searchable generation
    docid INTEGER NOT NULL UNIQUE, -- its rowid in search_index: the page's query-independent prior as a key, largest first, then entity_generation_id (textpile.index.docids), so FTS5 yields the likeliest pages first
    origin_id INTEGER NOT NULL REFERENCES origin(origin_id), -- the origin of its URL
    language TEXT, -- the language whose stemmer analyzed the page (two letters); NULL when not stemmed
    term_count INTEGER NOT NULL, -- the number of index terms in its main text
    text_length INTEGER NOT NULL, -- the length of its Gen2 text (text_pile_v0_2.text) in code points; 0 when it has none
    in_links INTEGER NOT NULL, -- other searchable pages linking to it
    content_in_links INTEGER NOT NULL, -- of those, pages linking from outside nav, header, footer and aside
    link_density REAL NOT NULL, -- the share of its main text (text_pile.text) that is the text of its links outside nav, header, footer and aside, 0 to 1
    title_terms TEXT NOT NULL, -- its title, the title's parts around site-name separators and its primary headline, analyzed, one per line
    title_words TEXT NOT NULL, -- the same lines analyzed without stemming
    url_terms TEXT NOT NULL, -- the words of its URL path, analyzed
    url_last_terms TEXT NOT NULL, -- the words of the last segment of its URL path, analyzed
    anchor_terms TEXT NOT NULL -- the texts of links to it (at most 40, most linking pages first) analyzed, one per line; empty string when none
);

-- Per section of a searchable page: its docid in section_search_index. The rerank analyzes
-- the section's title and anchor name from section_summary at query time
-- (textpile.index.pages.section_terms).
CREATE TABLE IF NOT EXISTS search_section (
    section_summary_id INTEGER NOT NULL REFERENCES section_summary(section_summary_id), -- the section (one row each, but none for a boilerplate heading: textpile.index.boilerplate)
    docid INTEGER NOT NULL PRIMARY KEY -- its rowid in section_search_index (and this table's): its page's docid times 32768 plus its position among the page's indexed sections (textpile.index.docids)
);

-- The stemmer languages of the search index: queries are analyzed in each of them.
CREATE TABLE IF NOT EXISTS search_language (
    language TEXT NOT NULL PRIMARY KEY, -- a two-letter language code whose Snowball stemmer analyzed pages
    pages INTEGER NOT NULL -- how many searchable pages it analyzed
);

-- Page-level search index over the searchable generations; rowid is search_page.docid.
CREATE VIRTUAL TABLE IF NOT EXISTS search_index USING fts5(
    title, -- document_description.title and primary_headline, analyzed
    headings, -- the titles of the page's headings, analyzed
    names, -- section anchors that are names (json.dumps, sql-createindex) and definition terms, analyzed
    parts, -- the parts of CamelCase words of the page (HttpResponse -> http response), analyzed
    url, -- the words of the URL path, analyzed
    anchor_text, -- texts of links to the page from other searchable pages, analyzed
    description, -- document_description.description, analyzed
    text, -- text_pile.text (main content), analyzed
    secondary_text, -- text_pile.secondary_text without the lines that are the page's title, headline or a section title (a sidebar's table of contents), analyzed
    content = '',
    tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* M*'''
);

-- Section-level search index; rowid is search_section.docid.
CREATE VIRTUAL TABLE IF NOT EXISTS section_search_index USING fts5(
    title, -- section_summary.title, analyzed
    name, -- section_summary.anchor when it is a name, analyzed; empty otherwise
    anchor_text, -- texts of links to the page with this anchor as fragment, analyzed
    content = '',
    tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* M*'''
);

-- The first tier of search_index and section_search_index (a tiered index): the same rows
-- for the pages with docid up to search_top_tier.last_docid and their sections. FTS5's
-- bm25() counts the pages holding each phrase by reading its whole document list; over
-- the first tier that list is short. Empty when the index has too few pages for a tier.
CREATE VIRTUAL TABLE IF NOT EXISTS search_index_top USING fts5(
    title, headings, names, parts, url, anchor_text, description, text, secondary_text, -- as in search_index
    content = '',
    tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* M*'''
);
CREATE VIRTUAL TABLE IF NOT EXISTS section_search_index_top USING fts5(
    title, name, anchor_text, -- as in section_search_index
    content = '',
    tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* M*'''
);

-- The size of the search index and where its first tier ends: one row.
CREATE TABLE IF NOT EXISTS search_top_tier (
    pages INTEGER NOT NULL, -- the pages in search_index
    sections INTEGER NOT NULL, -- the sections in section_search_index
    last_docid INTEGER NOT NULL, -- the last search_page.docid in search_index_top (every page with a docid up to it); 0 when it is empty
    last_section_docid INTEGER NOT NULL, -- every section_search_index row up to this docid is in section_search_index_top; 0 when it is empty
    top_pages INTEGER NOT NULL, -- the pages in search_index_top
    top_sections INTEGER NOT NULL -- the sections in section_search_index_top
);

-- What the derived search tables were made by: one row.
CREATE TABLE IF NOT EXISTS search_index_build (
    version TEXT NOT NULL, -- the index layout and analysis version (textpile.index.schema.index_version); another one is rebuilt whole
    rebuilt_unix_utc INTEGER NOT NULL, -- when the tables were last rebuilt whole
    updated_unix_utc INTEGER NOT NULL -- when they were last brought up to date
);

-- Per link of link_target (a destination, fragment and text): how many indexed pages
-- hold it. The anchor texts of a page and of its sections are read from here.
CREATE TABLE IF NOT EXISTS search_link (
    link_target_id INTEGER NOT NULL PRIMARY KEY REFERENCES link_target(link_target_id), -- the link (with a text)
    pages INTEGER NOT NULL -- indexed pages (search_page) other than the linked one that hold the link
);

-- Per URL: how many indexed pages link to it (search_page.in_links of the page at the URL).
CREATE TABLE IF NOT EXISTS search_inlink (
    url_id INTEGER NOT NULL PRIMARY KEY REFERENCES url(url_id), -- the linked URL
    pages INTEGER NOT NULL, -- indexed pages at other URLs that link to it
    content_pages INTEGER NOT NULL -- of those, pages with such a link outside nav, header, footer and aside
);

-- Per origin: how many pages it has in the index (the base of boilerplate_share).
CREATE TABLE IF NOT EXISTS search_origin (
    origin_id INTEGER NOT NULL PRIMARY KEY REFERENCES origin(origin_id), -- the origin
    pages INTEGER NOT NULL -- its indexed pages
);

-- Per origin and title of a heading without an anchor: how many of the origin's indexed
-- pages have it. A title on more than half of them, and on 20 or more, is boilerplate (a
-- sidebar's "Navigation"): neither a section nor a heading of the search index.
CREATE TABLE IF NOT EXISTS search_heading (
    origin_id INTEGER NOT NULL REFERENCES origin(origin_id), -- the origin
    title TEXT NOT NULL, -- the heading's title (section_summary.title, anchor NULL)
    pages INTEGER NOT NULL, -- the origin's indexed pages with such a heading
    PRIMARY KEY (origin_id, title)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_heading_by_pages ON search_heading(origin_id, pages);
-- (search_page has the index search_page_by_origin(origin_id) too, made by the index
-- update once the table has this layout: textpile.index.schema.ensure_current_tables.)

-- Per indexed page: the values its rows in the contentless FTS5 tables were inserted with,
-- which deleting them needs (FTS5's delete command), so an update does not analyze a
-- changed page's old text again (textpile.index.pages.pack_terms).
CREATE TABLE IF NOT EXISTS search_page_terms (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the indexed page (its search_page row)
    terms BLOB NOT NULL, -- JSON [[the search_index values from title to secondary_text], [[section title, name, anchor_text, section_summary_id, anchor], ...]], packed: sqlar_uncompress(terms, terms_size) reads it
    terms_size INTEGER NOT NULL -- the JSON's length in bytes
);

-- The words of the documented full text index with their document counts: the vocabulary
-- "did you mean" draws from (real words, not stems).
CREATE VIRTUAL TABLE IF NOT EXISTS full_text_vocabulary USING fts5vocab(full_text_entity_index, 'row');

-- The terms of search_index with the number of pages holding each (which query words are
-- rare: partial matches keep the rarest). Read from fts5vocab at a rebuild and kept up to
-- date by the changes of every update: a lookup in fts5vocab itself walks the term's
-- whole document list.
CREATE TABLE IF NOT EXISTS search_term (
    term TEXT NOT NULL PRIMARY KEY, -- an analyzed term of search_index
    docs INTEGER NOT NULL -- how many pages' rows hold it
) WITHOUT ROWID;

-- The words of full_text_entity_index (as written, lower case): the vocabulary "did you
-- mean" suggests from (textpile.search.spelling).
CREATE TABLE IF NOT EXISTS search_word (
    word TEXT NOT NULL PRIMARY KEY, -- a word of full_text_entity_index of three or more characters
    docs INTEGER NOT NULL -- how many pages hold it
) WITHOUT ROWID;
