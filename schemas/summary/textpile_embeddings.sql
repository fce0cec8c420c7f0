-- textpile's embedding tables: textpile's own extension beside the unobtanium summary schema
-- (unobtanium neither writes nor reads them). Written by textpile.semantic.embed after every
-- summarize (and by the Dagster asset embeddings), incrementally: the vector of a searchable
-- generation (open, not marked duplicate, with a text pile) is computed once; rows of
-- generations that stopped being searchable are deleted. They live in the summary database,
-- so publishing (one SQLite backup, swapped in atomically) carries them with the index.
-- A vector is the model's unit vector quantized to int8: each component multiplied by
-- 127 / (the largest absolute component) and rounded, stored as one signed byte per
-- dimension (textpile.semantic.store.encode_vectors); cosine similarity needs no other scale.

-- The model that made the vectors: one row. When textpile's model changes, every vector is
-- deleted and made again.
CREATE TABLE IF NOT EXISTS embedding_model (
    embedding_model_id INTEGER NOT NULL PRIMARY KEY, -- internal id
    name TEXT NOT NULL UNIQUE, -- the model's name and variant (textpile.semantic.model.MODEL_NAME)
    dimensions INTEGER NOT NULL -- the number of components of each vector (bytes per vector)
);

-- One vector per searchable page: its title, description, headings and text.
CREATE TABLE IF NOT EXISTS page_embedding (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the searchable generation
    embedding_model_id INTEGER NOT NULL REFERENCES embedding_model(embedding_model_id), -- the model that made the vector
    text_pile_id INTEGER NOT NULL REFERENCES text_pile(text_pile_id), -- the Gen1 text pile the generation had when embedded; another one means embed again
    vector BLOB NOT NULL -- int8 components, one byte per dimension (see the head of this file)
);

-- One vector per section of a searchable page: the page title, the section title and the
-- start of the section's text.
CREATE TABLE IF NOT EXISTS section_embedding (
    section_summary_id INTEGER NOT NULL PRIMARY KEY REFERENCES section_summary(section_summary_id), -- the section
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id), -- the generation whose page holds the section
    vector BLOB NOT NULL -- int8 components, one byte per dimension (see the head of this file)
);
CREATE INDEX IF NOT EXISTS section_embedding_by_generation ON section_embedding(entity_generation_id, section_summary_id);
