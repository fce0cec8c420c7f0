"""Searching a summary database. Entry point: :mod:`textpile.search.service`, which every
interface calls; its stages are the keyword search (engine.py: candidates.py, features.py,
rank.py, snippets.py), semantic retrieval (nearest.py) and fusion (hybrid.py). The query
language is query.py's, its FTS5 compilation query_compiler.py's; results and their JSON
document are results.py's."""
