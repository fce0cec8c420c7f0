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
    text_pile_id INTEGER NOT NULL REFERENCES text_pile_gen1(text_pile_id), -- the Gen1 text pile the generation had when embedded; another one means embed again
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

-- The coarse partition of the page vectors (an inverted file index, IVF; see
-- textpile.semantic.partition): centroids computed by spherical k-means over the page
-- vectors, and the list (nearest centroid) of each page vector. A query scans only the
-- vectors of the lists whose centroids are most similar to it. Empty below 20,000 page
-- vectors (every query scans all of them). New vectors join their nearest list; the
-- centroids are computed again when the vectors doubled or halved since, or the model changed.
CREATE TABLE IF NOT EXISTS page_embedding_centroid (
    list_number INTEGER NOT NULL PRIMARY KEY, -- the list, numbered from 0
    embedding_model_id INTEGER NOT NULL REFERENCES embedding_model(embedding_model_id), -- the model whose vectors were partitioned
    trained_vectors INTEGER NOT NULL, -- the page vectors in this list when the centroids were computed (their sum: the vectors trained on)
    vector BLOB NOT NULL -- the unit centroid, float32 little-endian, 4 bytes per dimension
);

-- The list of each page vector.
CREATE TABLE IF NOT EXISTS page_embedding_list (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES page_embedding(entity_generation_id), -- the page vector
    list_number INTEGER NOT NULL REFERENCES page_embedding_centroid(list_number) -- its list
);
