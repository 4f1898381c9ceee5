"""Words as the analysis compares them: lower-cased, lightly stemmed, without stop words."""

from __future__ import annotations

import re
from functools import lru_cache

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")


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
