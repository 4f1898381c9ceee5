"""Words as the analysis compares them: lower-cased, lightly stemmed, without stop words.

The keyword index and the anchor search share one :class:`Vocabulary`, so a term has the same id
in both: it splits a text with one regex call for the index, a block of texts with one regex call
and numpy passes over the code points (the words' offsets) for the anchor search, and stems each
distinct spelling once.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

WORD_JOINERS = "'\u2019-"  # what joins two runs of letters into one word ("don't", "well-known")
WORD = re.compile(rf"\w+(?:[{WORD_JOINERS}]\w+)*")
STOP = -1  # the term id of a stop word
PHRASE_JOINERS = " -./"  # what may stand alone between two words of a phrase ("Rust 1.51", "CI/CD")
_WORD_CHARACTER = re.compile(r"\w")
_ASCII_WORD_CHARACTERS = np.array([_WORD_CHARACTER.match(chr(code)) is not None for code in range(128)])


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
    """The words of some texts end to end as arrays: term id (STOP for stop words), character span in its
    own text, and whether the characters between a word and the next may stand inside a phrase
    (PHRASE_JOINERS; never across texts)."""

    ids: np.ndarray  # int32, one per word
    starts: np.ndarray  # int32
    ends: np.ndarray  # int32
    joined: np.ndarray  # bool: to the next word
    counts: np.ndarray  # words per text


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
        """The term ids of the text's words (STOP for stop words), without their offsets: what TF-IDF counts.
        (tokenize's offsets cost more than counting a block of pages at once saves.)"""
        words = WORD.findall(text)
        return np.fromiter(map(self._spelling.__getitem__, words), dtype=np.int32, count=len(words))

    def tokenize(self, texts: list[str]) -> Tokens:
        """The words of the texts with their offsets. The texts are laid end to end on separate lines, so
        that one regex call gives the words and a few numpy passes over the code points their spans: a
        word is a run of the regex's word characters, with single WORD_JOINERS inside."""
        text = "\n".join(texts)  # a line break is neither in a word nor in a phrase
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        in_word = _word_characters(codes)
        in_word[1:-1] |= _among(codes[1:-1], WORD_JOINERS) & in_word[:-2] & in_word[2:]
        edges = np.flatnonzero(np.diff(in_word, prepend=False, append=False))
        starts, ends = edges[0::2], edges[1::2]
        words = WORD.findall(text)
        text_starts = np.cumsum([0, *(len(text) + 1 for text in texts[:-1])])
        text_of = np.searchsorted(text_starts, starts, "right") - 1
        joined = (starts[1:] - ends[:-1] == 1) & _among(codes[ends[:-1]], PHRASE_JOINERS)
        return Tokens(
            ids=np.fromiter(map(self._spelling.__getitem__, words), dtype=np.int32, count=len(words)),
            starts=(starts - text_starts[text_of]).astype(np.int32),
            ends=(ends - text_starts[text_of]).astype(np.int32),
            joined=np.append(joined, False),
            counts=np.bincount(text_of, minlength=len(texts)),
        )


def _among(codes: np.ndarray, characters: str) -> np.ndarray:
    """Which code points are one of these few characters (np.isin sorts; this compares)."""
    return np.logical_or.reduce([codes == ord(character) for character in characters])


def _word_characters(codes: np.ndarray) -> np.ndarray:
    """Which code points the regex's \\w matches: ASCII from a table, any other asked of the regex once per call."""
    in_word = _ASCII_WORD_CHARACTERS[np.minimum(codes, 127)]
    other = np.flatnonzero(codes > 127)
    distinct, where = np.unique(codes[other], return_inverse=True)
    in_word[other] = np.array([_WORD_CHARACTER.match(chr(code)) is not None for code in distinct.tolist()], dtype=bool)[where]
    return in_word


class _Spellings(dict):
    """Spelling -> term id, filled on first sight: each distinct spelling is stemmed once."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        super().__init__()
        self.vocabulary = vocabulary
        self.lock = threading.Lock()

    def __missing__(self, word: str) -> int:
        with self.lock:  # the anchor search tokenises in threads; a new term must get one id
            term_id = STOP if is_stop_word(word) else self.vocabulary.term_id(stem(word))
            self[word] = term_id
        return term_id
