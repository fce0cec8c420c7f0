"""Web archives as crawl input: ``textpile import`` (WARC, WACZ and zshot SQLite archives).

:mod:`~textpile.archives.kinds` lists the formats and tells an archive's kind from its
bytes; :mod:`~textpile.archives.warc`, :mod:`~textpile.archives.wacz` and
:mod:`~textpile.archives.zshot` read one kind each into :class:`~textpile.archives.exchange.Exchange`
records; :mod:`~textpile.archives.importer` turns those into crawl log entries of the
crawler database with the crawler's own interpreter (:mod:`textpile.crawl.interpret`).
"""
