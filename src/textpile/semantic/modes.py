"""The names ``bench/relevance`` imports from here, where the search modes once lived.

The search modes are :mod:`textpile.search.service` now, with its stages
:mod:`textpile.search.nearest` and :mod:`textpile.search.hybrid`, and the loaded model and
vectors :mod:`textpile.semantic.loaded`. Nothing in textpile imports this module, and it
defines nothing: delete it once ``bench/relevance`` imports those modules (its
``__main__.py``, ``systems.py`` and ``tune_fusion.py``).
"""

from textpile.search.hybrid import FUSION_K, KEYWORD_WEIGHT, keyword_found_it
from textpile.search.nearest import SEMANTIC_DEPTH
from textpile.search.service import MODES
from textpile.search.service import search_pages as search_mode
from textpile.semantic.loaded import Semantic

__all__ = ["FUSION_K", "KEYWORD_WEIGHT", "MODES", "SEMANTIC_DEPTH", "Semantic", "keyword_found_it", "search_mode"]
