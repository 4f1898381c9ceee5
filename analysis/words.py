"""Words as the analysis compares them: lower-cased, lightly stemmed, without stop words.

The keyword index and the anchor search share one :class:`Vocabulary`, so a term has the same id
in both: it splits a text with one regex call (with the words' offsets for the anchor search,
without them for the index) and stems each distinct spelling once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
_WORDS_AND_GAPS = re.compile(f"({WORD.pattern})")  # re.split keeps the words: gap, word, gap, word, ..., gap
STOP = -1  # the term id of a stop word
PHRASE_JOINERS = frozenset((" ", "-", ".", "/"))  # what may stand between two words of a phrase ("Rust 1.51", "CI/CD")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English stemmer: enough to match "grinders" with "grinder" and "brewing" with "brew"."""
    word = word.lower().replace("\u2019", "'").removesuffix("'s")
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def is_stop_word(word: str) -> bool:
    return word.lower() in ENGLISH_STOP_WORDS


def terms(text: str) -> list[str]:
    """The stemmed content words of a text, in order: what TF-IDF counts and anchors match."""
    return [stem(word) for word in WORD.findall(text.lower()) if word not in ENGLISH_STOP_WORDS]


@dataclass
class Tokens:
    """The words of one text as arrays: term id (STOP for stop words), character span, and whether the
    characters between a word and the next may stand inside a phrase (PHRASE_JOINERS)."""

    ids: np.ndarray  # int32, one per word
    starts: np.ndarray  # int32
    ends: np.ndarray  # int32
    joined: np.ndarray  # bool, one per pair of neighbouring words


class Vocabulary:
    """Term ids for the stemmed content words of a corpus, assigned as words are first seen."""

    def __init__(self) -> None:
        self.terms: list[str] = []  # id -> stemmed term
        self.ids: dict[str, int] = {}  # stemmed term -> id
        self._spelling = _Spellings(self)

    def __len__(self) -> int:
        return len(self.terms)

    def term_id(self, term: str) -> int:
        if term not in self.ids:
            self.ids[term] = len(self.terms)
            self.terms.append(term)
        return self.ids[term]

    def term_ids(self, text: str) -> np.ndarray:
        """The term ids of the text's words (STOP for stop words), without their offsets: what TF-IDF counts."""
        words = WORD.findall(text)
        return np.fromiter(map(self._spelling.__getitem__, words), dtype=np.int32, count=len(words))

    def tokenize(self, text: str) -> Tokens:
        """Split the text with one regex call; offsets come from the lengths of the pieces."""
        pieces = _WORDS_AND_GAPS.split(text)
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        ends = np.cumsum(lengths)[1::2].astype(np.int32)
        words = pieces[1::2]
        return Tokens(
            ids=np.fromiter(map(self._spelling.__getitem__, words), dtype=np.int32, count=len(words)),
            starts=ends - lengths[1::2].astype(np.int32),
            ends=ends,
            joined=np.fromiter(map(PHRASE_JOINERS.__contains__, pieces[2:-1:2]), dtype=bool, count=max(0, len(words) - 1)),
        )


class _Spellings(dict):
    """Spelling -> term id, filled on first sight: each distinct spelling is stemmed once."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        super().__init__()
        self.vocabulary = vocabulary

    def __missing__(self, word: str) -> int:
        term_id = STOP if is_stop_word(word) else self.vocabulary.term_id(stem(word))
        self[word] = term_id
        return term_id
