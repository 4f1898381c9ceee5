"""Sentence boundaries in extracted text: the context of a link and of a suggested anchor."""

from __future__ import annotations

import re
from bisect import bisect_right

# A sentence ends at . ! or ? (and any closing quotes or brackets) followed by white space, or at a
# line break: the extractor puts every paragraph, heading and list item on a line of its own.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\n+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every non-empty sentence in text, in order."""
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.start() + len(match.group(0).rstrip()) if match.group(0).strip() else match.start()
        if text[start:end].strip():
            spans.append((start, end))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def sentence_at(text: str, offset: int, spans: list[tuple[int, int]] | None = None) -> tuple[int, int]:
    """(start, end) of the sentence that holds the character at offset; pass spans to reuse them."""
    spans = sentence_spans(text) if spans is None else spans
    index = bisect_right([start for start, _ in spans], offset) - 1
    if index >= 0 and offset < spans[index][1]:
        return spans[index]
    return offset, offset
