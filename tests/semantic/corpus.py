"""A small summary database for the semantic tests: pages whose words differ from the
questions a user would ask about them (the paraphrase fixture)."""

from __future__ import annotations

from pathlib import Path

from search.builder import SummaryBuilder

BASE = "https://docs.example.org"

PAGES = {
    "sorting": dict(
        title="Sorting Techniques",
        text="Python lists have a built-in sort method that modifies the sequence in place, and sorted builds "
             "a new sorted sequence from any iterable. The key parameter takes a function called on each "
             "element before comparisons; operator.itemgetter picks one entry of each record, so records are "
             "ordered by that entry. Sorts are stable: equal keys keep their original order."),
    "smtp": dict(
        title="smtplib: SMTP protocol client",
        text="The smtplib module defines an SMTP client session object that can be used to deliver email "
             "messages to any internet machine with an SMTP or ESMTP listener daemon. Call sendmail with the "
             "sender, the recipients and the message; starttls switches the connection to TLS."),
    "sqlite_index": dict(
        title="CREATE INDEX",
        text="The CREATE INDEX command adds an index on columns of a table. An index makes lookups and "
             "ORDER BY on those columns faster at the cost of space and slower inserts."),
    "cats": dict(
        title="Why cats sleep all day",
        text="Cats sleep for sixteen hours a day. A sleeping cat saves energy for hunting mice and birds."),
    "bread": dict(
        title="Baking sourdough bread",
        text="Mix flour, water and salt with a ripe starter, let the dough rise overnight and bake it in a "
             "hot oven until the crust is brown."),
    "tempfile": dict(
        title="tempfile: generate temporary files and directories",
        text="This module creates temporary files and directories. TemporaryDirectory returns a context "
             "manager that removes the directory and everything in it on exit."),
}


def build(path: str | Path) -> dict[str, int]:
    """Write :data:`PAGES` (one generation each, English) with the search index; return
    {name: entity_generation_id}."""
    b = SummaryBuilder(path)
    ids = {name: b.add_page(f"{BASE}/{name}.html", lang="en", **fields) for name, fields in PAGES.items()}
    b.build_fts()
    b.close()
    return ids


def result_pages(results) -> list[str]:
    """The results' URLs relative to :data:`BASE`."""
    return [r.url.removeprefix(BASE + "/") for r in results.results]
