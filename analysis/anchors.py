"""Stage 5b, anchors: a 2-6 word phrase from the source's own text that names the target.

Candidate phrases are word windows of the source's main text, inside one sentence, not crossing
punctuation, not starting or ending on a stop word, and not overlapping an existing link. A phrase
is scored by the target terms it holds: the share of the target's title it covers (title words
weighted by rarity across the site, IDF) plus the TF-IDF weight of the target's most characteristic
words, minus a little for words that belong to neither. The phrase an editor would link on scores
high, which makes the same number a strong ranking signal (see score.py).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from analysis.index import Keywords
from analysis.load import Corpus
from analysis.words import WORD, is_stop_word, stem, terms
from linkspider.sentences import sentence_spans

MIN_WORDS, MAX_WORDS = 2, 6
EXTRA_WORD_PENALTY = 0.08  # per word of the phrase that is not a term of the target
MIN_STRENGTH = 0.3  # a phrase weaker than this is not an anchor
TOPIC_TERMS = 20  # the target's most characteristic words (TF-IDF) count beside its title
TOPIC_WEIGHT = 1.0
WORD_JOINERS = (" ", "-", ".", "/")  # what may stand between two words of a phrase ("Rust 1.51", "CI/CD")
COMMON_SHARE = 0.3  # a word on more pages than this share names nothing by itself


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


class AnchorFinder:
    """Finds anchors for (source, target) pairs of one corpus; per-page work is cached."""

    def __init__(self, corpus: Corpus, keywords: Keywords) -> None:
        self.corpus = corpus
        self.keywords = keywords
        self.common = keywords.idf_of_share(COMMON_SHARE)  # a phrase must hold a rarer word than this
        self._token_cache: dict[int, Tokens] = {}
        self._term_cache: dict[int, dict[str, float]] = {}

    def target_terms(self, target: int) -> dict[str, float]:
        """What names the target: its title words (IDF-weighted, summing to 1) plus its topic words."""
        if target not in self._term_cache:
            rarest = self.keywords.idf_of_share(0)
            title = {term: self.keywords.idf.get(term, rarest) for term in terms(short_title(self.corpus.titles[target]))}
            total = sum(title.values()) or 1.0
            weights = {term: weight / total for term, weight in title.items()}
            for term, weight in self.keywords.top_terms(target, TOPIC_TERMS).items():
                weights[term] = weights.get(term, 0.0) + TOPIC_WEIGHT * weight
            self._term_cache[target] = weights
        return self._term_cache[target]

    def anchors(self, source: int, target: int, limit: int = 3) -> list[Anchor]:
        """The best text anchors for the pair, strongest first, then the title fallback."""
        weights = self.target_terms(target)
        found = self._phrases(source, weights) if weights else []
        found.sort(key=lambda anchor: (-anchor.strength, anchor.offset))
        chosen: list[Anchor] = []
        for anchor in found:
            if not any(_overlaps(anchor.span, other.span) for other in chosen):
                chosen.append(anchor)
            if len(chosen) == limit:
                break
        return [*chosen, Anchor(short_title(self.corpus.titles[target]), "title", 0.0)]

    def _phrases(self, source: int, weights: dict[str, float]) -> list[Anchor]:
        text, tokens = self.corpus.texts[source], self._tokens(source)
        own_title = self.corpus.titles[source].strip().lower()
        strengths: dict[tuple[int, int], float] = {}
        idf = self.keywords.idf
        seeds = sorted(i for term in weights if idf.get(term, 0.0) >= self.common for i in tokens.positions.get(term, ()))
        for hit in seeds:
            for first in range(max(0, hit - MAX_WORDS + 1), hit + 1):
                for last in range(max(hit, first + MIN_WORDS - 1), min(len(tokens.stems), first + MAX_WORDS)):
                    if (first, last) in strengths or not self._is_phrase(source, tokens, first, last):
                        continue
                    covered = {term for term in tokens.stems[first:last + 1] if term in weights}
                    extra = sum(1 for i in range(first, last + 1) if tokens.stems[i] not in weights and not tokens.stop[i])
                    strengths[first, last] = sum(weights[term] for term in covered) - EXTRA_WORD_PENALTY * extra
        result = []
        for (first, last), strength in strengths.items():
            if strength >= MIN_STRENGTH:
                start, end = tokens.spans[first][0], tokens.spans[last][1]
                sentence_start, sentence_end = tokens.sentences[tokens.sentence_of[first]]
                sentence = text[sentence_start:sentence_end]
                if sentence.strip().lower() != own_title:  # the page's own title, repeated in its text
                    result.append(Anchor(text[start:end], "text", round(strength, 4), start, sentence))
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
            stop=[is_stop_word(match.group()) for match in matches],
            sentence_of=[max(0, bisect_right(starts, match.start()) - 1) for match in matches],
            sentences=sentences,
        )


def _overlaps(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]
