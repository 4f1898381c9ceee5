"""What the queue's fill asks of each text anchor, found for many pairs at once: a key for its phrase, and three flags.

Ranked.fill walks the rows in queue order, one at a time (the caps and the anchors already used make each row depend
on the rows before it), and asked each row's anchors, in Python, whether they split a word (anchors.splits_a_word),
what their phrase is in lower case (the anchors used, the pages' names), whether a link of the source has that text,
and whether a word may complete them (anchors.completion): ~36 us a row on a slow hour, 14 of rank's 46 s at 100,000
synthetic pages, with the second core idle (BENCHMARKS.md, "Analysis"). None of that depends on the rows before, so it
is found here, compiled over the texts' code points, a block of sources at a time, THREADS blocks at once; the fill
then compares numbers.

A phrase's key is a 64-bit hash (FNV-1a) of its lower-case code points: two phrases with the same key are taken for
the same phrase (among the ~10^6 phrases of a 100,000-page queue, a collision has odds of about 1 in 10^7). Lower
case as str.lower makes it: each code point's own lower case (U+0130 gives two), but for the capital sigma, whose
lower case depends on the letters around it: a text that holds one is done by the reference, in Python
(anchor_keys_of), which a test holds the compiled pass to on random texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from analysis.anchors import COMPLETING_WORD, splits_a_word
from analysis.compiled import compiled
from analysis.index import THREADS
from analysis.load import Spans, run_items
from analysis.texts import SourceBlock, by_source_blocks

SHOWN, MAY_COMPLETE, LINKED = 1, 2, 4  # flags: whole words; a word may complete it; a link of the source has its text
PAGES_AT_ONCE = 512  # sources whose texts a block holds as code points (~6 MB, twice: at 2,048 they raised rank's peak)
_CAPITAL_SIGMA = 0x3A3
_WORD, _DECIMAL, _SPACE = 1, 2, 4  # a code point's classes, as re's \w, \d and \s see them, and the marks of:
_ENDS_GLUE_FREE = 8  # anchors._GOES_ON_GLUED's first set: after an anchor, no word goes on
_GLUES_A_WORD = 16  # "." "," ... before a word character: glued ("1,000", "Mongoid::Document")
_STARTS_GLUE_FREE = 32  # anchors._STARTED_GLUED's set: before an anchor, no word started
_BREAK, _STOP = 64, 128  # COMPLETING_WORD's lookahead: a break, or "." ":" before white space or the end
_MARKS = ((_ENDS_GLUE_FREE, "\u2013\u2014.,;:!?()[]{}\"'\u2019\u201d\u2026"), (_GLUES_A_WORD, ".,;:!?"),
          (_STARTS_GLUE_FREE, "\u2013\u2014()[]{}\"'\u2018\u201c"), (_BREAK, ",;!?)]\"\u201d\n"), (_STOP, ".:"))
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_PRIME, _MASK = int(_FNV_PRIME), 2**64 - 1
_WORD_CHARACTER = re.compile(r"\w")
_APOSTROPHE, _CURLY_APOSTROPHE, _DASH, _COLON, _SPACE_BAR, _UNDERSCORE = 39, 0x2019, 45, 58, 32, 95


def _classes(character: str) -> int:
    return ((_WORD if _WORD_CHARACTER.match(character) else 0) | (_DECIMAL if character.isdecimal() else 0)
            | (_SPACE if character.isspace() else 0) | sum(bit for bit, marks in _MARKS if character in marks))


_ASCII_CLASSES = np.array([_classes(chr(code)) for code in range(128)], dtype=np.uint8)


def phrase_keys(phrases: Sequence[str]) -> np.ndarray:
    """The key of each phrase, already in lower case."""
    codes = np.frombuffer("".join(phrases).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return _keys(codes, np.cumsum([0, *map(len, phrases)]))


def phrase_key(phrase: str) -> int:
    """The key of one phrase, already in lower case (in Python: a compiled call costs more, for one)."""
    value = int(_FNV_OFFSET)
    for code in map(ord, phrase):
        value = (value ^ code) * _PRIME & _MASK
    return value


def anchor_keys_of(text: str, starts: Sequence[int], ends: Sequence[int], links: list[tuple[int, int]]
                   ) -> tuple[list[int], list[int]]:
    """The reference: (keys, flags) of one pair's text anchors (-1: none, key and flags 0) in its source's text, whose
    links are these spans. LINKED: a link's text is the anchor's, case aside, and as long."""
    keys, flags = [], []
    for start, end in zip(starts, ends):
        if start < 0:
            keys.append(0)
            flags.append(0)
            continue
        phrase = text[start:end].lower()
        linked = any(last - first == end - start and text[first:last].lower() == phrase for first, last in links)
        keys.append(phrase_key(phrase))
        flags.append((0 if splits_a_word(text, start, end) else SHOWN) | (LINKED if linked else 0)
                     | (MAY_COMPLETE if COMPLETING_WORD.match(text, end) else 0))
    return keys, flags


def anchor_keys(texts: Sequence[str], sources: np.ndarray, starts: np.ndarray, ends: np.ndarray, links: Spans,
                link_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, flags) of the pairs' text anchors (row i: source sources[i], anchors starts[i, j]:ends[i, j]), as
    anchor_keys_of finds them; the keys of the links of those sources are written into link_keys (by span)."""
    keys, flags = np.zeros(starts.shape, np.uint64), np.zeros(starts.shape, np.uint8)

    def find(block: SourceBlock) -> None:
        these, codes = block.rows, block.codes
        counts = links.starts[block.pages + 1] - links.starts[block.pages]
        link_rows, link_starts = run_items(links.starts[block.pages], counts)[1], np.concatenate([[0], np.cumsum(counts)])
        others = np.unique(codes[codes > 127])
        lower = [chr(code).lower() for code in others.tolist()]
        found = _anchor_keys(codes, block.starts, block.text_of, starts[these], ends[these], link_starts,
                             links.spans[link_rows], others,
                             np.array([_classes(chr(code)) for code in others.tolist()], dtype=np.uint8),
                             np.array([ord(low[0]) for low in lower], dtype=np.uint32),
                             np.array([ord(low[1]) if len(low) > 1 else 0 for low in lower], dtype=np.uint32))
        keys[these], flags[these], link_keys[link_rows] = found
        sigma = chr(_CAPITAL_SIGMA)  # whose lower case depends on its neighbours
        for text, page in enumerate(block.pages.tolist() if _CAPITAL_SIGMA in others else []):
            if sigma in block.texts[text]:
                held, spans = block.texts[text], links[page]
                link_keys[links.starts[page]:links.starts[page + 1]] = phrase_keys([held[a:b].lower() for a, b in spans])
                for row in these[block.text_of == text].tolist():
                    keys[row], flags[row] = anchor_keys_of(held, starts[row].tolist(), ends[row].tolist(), spans)

    by_source_blocks(texts, sources, np.arange(len(sources)), PAGES_AT_ONCE, THREADS, find)
    return keys, flags


