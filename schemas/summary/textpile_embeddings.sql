-- textpile's embedding tables: textpile's own extension beside the unobtanium summary schema
-- (unobtanium neither writes nor reads them). Written by textpile.semantic.embed after every
-- summarize (and by the Dagster asset embeddings), incrementally: the vector of a searchable
-- generation (open, not marked duplicate, with a text pile) is computed once; rows of
-- generations that stopped being searchable are deleted. They live in the summary database,
-- so publishing (one SQLite backup, swapped in atomically) carries them with the index.
-- A page vector is the model's unit vector quantized to int8: each component multiplied by
-- 127 / (the largest absolute component) and rounded, stored as one signed byte per
-- dimension (textpile.semantic.store.encode_vectors); cosine similarity needs no other scale.
-- A section vector is stored as its binary code: one bit per dimension, set where that int8
-- component is above 0, most significant bit first (textpile.semantic.store.encode_bits);
-- the dot product of two codes read as +-1 components is 1 - 2 * Hamming distance / dimensions.

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

-- The vectors of the sections of a searchable page (the page title, the section title and
-- the start of the section's text), one row per page: their binary codes, packed.
CREATE TABLE IF NOT EXISTS page_section_embedding (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation(entity_generation_id), -- the generation whose page holds the sections
    codes BLOB NOT NULL -- the binary code of the section with section_summary.section_index i at byte i * dimensions / 8 (dimensions / 8 bytes each, see the head of this file)
);

-- One row per section vector: section_summary_id, entity_generation_id and vector (its
-- binary code, dimensions / 8 bytes).
CREATE VIEW IF NOT EXISTS section_embedding AS
SELECT s.section_summary_id AS section_summary_id, s.entity_generation_id AS entity_generation_id,
       substr(p.codes, s.section_index * (m.dimensions / 8) + 1, m.dimensions / 8) AS vector
FROM page_section_embedding p
JOIN embedding_model m
JOIN section_summary s ON s.entity_generation_id = p.entity_generation_id
WHERE length(p.codes) >= (s.section_index + 1) * (m.dimensions / 8);

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
