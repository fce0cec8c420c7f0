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
* ``indexiness``: the page's indexiness / 100, clamped to -1..1 (the seed's score), when
  at least :data:`NAVIGATION_DENSITY` of its text is link text; else only its negative
  part (a class reference's in-page anchors make no index page);
* ``navigation``: the page's link density, the share of its main text that is link text
  (genindex, tables of contents and link lists are mostly links; a reference page with
  many links in its prose is not);
* ``section_diffuse``: 1 - the share of the page's text in the best matching section,
  when that section matches exactly (a definition lost in a long compendium page is
  less of an answer than a page about it);
* ``exact_form``: the share of the query's words found *unstemmed* (as typed, case and
  diacritics aside) in the title or the best section's title: ``indexes`` prefers a
  page titled "Indexes" to one titled "Indexing";
* ``all_terms``: 1 when the page holds every required word (0 for partial matches);
* ``held``: the weight of the query's words the page holds (1.0: every one; stop words
  weigh 0, rare words more: :mod:`textpile.search.weights`);
* ``proximity``: the share of the pairs of consecutive query words (by weight) that the
  page holds within a few terms of each other (:mod:`textpile.search.proximity`).

Features that count query words (title, section, URL, anchor, exact form) sum the
words' weights, so a stop word or a word on every page earns nothing on its own; the
title is also read with its CamelCase words as parts ("ThreadPoolExecutor" holds
``thread pool``).

Word matching uses the query's analyzed alternatives (:mod:`textpile.search.plan`) against
the analyzed words of the field, so it is stemmed and case- and diacritic-free.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass, field

from textpile.index.analysis import Analyzer
from textpile.index.pages import title_variants
from textpile.search.candidates import PageInfo, SectionHit
from textpile.search.plan import QueryPlan

FEATURES = ("bm25", "title_cover", "title_exact", "section_cover", "section_exact", "url_cover", "url_exact",
            "anchor", "inlinks", "length", "indexiness", "navigation", "section_diffuse", "exact_form", "all_terms",
            "held", "proximity")
_NOT_ALNUM = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Match:
    """How a field's words match the query: ``cover`` = the weight of the query's
    requirements found (:mod:`textpile.search.weights`: their shares sum to 1, stop words
    weigh 0), ``precision`` = share of the field's words that are query words,
    ``complete`` = every requirement found (stop words too)."""

    cover: float
    precision: float
    complete: bool = False

    @property
    def exact(self) -> bool:
        """The field is the query: every requirement found, no other word."""
        return self.complete and self.precision >= 1.0


NO_MATCH = Match(0.0, 0.0)


