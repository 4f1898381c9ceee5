"""Stage 5b, anchors: a 2-6 word phrase from the source's own text that names the target.

Candidate phrases are word windows of the source's main text, inside one sentence, not crossing
punctuation, not starting or ending on a stop word, and not overlapping an existing link. A phrase
is scored by the target terms it holds: the share of the target's title it covers (title words
weighted by rarity across the site, IDF) plus the TF-IDF weight of the target's most characteristic
words, minus a little for words that belong to neither. The phrase an editor would link on scores
high, which makes the same number a strong ranking signal (see score.py).

The windows of a source do not depend on the target, so they are found once per source and every
target of that source is scored against them at once, as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.index import Keywords
from analysis.load import Corpus
from analysis.words import STOP, Tokens, terms
from linkspider.sentences import sentence_spans

MIN_WORDS, MAX_WORDS = 2, 6
EXTRA_WORD_PENALTY = 0.08  # per word of the phrase that is not a term of the target
MIN_STRENGTH = 0.3  # a phrase weaker than this is not an anchor
TOPIC_TERMS = 20  # the target's most characteristic words (TF-IDF) count beside its title
TOPIC_WEIGHT = 1.0
COMMON_SHARE = 0.3  # a word on more pages than this share names nothing by itself
ALTERNATIVES = 3  # text anchors kept per pair, strongest first (select() takes another when one is used)


@dataclass(frozen=True)
class Anchor:
    text: str
    source: str  # "text": found in the source's main text; "title": the target's shortened title
    strength: float  # 0..1: share of the target title's weight the phrase covers (0 for titles)
    offset: int | None = None  # where the phrase starts in the source's main text
    context: str | None = None  # the sentence that holds it

    @property
    def span(self) -> tuple[int, int] | None:
        return None if self.offset is None else (self.offset, self.offset + len(self.text))


def short_title(title: str) -> str:
    """The page's title (already without its site name, see load.py), at most six words: the fallback anchor."""
    return " ".join(title.split()[:MAX_WORDS])


@dataclass
class Found:
    """The best text anchors of some pairs, ALTERNATIVES per pair as character offsets; -1 where none."""

    starts: np.ndarray  # (pairs, ALTERNATIVES) int32
    ends: np.ndarray
    sentence_starts: np.ndarray
    sentence_ends: np.ndarray
    strengths: np.ndarray  # float32, 0 where none

    @classmethod
    def empty(cls, pairs: int) -> Found:
        offsets = [np.full((pairs, ALTERNATIVES), -1, dtype=np.int32) for _ in range(4)]
        return cls(*offsets, np.zeros((pairs, ALTERNATIVES), dtype=np.float32))

    def anchors(self, row: int, text: str, title: str) -> list[Anchor]:
        """Pair `row` as Anchor objects, strongest first, then the title fallback."""
        found = [Anchor(text[start:end], "text", round(float(strength), 4), int(start), text[first:last])
                 for start, end, first, last, strength in zip(self.starts[row], self.ends[row], self.sentence_starts[row],
                                                              self.sentence_ends[row], self.strengths[row]) if start >= 0]
        return [*found, Anchor(short_title(title), "title", 0.0)]


@dataclass
class Phrases:
    """The windows of one source's text that may be anchors, whatever the target."""

    tokens: Tokens
    first: np.ndarray  # first and last word of each window
    last: np.ndarray
    content: np.ndarray  # words in the window that are not stop words
    previous_same: np.ndarray  # per word: where the same term occurred before (-1: never), to count each term once
    sentences: np.ndarray  # (sentences, 2) character spans
    sentence_of: np.ndarray  # per word


