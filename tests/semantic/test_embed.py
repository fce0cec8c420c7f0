"""Embedding: the offline model, int8 vectors beside the summary, incremental re-embedding."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from textpile.semantic.embed import embed_summary
from textpile.semantic import model
from textpile.semantic.model import DIMENSIONS, MODEL_NAME, Embedder, ModelError, load_embedder
from textpile.store.embeddings import decode_vectors, encode_vectors

from search.builder import SummaryBuilder
from semantic.corpus import BASE


def test_model_loads_offline_without_importing_wordllama(tmp_path):
    """The model is read from the installed wheel: any network use fails the load, and
    the wordllama package itself (whose import reconfigures logging) is not imported."""
    script = textwrap.dedent("""
        import socket, sys
        def refuse(*args, **kwargs):
            raise AssertionError("network use attempted: %r" % (args,))
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from textpile.semantic.model import load_embedder
        e = load_embedder()
        v = e.embed(["send mail from my web app", "deliver email messages with SMTP", "bake bread", ""])
        print(e.name, v.shape, "wordllama" in sys.modules, "requests" in sys.modules)
        import numpy as np
        print(np.round(np.linalg.norm(v, axis=1), 4).tolist())
        print(bool(v[0] @ v[1] > v[0] @ v[2]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{MODEL_NAME} (4, {DIMENSIONS}) False False", "[1.0, 1.0, 1.0, 0.0]",
                                        "True"]


def test_missing_model_files_are_named(tmp_path):
    (tmp_path / "weights").mkdir()
    with pytest.raises(ModelError, match=r"weights/l2_supercat_256\.safetensors: the embedding model's file is missing"):
        load_embedder(tmp_path)


def test_texts_are_tokenized_in_groups_of_bounded_characters():
    texts = ["a" * 10, "b" * 30, "c" * 25, "d" * 100, "", "e" * 5]
    assert [(start, [len(t) for t in part]) for start, part in model._groups(texts, 40)] == [
        (0, [10, 30]), (2, [25]), (3, [100]), (4, [0, 5])]
    assert list(model._groups([], 40)) == []
    assert list(model._groups(["x" * 50], 40)) == [(0, ["x" * 50])]


def test_grouped_tokenizing_gives_the_same_vectors(embedder, monkeypatch):
    """Tokenizing a few texts at a time (the memory bound) changes no vector: each equals
    the text embedded alone and the texts embedded all at once, to the bit."""
    texts = ["send mail from my web app", "", "deliver email messages with SMTP " * 40, "bake bread",
             "   ", "tempfile: create a temporary directory " * 5, "é" * 70_000]
    monkeypatch.setattr(model, "TOKENIZE_CHARS", 10**9)
    whole = embedder.embed(texts)
    monkeypatch.setattr(model, "TOKENIZE_CHARS", 60)
    grouped = embedder.embed(texts)
    assert grouped.tobytes() == whole.tobytes()
    assert b"".join(embedder.embed_one(t).tobytes() for t in texts) == whole.tobytes()
    assert np.linalg.norm(whole, axis=1).round(4).tolist() == [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert embedder.embed([]).shape == (0, DIMENSIONS)


def test_vectors_round_trip_as_int8():
    v = np.array([[0.6, -0.8, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    blobs = encode_vectors(v)
    assert blobs == [bytes([95, 256 - 127, 0]), bytes(3)]
    back = decode_vectors(blobs, 3)
    assert np.allclose(back[0], [95 / np.hypot(95, 127), -127 / np.hypot(95, 127), 0.0])
    assert back[1].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="not 3 bytes long"):
        decode_vectors([b"\x01\x02"], 3)


def test_embedding_stores_a_vector_per_searchable_page(corpus):
    path, ids = corpus
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT entity_generation_id, length(vector) FROM page_embedding ORDER BY 1").fetchall()
    assert rows == [(i, DIMENSIONS) for i in sorted(ids.values())]
    assert conn.execute("SELECT name, dimensions FROM embedding_model").fetchall() == [(MODEL_NAME, DIMENSIONS)]


def test_changed_page_is_embedded_again_and_unchanged_ones_are_kept(corpus, embedder):
    path, ids = corpus
    conn = sqlite3.connect(path)
    before = dict(conn.execute("SELECT entity_generation_id, vector FROM page_embedding"))
    conn.close()
    # a new generation of bread.html (the old one closed) and a duplicate marked
    b = SummaryBuilder(path)
    b.conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = 1700000100 WHERE entity_generation_id = ?",
                   (ids["bread"],))
    b.conn.execute("UPDATE entity_generation SET marked_duplicate = 1 WHERE entity_generation_id = ?", (ids["cats"],))
    new = b.add_page(f"{BASE}/bread.html", title="Baking rye bread", lang="en",
                     text="Rye flour makes a dense loaf; bake it slowly.")
    b.build_fts()
    b.close()
    report = embed_summary(path, embedder)
    assert (report.pages_embedded, report.pages_removed, report.pages_kept, report.model_changed) == (1, 2, 4, False)
    conn = sqlite3.connect(path)
    after = dict(conn.execute("SELECT entity_generation_id, vector FROM page_embedding"))
    assert sorted(after) == sorted([*(i for n, i in ids.items() if n not in ("bread", "cats")), new])
    assert all(after[i] == before[i] for i in after if i != new)
    conn.close()
    again = embed_summary(path, embedder)
    assert (again.pages_embedded, again.pages_removed, again.pages_kept) == (0, 0, 5)


def test_another_model_makes_every_vector_anew(corpus, embedder):
    path, ids = corpus
    other = Embedder(embedder.weights, embedder.tokenizer, name="another-model")
    report = embed_summary(path, other)
    assert (report.model_changed, report.pages_embedded, report.pages_kept) == (True, len(ids), 0)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM embedding_model").fetchall() == [("another-model",)]
