"""Shards by site: each shard is a complete textpile data folder (crawler database, summary
database, staging files, published copy), and every site (origin) lives on exactly one.

* :mod:`textpile.shards.config`: the shard table (``shards.toml``), which shard holds an
  origin (a stable hash of the origin, or the override table), the seeds of each shard.
* :mod:`textpile.shards.move`: moving a site to the shard the table now assigns it, with
  its crawl log and everything hanging off it, losing nothing.
* :mod:`textpile.shards.handoff`: links found by one shard's crawl to sites of another,
  handed to the owner through the finder's outbox and taken in by the owner's next crawl.

Politeness, robots.txt, sitemaps and feeds are per origin, so a site never spanning two
shards means shards crawl side by side without coordinating (DESIGN.md, "Scale").
"""
