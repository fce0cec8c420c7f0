"""The embedding model: static token embeddings shipped inside the ``wordllama`` wheel.

textpile embeds text with WordLlama's ``l2_supercat`` model (MIT; 32,000 tokens x 256
dimensions, float16, 16 MB) that the PyPI package ``wordllama`` ships as
``wordllama/weights/l2_supercat_256.safetensors`` beside its tokenizer
``wordllama/tokenizers/l2_supercat_tokenizer_config.json``. A text's vector is the mean
of its tokens' vectors, L2-normalized: what ``WordLlamaInference.embed(norm=True)``
computes, without padding each batch to its longest text (a long page then costs its
own length, not a batch's) and without importing the ``wordllama`` package, whose import
calls ``logging.basicConfig(level=INFO)`` (it would switch on every library's INFO
logging in textpile's command line and server) and whose loader can fall back to a
download. The package's folder is found with ``importlib.util.find_spec``, which runs
none of its code; the two files are read with ``safetensors`` and ``tokenizers``. No
network is ever used: a missing file is an error that names it.

Why this model: it is the one checked candidate that ships its weights inside a PyPI
wheel under a license (``model2vec`` and ``fastembed`` download their models at run
time; ``tokenlearn-static-model`` declares no license), needs no torch (a CPU torch adds
about 700 MB), and embeds with a tokenizer pass and a mean of token rows (no network);
its figures on the relevance benchmark are in issue 14's closing note and the README.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from textpile.errors import TextpileError

#: The package that ships the model and the files inside its folder.
MODEL_PACKAGE = "wordllama"
WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
WEIGHTS_TENSOR = "embedding.weight"
#: Stored beside every vector: vectors of another model (or dimension) are never mixed.
MODEL_NAME = "wordllama-l2_supercat-256"
DIMENSIONS = 256
#: Tokens of one text that count (the rest of a very long page is not read).
MAX_TOKENS = 8192
#: Characters of one text handed to the tokenizer (bounds its time and memory).
MAX_CHARS = 60_000
#: Characters of the texts tokenized together (on every core), at least one text: the
#: tokenizer's output for a text (an ``Encoding``, about 100 bytes per token) lives only
#: until its vector is made, so memory holds this many characters' tokens, not a whole
#: embedding batch's (issue 10: 200 documentation pages and their 6,000 sections took
#: 270 MiB at once).
TOKENIZE_CHARS = 262_144


class ModelError(TextpileError):
    """The embedding model's package or files are missing or unreadable."""


def model_folder(package: str = MODEL_PACKAGE) -> Path:
    """The installed folder of ``package`` (without importing it).

    Raises:
        ModelError: the package is not installed.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"the embedding model's package {package!r} is not installed "
                         f"(pip install {package}); semantic search needs it")
    return Path(list(spec.submodule_search_locations)[0])


@dataclass
class Embedder:
    """Embeds texts as L2-normalized mean token vectors.

    ``weights`` is the (vocabulary, dimensions) float32 matrix, ``tokenizer`` a
    ``tokenizers.Tokenizer``; ``name`` identifies the model in the vectors table.
    """

    weights: np.ndarray
    tokenizer: object
    name: str = MODEL_NAME

    @property
    def dimensions(self) -> int:
        return int(self.weights.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an (n, dimensions) float32 array, one unit vector per text.

        A text without any token (empty, only spaces) gets the zero vector. At most
        :data:`MAX_CHARS` characters and :data:`MAX_TOKENS` tokens of a text count.
        Texts are tokenized in groups of about :data:`TOKENIZE_CHARS` characters, without
        the tokens' character offsets (``encode_batch_fast``: the same ids).
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        vocabulary = self.weights.shape[0]
        for start, part in _groups([t[:MAX_CHARS] if t else "" for t in texts], TOKENIZE_CHARS):
            for i, enc in enumerate(self.tokenizer.encode_batch_fast(part, add_special_tokens=False), start):
                ids = np.asarray(enc.ids[:MAX_TOKENS], dtype=np.int64)
                ids = ids[(ids >= 0) & (ids < vocabulary)]
                if ids.size:
                    # the mean of the tokens' vectors, each distinct token's taken once and
                    # weighted by its count: a page repeats its words, and gathering a row
                    # per token took 3x as long (the same vector up to float rounding)
                    distinct, counts = np.unique(ids, return_counts=True)
                    out[i] = (counts.astype(np.float32) @ self.weights[distinct]) / ids.size
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """The vector of one text (a query): shape (dimensions,)."""
        return self.embed([text])[0]


def _groups(texts: list[str], chars: int) -> Iterator[tuple[int, list[str]]]:
    """``(index of the first, texts)`` of consecutive groups of ``texts`` of at most
    ``chars`` characters together, or of one longer text alone."""
    start = size = 0
    for end, text in enumerate(texts):
        if end > start and size + len(text) > chars:
            yield start, texts[start:end]
            start, size = end, 0
        size += len(text)
    if start < len(texts):
        yield start, texts[start:]


def load_embedder(folder: Path | None = None) -> Embedder:
    """Load the model from the installed ``wordllama`` package (or from ``folder``, a
    folder laid out like it). Reads two local files; never uses the network.

    Raises:
        ModelError: the package is missing, or a file is missing or unreadable (named).
    """
    from safetensors import safe_open
    from tokenizers import Tokenizer

    base = folder if folder is not None else model_folder()
    weights_path, tokenizer_path = base / WEIGHTS_FILE, base / TOKENIZER_FILE
    for path in (weights_path, tokenizer_path):
        if not path.is_file():
            raise ModelError(f"{path}: the embedding model's file is missing (reinstall {MODEL_PACKAGE})")
    try:
        with safe_open(str(weights_path), framework="np") as f:
            weights = np.ascontiguousarray(f.get_tensor(WEIGHTS_TENSOR), dtype=np.float32)
    except Exception as exc:  # safetensors raises its own error types for a bad file
        raise ModelError(f"{weights_path}: cannot read the embedding weights: {exc}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:  # tokenizers raises a bare Exception for a bad file
        raise ModelError(f"{tokenizer_path}: cannot read the tokenizer: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    if weights.ndim != 2 or weights.shape[1] != DIMENSIONS:
        raise ModelError(f"{weights_path}: expected a (tokens, {DIMENSIONS}) matrix, found {weights.shape}")
    return Embedder(weights, tokenizer)