class QueryMatcher:
    """Matches analyzed field terms against a plan's requirements.

    Fields come analyzed (search_page's from the index, a section's analyzed by stage one:
    lines of space-separated terms, stemmed and unstemmed), so matching a candidate only
    splits strings and compares sets.
    """

    def __init__(self, plan: QueryPlan, analyzer: Analyzer, codes: list[str | None],
                 weights: list[float] | None = None) -> None:
        self.n = len(plan.requirements)
        #: each requirement's share of the query (equal shares when not given)
        self.weights = list(weights) if weights is not None else [1.0 / self.n] * self.n if self.n else []
        # Per requirement: its alternatives, plus each item written together (pg_dump -> pgdump);
        # stemmed (every index language) and unstemmed (the words as typed).
        stemmed: list[list[tuple[str, ...]]] = []
        unstemmed: list[list[tuple[str, ...]]] = []
        for requirement in plan.requirements:
            alts: list[tuple[str, ...]] = []
            plain: list[tuple[str, ...]] = []
            for item in requirement:
                alts.extend(item.alternatives)
                plain.extend(analyzer.query_alternatives(item.text, [None]))
                compact = _NOT_ALNUM.sub("", item.text)
                if compact and compact != item.text:
                    alts.extend(analyzer.query_alternatives(compact, codes))
                    plain.extend(analyzer.query_alternatives(compact, [None]))
            stemmed.append(alts)
            unstemmed.append(plain)
        # Two consecutive requirements written together (CREATE INDEX -> createindex).
        joined, joined_plain = [], []
        for left, right in zip(plan.requirements, plan.requirements[1:]):
            text = _NOT_ALNUM.sub("", left[0].text) + _NOT_ALNUM.sub("", right[0].text)
            joined.append(analyzer.query_alternatives(text, codes) if text else [])
            joined_plain.append(analyzer.query_alternatives(text, [None]) if text else [])
        self._analyzer = analyzer
        self._stemmed = _Compiled(stemmed, joined)
        self._unstemmed = _Compiled(unstemmed, joined_plain)
        self._seen: dict[tuple[str, bool], Match] = {}
        self._parts_seen: dict[tuple[str, str | None], Match] = {}  # parts_title's match of a title variant

    def match(self, terms: str, *, unstemmed: bool = False) -> Match:
        """Coverage and precision of a field given as space-separated analyzed terms
        (``unstemmed``: terms analyzed without stemming, matched to the words as typed)."""
        if not terms or not self.n:
            return NO_MATCH
        key = (terms, unstemmed)
        got = self._seen.get(key)
        if got is None:
            compiled = self._unstemmed if unstemmed else self._stemmed
            if not compiled.inside(terms):  # no query term inside: no match
                got = NO_MATCH
            else:
                got = compiled.match(terms.split(), self.weights)
            self._seen[key] = got  # fields repeat across pages (titles, anchor texts)
        return got

    def best_line(self, stemmed: str, unstemmed: str) -> tuple[Match, float]:
        """The best match among the lines of ``stemmed`` (title variants, anchor texts),
        and the best exactness among them: 1.0 when a line is the query word for word as
        typed (the same line of ``unstemmed``), 0.6 when only after stemming."""
        best, exactness = NO_MATCH, 0.0
        plain = unstemmed.split("\n") if unstemmed else []
        for i, line in enumerate(stemmed.split("\n") if stemmed else []):
            m = self.match(line)
            if (m.exact, m.cover, m.precision) > (best.exact, best.cover, best.precision):
                best = m
            if m.exact:
                exact = i < len(plain) and self.match(plain[i], unstemmed=True).exact
                exactness = max(exactness, 1.0 if exact else 0.6)
        return best, exactness

    def parts_title(self, title: str | None, headline: str | None, language: str | None) -> Match:
        """The best match among a page's title variants (as in ``search_page.title_terms``)
        read with their CamelCase words as parts (:meth:`Analyzer.split_terms`): a title
        "ThreadPoolExecutor Class" holds ``thread pool``. NO_MATCH when no variant has a
        CamelCase word, and a variant none of whose parts is a query term counts as
        NO_MATCH: read by parts it holds no query word that its line of
        ``search_page.title_terms`` (the variant analyzed in ``language``, the page's
        stemmer language) does not hold in the same order, so its cover is at most that
        line's (what :meth:`best_line` saw). Each variant is read once per query (a site's
        pages share their title's site-name part)."""
        best = NO_MATCH
        for text in title_variants(title, headline):
            if text.islower() or not any(c.isupper() for w in text.split() for c in w[1:]):
                continue
            key = (text, language)
            m = self._parts_seen.get(key)
            if m is None:
                parts = self._analyzer.camel_parts(text, language).split()
                if any(p in self._stemmed.term_set for p in parts):
                    m = self.match(" ".join(self._analyzer.split_terms(text, language)))
                else:
                    m = NO_MATCH
                self._parts_seen[key] = m
            if (m.exact, m.cover, m.precision) > (best.exact, best.cover, best.precision):
                best = m
        return best

    def best_anchor(self, lines: str) -> float:
        """The best coverage x precision among the lines of ``lines`` (anchor texts,
        analyzed); only lines holding a term of :attr:`_Compiled.triggers` (as a substring)
        are matched: each term's next occurrence is found with ``str.find``, the nearest
        one first (a heap), and after a line every term found in it is looked for again
        after its end."""
        best = 0.0
        terms = self._stemmed.triggers  # a line holding none of them matches nothing
        upcoming = [(at, i) for i, term in enumerate(terms) if (at := lines.find(term)) != -1]
        heapq.heapify(upcoming)
        while upcoming:
            at = upcoming[0][0]
            start = lines.rfind("\n", 0, at) + 1
            end = lines.find("\n", at)
            m = self.match(lines[start:end] if end != -1 else lines[start:])
            best = max(best, m.cover * m.precision)
            if best >= 1.0 or end == -1:
                break
            while upcoming and upcoming[0][0] <= end:  # the next line holding a query term
                i = upcoming[0][1]
                at = lines.find(terms[i], end + 1)
                if at == -1:
                    heapq.heappop(upcoming)
                else:
                    heapq.heapreplace(upcoming, (at, i))
        return best

    def exact_cover(self, *lines: str) -> float:
        """The best share of requirements found unstemmed in any one of ``lines``."""
        return max((self.match(line, unstemmed=True).cover for text in lines if text
                    for line in text.split("\n")), default=0.0)


