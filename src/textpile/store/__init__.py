"""The database layer shared by every stage: opening (:mod:`textpile.store.database`),
schema versions, URLs, media types, text piles and links.

Nothing is imported here: the scraping workers and the crawl's page readers import
:mod:`textpile.store.urls` and :mod:`textpile.store.mimetypes` alone, without the
database layer (its migrations pull in numpy: about 15 MiB resident in every worker).
"""
