"""The model and page vectors that a search in a vector mode needs, loaded once.

Loading the model takes about 0.2 s, the vectors of 100K pages about 0.5 s: a frontend
keeps a :class:`SemanticCache` per served file, a command line search a lazy
:class:`Semantic` that loads each part only when its one search needs it (a hybrid search
whose keyword ranking stands needs neither). :mod:`textpile.search.service` uses them.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

from textpile.semantic.model import Embedder, load_embedder
from textpile.semantic.vectors import PageVectors, load_page_vectors


@dataclass
class Semantic:
    """What the vector modes need: the model (for the query's vector) and the page vectors.

    A frontend keeps one between requests; :meth:`load` makes one for a single search and
    :meth:`lazy` one that loads each part from ``conn`` only when a search needs it.
    """

    embedder: Embedder | None
    vectors: PageVectors | None
    conn: sqlite3.Connection | None = None

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> "Semantic":
        """The vectors of ``conn`` and, when there are any, the model.

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        vectors = load_page_vectors(conn)
        return cls(load_embedder() if vectors is not None else None, vectors)

    @classmethod
    def lazy(cls, conn: sqlite3.Connection) -> "Semantic":
        """One that loads the vectors and the model from ``conn`` on first use (:meth:`ready`)."""
        return cls(None, None, conn)

    def ready(self, model: bool = True) -> "Semantic":
        """Self, with the vectors and (when there are vectors and ``model``) the model loaded.

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        if self.vectors is None and self.conn is not None:
            self.vectors, self.conn = load_page_vectors(self.conn), None
        if model and self.embedder is None and self.vectors is not None:
            self.embedder = load_embedder()
        return self


class SemanticCache:
    """The model and page vectors a frontend keeps between searches of one database file.

    The web frontend keeps one per served file identity and content
    (:class:`textpile.web.state.SummaryDatabase`); when either changes (a publish) it
    takes :meth:`for_new_content`, which keeps the model: the model does not depend on the
    file, and loading it anew at every publish cost about 40 MB of memory that stayed, and
    held up every vector search while it loaded (issue 31). The first search in a vector
    mode loads the vectors and the model; "more like this" needs only the vectors.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        """``embedder``: a model loaded already (default: load it on first use)."""
        self._lock = threading.Lock()
        self._embedder = embedder
        self._semantic: Semantic | None = None

    def for_new_content(self) -> "SemanticCache":
        """A cache for the file's new content (or another file): this one's model, if
        loaded, and the vectors to be loaded again on first use."""
        with self._lock:
            return SemanticCache(self._embedder)

    def get(self, conn: sqlite3.Connection, with_model: bool = True) -> Semantic:
        """The cached :class:`Semantic` of the file ``conn`` reads (loaded on first use).

        Raises:
            textpile.semantic.model.ModelError: the model's package is missing.
        """
        with self._lock:
            if self._semantic is None:
                vectors = load_page_vectors(conn)
                self._semantic = Semantic(self._embedder if vectors is not None else None, vectors)
            if with_model and self._semantic.embedder is None and self._semantic.vectors is not None:
                if self._embedder is None:
                    self._embedder = load_embedder()
                self._semantic = Semantic(self._embedder, self._semantic.vectors)
            return self._semantic
