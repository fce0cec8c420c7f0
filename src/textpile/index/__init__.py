"""The search indexes of a summary database: built whole, then kept up to date by what changed.

``update.py`` runs an update or a rebuild; ``pages.py`` makes a page's rows;
``inlinks.py`` and ``boilerplate.py`` keep the counts a page's rows depend on;
``docids.py`` orders the pages; ``tier.py`` keeps the first tier; ``vocabulary.py`` the
term and word counts; ``fulltext.py`` the documented ``full_text_entity_index``;
``schema.py`` the derived tables' layout and version.
"""
