"""Scraping one fetched file into text piles, a document description and link summaries.

The HTML is parsed once; every extractor works on the same tree.
"""