class _Compiled:
    """Requirements as sets of one-term alternatives plus lists of longer ones."""

    def __init__(self, alternatives: list[list[tuple[str, ...]]], joined: list[list[tuple[str, ...]]]) -> None:
        self.single = [{a[0] for a in alts if len(a) == 1} for alts in alternatives]
        self.multi = [[a for a in alts if len(a) > 1] for alts in alternatives]
        self.joined_single = [{a[0] for a in alts if len(a) == 1} for alts in joined]
        self.joined_multi = [[a for a in alts if len(a) > 1] for alts in joined]
        #: Every term of any alternative: a field holding none of them as a substring
        #: cannot match (rules out most fields at once).
        self.terms = tuple(sorted({t for alts in (*alternatives, *joined) for a in alts for t in a if t},
                                  key=len, reverse=True))
        self.term_set = frozenset(self.terms)
        #: A term of each alternative that a field matching it holds: the term of a
        #: one-term alternative, the longest of a longer one (a split form's short parts,
        #: ``ing`` of ``compar ing``, are inside most fields: a field without the longest
        #: part cannot hold the alternative).
        self.triggers = tuple(sorted({max((t for t in a if t), key=len) for alts in (*alternatives, *joined)
                                      for a in alts if any(a)}, key=len, reverse=True))

    def inside(self, text: str) -> bool:
        """Whether ``text`` may match: some alternative's :attr:`triggers` term occurs in
        it (as a substring); a text without any matches no requirement."""
        return any(t in text for t in self.triggers)

    def match(self, words: list[str], weights: list[float]) -> Match:
        n = len(weights)
        present = set(words)
        used: set[str] = set()
        hit = [False] * n
        for i in range(n):
            common = self.single[i] & present
            if common:
                hit[i] = True
                used |= common
            for alt in self.multi[i]:
                if _contains(words, present, alt):
                    hit[i] = True
                    used.update(alt)
        for i in range(n - 1):
            common = self.joined_single[i] & present
            if common:
                hit[i] = hit[i + 1] = True
                used |= common
            for alt in self.joined_multi[i]:
                if _contains(words, present, alt):
                    hit[i] = hit[i + 1] = True
                    used.update(alt)
        cover = sum(w for w, h in zip(weights, hit) if h)
        precision = sum(1 for w in words if w in used) / len(words)
        return Match(min(1.0, cover), precision, all(hit))


def _contains(words: list[str], present: set[str], alt: tuple[str, ...]) -> bool:
    if alt[0] not in present or any(t not in present for t in alt[1:]):
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
    #: the values behind the features that are relative to the other candidates, for a
    #: merge over shards (textpile.search.fanout): ``bm25`` (before division by the best
    #: candidate's), ``semantic`` and ``passage`` (similarities before the best is taken off),
    #: and how it became a candidate: ``level`` (a page candidate: the share of the query
    #: its level holds) and ``section`` (its best matching section's bm25, when it has one;
    #: without ``level``, a candidate by a section only)
    raw: dict[str, float] = field(default_factory=dict)


