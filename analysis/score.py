"""Stage 5a, rank and cap: score every candidate, then fill the queue in score order under two caps.

    score = DENSE_WEIGHT * similarity + LEXICAL_WEIGHT * keyword similarity
            + ANCHOR_WEIGHT * anchor strength + NAME_SAID_WEIGHT * name said
            + PEER_LINKS_WEIGHT * peer links + NEED_WEIGHT * need(target) + DIRECTION_WEIGHT * direction
    need  = 0.5 / (1 + inbound content links) + 0.3 * min(depth - 1, 4) / 4 + 0.2 * (target newer than source)
    direction = 2 * (share of the site's dated content links pointing forward in time) - 1, for a newer target

Similarity is cosine similarity of the page vectors (0..1 in practice), keyword similarity the
TF-IDF cosine of the pages' texts (index.py). Anchor strength is how much of the target's
title, topic words and the anchors other pages link it with the best phrase of the source covers
(see anchors.py): a source that already names the target in its prose is the best place for a
link; name said (0 or 1) is whether it writes out the target's whole name or one of its headings (3 words or more;
a name of two in prose, as its title writes it: AnchorFinder._cased_at), or its title's head ("timeit" of "timeit -
Measure execution time": names.title_heads), word for word, or cites it by the number its title carries ("Section
8.16.6": citations.py): a page cited by its name or number, or a part of it by its heading, whatever else the two
pages share, is the likeliest link of all. peer links (0..1) is the share of the
source's nearest pages by meaning (candidates.PEERS) that link the target from their main content: where pages like
the source link, an editor would link from it too (a collaborative filter on the site's own links). need (0..1) favours
targets that few pages link to, that are deep, and that the source predates (an old post
rarely links to what was written after it). A page with no known depth counts as deep.
direction (-1..1) is how the site's own editors link in time (see direction()): on a blog whose
posts only link back, a newer target is an unlikely link, whatever it needs.
Every candidate gets its anchor search (anchors.py does a source's targets at once), so the
queue is exact: no pair is left out for lack of an anchor search. A source's first max_per_page candidates in score
order get their anchors chosen; the others, only their best strength (what their score needs), a search that skips
every window its bound says cannot be the strongest (windows.strong_windows' best_only: the 20,000-page synthetic
site's search keeps 10M windows where it kept 28M). Searching only the candidates
that could still enter the queue would need a cheap upper bound of the anchor strength; the
tightest one without the search (the target's heaviest terms that occur anywhere in the source)
leaves 94% of the candidates of the 30,000-page synthetic site able to enter, so it is not done
(BENCHMARKS.md, "Analysis").
"""

from __future__ import annotations

import gc
import itertools
import operator
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np
from tqdm import tqdm

from analysis.anchor_keys import anchor_keys
from analysis.anchors import Anchor, AnchorFinder, Found
from analysis.candidates import PEERS, Candidates
from analysis.compiled import compiled
from analysis.contexts import sentences_at
from analysis.fill import QueueFill, Rows
from analysis.load import Corpus, run_items
from analysis.memory import return_freed_memory
from analysis.names import title_anchor

DENSE_WEIGHT = 0.5  # the model reads a page's first 256 tokens, the keyword similarity all of it (BENCHMARKS.md, "Quality")
LEXICAL_WEIGHT = 1.0
ANCHOR_WEIGHT = 0.5
NAME_SAID_WEIGHT = 0.3
PEER_LINKS_WEIGHT = 0.15  # 0.1-0.3 all lifted std and the Reference; 0.15 lifted rustblog too (BENCHMARKS.md, "Quality")
NEED_WEIGHT = 0.05
DIRECTION_WEIGHT = 0.1  # 0.2 gained a little more recall on the blogs but buries more old -> new suggestions
MAX_TARGET_SHARE = 0.02  # of the whole queue, for any one target (the default hub guard)
MIN_CAP = 3  # suggestions per target the default hub guard always allows
LATER_ROWS_AT_FIRST = 4  # of a source's rows past its first, searched at once when one first waits (_search_waiting)
ROWS_AT_ONCE = 65_536  # rows of the queue turned into Python values at a time (Queue.records)
FILL_ROWS_AT_ONCE = 65_536  # rows Ranked.fill hands its walk at a time (QueueFill.rows)