class AnchorFinder:
    """Finds anchors for (source, target) pairs of one corpus."""

    def __init__(self, corpus: Corpus, keywords: Keywords) -> None:
        self.corpus = corpus
        self.keywords = keywords
        self.common = keywords.idf_of_share(COMMON_SHARE)  # a phrase must hold a rarer word than this
        self._terms: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def target_terms(self, target: int) -> tuple[np.ndarray, np.ndarray]:
        """What names the target: (term ids, weights): its title words (IDF-weighted, summing to 1) plus its topic words.

        A title word no page holds still counts in the sum (at the rarest IDF): it cannot be matched.
        """
        if target not in self._terms:
            idf, ids = self.keywords.idf, self.keywords.vocabulary.ids
            columns, rarest = len(idf), self.keywords.idf_of_share(0)
            title = [ids.get(term, -1) for term in dict.fromkeys(terms(short_title(self.corpus.titles[target])))]
            title = [(term if 0 <= term < columns else -1, float(idf[term]) if 0 <= term < columns else rarest) for term in title]
            total = sum(weight for _, weight in title) or 1.0
            weights: dict[int, float] = {}
            for term, weight in title:
                if term >= 0:
                    weights[term] = weights.get(term, 0.0) + weight / total
            for term, weight in zip(*self.keywords.top_terms(target, TOPIC_TERMS)):
                weights[int(term)] = weights.get(int(term), 0.0) + TOPIC_WEIGHT * float(weight)
            self._terms[target] = (np.fromiter(weights, dtype=np.int64, count=len(weights)),
                                   np.fromiter(weights.values(), dtype=np.float32, count=len(weights)))
        return self._terms[target]

    def anchors(self, source: int, target: int) -> list[Anchor]:
        """The best text anchors for one pair, strongest first, then the title fallback."""
        return self.search(source, np.array([target])).anchors(0, self.corpus.texts[source], self.corpus.titles[target])

    def search_all(self, sources: np.ndarray, targets: np.ndarray) -> Found:
        """Anchors for many pairs, one source at a time: each source's windows are found once."""
        found = Found.empty(len(sources))
        order = np.argsort(sources, kind="stable")
        bounds = np.flatnonzero(np.diff(sources[order])) + 1
        for rows in np.split(order, bounds) if len(order) else ():
            part = self.search(int(sources[rows[0]]), targets[rows])
            for mine, theirs in zip(vars(found).values(), vars(part).values()):
                mine[rows] = theirs
        return found

    def search(self, source: int, targets: np.ndarray) -> Found:
        """The best anchors of one source for each of the targets."""
        found = Found.empty(len(targets))
        phrases = self.phrases(source)
        if not len(phrases.first):
            return found
        ids = phrases.tokens.ids
        present, where = np.unique(ids, return_inverse=True)
        # weights[r, w]: target r's weight of word w of the source; seeds: words rare enough to name it
        weights = np.zeros((len(targets), len(present)), dtype=np.float32)
        for row, target in enumerate(targets.tolist()):
            term_ids, term_weights = self.target_terms(target)
            column = np.searchsorted(present, term_ids)
            hit = column < len(present)
            hit[hit] = present[column[hit]] == term_ids[hit]
            weights[row, column[hit]] = term_weights[hit]
        weights = weights[:, where]
        idf = self.keywords.idf
        rare = np.zeros(len(ids), dtype=bool)
        known = (ids >= 0) & (ids < len(idf))  # a word the keyword index never saw has no weight either
        rare[known] = idf[ids[known]] >= self.common
        seeds = (weights > 0) & rare[None, :]
        # An upper bound first (a repeated term counted each time), then the exact strength where it can pass.
        marked = weights + EXTRA_WORD_PENALTY * (weights > 0)
        cumulative = np.concatenate([np.zeros((len(targets), 1), dtype=np.float32), np.cumsum(marked, axis=1)], axis=1)
        bound = cumulative[:, phrases.last + 1] - cumulative[:, phrases.first] - EXTRA_WORD_PENALTY * phrases.content
        rows, windows = np.nonzero(bound >= MIN_STRENGTH - 1e-6)
        if not len(rows):
            return found
        first, last = phrases.first[windows], phrases.last[windows]
        strength = -EXTRA_WORD_PENALTY * phrases.content[windows].astype(np.float32)
        seeded = np.zeros(len(rows), dtype=bool)
        for step in range(MAX_WORDS):
            word = np.minimum(first + step, last)
            inside = first + step <= last
            weight = weights[rows, word] * inside
            strength += weight * (phrases.previous_same[word] < first) + EXTRA_WORD_PENALTY * (weight > 0)
            seeded |= seeds[rows, word] & inside
        strength = np.round(strength, 4)
        keep = seeded & (strength >= MIN_STRENGTH)
        rows, first, last, strength = rows[keep], first[keep], last[keep], strength[keep]
        starts, ends = phrases.tokens.starts[first], phrases.tokens.ends[last]
        sentences = phrases.sentences[phrases.sentence_of[first]]
        taken: dict[int, list[tuple[int, int]]] = {}
        for i in np.lexsort((starts, -strength, rows)).tolist():  # per pair: strongest first, then earliest
            chosen = taken.setdefault(int(rows[i]), [])
            if len(chosen) == ALTERNATIVES or any(starts[i] < end and start < ends[i] for start, end in chosen):
                continue
            slot = (rows[i], len(chosen))
            found.starts[slot], found.ends[slot], found.strengths[slot] = starts[i], ends[i], strength[i]
            found.sentence_starts[slot], found.sentence_ends[slot] = sentences[i]
            chosen.append((int(starts[i]), int(ends[i])))
        return found

    def phrases(self, source: int) -> Phrases:
        """Every window of 2-6 words in one sentence, joined by spaces (or - . /), no stop word at either end,
        outside the existing links and outside a sentence that only repeats the page's own title."""
        text = self.corpus.texts[source]
        tokens = self.keywords.vocabulary.tokenize(text)
        ids, count = tokens.ids, len(tokens.ids)
        spans = np.array(sentence_spans(text) or [(0, len(text))], dtype=np.int32).reshape(-1, 2)
        sentence_of = np.maximum(np.searchsorted(spans[:, 0], tokens.starts, side="right") - 1, 0)
        own_title = self.corpus.titles[source].strip().lower()
        blocked = np.array([text[start:end].strip().lower() == own_title for start, end in spans.tolist()])[sentence_of]
        for start, end in self.corpus.link_spans[source]:
            blocked |= (tokens.starts < end) & (start < tokens.ends)
        glued = tokens.joined & (sentence_of[:-1] == sentence_of[1:])
        run = np.concatenate([[0], np.cumsum(~glued)])
        blocked_before = np.concatenate([[0], np.cumsum(blocked)])
        content_before = np.concatenate([[0], np.cumsum(ids != STOP)])
        stop = ids == STOP
        firsts, lasts = [], []
        for size in range(MIN_WORDS, MAX_WORDS + 1):
            first = np.arange(max(0, count - size + 1))
            last = first + size - 1
            ok = (run[first] == run[last]) & ~stop[first] & ~stop[last] & (blocked_before[last + 1] == blocked_before[first])
            firsts.append(first[ok])
            lasts.append(last[ok])
        first, last = np.concatenate(firsts), np.concatenate(lasts)
        order = np.argsort(ids, kind="stable")
        previous_same = np.full(count, -1, dtype=np.int64)
        repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1]) + 1
        previous_same[order[repeated]] = order[repeated - 1]
        return Phrases(tokens, first, last, content_before[last + 1] - content_before[first], previous_same, spans, sentence_of)