def section_match(matcher: QueryMatcher, hit: SectionHit, relaxed: QueryMatcher | None = None) -> tuple[Match, float]:
    """The better of the section title's and its anchor name's match, and its exactness
    (1.0 as typed, 0.6 after stemming); when neither holds a whole query word and
    ``relaxed`` (identifiers by parts) is given, that match with its coverage cut by a
    fifth (so a whole match always ranks above)."""
    best, exactness = NO_MATCH, 0.0
    for terms, words in ((hit.title_terms, hit.title_words), (hit.name_terms, hit.name_words)):
        got = matcher.match(terms)
        if (got.exact, got.cover, got.precision) > (best.exact, best.cover, best.precision):
            best = got
        if got.exact:
            exactness = max(exactness, 1.0 if matcher.match(words, unstemmed=True).exact else 0.6)
    if best.cover == 0.0 and relaxed is not None:
        for terms in (hit.title_terms, hit.name_terms):
            got = relaxed.match(terms)
            got = Match(got.cover * 0.8, got.precision)
            if (got.cover, got.precision) > (best.cover, best.precision):
                best = got
    return best, exactness


#: The link density (share of the main text that is link text) from which a page reads as
#: navigation: a table of contents or a list of pages. Below it a high indexiness (the
#: in-page anchors of a class reference, a man page's option list) is no index page.
NAVIGATION_DENSITY = 0.4


def _indexiness(info: PageInfo) -> float:
    """The page's indexiness / 100, clamped to -1..1, when it is a navigation page
    (:data:`NAVIGATION_DENSITY`); for other pages only its negative part (an article's)."""
    value = max(-1.0, min(1.0, info.indexiness / 100.0))
    return value if info.link_density >= NAVIGATION_DENSITY else min(0.0, value)


def page_features(matcher: QueryMatcher, info: PageInfo, bm25: float, best_bm25: float,
                  hits: list[SectionHit], held: float, relaxed: QueryMatcher | None = None,
                  proximity: float = 0.0) -> Scored:
    """The features of one candidate page (see the module docstring); ``held`` is the
    weight of the query's requirements the page holds (1.0: every one), ``proximity``
    the share of its pairs held close together (:mod:`textpile.search.proximity`)."""
    title, title_exactness = matcher.best_line(info.title_terms, info.title_words)
    if info.title and title.cover < 1.0:
        parts = matcher.parts_title(info.title, info.headline, info.stem_language)
        if (parts.cover, parts.precision) > (title.cover, title.precision):
            title = parts
    url = matcher.match(info.url_terms)
    url_last = matcher.match(info.url_last_terms)
    anchor = matcher.best_anchor(info.anchor_terms) if info.anchor_terms else 0.0
    best_hit, best_match, best_exactness = None, NO_MATCH, 0.0
    ranked_hits = []
    for hit in hits:
        m, exactness = section_match(matcher, hit, relaxed)
        ranked_hits.append((m.exact, m.cover, m.precision, hit.score, hit))
        if (m.exact, m.cover, m.precision, hit.score) > (best_match.exact, best_match.cover, best_match.precision,
                                                         best_hit.score if best_hit else -1.0):
            best_hit, best_match, best_exactness = hit, m, exactness
    ranked_hits.sort(key=lambda t: (t[0], t[1], t[2], t[3]), reverse=True)
    features = {
        "bm25": (bm25 / best_bm25) if best_bm25 > 0 else 0.0,
        "title_cover": title.cover,
        "title_exact": title_exactness,
        "section_cover": best_match.cover * (0.5 + 0.5 * best_match.precision),
        "section_exact": best_exactness if best_match.exact else 0.0,
        "url_cover": url.cover,
        "url_exact": 1.0 if url_last.exact else 0.0,
        "anchor": anchor,
        "inlinks": math.log1p(info.content_in_links) / 7.0,
        "length": math.log1p(info.term_count) / 10.0,
        "indexiness": _indexiness(info),
        "navigation": info.link_density,
        "section_diffuse": (1.0 - min(1.0, (best_hit.end - best_hit.start) / info.text_length)
                            if best_hit is not None and best_match.exact and info.text_length else 0.0),
        "exact_form": matcher.exact_cover(info.title_words, best_hit.title_words if best_hit else ""),
        "all_terms": 1.0 if held >= 1.0 else 0.0,
        "held": held,
        "proximity": proximity,
    }
    return Scored(info, features, best_hit, tuple(t[4] for t in ranked_hits), held=held)
