"""The sentence that holds each queued anchor (its context in the CSV), found for the whole queue at once.

linkspider.sentences finds one by regular expression, ~11 us a call in Python; made for each row as the queue was
filled, it was a third of the fill, rank's serial part (1.45 of 4.5 s at 20,000 synthetic pages, BENCHMARKS.md). Here
the same rules run compiled over the texts' code points, a block of sources at a time, THREADS blocks at once; a test
holds the two to the same answer at every offset of random texts made of the characters that make and break sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.compiled import compiled
from analysis.index import THREADS
from analysis.texts import SourceBlock, by_source_blocks
from linkspider.sentences import CLOSERS

PAGES_AT_ONCE = 2_048  # sources whose texts a block holds as code points (4 bytes each: ~25 MB on 3,000-character pages)
_SPACE = np.array([chr(code).isspace() for code in range(0x3001)])  # str.isspace, which re's \s is: none above U+3000
_CLOSER_CODES = np.array([ord(closer) for closer in CLOSERS], dtype=np.uint32)
_NEWLINE, _SPACE_BAR, _TAB, _DASH = 10, 32, 9, 45


def sentences_at(texts: Sequence[str], sources: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends): the sentence of texts[sources[i]] that holds the character at offsets[i], as
    linkspider.sentences.sentence_at finds it ((offset, offset) between sentences); (-1, -1) where the offset is
    negative (a title anchor, which has no sentence)."""
    starts, ends = np.full(len(offsets), -1, np.int64), np.full(len(offsets), -1, np.int64)

    def find(block: SourceBlock) -> None:
        starts[block.rows], ends[block.rows] = _sentences(block.codes, block.starts, block.text_of, offsets[block.rows],
                                                          _SPACE, _CLOSER_CODES)

    by_source_blocks(texts, sources, np.flatnonzero(offsets >= 0), PAGES_AT_ONCE, THREADS, find)
    return starts, ends


@compiled
def _sentences(codes: np.ndarray, text_starts: np.ndarray, text_of: np.ndarray, offsets: np.ndarray, space: np.ndarray,
               closers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sentence holding each offset of its text (text t: codes[text_starts[t]:text_starts[t + 1]])."""
    starts, ends = np.empty(len(offsets), np.int64), np.empty(len(offsets), np.int64)
    for row in range(len(offsets)):
        text = codes[text_starts[text_of[row]]:text_starts[text_of[row] + 1]]
        starts[row], ends[row] = _sentence_at(text, offsets[row], space, closers)
    return starts, ends


@compiled
def _sentence_at(text: np.ndarray, offset: int, space: np.ndarray, closers: np.ndarray) -> tuple[int, int]:
    """linkspider.sentences.sentence_at: a scan of boundaries from the line before the offset's line."""
    start = offset - 1
    while start >= 0 and text[start] != _NEWLINE:
        start -= 1
    while start > 0 and (_is_space(text[start - 1], space) or _is_closer(text[start - 1], closers)):
        start -= 1
    if start <= 0:
        start = max(_marker_end(text, 0), 0)
    scan = start - 1 if start > 0 and _is_terminal(text[start - 1]) else start
    while True:
        boundary_end, sentence_end = _next_boundary(text, scan, space, closers)
        if boundary_end < 0:
            break
        if boundary_end > offset and sentence_end > offset and _has_text(text, start, sentence_end, space):
            return _holding(text, start, sentence_end, offset, space)
        start = scan = boundary_end
    if _has_text(text, start, len(text), space):
        return _holding(text, start, len(text), offset, space)
    return offset, offset


@compiled
def _next_boundary(text: np.ndarray, at: int, space: np.ndarray, closers: np.ndarray) -> tuple[int, int]:
    """(where it ends, where the sentence it closes ends) of the first boundary from `at` on, as
    linkspider.sentences._BOUNDARY matches it; (-1, -1) if none: at . ! or ?, its closing marks, then white space
    (through the list marker after its last line break, if one follows); at a line break, the line breaks after it and
    a list marker."""
    length = len(text)
    for place in range(at, length):
        code = text[place]
        if _is_terminal(code):
            closed = place + 1
            while closed < length and _is_closer(text[closed], closers):
                closed += 1
            blank, last_break = closed, -1
            while blank < length and _is_space(text[blank], space):
                if text[blank] == _NEWLINE:
                    last_break = blank
                blank += 1
            if blank > closed:
                if last_break >= 0:
                    indent = last_break + 1
                    while indent < blank and (text[indent] == _SPACE_BAR or text[indent] == _TAB):
                        indent += 1
                    if indent == blank and blank + 1 < length and text[blank] == _DASH and text[blank + 1] == _SPACE_BAR:
                        return blank + 2, closed
                return blank, closed
        elif code == _NEWLINE:
            after = place + 1
            while after < length and text[after] == _NEWLINE:
                after += 1
            marker = _marker_end(text, after)
            return (marker if marker >= 0 else after), place
    return -1, -1


@compiled
def _marker_end(text: np.ndarray, at: int) -> int:
    """Where a list marker (spaces or tabs, "- ") that starts at `at` ends; -1 if none does."""
    while at < len(text) and (text[at] == _SPACE_BAR or text[at] == _TAB):
        at += 1
    return at + 2 if at + 1 < len(text) and text[at] == _DASH and text[at + 1] == _SPACE_BAR else -1


@compiled
def _holding(text: np.ndarray, start: int, end: int, offset: int, space: np.ndarray) -> tuple[int, int]:
    """The span without white space at its edges, if it holds the offset; else (offset, offset)."""
    while start < end and _is_space(text[start], space):
        start += 1
    while end > start and _is_space(text[end - 1], space):
        end -= 1
    return (start, end) if start <= offset < end else (offset, offset)


@compiled
def _has_text(text: np.ndarray, start: int, end: int, space: np.ndarray) -> bool:
    for place in range(start, end):
        if not _is_space(text[place], space):
            return True
    return False


@compiled
def _is_space(code: int, space: np.ndarray) -> bool:
    return code < len(space) and space[code]


@compiled
def _is_closer(code: int, closers: np.ndarray) -> bool:
    for closer in closers:
        if code == closer:
            return True
    return False


@compiled
def _is_terminal(code: int) -> bool:
    return code == 46 or code == 33 or code == 63  # . ! ?