@compiled
def _keys(codes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """FNV-1a of each run codes[starts[i]:starts[i + 1]]."""
    keys = np.empty(len(starts) - 1, np.uint64)
    for run in range(len(keys)):
        value = _FNV_OFFSET
        for at in range(starts[run], starts[run + 1]):
            value = (value ^ np.uint64(codes[at])) * _FNV_PRIME
        keys[run] = value
    return keys


@compiled
def _anchor_keys(codes: np.ndarray, text_starts: np.ndarray, text_of: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 link_starts: np.ndarray, link_spans: np.ndarray, others: np.ndarray, classes: np.ndarray,
                 lower: np.ndarray, lower_second: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """anchor_keys_of for each row (text text_of[i] of the block: codes[text_starts[t]:text_starts[t + 1]], its
    links link_spans[link_starts[t]:link_starts[t + 1]]), and the links' keys. A code point past ASCII is looked up
    among the block's others (sorted): its classes, its lower case (and the second code point of one that has two)."""
    link_keys = np.empty(len(link_spans), np.uint64)
    for text in range(len(text_starts) - 1):
        codes_of = codes[text_starts[text]:text_starts[text + 1]]
        for link in range(link_starts[text], link_starts[text + 1]):
            link_keys[link] = _span_key(codes_of, link_spans[link, 0], link_spans[link, 1], others, lower, lower_second)
    keys, flags = np.zeros(starts.shape, np.uint64), np.zeros(starts.shape, np.uint8)
    for row in range(len(text_of)):
        text = codes[text_starts[text_of[row]]:text_starts[text_of[row] + 1]]
        for option in range(starts.shape[1]):
            start, end = starts[row, option], ends[row, option]
            if start < 0:
                continue
            key = _span_key(text, start, end, others, lower, lower_second)
            flag = 0 if _splits(text, start, end, others, classes) else SHOWN
            if _may_complete(text, end, others, classes):
                flag |= MAY_COMPLETE
            for link in range(link_starts[text_of[row]], link_starts[text_of[row] + 1]):
                if link_spans[link, 1] - link_spans[link, 0] == end - start and link_keys[link] == key:
                    flag |= LINKED
                    break
            keys[row, option], flags[row, option] = key, flag
    return keys, flags, link_keys


@compiled
def _span_key(text: np.ndarray, start: int, end: int, others: np.ndarray, lower: np.ndarray,
              lower_second: np.ndarray) -> np.uint64:
    """The key of text[start:end] in lower case."""
    value = _FNV_OFFSET
    for at in range(start, end):
        code = text[at]
        if code < 128:
            value = (value ^ np.uint64(code + 32 if 65 <= code <= 90 else code)) * _FNV_PRIME
        else:
            other = np.searchsorted(others, code)
            value = (value ^ np.uint64(lower[other])) * _FNV_PRIME
            if lower_second[other]:
                value = (value ^ np.uint64(lower_second[other])) * _FNV_PRIME
    return value


@compiled
def _class(code: int, others: np.ndarray, classes: np.ndarray) -> int:
    return _ASCII_CLASSES[code] if code < 128 else classes[np.searchsorted(others, code)]


@compiled
def _splits(text: np.ndarray, start: int, end: int, others: np.ndarray, classes: np.ndarray) -> bool:
    """anchors.splits_a_word: what follows goes on glued (_GOES_ON_GLUED), or what comes before started glued."""
    if end < len(text):
        kind = _class(text[end], others, classes)
        if not kind & (_SPACE | _ENDS_GLUE_FREE):
            return True
        if kind & _GLUES_A_WORD and end + 1 < len(text) and _class(text[end + 1], others, classes) & _WORD:
            return True
        if (text[end] == _COLON and end + 2 < len(text) and text[end + 1] == _COLON
                and _class(text[end + 2], others, classes) & _WORD):
            return True
    return start >= 1 and not _class(text[start - 1], others, classes) & (_SPACE | _STARTS_GLUE_FREE)


@compiled
def _may_complete(text: np.ndarray, end: int, others: np.ndarray, classes: np.ndarray) -> bool:
    """anchors.COMPLETING_WORD matches at end: a space, a word that starts on a letter, then a break."""
    if end + 1 >= len(text) or text[end] != _SPACE_BAR:
        return False
    first = text[end + 1]
    kind = _class(first, others, classes)
    if not kind & _WORD or kind & _DECIMAL or first == _UNDERSCORE:
        return False
    at = end + 2
    while at < len(text) and (_class(text[at], others, classes) & _WORD or text[at] == _APOSTROPHE
                              or text[at] == _CURLY_APOSTROPHE or text[at] == _DASH):
        at += 1
    if at == len(text) or _class(text[at], others, classes) & _BREAK:
        return True
    return bool(_class(text[at], others, classes) & _STOP) and (
        at + 1 == len(text) or bool(_class(text[at + 1], others, classes) & _SPACE))