@dataclass(slots=True)  # 400,000 of them at 100,000 pages: no __dict__ each
class Suggestion:
    source: int
    target: int
    similarity: float
    score: float
    anchor: Anchor
    template_linked: bool


def need(corpus: Corpus, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """How much each target needs a link from its source, 0..1 (see the module docstring)."""
    depths = np.array([np.nan if depth is None else depth for depth in corpus.depths], dtype=np.float64)
    deep = np.where(np.isnan(depths), 1.0, np.clip(depths - 1, 0, 4) / 4)
    by_target = 0.5 / (1 + np.asarray(corpus.inbound, dtype=np.float64)) + 0.3 * deep  # per page: one array a pair, not five
    _, published = np.unique([date or "" for date in corpus.published], return_inverse=True)  # dates sort as text
    return by_target[targets] + 0.2 * (published[targets] > published[sources])


def direction(corpus: Corpus, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """-1..1 for pairs whose target is newer than their source (0 for the others): how this site's editors link in time.

    Measured on the site's own content links between pages of different dates: 2 x the share that
    point forward in time - 1, the share smoothed (one more link each way) so that a site with few
    dated links leans neither way. Where posts are written once and left, links point back (a post
    links what exists when it is written), and a newer target is an unlikely link; a site whose
    editors go back to old posts links both ways and leans neither way. Dates are compared by day.
    """
    dates = np.array([(date or "")[:10] for date in corpus.published])
    has_date = dates != ""
    _, day = np.unique(dates, return_inverse=True)  # dates sort as text: compared as their ranks, not as strings
    link_source, link_target = np.divmod(corpus.content_codes, len(corpus))
    linking, linked = day[link_source], day[link_target]
    dated = has_date[link_source] & has_date[link_target] & (linking != linked)
    lean = 2 * (int((linked[dated] > linking[dated]).sum()) + 1) / (int(dated.sum()) + 2) - 1
    return lean * (has_date[sources] & (day[targets] > day[sources]))


def rank(corpus: Corpus, candidates: Candidates, finder: AnchorFinder, max_per_page: int,
         max_per_target: int | None = None, progress: bool = False) -> tuple[Queue, dict[int, int], int]:
    """The review queue (best first), the hubs (target -> suggestions it wanted) and the per-target cap used; with
    progress, a bar of the candidates searched for anchors on stderr (a minute at 100,000 pages, the longest stage
    after embedding).

    The candidates are spent: their columns are released (Candidates.release) once the queue is filled.

    With no max_per_target, the cap is the largest that keeps every target within MAX_TARGET_SHARE
    of the queue, but not below MIN_CAP: on a small site 2% of the queue is less than one suggestion.
    A lower cap never lengthens the queue, so no cap between the one tried and the one its queue allows can hold: the
    next tried is the one allowed, and filled again only where the queue holds more of some target (else it is the same
    queue): one fill where a step of one took 40 on a 1,000-page site whose sources fill half their places, a minute
    (BENCHMARKS.md, "Analysis").
    """
    ranked = _scored(corpus, candidates, finder, max_per_page, progress)
    with _garbage_collector_paused():
        if max_per_target is None:
            per_source = np.bincount(candidates.source, minlength=len(corpus)) if len(candidates) else np.zeros(0, np.int64)
            cap = _allowed(int(np.minimum(per_source, max_per_page).sum()))
            queue, wanted = ranked.fill(max_per_page, cap)
            while _allowed(len(queue)) < cap:
                cap = _allowed(len(queue))
                if queue.per_target().max(initial=0) > cap:
                    queue, wanted = ranked.fill(max_per_page, cap)
        else:
            (queue, wanted), cap = ranked.fill(max_per_page, max_per_target), max_per_target
        hubs = queue.hubs(wanted, cap)
    queue.sentences()  # found here, as rank's cost, rather than when the export first reads the queue
    del ranked
    candidates.release()  # their columns (1.1 GB at 1,000,000 pages): the queue holds its rows' own
    return_freed_memory()
    return queue, hubs, cap


def _allowed(queued: int) -> int:
    """The per-target cap that a queue of this length allows by default."""
    return max(MIN_CAP, int(MAX_TARGET_SHARE * queued))


def _scored(corpus: Corpus, candidates: Candidates, finder: AnchorFinder, max_per_page: int, progress: bool) -> Ranked:
    """Every candidate scored (see the module docstring), in queue order, with the anchors of each source's first
    max_per_page: the queue takes few others (after a target is full or a row's anchor is spent), whose anchors are
    found when it comes to them (Ranked.fill). All of them held at once were rank's peak (41 bytes a candidate, 182 MB
    at 100,000 synthetic pages)."""
    scores = DENSE_WEIGHT * candidates.similarity.astype(np.float64)  # the sum term by term in place, as the formula adds
    scores += LEXICAL_WEIGHT * candidates.lexical
    scores += PEER_LINKS_WEIGHT / PEERS * candidates.peer_links
    scores += NEED_WEIGHT * need(corpus, candidates.source, candidates.target)
    scores += DIRECTION_WEIGHT * direction(corpus, candidates.source, candidates.target)

    apart = finder.series.apart(candidates.source, candidates.target)  # named, or no suggestion (_evidence)

    def firsts(rows: np.ndarray, found: Found) -> np.ndarray:
        """Of a block of whole sources' rows, each source's first max_per_page (the search chooses their anchors)."""
        return _firsts(candidates.source[rows], candidates.target[rows], scores[rows] + _evidence(found, apart[rows]),
                       max_per_page)

    anchored: list[tuple[np.ndarray, Found]] = []
    anchorable = np.zeros(len(candidates), dtype=bool)
    with tqdm(total=len(candidates), desc="Anchors", unit="pair", unit_scale=True, disable=not progress) as bar:
        for rows, found, first in finder.search_blocks(candidates.source, candidates.target, firsts):
            scores[rows] += _evidence(found, apart[rows])
            anchorable[rows] = found.anchorable
            anchored.append((rows[first], found[first]))
            bar.update(len(rows))
    return_freed_memory()  # what the search's threads freed in their own heaps (260 MB at 100,000 pages, BENCHMARKS.md)
    rows = np.concatenate([np.zeros(0, dtype=np.int64), *(rows for rows, _ in anchored)])
    by_row = np.argsort(rows)
    return Ranked(corpus, candidates, rows[by_row], Found.joined([found for _, found in anchored])[by_row], finder, scores,
                  anchorable)


def _evidence(found: Found, apart: np.ndarray) -> np.ndarray:
    """What the anchor search adds to its pairs' scores; -inf, no suggestion (Ranked.fill walks no such row), for a
    page of the source's own series, not next to it (apart), that no phrase of the source names and whose name it
    does not write out (series.py)."""
    evidence = ANCHOR_WEIGHT * found.best + NAME_SAID_WEIGHT * found.name_said
    evidence[apart & (found.best == 0) & ~found.name_said] = -np.inf
    return evidence


@compiled
def _firsts(sources: np.ndarray, targets: np.ndarray, scores: np.ndarray, count: int) -> np.ndarray:
    """The places of each source's first `count` pairs in queue order (by score, then target), by source, each source's
    in that order: as a lexsort by (source, -score, target) would list them. Each source's pairs come together (a
    block of the anchor search); each is put in place among its source's best so far, as one pass of an insertion
    sort that keeps `count` (three sorts of the block on the main thread took 1.5 s at 100,000 pages)."""
    firsts, kept, start = np.empty(len(sources), np.int64), 0, 0
    if count <= 0:
        return firsts[:0]
    while start < len(sources):
        end = start
        while end < len(sources) and sources[end] == sources[start]:
            end += 1
        held = 0
        for place in range(start, end):
            at = held if held < count else count - 1
            if held == count and not _before(scores, targets, place, firsts[kept + at]):
                continue
            while at > 0 and _before(scores, targets, place, firsts[kept + at - 1]):
                firsts[kept + at] = firsts[kept + at - 1]
                at -= 1
            firsts[kept + at] = place
            held = min(held + 1, count)
        kept, start = kept + held, end
    return firsts[:kept]


@compiled
def _before(scores: np.ndarray, targets: np.ndarray, one: int, other: int) -> bool:
    """Pair `one` comes before pair `other` of the same source in queue order."""
    return scores[one] > scores[other] or (scores[one] == scores[other] and targets[one] < targets[other])


def _leading(grouped: np.ndarray, bounds: np.ndarray, count: int) -> np.ndarray:
    """The first `count` items of each group (group g: grouped[bounds[g]:bounds[g + 1]])."""
    return grouped[run_items(bounds[:-1], np.minimum(np.diff(bounds), count))[1]]


@compiled
def _sort_by_score(starts: np.ndarray, scores: np.ndarray, grouped: np.ndarray) -> None:
    """Fill grouped with the rows of each group (group g: rows starts[g]:starts[g + 1]), each group's stably sorted by
    score, highest first: for the rows of one source in the candidates' order, queue order."""
    for group in range(len(starts) - 1):
        first = starts[group]
        grouped[first:starts[group + 1]] = np.argsort(-scores[first:starts[group + 1]], kind="mergesort") + first


@contextmanager
def _garbage_collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the queue is made: its ~1M new objects (no cycles among them) would have it
    walk every object of the corpus again and again, 3.2 of 12.6 s at 100,000 pages (BENCHMARKS.md, "Analysis")."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Ranked:
    """Scored candidates, ready to be filled into a queue under caps. Queue order is by score, then source, then
    target (the candidates' own order, by source and target, among equal scores)."""

    corpus: Corpus
    candidates: Candidates
    anchored: np.ndarray  # the rows whose anchors found holds (sorted): each source's first; fill() finds others
    found: Found
    finder: AnchorFinder
    scores: np.ndarray
    anchorable: np.ndarray  # per row: Found.anchorable (one that is not has no text anchor, and is searched no more)
    searched: set[int] = field(default_factory=set)  # the other rows whose anchors were searched (_search_waiting)
    later: list[Rows] = field(default_factory=list)  # those rows, ready to walk, for this fill and any after it
    ahead: dict[int, int] = field(default_factory=dict)  # of each source: its later rows the next search takes

    def fill(self, max_per_page: int, max_per_target: int) -> tuple[Queue, dict[int, int]]:
        """The queue, filled in queue order under both caps, and the rows walked of each target by a source with room
        left (Queue.hubs reads them). A row enters where its source and its target have room and an anchor is left
        for it: the best text anchor of whole words (anchors.text_options) not yet pointing at its target from
        fill.SAME_ANCHOR_PAGES pages, not overlapping its source's others, not another page's name, and not a phrase its
        source links to another page, or will: a reader takes one phrase of a page for one page ("CREATE ROLE" linked
        to CREATE ROLE's page, then again to CREATE USER's); else the title fallback, if that does not point there from
        as many pages either (an editor writes a page's name on few pages; the title fallback, written on none, would
        otherwise be proposed from a dozen) nor elsewhere from its source. A text anchor is shown with the word that
        completes its phrase where one does (anchors.completion_clear_of: not into another anchor or a link of the
        source), unless the longer phrase is another page's name or points elsewhere; the row was taken for the anchor
        without it. The walk is compiled (fill.py); the queue holds each row's anchor as a span (Queue.extend).

        The rows walked are each source's first max_per_page, in queue order, and for each row refused, its source's
        next row: only the rows of sources not full when they come are walked (a heap keeps the next rows in queue
        order): a full source's rows change nothing, and walking them was most of the time here (4.45M rows at 100,000
        synthetic pages, for a queue of 400,000); so was sorting them all in queue order (two sorts of 44M rows, 19 s
        at 1,000,000 pages): only each source's rows are sorted (_by_source), then the first ones of all sources."""
        candidates, scores = self.candidates, self.scores
        grouped, starts = self._by_source
        walker = QueueFill(self.corpus.texts, self.finder.names, self.corpus.link_spans, self._anchor_keys[2], max_per_page,
                           max_per_target, grouped, starts, scores, candidates.target)
        for searched in self.later:
            walker.remember(searched)
        queue = Queue(self.corpus.texts, self.finder.names)

        def taken(rows: np.ndarray, spans: np.ndarray, strengths: np.ndarray) -> None:
            queue.extend(candidates.source[rows], candidates.target[rows], candidates.similarity[rows],
                         rounded(scores[rows]), spans[:, 0], spans[:, 1], rounded(strengths), candidates.template_linked[rows])

        rows = None
        for rows in self._first_rows(max_per_page, walker):
            walker.walk(rows, taken, partial(self._search_waiting, walker))
        if rows is not None:
            walker.walk(rows, taken, partial(self._search_waiting, walker), drain=True)
        walker.hand_over(taken)
        return queue, walker.walked()

    def _first_rows(self, max_per_page: int, walker: QueueFill) -> Iterator[Rows]:
        """Each source's first max_per_page rows (all in anchored), in queue order, FILL_ROWS_AT_ONCE at a time. Their
        row numbers are int64, as the later rows' are (_search_waiting): the walk takes both, in arrays of one kind."""
        grouped, starts = self._by_source
        first = _leading(grouped, starts, max_per_page)  # by source, each source's in queue order: a stable sort by score
        first = first[np.argsort(-self.scores[first], kind="stable")].astype(np.int64)  # in queue order
        first = first[self.scores[first] > -np.inf]  # no suggestion (_evidence), last of their sources
        candidates, found, (keys, flags, _) = self.candidates, self.found, self._anchor_keys
        for start in range(0, len(first), FILL_ROWS_AT_ONCE):
            rows = first[start:start + FILL_ROWS_AT_ONCE]
            places = np.searchsorted(self.anchored, rows)
            yield walker.rows(rows, candidates.source[rows], candidates.target[rows], self.scores[rows], found.starts[places],
                              found.ends[places], found.strengths[places], keys[places], flags[places])

    @cached_property
    def _by_source(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows grouped by source, each source's in queue order, and where each source's group starts."""
        starts = np.searchsorted(self.candidates.source, np.arange(len(self.corpus) + 1))
        grouped = np.empty(len(self.scores), dtype=np.int32 if len(self.scores) < 2**31 else np.int64)
        _sort_by_score(starts, self.scores, grouped)
        return grouped, starts

    @cached_property
    def _anchor_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The keys and flags of the anchored rows' text anchors (anchor_keys.py), and the keys of the links of their
        sources (by span)."""
        links = self.corpus.link_spans
        link_keys = np.zeros(len(links.spans), np.uint64)
        keys, flags = anchor_keys(self.corpus.texts, self.candidates.source[self.anchored], self.found.starts,
                                  self.found.ends, links, link_keys)
        return keys, flags, link_keys

    def _search_waiting(self, walker: QueueFill, waiting: np.ndarray) -> Rows:
        """The rows waiting their turn in the fill (QueueFill's heap entries: source, target, row, place; the first
        first), whose anchors are not searched yet, to walk. Their anchors are found here, once, with those of the
        rows after each in its source's (a pair's anchors do not depend on the pairs searched with it):
        LATER_ROWS_AT_FIRST of a source's the first time, twice as many each time after. A source refused once is often
        refused again (its targets full, its anchors spent), and each search costs ~15 ms at 100,000 pages, most of it
        for the targets' terms, and reads and splits its sources' texts again: a 1,000-page site whose sources fill half
        their places took 550 searches, 15 s, for its rows one at a time (BENCHMARKS.md, "Analysis"). A row that the
        first search found no window and no name for (not anchorable) has no text anchor: it is not searched again (on
        that site, most rows walked)."""
        candidates = self.candidates
        grouped, starts = self._by_source
        asked: dict[int, None] = {}
        for source, _, row, place in waiting.tolist():
            if row not in self.searched:
                ahead = self.ahead.get(source, LATER_ROWS_AT_FIRST)
                self.ahead[source] = 2 * ahead
                first = starts[source] + place
                asked.update(dict.fromkeys(grouped[first:min(first + ahead, starts[source + 1])].tolist()))
        rows = np.array([row for row in asked if row not in self.searched], dtype=np.int64)
        self.searched.update(rows.tolist())
        found = Found.empty(len(rows))
        keys, flags = np.zeros(found.starts.shape, np.uint64), np.zeros(found.starts.shape, np.uint8)
        if (searched := self.anchorable[rows]).any():
            sources = candidates.source[rows[searched]]
            found[searched] = self.finder.search_all(sources, candidates.target[rows[searched]])
            keys[searched], flags[searched] = anchor_keys(self.corpus.texts, sources, found.starts[searched],
                                                          found.ends[searched], self.corpus.link_spans,
                                                          self._anchor_keys[2])
        self.later.append(walker.rows(rows, candidates.source[rows], candidates.target[rows], self.scores[rows],
                                      found.starts, found.ends, found.strengths, keys, flags))
        return self.later[-1]


class Queue(Sequence[Suggestion]):
    """The review queue, best first, held as columns: each suggestion, with its anchor's text and sentence sliced from
    the source's text, is made when it is read. As objects with their strings, the 4,000,000 suggestions of 1,000,000
    pages held ~2.3 GB at rank's peak (~580 bytes each); as columns, 81 bytes each (BENCHMARKS.md, "Analysis")."""

    def __init__(self, texts: Sequence[str], names: list[str]) -> None:
        self.texts, self.names = texts, names  # the corpus's texts, and each page's name (AnchorFinder.names)
        self.source, self.target, self.similarity, self.score = array("q"), array("q"), array("d"), array("d")
        self.template_linked = array("b")
        self.start, self.end, self.strength = array("q"), array("q"), array("d")  # the anchor's span (-1: a title anchor)
        self._sentences: tuple[np.ndarray, np.ndarray] | None = None  # their sentences' spans, found when first read

    def extend(self, source: Sequence[int], target: Sequence[int], similarity: Sequence[float], score: Sequence[float],
               start: Sequence[int], end: Sequence[int], strength: Sequence[float], template_linked: Sequence[bool]) -> None:
        """Add suggestions, given as columns: each one's anchor is the span [start, end) of its source's text, sliced
        again when read, with the sentence that holds it (contexts.sentences_at, for all the queue's anchors at once);
        (-1, -1): the title fallback, the target's name shortened again when read."""
        self._sentences = None
        columns = (self.source, self.target, self.similarity, self.score, self.start, self.end, self.strength,
                   self.template_linked)
        for column, values in zip(columns, (source, target, similarity, score, start, end, strength, template_linked)):
            column.frombytes(np.asarray(values, dtype=_COLUMN_TYPES[column.typecode]).tobytes())

    def sentences(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of the sentences that hold the anchors (-1 for a title anchor), found once for the queue as
        it is: rank finds them when its queue is made (their cost is rank's), a queue made otherwise when first read."""
        if self._sentences is None:
            self._sentences = sentences_at(self.texts, np.asarray(self.source), np.asarray(self.start))
        return self._sentences

    def per_target(self, pages: int = 0) -> np.ndarray:
        """The suggestions of each target, by page number (pages of them at least)."""
        return np.bincount(np.frombuffer(self.target, dtype=np.int64), minlength=pages)

    def hubs(self, wanted: dict[int, int], cap: int) -> dict[int, int]:
        """The targets the cap refused rows of (Ranked.fill's rows walked of each: wanted), each with those rows."""
        held = self.per_target(max(wanted, default=-1) + 1)
        return {target: count for target, count in wanted.items() if count > cap == held[target]}

    def records(self, places: np.ndarray | None = None) -> Iterator[tuple]:
        """The suggestions' fields (see records()), in queue order or at these places in turn, without making their
        objects: ROWS_AT_ONCE at a time."""
        texts, names = self.texts, self.names
        columns = (self.source, self.target, self.similarity, self.score, self.template_linked, self.start, self.end,
                   self.strength, *self.sentences())
        places = np.arange(len(self)) if places is None else places
        read, text = -1, ""  # the last source's text: by_pair places read each once
        for first in range(0, len(places), ROWS_AT_ONCE):
            part = places[first:first + ROWS_AT_ONCE]
            for source, target, similarity, score, linked, start, end, strength, sentence_start, sentence_end in zip(
                    *(np.asarray(column)[part].tolist() for column in columns)):
                if start < 0:
                    yield source, target, title_anchor(names[target]), "title", strength, None, None, similarity, score, bool(linked)
                else:
                    if source != read:
                        read, text = source, texts[source]
                    yield (source, target, text[start:end], "text", strength, start, text[sentence_start:sentence_end],
                           similarity, score, bool(linked))

    def by_pair(self) -> np.ndarray:
        """The places of the suggestions by source, then target (the pages' order, their URLs')."""
        return np.lexsort((np.asarray(self.target), np.asarray(self.source)))

    def __len__(self) -> int:
        return len(self.source)

    def __getitem__(self, index: int | slice) -> Suggestion | list[Suggestion]:  # type: ignore[override]
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError("queue index out of range")
        index %= len(self)
        return _suggestion(*next(self.records(np.array([index]))))

    def __iter__(self) -> Iterator[Suggestion]:
        return itertools.starmap(_suggestion, self.records())

    def __eq__(self, other: object) -> bool:
        """The same suggestions in the same order as another queue, or a list of them."""
        return isinstance(other, (Queue, list)) and len(self) == len(other) and all(map(operator.eq, self, other))


def records(queue: Sequence[Suggestion], by_pair: bool = False) -> Iterator[tuple]:
    """(source, target, anchor text, anchor source, anchor strength, offset, sentence, similarity, score,
    template_linked) of each suggestion, in queue order or by (source, target): a Queue's read from its columns without
    making their objects (the export reads each once, 400,000 at 100,000 pages, in key order: SQLite inserts them into
    its index twice as fast)."""
    if isinstance(queue, Queue):
        return queue.records(queue.by_pair() if by_pair else None)
    items = sorted(queue, key=lambda item: (item.source, item.target)) if by_pair else queue
    return ((item.source, item.target, item.anchor.text, item.anchor.source, item.anchor.strength, item.anchor.offset,
             item.anchor.context, item.similarity, item.score, item.template_linked) for item in items)


_COLUMN_TYPES = {"q": np.int64, "d": np.float64, "b": np.int8}  # Queue's columns' array types, as numpy's


def rounded(values: np.ndarray, places: int = 4) -> np.ndarray:
    """round(value, places) of each value, as Python rounds a float (the double nearest the decimal rounded half to
    even), at numpy's speed: rint(value * 10^places) / 10^places is that wherever value * 10^places does not lie within
    its rounding error of a half; there, Python rounds."""
    scaled = np.asarray(values, dtype=np.float64) * 10.0 ** places
    result = np.rint(scaled) / 10.0 ** places
    near_half = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    result[near_half] = [round(value, places) for value in np.asarray(values, dtype=np.float64)[near_half].tolist()]
    return result


def _suggestion(source: int, target: int, text: str, kind: str, strength: float, offset: int | None, context: str | None,
                similarity: float, score: float, template_linked: bool) -> Suggestion:
    """A suggestion from its fields (records)."""
    return Suggestion(source, target, similarity, score, Anchor(text, kind, strength, offset, context), template_linked)
