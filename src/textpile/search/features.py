"""Rerank features of a candidate page for a query (stage two of a search).

Every feature is a number, mostly in 0..1, computed from what the index already holds:

* ``bm25``: the page's FTS5 bm25 over search_index, divided by the best candidate's;
* ``title_cover`` / ``title_exact``: how much of the query the title (or its first part
  before a `` — Site name`` suffix, or the primary headline) holds, and 1 when title and
  query are the same words as typed (0.6 when they are the same only after stemming);
* ``section_cover`` / ``section_exact``: the same for the best matching section (its
  title or anchor name: ``json.dumps``, ``Building Indexes Concurrently``);
* ``url_cover`` / ``url_exact``: the query's words in the URL path, also written
  together (``CREATE INDEX`` in ``sql-createindex.html``, ``pg_dump`` in ``app-pgdump``);
  exact when the last path segment is the query;
* ``anchor``: the best match of the query with a text of links to the page (coverage x
  precision);
* ``inlinks``: log of the pages linking to it from their content, scaled to about 0..1;
* ``length``: log of its main text length in terms, scaled to about 0..1;
* ``indexiness``: the page's indexiness / 100, clamped to -1..1 (the seed's score);
* ``navigation``: the page's link density, the share of its main text that is link text
  (genindex, tables of contents and link lists are mostly links; a reference page with
  many links in its prose is not);
* ``section_diffuse``: 1 - the share of the page's text in the best matching section,
  when that section matches exactly (a definition lost in a long compendium page is
  less of an answer than a page about it);
* ``exact_form``: the share of the query's words found *unstemmed* (as typed, case and
  diacritics aside) in the title or the best section's title: ``indexes`` prefers a
  page titled "Indexes" to one titled "Indexing";
* ``all_terms``: 1 when the page holds every required word (0 for partial matches).

Word matching uses the query's analyzed alternatives (:mod:`textpile.search.plan`) against
the analyzed words of the field, so it is stemmed and case- and diacritic-free.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from textpile.search.analysis import Analyzer
from textpile.search.candidates import PageInfo, SectionHit
from textpile.search.index import is_name_anchor, url_words
from textpile.search.plan import QueryPlan

FEATURES = ("bm25", "title_cover", "title_exact", "section_cover", "section_exact", "url_cover", "url_exact",
            "anchor", "inlinks", "length", "indexiness", "navigation", "section_diffuse", "exact_form", "all_terms")
_TITLE_PARTS = re.compile(r"\s+[—–|·•:\-]\s+|\s+-\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Match:
    """How a field's words match the query: ``cover`` = share of the query's requirements
    found, ``precision`` = share of the field's words that are query words."""

    cover: float
    precision: float

    @property
    def exact(self) -> bool:
        """The field is the query: every requirement found, no other word."""
        return self.cover >= 1.0 and self.precision >= 1.0


NO_MATCH = Match(0.0, 0.0)


class QueryMatcher:
    """Matches analyzed field words against a plan's requirements (in a page's language)."""

    def __init__(self, plan: QueryPlan, analyzer: Analyzer, codes: list[str | None]) -> None:
        self.analyzer = analyzer
        self.requirements = plan.requirements
        self.n = len(plan.requirements)
        # Per requirement: its alternatives, plus each item written together (pg_dump -> pgdump).
        self.alternatives: list[list[tuple[str, ...]]] = []
        for requirement in plan.requirements:
            alts: list[tuple[str, ...]] = []
            for item in requirement:
                alts.extend(item.alternatives)
                compact = _NOT_ALNUM.sub("", item.text)
                if compact and compact != item.text:
                    alts.extend(analyzer.query_alternatives(compact, codes))
            self.alternatives.append(alts)
        # The words as typed (folded, unstemmed), for exact forms.
        self.unstemmed: list[list[tuple[str, ...]]] = []
        for requirement in plan.requirements:
            alts = []
            for item in requirement:
                alts.extend(analyzer.query_alternatives(item.text, [None]))
                compact = _NOT_ALNUM.sub("", item.text)
                if compact and compact != item.text:
                    alts.extend(analyzer.query_alternatives(compact, [None]))
            self.unstemmed.append(alts)
        # Two consecutive requirements written together (CREATE INDEX -> createindex).
        self.joined: list[list[tuple[str, ...]]] = []
        for left, right in zip(plan.requirements, plan.requirements[1:]):
            text = _NOT_ALNUM.sub("", left[0].text) + _NOT_ALNUM.sub("", right[0].text)
            self.joined.append(analyzer.query_alternatives(text, codes) if text else [])
        self.joined_unstemmed = [analyzer.query_alternatives(
            _NOT_ALNUM.sub("", left[0].text) + _NOT_ALNUM.sub("", right[0].text), [None])
            for left, right in zip(plan.requirements, plan.requirements[1:])]

    def match(self, words: list[str], *, unstemmed: bool = False) -> Match:
        """Coverage and precision of the field ``words`` (analyzed terms; with
        ``unstemmed``, terms analyzed without stemming, matched to the words as typed)."""
        if not words or not self.n:
            return NO_MATCH
        present = set(words)
        found = [False] * self.n
        used: set[str] = set()
        for i, alts in enumerate(self.unstemmed if unstemmed else self.alternatives):
            for alt in alts:
                if _contains(words, present, alt):
                    found[i] = True
                    used.update(alt)
        for i, alts in enumerate(self.joined_unstemmed if unstemmed else self.joined):
            for alt in alts:
                if _contains(words, present, alt):
                    found[i] = found[i + 1] = True
                    used.update(alt)
        cover = sum(found) / self.n
        precision = sum(1 for w in words if w in used) / len(words)
        return Match(cover, precision)

    def exact_cover(self, texts: list[str | None]) -> float:
        """The share of requirements found unstemmed in any one of ``texts``."""
        return max((self.match(self.analyzer.terms(t, None), unstemmed=True).cover for t in texts if t),
                   default=0.0)

    def exactness(self, text: str | None, language: str | None) -> float:
        """1.0 when ``text`` is the query word for word as typed, 0.6 when it is the query
        after stemming, else 0.0."""
        if not text:
            return 0.0
        if self.match(self.analyzer.terms(text, None), unstemmed=True).exact:
            return 1.0
        return 0.6 if self.match_text(text, language).exact else 0.0

    def match_text(self, text: str | None, language: str | None) -> Match:
        """:meth:`match` of ``text`` analyzed in ``language``."""
        return self.match(self.analyzer.terms(text, language)) if text else NO_MATCH

    def best_title(self, info: PageInfo) -> tuple[Match, float]:
        """The best match among the title, its parts around separators, and the headline,
        and the best :meth:`exactness` among them."""
        best, exactness = NO_MATCH, 0.0
        candidates = [info.title, info.headline]
        if info.title:
            candidates.extend(_TITLE_PARTS.split(info.title))
        for text in candidates:
            m = self.match_text(text, info.language)
            if (m.exact, m.cover, m.precision) > (best.exact, best.cover, best.precision):
                best = m
            if m.exact:
                exactness = max(exactness, self.exactness(text, info.language))
        return best, exactness


