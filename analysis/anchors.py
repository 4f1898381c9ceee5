"""Stage 5b, anchors: a 2-6 word phrase from the source's own text that names the target.

Candidate phrases are word windows of the source's main text, inside one sentence, not crossing
punctuation, not starting or ending on a stop word, and not overlapping an existing link. A phrase
is scored by how much of the target's title (weighted by rarity across the site, IDF) it covers,
minus a little for words that do not belong to the title. The phrase left behind when an editor
removes a link usually scores high, which makes the same number a strong ranking signal.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from analysis.load import Corpus
from linkspider.sentences import sentence_spans

WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
MIN_WORDS, MAX_WORDS = 2, 6
EXTRA_WORD_PENALTY = 0.08  # per word of the phrase that is not in the target's title
MIN_STRENGTH = 0.3  # a phrase covering less of the title than this is not an anchor
WORD_JOINERS = (" ", "-", ".", "/")  # what may stand between two words of a phrase ("Rust 1.51", "CI/CD")
COMMON_SHARE = 0.3  # a title word on more pages than this share names nothing by itself


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


def stem(word: str) -> str:
    """A light English stemmer: enough to match "grinders" with "grinder" and "brewing" with "brew"."""
    word = word.lower().replace("\u2019", "'").removesuffix("'s")
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def short_title(title: str) -> str:
    """The page's title (already without its site name, see load.py), at most six words: the fallback anchor."""
    return " ".join(title.split()[:MAX_WORDS])


class AnchorFinder:
    """Finds anchors for (source, target) pairs of one corpus; per-page work is cached."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._token_cache: dict[int, Tokens] = {}

    @cached_property
    def common(self) -> float:
        """IDF of a word on COMMON_SHARE of the pages: a phrase must hold at least one rarer title word."""
        pages = len(self.corpus)
        return math.log((1 + pages) / (1 + COMMON_SHARE * pages)) + 1

    @cached_property
    def idf(self) -> dict[str, float]:
        frequency = Counter(stem for page in range(len(self.corpus)) for stem in set(self._tokens(page).stems))
        pages = len(self.corpus)
        return {term: math.log((1 + pages) / (1 + count)) + 1 for term, count in frequency.items()}

    def title_terms(self, target: int) -> dict[str, float]:
        """The target's title words (stemmed, no stop words) and their IDF weights."""
        words = WORD.findall(short_title(self.corpus.titles[target]))
        default = math.log(1 + len(self.corpus)) + 1  # a word no page uses is as rare as it gets
        return {stem(w): self.idf.get(stem(w), default) for w in words if w.lower() not in ENGLISH_STOP_WORDS}

    def anchors(self, source: int, target: int, limit: int = 3) -> list[Anchor]:
        """The best text anchors for the pair, strongest first, then the title fallback."""
        terms = self.title_terms(target)
        found = self._phrases(source, terms) if terms else []
        found.sort(key=lambda anchor: (-anchor.strength, anchor.offset))
        chosen: list[Anchor] = []
        for anchor in found:
            if not any(_overlaps(anchor.span, other.span) for other in chosen):
                chosen.append(anchor)
            if len(chosen) == limit:
                break
        return [*chosen, Anchor(short_title(self.corpus.titles[target]), "title", 0.0)]

    def _phrases(self, source: int, terms: dict[str, float]) -> list[Anchor]:
        text, tokens = self.corpus.texts[source], self._tokens(source)
        total = sum(terms.values())
        strengths: dict[tuple[int, int], float] = {}
        seeds = sorted(i for term, weight in terms.items() if weight >= self.common for i in tokens.positions.get(term, ()))
        for hit in seeds:
            for first in range(max(0, hit - MAX_WORDS + 1), hit + 1):
                for last in range(max(hit, first + MIN_WORDS - 1), min(len(tokens.stems), first + MAX_WORDS)):
                    if (first, last) in strengths or not self._is_phrase(source, tokens, first, last):
                        continue
                    covered = {stem for stem in tokens.stems[first:last + 1] if stem in terms}
                    extra = sum(1 for i in range(first, last + 1) if tokens.stems[i] not in terms and not tokens.stop[i])
                    strengths[first, last] = sum(terms[stem] for stem in covered) / total - EXTRA_WORD_PENALTY * extra
        result = []
        for (first, last), strength in strengths.items():
            if strength >= MIN_STRENGTH:
                start, end = tokens.spans[first][0], tokens.spans[last][1]
                sentence_start, sentence_end = tokens.sentences[tokens.sentence_of[first]]
                result.append(Anchor(text[start:end], "text", round(strength, 4), start, text[sentence_start:sentence_end]))
        return result

    def _is_phrase(self, source: int, tokens: Tokens, first: int, last: int) -> bool:
        """One sentence, plain words and spaces between them, no stop word at either end, no link overlap."""
        text = self.corpus.texts[source]
        if tokens.sentence_of[first] != tokens.sentence_of[last] or tokens.stop[first] or tokens.stop[last]:
            return False
        if any(text[tokens.spans[i][1]:tokens.spans[i + 1][0]] not in WORD_JOINERS for i in range(first, last)):
            return False
        span = (tokens.spans[first][0], tokens.spans[last][1])
        return not any(_overlaps(span, link) for link in self.corpus.link_spans[source])

    def _tokens(self, page: int) -> Tokens:
        if page not in self._token_cache:
            self._token_cache[page] = Tokens.of(self.corpus.texts[page])
        return self._token_cache[page]


@dataclass
class Tokens:
    """The words of one page's text: spans, stems, stop-word flags, and which sentence each is in."""

    spans: list[tuple[int, int]]
    stems: list[str]
    stop: list[bool]
    sentence_of: list[int]
    sentences: list[tuple[int, int]]
    positions: dict[str, list[int]]  # stem -> where it occurs

    @classmethod
    def of(cls, text: str) -> Tokens:
        matches = list(WORD.finditer(text))
        sentences = sentence_spans(text)
        starts = [start for start, _ in sentences]
        stems = [stem(match.group()) for match in matches]
        positions: dict[str, list[int]] = {}
        for i, word in enumerate(stems):
            positions.setdefault(word, []).append(i)
        return cls(
            spans=[match.span() for match in matches],
            stems=stems,
            positions=positions,
            stop=[match.group().lower() in ENGLISH_STOP_WORDS for match in matches],
            sentence_of=[max(0, bisect_right(starts, match.start()) - 1) for match in matches],
            sentences=sentences,
        )


def _overlaps(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]