def _contains(words: list[str], present: set[str], alt: tuple[str, ...]) -> bool:
    if len(alt) == 1:
        return alt[0] in present
    if alt[0] not in present:
        return False
    n = len(alt)
    for i in range(len(words) - n + 1):
        if words[i] == alt[0] and tuple(words[i:i + n]) == alt:
            return True
    return False


@dataclass
class Scored:
    """A candidate page with its features, best section and final score."""

    info: PageInfo
    features: dict[str, float]
    section: SectionHit | None = None
    sections: tuple[SectionHit, ...] = ()
    score: float = 0.0
    held: float = 0.0  # the share of the query's requirements the page holds (at least)


def section_match(matcher: QueryMatcher, hit: SectionHit, language: str | None,
                  relaxed: QueryMatcher | None = None) -> Match:
    """The better of the section title's and its anchor name's match; when neither holds
    a whole query word and ``relaxed`` (identifiers by parts) is given, that match with
    its coverage cut by a fifth (so a whole match always ranks above)."""
    best = NO_MATCH
    for text in (hit.title, hit.anchor if is_name_anchor(hit.anchor) else None):
        got = matcher.match_text(text, language)
        if (got.exact, got.cover, got.precision) > (best.exact, best.cover, best.precision):
            best = got
    if best.cover == 0.0 and relaxed is not None:
        for text in (hit.title, hit.anchor if is_name_anchor(hit.anchor) else None):
            got = relaxed.match_text(text, language)
            got = Match(got.cover * 0.8, got.precision)
            if (got.cover, got.precision) > (best.cover, best.precision):
                best = got
    return best


def page_features(matcher: QueryMatcher, info: PageInfo, bm25: float, best_bm25: float,
                  hits: list[SectionHit], all_terms: bool, relaxed: QueryMatcher | None = None) -> Scored:
    """The features of one candidate page (see the module docstring)."""
    title, title_exactness = matcher.best_title(info)
    url_terms = matcher.analyzer.terms(url_words(info.url), info.language)
    url = matcher.match(url_terms)
    last_segment = url_words(info.url.rstrip("/").rsplit("/", 1)[-1]) if "/" in info.url else ""
    url_last = matcher.match_text(last_segment, info.language)
    anchor = 0.0
    if info.anchor_texts:
        for text in info.anchor_texts.split("\n"):
            m = matcher.match_text(text, info.language)
            anchor = max(anchor, m.cover * m.precision)
            if anchor >= 1.0:
                break
    best_hit, best_match = None, NO_MATCH
    ranked_hits = []
    for hit in hits:
        m = section_match(matcher, hit, info.language, relaxed)
        ranked_hits.append((m.exact, m.cover, m.precision, hit.score, hit))
        if (m.exact, m.cover, m.precision, hit.score) > (best_match.exact, best_match.cover, best_match.precision,
                                                         best_hit.score if best_hit else -1.0):
            best_hit, best_match = hit, m
    ranked_hits.sort(key=lambda t: (t[0], t[1], t[2], t[3]), reverse=True)
    features = {
        "bm25": (bm25 / best_bm25) if best_bm25 > 0 else 0.0,
        "title_cover": title.cover,
        "title_exact": title_exactness,
        "section_cover": best_match.cover * (0.5 + 0.5 * best_match.precision),
        "section_exact": (max(matcher.exactness(best_hit.title, info.language),
                              matcher.exactness(best_hit.anchor, info.language) if is_name_anchor(best_hit.anchor) else 0.0)
                          if best_match.exact and best_hit is not None else 0.0),
        "url_cover": url.cover,
        "url_exact": 1.0 if url_last.exact else 0.0,
        "anchor": anchor,
        "inlinks": math.log1p(info.content_in_links) / 7.0,
        "length": math.log1p(info.term_count) / 10.0,
        "indexiness": max(-1.0, min(1.0, info.indexiness / 100.0)),
        "navigation": info.link_density,
        "section_diffuse": (1.0 - min(1.0, (best_hit.end - best_hit.start) / info.text_length)
                            if best_hit is not None and best_match.exact and info.text_length else 0.0),
        "exact_form": matcher.exact_cover([info.title, info.headline, best_hit.title if best_hit else None]),
        "all_terms": 1.0 if all_terms else 0.0,
    }
    return Scored(info, features, best_hit, tuple(t[4] for t in ranked_hits))
